"""A running call's questions on the command line (an MCP server's request for input): asked
field by field when stdin and stdout are a terminal, declined otherwise, so a piped or
scripted ``cairn chat`` never waits on a form nobody sees. The questions go to stderr, like
the approvals', and stdout keeps the reply."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from desktop.app import Answer, FormField, Question
from desktop.cli.common import printable

__all__ = ["TerminalElicitor"]

NO_TERMINAL = "nobody was at a terminal to answer it"


class TerminalElicitor:
    def __init__(
        self, *, stdin: TextIO | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr

    @property
    def interactive(self) -> bool:
        return _tty(self.stdin) and _tty(self.stdout)

    async def ask(self, session_id: str, question_id: str, question: Question) -> Answer:
        asker = printable(question.asker)
        if not self.interactive:
            self._say(f"\n[declined {asker}'s request for input: {NO_TERMINAL}]\n")
            return Answer("decline", note=NO_TERMINAL)
        self._say(f"\nThe MCP server {asker} asks: {printable(question.message)}\n")
        first = await self._line("[a]nswer, [d]ecline, [c]ancel (default): ")
        if first is None or not first.startswith("a"):
            return Answer("decline" if first is not None and first.startswith("d") else "cancel")
        values: dict[str, object] = {}
        for field in question.form.fields:
            value = await self._field(field)
            if value is _GONE:
                return Answer("cancel", note="the terminal closed before an answer")
            values[field.key] = value
        content, _ = question.form.check(values)  # each field was checked as it was asked
        return Answer("accept", content)

    async def _field(self, field: FormField) -> object:
        """Ask for one field until its answer fits; ``_GONE`` if the terminal closes."""
        note = f" — {printable(field.description)}" if field.description else ""
        self._say(f"{printable(field.title)}{' (required)' if field.required else ''}{note}\n")
        if field.kind in ("choice", "choices"):
            for number, (_value, label) in enumerate(field.options, 1):
                self._say(f"  {number}. {printable(label)}\n")
        while True:
            line = await self._line(f"{_hint(field)}: ")
            if line is None:
                return _GONE
            value = _read(field, line)
            _, problem = field.check(value)
            if not problem:
                return value
            self._say(f"  {problem}\n")

    async def _line(self, prompt: str) -> str | None:
        self._say(prompt)
        line = await asyncio.to_thread(self.stdin.readline)
        return line.strip() if line else None

    def _say(self, text: str) -> None:
        self.stderr.write(text)
        self.stderr.flush()


_GONE = object()


def _hint(field: FormField) -> str:
    """What the prompt asks for, and the default an empty line takes."""
    default = field.default
    if field.kind == "boolean":
        wanted, shown = "yes or no", ("yes" if default else "no") if isinstance(default, bool) else None
    elif field.kind == "choice":
        wanted, shown = "a number", _label(field, default) if isinstance(default, str) else None
    elif field.kind == "choices":
        wanted = "numbers, with commas"
        shown = ", ".join(_label(field, item) for item in default) if isinstance(default, list) else None
    elif field.kind in ("number", "integer"):
        wanted, shown = "a number", None if default is None else str(default)
    else:
        wanted = {"email": "an email address", "uri": "a web address", "date": "YYYY-MM-DD"}.get(field.format, "text")
        shown = None if default is None else printable(str(default))
    return f"  {wanted}" + (f" [{shown}]" if shown is not None else "")


def _read(field: FormField, line: str) -> object:
    """What ``line`` stands for in ``field``; an empty line takes the default."""
    if not line:
        return field.default
    if field.kind == "boolean":
        word = line.lower()
        return True if word in ("y", "yes", "true") else False if word in ("n", "no", "false") else line
    values = [value for value, _ in field.options]
    if field.kind == "choice":
        return values[int(line) - 1] if line.isdigit() and 0 < int(line) <= len(values) else line
    if field.kind == "choices":
        picked = [part.strip() for part in line.split(",")]
        return [values[int(p) - 1] if p.isdigit() and 0 < int(p) <= len(values) else p for p in picked if p]
    return line


def _label(field: FormField, value: str) -> str:
    return printable(dict(field.options).get(value, value))


def _tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False
