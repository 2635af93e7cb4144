"""What the chat view shows for each row, and the HTML it paints it with. No widgets here."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from desktop.app import TranscriptRow, shown_size
from host.content import (
    Checkpoint,
    ErrorContent,
    FilePart,
    ImagePart,
    MessageContent,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ui.message_list.long_text import LONG_REPLY, long_text_html
from ui.message_list.markdown import render_markdown
from ui.message_list.markdown_blocks import hard_breaks
from ui.message_list.tool_cards import (
    ApprovalView,
    CallRun,
    Palette,
    ShownCall,
    approval_html,
    call_line_html,
    tool_card_html,
)
from ui.widgets.theme import Tokens

__all__ = [
    "ATTACHMENT_URL",
    "FILE_ICON_URL",
    "LONG_REPLY",
    "MODEL_TITLES",
    "THUMB",
    "Action",
    "DisplayMessage",
    "Joined",
    "Kind",
    "MessageParts",
    "attachments_html",
    "header_line",
    "message_actions",
    "message_html",
    "message_parts",
    "shown_time",
    "thumbnail_size",
]

ATTACHMENT_URL = "cairn-attachment:"  # + sha256: an image's thumbnail, a resource of the document
FILE_ICON_URL = "cairn-icon:file"
THUMB = 160  # the longest side of an image in the chat

Kind = Literal["user", "assistant", "tool", "error", "approval", "summary"]


@dataclass
class DisplayMessage:
    """One item of the chat view. ``version`` changes whenever what it shows changes."""

    key: str
    kind: Kind
    seq: int | None = None
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ShownCall] = field(default_factory=list)
    settled: set[str] = field(default_factory=set)  # the calls whose card is in another row (their result's)
    tool_result: ToolResultPart | None = None
    call: ShownCall | None = None  # the call a tool result answers, where its reply is in view
    approval: ApprovalView | None = None
    expanded: bool = False  # a long tool result shown whole
    status: str = "complete"  # complete, interrupted, streaming, error, unsaved
    model: str = ""
    finish_reason: str | None = None
    error: str = ""
    error_kind: str = ""  # the provider error's type: what a failed request can offer to mend
    retryable: bool = False
    reasoning_open: bool = False
    waited: float | None = None  # seconds spent waiting for the first token, while streaming
    checkpoint: Checkpoint | None = None  # a compaction's marker: its summary is ``text``
    created_at: str = ""  # when it was saved, as the journal stores it
    versions: tuple[int, int] | None = None  # (which, of how many): a message with other versions
    attachments: list[ImagePart | FilePart] = field(default_factory=list)
    runs: dict[str, CallRun] = field(default_factory=dict)  # its calls running now, by call id
    continues: str | None = None  # a continue prompt: the reply it continues (hidden; see ``continued``)
    into: DisplayMessage | None = None  # a continue prompt or continuation: the message showing it
    joined: Joined | None = None  # a reply shown with its continuations
    version: int = 0

    def touch(self) -> None:
        self.version += 1

    @property
    def folded(self) -> bool:
        """Whether the message is shown as part of another (or not at all): a continue
        prompt, or a continuation of a reply cut off at the length limit."""
        return self.continues is not None or self.into is not None

    @property
    def shown(self) -> str:
        """The text the view renders: ``text``, or a joined reply's as ``continued`` shows it."""
        return self.joined.shown if self.joined is not None else self.text

    @property
    def last_key(self) -> str:
        """The key of the last row the message shows (a joined reply's last part)."""
        return self.joined.parts[-1].key if self.joined is not None else self.key

    @classmethod
    def from_row(cls, row: TranscriptRow) -> DisplayMessage | None:
        body = row.body()
        if row.role == "system":
            checkpoint = row.meta()
            if not isinstance(checkpoint, Checkpoint):
                return None
            return cls(
                key=row.id,
                kind="summary",
                seq=row.seq,
                text=checkpoint.summary,
                checkpoint=checkpoint,
                created_at=row.created_at,
            )
        if isinstance(body, ErrorContent):
            return cls(
                key=row.id,
                kind="error",
                seq=row.seq,
                created_at=row.created_at,
                status="error",
                error=body.error.message,
                error_kind=body.error.kind,
                retryable=body.error.retryable,
            )
        if not isinstance(body, MessageContent) or not body.parts:
            return None
        shown = cls(
            key=row.id,
            kind=row.role,
            seq=row.seq,
            created_at=row.created_at,
            status=body.status,
            model=body.model or "",
            finish_reason=body.finish_reason,
            continues=body.continues if row.role == "user" else None,
        )
        for part in body.parts:
            if isinstance(part, TextPart):
                shown.text += part.text
            elif isinstance(part, ReasoningPart):
                shown.reasoning += part.text
            elif isinstance(part, ToolCallPart):
                shown.tool_calls.append(ShownCall(part.call_id, part.name, dict(part.arguments)))
            elif isinstance(part, ToolResultPart):
                shown.tool_result = part
            elif isinstance(part, ImagePart | FilePart):
                shown.attachments.append(part)
        return shown


