"""What the chat view shows for each row, and the HTML it paints it with. No widgets here."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from host.content import (
    Checkpoint,
    ErrorContent,
    MessageContent,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from host.transcript import TranscriptRow
from ui.markdown import render_markdown
from ui.tool_cards import ApprovalView, Palette, approval_html, result_html, tool_call_html

__all__ = ["DisplayMessage", "Kind", "message_html"]

Kind = Literal["user", "assistant", "tool", "error", "approval", "summary"]


@dataclass
class DisplayMessage:
    """One item of the chat view. ``version`` changes whenever what it shows changes."""

    key: str
    kind: Kind
    seq: int | None = None
    text: str = ""
    reasoning: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (name, arguments)
    tool_result: ToolResultPart | None = None
    approval: ApprovalView | None = None
    expanded: bool = False  # a long tool result shown whole
    status: str = "complete"  # complete, interrupted, streaming, error, unsaved
    model: str = ""
    finish_reason: str | None = None
    error: str = ""
    retryable: bool = False
    reasoning_open: bool = False
    waited: float | None = None  # seconds spent waiting for the first token, while streaming
    checkpoint: Checkpoint | None = None  # a compaction's marker: its summary is ``text``
    version: int = 0

    def touch(self) -> None:
        self.version += 1

    @classmethod
    def from_row(cls, row: TranscriptRow) -> DisplayMessage | None:
        body = row.body()
        if row.role == "system":
            checkpoint = row.meta()
            if not isinstance(checkpoint, Checkpoint):
                return None
            return cls(key=row.id, kind="summary", seq=row.seq, text=checkpoint.summary, checkpoint=checkpoint)
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
                shown.tool_calls.append((part.name, dict(part.arguments)))
            elif isinstance(part, ToolResultPart):
                shown.tool_result = part
        return shown


def message_html(message: DisplayMessage, *, dark: bool, last_user: bool, last_answer: bool) -> tuple[str, list[str]]:
    """The message's HTML and the text of its code blocks (for their Copy links)."""
    muted = "#8b93a1" if dark else "#6b7280"
    link = "#7aa7ff" if dark else "#2f6fdb"
    danger = "#ff7b72" if dark else "#c62828"

    def action(name: str, label: str) -> str:
        return f'&nbsp;&nbsp;<a href="cairn:{name}" style="color: {link};">{label}</a>'

    if message.kind == "error":
        # Retry asks again from the end of the chat, so only the chat's last answer offers it:
        # once a retry succeeded, the earlier error row is history and shows no link.
        retry = action("retry", "Retry") if last_answer else ""
        body = f'<p><b style="color: {danger};">Something went wrong.</b> {html.escape(message.error)}{retry}</p>'
        return body, []
    if message.kind == "summary":
        return _summary_html(message, muted, link, dark=dark)
    palette = Palette.of(dark=dark)
    if message.approval is not None:
        return approval_html(message.approval, palette), []

    parts = (
        []
        if message.kind == "tool"
        else [  # a tool result's card has its own title
            f"<p>{_header(message, muted, danger, action, last_user=last_user, last_answer=last_answer)}</p>"
        ]
    )

    if message.reasoning:
        arrow = "▾" if message.reasoning_open else "▸"
        parts.append(f'<p><a href="cairn:toggle-reasoning" style="color: {muted};">{arrow} Reasoning</a></p>')
        if message.reasoning_open:
            text = html.escape(message.reasoning).replace("\n", "<br>")
            parts.append(f'<p style="color: {muted};"><i>{text}</i></p>')
    code_blocks: list[str] = []
    if message.text:
        text = hard_breaks(message.text) if message.kind == "user" else message.text
        rendered = render_markdown(text, dark=dark)
        parts.append(rendered.html)
        code_blocks = rendered.code_blocks
    for name, arguments in message.tool_calls:
        parts.append(tool_call_html(name, arguments, palette))
    if message.tool_result is not None:
        r = message.tool_result
        parts.append(
            result_html(
                r.content,
                is_error=r.is_error,
                reason=r.reason,
                elapsed_ms=r.elapsed_ms,
                expanded=message.expanded,
                palette=palette,
            )
        )
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
    title = {"user": "You", "assistant": "Assistant", "tool": "Tool result", "approval": "Approval"}.get(
        message.kind, message.kind
    )
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


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def hard_breaks(text: str) -> str:
    """A person's own message as Markdown that keeps each line break they typed: a line
    followed by another line of the same paragraph ends in a hard break. Code fences are
    left as typed. Only what is painted changes; Copy copies ``text`` itself."""
    lines = text.split("\n")
    fence: str | None = None
    for number, line in enumerate(lines[:-1]):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if _joins(line, lines[number + 1]):
            lines[number] = line + "  "  # CommonMark's hard break
    return "\n".join(lines)


def _joins(line: str, following: str) -> bool:
    """Whether Markdown would join ``following`` to ``line`` with a space, where the person
    typed a line break: two lines of text, neither indented code nor already broken."""
    if not line.strip() or not following.strip() or line.endswith(("  ", "\\")):
        return False
    return not line.startswith(("    ", "\t"))


REASONS = {
    "automatic": "to keep the chat within the model's context",
    "overflow": "after the model said the chat was too long",
    "manual": "as you asked",
}


def _summary_html(message: DisplayMessage, muted: str, link: str, *, dark: bool) -> tuple[str, list[str]]:
    """A compaction's marker: what happened and the sizes; the summary when opened. The
    messages above it stay as they were."""
    checkpoint = message.checkpoint
    if message.status == "streaming":
        return f'<p style="color: {muted};"><b>Summarising earlier messages…</b></p>', []
    sizes = ""
    why = ""
    if checkpoint is not None:
        why = f" {REASONS.get(checkpoint.reason, '')}"
        sizes = f" · about {checkpoint.tokens_before:,}&nbsp;→&nbsp;{checkpoint.tokens_after:,}&nbsp;tokens"
    label = "Hide&nbsp;summary" if message.expanded else "Show&nbsp;summary"
    parts = [
        f'<p style="color: {muted};"><b>Earlier messages were summarised</b>{html.escape(why)}{sizes}'
        f'&nbsp;&nbsp;<a href="cairn:toggle-summary" style="color: {link};">{label}</a></p>'
    ]
    code_blocks: list[str] = []
    if message.expanded:
        rendered = render_markdown(message.text, dark=dark)
        parts.append(rendered.html)
        code_blocks = rendered.code_blocks
    return "".join(parts), code_blocks
