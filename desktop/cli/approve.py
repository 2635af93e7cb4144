"""Approvals on the command line: asked on the terminal when there is one, else answered as
``--approve`` says, denied by default. Never waits on a closed or piped stdin."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TextIO

from desktop.app import Approval, Choice, ToolRequest
from desktop.cli.common import printable

__all__ = ["TerminalApprover"]

KEYS: dict[str, Choice] = {"o": "once", "c": "chat", "a": "always", "n": "never", "d": "deny", "": "deny"}


class TerminalApprover:
    def __init__(self, *, preset: Choice | None, stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.preset = preset  # --approve once|chat
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr

    @property
    def interactive(self) -> bool:
        return self.stdin.isatty() and self.stderr.isatty()

    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        tool = request.tool
        source = tool.spec.source if tool is not None else "unknown"
        arguments = json.dumps(dict(request.call.arguments), ensure_ascii=False)
        shown = printable(f"{request.call.name} (from {source}; {reason}) with {arguments[:500]}")
        if self.preset is not None:
            self.stderr.write(f"\n[allowing {shown}: --approve {self.preset}]\n")
            return Approval(self.preset)
        if not self.interactive:
            self.stderr.write(f"\n[denied {shown}: nobody at a terminal to approve it; use --approve once|chat]\n")
            return Approval("deny", "nobody was at a terminal to approve it; run again with --approve once or chat")
        self.stderr.write(f"\nAllow {shown}?\n[o]nce, this [c]hat, [a]lways, [n]ever, [d]eny (default): ")
        self.stderr.flush()
        line = await asyncio.to_thread(self.stdin.readline)
        if not line:  # the terminal went away
            return Approval("deny", "the terminal closed before an answer")
        return Approval(KEYS.get(line.strip().lower()[:1], "deny"))
