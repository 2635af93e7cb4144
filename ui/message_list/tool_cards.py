"""Tool cards in the chat, one per call: the tool's readable name and where it comes from, what
the call does (its arguments once: a file's content, a diff for an edit, else JSON), the
decision once, and its result (folded when long) with how long it took. A call waiting on a
person is the same card with the choices under it.

HTML only; the view paints the card's box and turns ``cairn:`` links into actions. Where a
call's card is: with its reply while it runs, then in its result's row (``MessageModel`` links
them), or in its approval's row while a person decides.
"""

from __future__ import annotations

import difflib
import html
import json
import time
from dataclasses import dataclass
from typing import Any

from desktop.app import NO_WORKSPACE
from desktop.turn.events import Progress
from host.content import ToolResultPart
from ui.widgets.theme import Tokens
from ui.widgets.tool_words import friendly_name, source_label

__all__ = [
    "ApprovalView",
    "CallRun",
    "Palette",
    "ShownCall",
    "approval_html",
    "call_line_html",
    "describe_call",
    "tool_card_html",
]

COLLAPSED_LINES = 12
MAX_SHOWN = 20_000


@dataclass(frozen=True)
class Palette:
    """The cards' colours, from the theme's tokens."""

    muted: str
    link: str
    danger: str
    ok: str
    background: str  # a button's face
    header: str  # code and arguments
    border: str
    accent_text: str
    text: str

    @classmethod
    def of(cls, *, dark: bool) -> Palette:
        t = Tokens.of(dark=dark)
        return cls(t.muted, t.accent, t.danger, t.ok, t.surface, t.code_bg, t.border_strong, t.accent_text, t.text)