@dataclass
class Joined:
    """What a reply shows joined to it: its own content as it was (``own``), its continuations
    (``parts``), and the text the view renders (``shown``). ``stamp`` says what it was worked
    out from; ``fences`` remembers where earlier parts left a code fence open."""

    own: DisplayMessage
    parts: list[DisplayMessage]
    stamp: tuple[tuple[int, int, int, int], ...] = ()
    shown: str = ""
    fences: dict[tuple[int, int], str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Action:
    """A button under a message: ``name`` is what it does (the view's action), ``tip`` says so."""

    name: str
    tip: str


def message_actions(message: DisplayMessage, *, last_user: bool, last_answer: bool) -> list[Action]:
    """The buttons shown under a message when the pointer is over it, in order."""
    if message.status == "streaming" or message.kind not in ("user", "assistant"):
        return []
    actions = []
    if message.versions is not None:
        which, count = message.versions
        if which > 1:
            actions.append(Action("version-prev", f"Show the earlier version ({which - 1} of {count})"))
        if which < count:
            actions.append(Action("version-next", f"Show the later version ({which + 1} of {count})"))
    if message.text:
        actions.append(Action("copy", "Copy the message"))
    if message.kind == "user" and message.status != "unsaved":  # any of yours: a new version from there
        actions.append(Action("edit", "Edit: a new version from here" if not last_user else "Edit and send again"))
    if message.kind == "assistant" and last_answer and message.status != "unsaved":
        if message.finish_reason == "length":
            actions.append(Action("continue", "Continue where the reply was cut off"))
        actions.append(Action("regenerate", "Answer again"))
    if message.kind == "assistant" and message.status == "complete" and message.seq is not None:
        actions.append(Action("branch", "Branch into a new chat from here"))
    return actions


def shown_time(created_at: str, now: datetime | None = None) -> tuple[str, str]:
    """When a message was saved, short (``14:05``, or ``28 Nov, 14:05`` before today) and in
    full for its tooltip, in local time. Empty for a time that cannot be read."""
    try:
        when = datetime.fromisoformat(created_at.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return "", ""
    now = now or datetime.now(when.tzinfo)
    clock = when.strftime("%H:%M")
    day = f"{when.day} {when.strftime('%b')}" + ("" if when.year == now.year else f" {when.year}")
    short = clock if when.date() == now.date() else f"{day}, {clock}"
    return short, f"{when.strftime('%A')} {when.day} {when.strftime('%B %Y')}, {when.strftime('%H:%M:%S')}"


@dataclass(frozen=True)
class MessageParts:
    """What a message shows, top to bottom: ``head`` (HTML: its header line, reasoning,
    attachments, or the whole of a card), ``body`` (its text, Markdown) or ``preview`` (HTML:
    a long text's opening, plain), then ``foot`` (HTML: its tool calls and result)."""

    head: str = ""
    body: str = ""
    preview: str = ""
    foot: str = ""


def message_parts(message: DisplayMessage, *, dark: bool, last_user: bool, last_answer: bool) -> MessageParts:
    """The message's parts. Its buttons (copy, edit, ...) are not in them: see ``message_actions``."""
    t = Tokens.of(dark=dark)
    if message.kind == "error":
        # Retry asks again from the end of the chat, so only the chat's last answer offers it:
        # once a retry succeeded, the earlier error row is history and shows no link.
        if not last_answer:  # history: something came after it, so it folds into one quiet line
            said = message.error if len(message.error) <= 72 else message.error[:71] + "…"
            quiet = f"color: {t.muted}; white-space: nowrap;"
            return MessageParts(head=f'<p style="{quiet}">↻ A request failed here · {html.escape(said)}</p>')
        retry = f'&nbsp;&nbsp;<a href="cairn:retry" style="color: {t.accent};">Retry</a>'
        if message.error_kind in ACCOUNT_PROBLEMS:  # the address, the key or the connection: the account mends it
            retry += (
                f'&nbsp;&nbsp;<a href="cairn:account-settings" style="color: {t.accent};">Open account settings</a>'
            )
        return MessageParts(
            head=f'<p><b style="color: {t.danger};">Something went wrong.</b> {html.escape(message.error)}{retry}</p>'
        )
    if message.kind == "summary":
        opened = message.expanded and message.status != "streaming"
        return MessageParts(head=_summary_html(message, t), body=message.text if opened else "")
    palette = Palette.of(dark=dark)
    if message.approval is not None:
        run = message.runs.get(message.approval.call_id)
        return MessageParts(head=approval_html(message.approval, palette, expanded=message.expanded, run=run))
    if message.tool_result is not None:  # a call and its result, one card
        card = tool_card_html(message.call, message.tool_result, expanded=message.expanded, palette=palette)
        return MessageParts(head=card)
    head = []
    header = header_line(message, t) if message.kind != "tool" else ""  # a tool result's card has its own title
    if header:
        head.append(f'<p style="margin-bottom: 6px;">{header}</p>')
    if message.reasoning:
        arrow = "▾" if message.reasoning_open else "▸"
        head.append(
            f'<p><a href="cairn:toggle-reasoning" style="color: {t.muted}; text-decoration: none;">'
            f"{arrow} Reasoning</a></p>"
        )
        if message.reasoning_open:
            text = html.escape(message.reasoning).replace("\n", "<br>")
            head.append(f'<p style="color: {t.muted};"><i>{text}</i></p>')
    if message.attachments:
        head.append(attachments_html(message.attachments, t))
    body = preview = ""
    if len(message.text) >= LONG_REPLY:
        preview = long_text_html(message.shown, t, streaming=message.status == "streaming")
    elif message.text:
        body = hard_breaks(message.text) if message.kind == "user" else message.shown
    running = last_answer and message.status == "complete"
    foot = [
        call_line_html(c, palette, running=running, run=message.runs.get(c.call_id))
        for c in message.tool_calls
        if c.call_id not in message.settled
    ]
    return MessageParts("".join(head), body, preview, "".join(foot))


def message_html(message: DisplayMessage, *, dark: bool, last_user: bool, last_answer: bool) -> tuple[str, list[str]]:
    """The message's parts as one piece of HTML, and the text of its code blocks (for their
    Copy links)."""
    parts = message_parts(message, dark=dark, last_user=last_user, last_answer=last_answer)
    rendered = render_markdown(parts.body, dark=dark) if parts.body else None
    body = rendered.html if rendered is not None else parts.preview
    return parts.head + body + parts.foot, rendered.code_blocks if rendered is not None else []


def thumbnail_size(part: ImagePart) -> tuple[int, int]:
    """The size an image is shown at in the chat: within ``THUMB`` a side, its shape kept."""
    width, height = part.width or THUMB, part.height or THUMB * 3 // 4
    scale = min(1.0, THUMB / max(width, height, 1))
    return max(int(width * scale), 1), max(int(height * scale), 1)


def attachments_html(attachments: list[ImagePart | FilePart], t: Tokens) -> str:
    """A message's images as thumbnails (``ATTACHMENT_URL`` resources the view provides) and
    its text files as chips with their name and size; never a file's text."""
    images = []
    files = []
    for part in attachments:
        name = html.escape(part.name or "image")
        if isinstance(part, ImagePart) and part.sha256 is not None:
            w, h = thumbnail_size(part)
            images.append(f'<img src="{ATTACHMENT_URL}{part.sha256}" width="{w}" height="{h}" title="{name}">')
        elif isinstance(part, ImagePart):
            files.append(f'<span style="color: {t.muted};">[image]</span>')
        else:
            files.append(
                f'<img src="{FILE_ICON_URL}" width="16" height="16" style="vertical-align: middle;">&nbsp;'
                f'<span style="background-color: {t.chip_bg};">&nbsp;{name}&nbsp;</span>'
                f'&nbsp;<span style="color: {t.muted};">{shown_size(part.size)}</span>'
            )
    out = []
    if images:
        out.append(f'<p style="margin-bottom: 6px;">{"&nbsp;&nbsp;".join(images)}</p>')
    if files:
        out.append(f'<p style="margin-bottom: 6px;">{"<br>".join(files)}</p>')
    return "".join(out)


# Readable names of model ids that are not (the built-in engine's are SHA-256s), from the
# core's snapshot: the route controller keeps it current.
MODEL_TITLES: dict[str, str] = {}


def header_line(message: DisplayMessage, t: Tokens) -> str:
    """A quiet line above a reply: the model, and what state it is in. Your own messages have
    one only when something is wrong with them."""
    notes = []
    if message.model and message.kind == "assistant":
        model = message.model.split("/", 1)[-1]  # the route key is provider/model
        named = MODEL_TITLES.get(model, model)
        notes.append(html.escape(named))
    if message.status == "interrupted":
        notes.append(f'<span style="color: {t.danger};">interrupted</span>')
    if message.status == "unsaved":
        notes.append(f'<span style="color: {t.danger};">not saved</span>')
    if message.status == "streaming" and message.waited is not None and not (message.text or message.reasoning):
        notes.append(f"the model is reading the prompt… {message.waited:.0f} s")
    elif message.status == "streaming":
        notes.append("writing…")
    if message.finish_reason == "length":
        notes.append(f'<span style="color: {t.danger};">cut off at the length limit</span>')
    if not notes:
        return ""
    return f'<span style="color: {t.muted};">{" · ".join(notes)}</span>'


ACCOUNT_PROBLEMS = frozenset({"ProviderConnectionError", "ProviderTimeout", "AuthenticationFailed"})
REASONS = {
    "automatic": "to keep the chat within the model's context",
    "overflow": "after the model said the chat was too long",
    "manual": "as you asked",
}


def _summary_html(message: DisplayMessage, t: Tokens) -> str:
    """A compaction's marker: what happened and the sizes (its summary is the message's body,
    shown when opened). The messages above it stay as they were."""
    checkpoint = message.checkpoint
    if message.status == "streaming":
        return f'<p style="color: {t.muted};"><b>Summarising earlier messages…</b></p>'
    sizes = ""
    why = ""
    if checkpoint is not None:
        why = f" {REASONS.get(checkpoint.reason, '')}"
        sizes = f" · about {checkpoint.tokens_before:,}&nbsp;→&nbsp;{checkpoint.tokens_after:,}&nbsp;tokens"
    label = "Hide&nbsp;summary" if message.expanded else "Show&nbsp;summary"
    return (
        f'<p style="color: {t.muted};"><b>Earlier messages were summarised</b>{html.escape(why)}{sizes}'
        f'&nbsp;&nbsp;<a href="cairn:toggle-summary" style="color: {t.accent};">{label}</a></p>'
    )
