"""What the chat view shows for each row, and the HTML it paints it with. No widgets here."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from host.content import ErrorContent, MessageContent, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from host.transcript import TranscriptRow
from ui.markdown import render_markdown

__all__ = ["DisplayMessage", "message_html"]

Kind = Literal["user", "assistant", "tool", "error"]
MAX_TOOL_TEXT = 4000


@dataclass
class DisplayMessage:
    """One item of the chat view. ``version`` changes whenever what it shows changes."""

    key: str
    kind: Kind
    seq: int | None = None
    text: str = ""
    reasoning: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments as JSON)
    tool_result: tuple[str, bool] | None = None  # (content, is_error)
    status: str = "complete"  # complete, interrupted, streaming, error, unsaved
    model: str = ""
    finish_reason: str | None = None
    error: str = ""
    retryable: bool = False
    reasoning_open: bool = False
    waited: float | None = None  # seconds spent waiting for the first token, while streaming
    version: int = 0

    def touch(self) -> None:
        self.version += 1

    @classmethod
    def from_row(cls, row: TranscriptRow) -> DisplayMessage | None:
        body = row.body()
        if row.role == "system":
            return None
        if isinstance(body, ErrorContent):
            return cls(
                key=row.id,
                kind="error",
                seq=row.seq,
                status="error",
                error=body.error.message,
                retryable=body.error.retryable,
            )
        if not isinstance(body, MessageContent) or not body.parts:
            return None
        shown = cls(
            key=row.id,
            kind=row.role,
            seq=row.seq,
            status=body.status,
            model=body.model or "",
            finish_reason=body.finish_reason,
        )
        for part in body.parts:
            if isinstance(part, TextPart):
                shown.text += part.text
            elif isinstance(part, ReasoningPart):
                shown.reasoning += part.text
            elif isinstance(part, ToolCallPart):
                shown.tool_calls.append((part.name, json.dumps(part.arguments, indent=2, ensure_ascii=False)))
            elif isinstance(part, ToolResultPart):
                shown.tool_result = (part.content, part.is_error)
        return shown


def _card(title: str, body: str, colour: str, dark: bool) -> str:
    background = "#262b33" if dark else "#f7f7f9"
    text = html.escape(body[:MAX_TOOL_TEXT] + ("\n…" if len(body) > MAX_TOOL_TEXT else ""))
    return (
        f'<table width="100%" cellspacing="0" cellpadding="6" bgcolor="{background}" '
        f'style="border: 1px solid {colour}; margin-top: 4px;"><tr><td><b style="color: {colour};">{title}</b>'
        f'</td></tr><tr><td><pre style="margin: 0;">{text}</pre></td></tr></table>'
    )


def message_html(message: DisplayMessage, *, dark: bool, last_user: bool, last_answer: bool) -> tuple[str, list[str]]:
    """The message's HTML and the text of its code blocks (for their Copy links)."""
    muted = "#8b93a1" if dark else "#6b7280"
    link = "#7aa7ff" if dark else "#2f6fdb"
    danger = "#ff7b72" if dark else "#c62828"

    def action(name: str, label: str) -> str:
        return f'&nbsp;&nbsp;<a href="cairn:{name}" style="color: {link};">{label}</a>'

    if message.kind == "error":
        retry = action("retry", "Retry") if message.retryable or last_answer else ""
        body = f'<p><b style="color: {danger};">Something went wrong.</b> {html.escape(message.error)}{retry}</p>'
        return body, []

    parts = [f"<p>{_header(message, muted, danger, action, last_user=last_user, last_answer=last_answer)}</p>"]

    if message.reasoning:
        arrow = "▾" if message.reasoning_open else "▸"
        parts.append(f'<p><a href="cairn:toggle-reasoning" style="color: {muted};">{arrow} Reasoning</a></p>')
        if message.reasoning_open:
            text = html.escape(message.reasoning).replace("\n", "<br>")
            parts.append(f'<p style="color: {muted};"><i>{text}</i></p>')
    code_blocks: list[str] = []
    if message.text:
        rendered = render_markdown(message.text, dark=dark)
        parts.append(rendered.html)
        code_blocks = rendered.code_blocks
    for name, arguments in message.tool_calls:
        parts.append(_card(f"Tool call: {html.escape(name)}", arguments, link, dark))
    if message.tool_result is not None:
        content, is_error = message.tool_result
        parts.append(_card("Tool error" if is_error else "Tool result", content, danger if is_error else muted, dark))
    return "".join(parts), code_blocks


def _header(
    message: DisplayMessage,
    muted: str,
    danger: str,
    action: Callable[[str, str], str],
    *,
    last_user: bool,
    last_answer: bool,
) -> str:
    title = {"user": "You", "assistant": "Assistant", "tool": "Tool result"}[message.kind]
    notes = []
    if message.model and message.kind == "assistant":
        notes.append(html.escape(message.model.split("/", 1)[-1]))
    if message.status == "interrupted":
        notes.append(f'<span style="color: {danger};">interrupted</span>')
    if message.status == "unsaved":
        notes.append(f'<span style="color: {danger};">not saved</span>')
    if message.status == "streaming" and message.waited is not None and not (message.text or message.reasoning):
        notes.append(f"the model is reading the prompt… {message.waited:.0f} s")
    elif message.status == "streaming":
        notes.append("writing…")
    cut_off = message.finish_reason == "length"
    if cut_off:
        notes.append(f'<span style="color: {danger};">cut off at the length limit</span>')
    header = f"<b>{title}</b>"
    if notes:
        header += f' <span style="color: {muted};">· {" · ".join(notes)}</span>'
    if message.text:
        header += action("copy", "Copy")
    if message.kind == "user" and last_user:
        header += action("edit", "Edit")
    if message.kind == "assistant" and last_answer and message.status != "streaming":
        if cut_off:
            header += action("continue", "Continue")
        header += action("regenerate", "Regenerate")
    return header