@dataclass(frozen=True)
class ShownCall:
    """A call as a reply made it."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class ApprovalView:
    """A call waiting on a person, or answered."""

    call_id: str
    tool: str
    source: str
    arguments: dict[str, Any]
    reason: str
    state: str = "waiting"  # waiting, approved, denied
    answer: str = ""


def describe_call(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    """A one-line summary of what the call would do, and a readable body: the path and the
    content of a write, a diff for an edit, the URL of a fetch, else the arguments as JSON."""
    path = str(arguments.get("path", ""))
    if name == "write_file" and isinstance(arguments.get("content"), str):
        return path, arguments["content"]
    if (
        name == "edit_file"
        and isinstance(arguments.get("old_text"), str)
        and isinstance(arguments.get("new_text"), str)
    ):
        diff = difflib.unified_diff(
            arguments["old_text"].splitlines(), arguments["new_text"].splitlines(), path, path, lineterm=""
        )
        return path, "\n".join(diff)
    if name == "fetch_url" and isinstance(arguments.get("url"), str):
        return arguments["url"], ""
    if path and name in ("read_file", "list_folder"):
        return path, ""
    if name in ("load_skill", "read_resource", "tool_search") and len(arguments) == 1:
        (value,) = arguments.values()
        if isinstance(value, str):
            return value, ""
    return "", json.dumps(arguments, indent=2, ensure_ascii=False) if arguments else ""


def _unwrapped(call: ShownCall) -> tuple[ShownCall, bool]:
    """A ``use_tool`` call (the proxy declaration policy) as the call it stands for."""
    inner, arguments = call.arguments.get("name"), call.arguments.get("arguments")
    if call.name == "use_tool" and isinstance(inner, str) and isinstance(arguments, dict):
        return ShownCall(call.call_id, inner, arguments), True
    return call, False


def _pre(text: str, palette: Palette, *, expanded: bool, toggle: str) -> str:
    """``text`` in monospace on its own shade, folded to its first lines when long."""
    if not text:
        return ""
    lines = text.splitlines()
    long = len(lines) > COLLAPSED_LINES
    shown = text if expanded or not long else "\n".join(lines[:COLLAPSED_LINES])
    body = html.escape(shown[:MAX_SHOWN] + ("\n…" if len(shown) > MAX_SHOWN else ""))
    more = ""
    if long and toggle:
        label = "Show less" if expanded else f"Show all {len(lines):,} lines"
        more = f"<tr><td>{_button(toggle, label, palette)}</td></tr>"
    return (
        f'<table width="100%" cellspacing="0" cellpadding="6" style="margin-top: 4px;">'
        f'<tr><td bgcolor="{palette.header}"><pre style="margin: 0; white-space: pre-wrap;">{body}</pre>'
        f"</td></tr>{more}</table>"
    )


def _button(action: str, label: str, palette: Palette, *, primary: bool = False) -> str:
    face, ink = (palette.link, palette.accent_text) if primary else (palette.background, palette.text)
    return (
        f'<table cellspacing="0" cellpadding="5" style="margin-top: 4px;"><tr>'
        f'<td bgcolor="{face}" style="border: 1px solid {palette.link if primary else palette.border};">'
        f'<a href="cairn:{action}" style="color: {ink}; text-decoration: none;">&nbsp;{label}&nbsp;</a>'
        f"</td></tr></table>"
    )


def _title(call: ShownCall, palette: Palette, notes: list[str], *, colour: str = "") -> str:
    shown, through = _unwrapped(call)
    name, server = friendly_name(shown.name)
    summary, _ = describe_call(shown.name, shown.arguments)
    said = [html.escape(server)] if server else []
    if through:
        said.append("through use_tool")
    said += notes
    style = f' style="color: {colour};"' if colour else ""
    line = f"<b{style}>{html.escape(name)}</b>"
    if summary:
        line += f" · {html.escape(summary)}"
    if said:
        line += f' <span style="color: {palette.muted};">· {" · ".join(said)}</span>'
    return f'<p style="margin: 0;">{line}</p>'


def _elapsed(ms: float) -> str:
    if ms >= 10_000:
        return f"{ms / 1000:,.1f} s"
    return f"{ms:,.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


@dataclass(frozen=True)
class CallRun:
    """A call running now: since when (``time.monotonic``) and how far its tool says it got."""

    started: float
    progress: Progress | None = None

    def note(self, now: float | None = None) -> str:
        """ "running… 12 s · 40% · Reading files", as HTML."""
        seconds = max((time.monotonic() if now is None else now) - self.started, 0.0)
        said = [f"running… {seconds:.0f} s"]
        progress = self.progress
        if progress is not None:
            fraction = progress.fraction
            said.append(f"{fraction:.0%}" if fraction is not None else f"{progress.done:g} done")
            if progress.message:
                said.append(html.escape(progress.message))
        return " · ".join(said)


def call_line_html(call: ShownCall, palette: Palette, *, running: bool, run: CallRun | None = None) -> str:
    """A call of a reply whose card is not elsewhere yet: it runs (for how long, how far), or
    never got an answer."""
    note = run.note() if run is not None else "running…" if running else "no result"
    return f'<div style="margin-top: 6px;">{_title(call, palette, [note])}</div>'


def tool_card_html(call: ShownCall | None, result: ToolResultPart, *, expanded: bool, palette: Palette) -> str:
    """A call and its result in one card. ``call`` is ``None`` where the reply that made it is
    not in view (its result still says which call it answers)."""
    shown = _unwrapped(call)[0] if call is not None else ShownCall(result.call_id, "tool", {})
    notes = []
    refused = result.decision == "deny" and result.content.strip() == (result.reason or "").strip()
    if result.reason:
        reason = result.reason
        notes.append(html.escape(reason[:1].upper() + reason[1:]))
    if result.resolved is not None and result.is_error:
        notes.append(f"for {html.escape(result.resolved.tool)}")
    elif result.resolved is not None:
        notes.append(f"ran as {html.escape(result.resolved.tool)}, pin {html.escape(result.resolved.pin[:8])}")
    if result.elapsed_ms is not None:
        notes.append(_elapsed(result.elapsed_ms))
    if result.is_error and not refused:
        notes.append(f'<b style="color: {palette.danger};">failed</b>')
    title = _title(call or shown, palette, notes, colour=palette.danger if result.is_error else "")
    _, arguments = describe_call(shown.name, shown.arguments)
    body = _pre(arguments, palette, expanded=expanded, toggle="toggle-result")
    if result.is_error and result.content == NO_WORKSPACE:  # the person can mend this one here
        said = "This chat has no workspace folder, so Cairn's file tools have nothing to work with."
        body += f'<p style="margin-top: 6px;">{said}</p>'
        return title + body + _button("choose-workspace", "Choose a workspace folder…", palette, primary=True)
    if not refused:
        body += _pre(result.content or "(no output)", palette, expanded=expanded, toggle="toggle-result")
    return title + body


CHOICES = (
    ("once", "Allow once (Enter)", True),
    ("chat", "Allow in this chat", False),
    ("always", "Always allow", False),
    ("never", "Never allow", False),
    ("deny", "Deny (Esc)", False),
)


def approval_html(view: ApprovalView, palette: Palette, *, expanded: bool = False, run: CallRun | None = None) -> str:
    """The card of a call waiting on a person: what it would do, why Cairn asks, the choices;
    once answered, the answer instead of the choices."""
    name, server = friendly_name(view.tool)
    summary, body = describe_call(view.tool, view.arguments)
    where = source_label(view.source) if view.source else server
    head = f"<b>Allow {html.escape(name)}</b>" + (f" · {html.escape(summary)}" if summary else "") + "?"
    notes = " · ".join(html.escape(n) for n in (where, view.reason) if n)
    lines = f'<p style="margin: 0;">{head}</p>'
    if notes:
        lines += f'<p style="margin: 0; color: {palette.muted};">{notes}</p>'
    lines += _pre(body, palette, expanded=expanded, toggle="toggle-result")
    if view.state == "waiting":
        cells = "".join(
            f"<td>{_button(f'approve/{choice}', label, palette, primary=primary)}</td>"
            for choice, label, primary in CHOICES
        )
        return lines + f'<table cellspacing="0" cellpadding="0"><tr>{cells}</tr></table>'
    colour = palette.ok if view.state == "approved" else palette.danger
    answer = html.escape(view.answer or view.state)
    running = f' <span style="color: {palette.muted};">· {run.note()}</span>' if run is not None else ""
    return lines + f'<p style="margin-top: 6px;"><b style="color: {colour};">{answer}</b>{running}</p>'
