"""Tool cards in the chat: a call (its arguments, readably), its result (collapsed when long,
with how long it took and why it ran or did not), and the approval card a person answers.

HTML only; the chat view paints it and turns ``cairn:`` links into actions.
"""

from __future__ import annotations

import difflib
import html
import json
from dataclasses import dataclass
from typing import Any

from ui.widgets.theme import Tokens

__all__ = ["ApprovalView", "Palette", "approval_html", "describe_call", "result_html", "tool_call_html"]

COLLAPSED_LINES = 12
MAX_SHOWN = 20_000


@dataclass(frozen=True)
class Palette:
    """The cards' colours, from the theme's tokens."""

    muted: str
    link: str
    danger: str
    ok: str
    background: str  # a card's body
    header: str  # a card's title row
    border: str
    accent_text: str

    @classmethod
    def of(cls, *, dark: bool) -> Palette:
        t = Tokens.of(dark=dark)
        return cls(t.muted, t.accent, t.danger, t.ok, t.code_bg, t.surface_alt, t.border_strong, t.accent_text)


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
        return f"Write {path}", arguments["content"]
    if (
        name == "edit_file"
        and isinstance(arguments.get("old_text"), str)
        and isinstance(arguments.get("new_text"), str)
    ):
        diff = difflib.unified_diff(
            arguments["old_text"].splitlines(), arguments["new_text"].splitlines(), path, path, lineterm=""
        )
        return f"Edit {path}", "\n".join(diff)
    if name == "fetch_url" and isinstance(arguments.get("url"), str):
        return f"Fetch {arguments['url']}", ""
    if path and name in ("read_file", "list_folder"):
        return f"{'Read' if name == 'read_file' else 'List'} {path}", ""
    return name, json.dumps(arguments, indent=2, ensure_ascii=False)


def _block(text: str, colour: str, palette: Palette, *, title: str, expanded: bool = True, toggle: str = "") -> str:
    """A card: a shaded title row over the text in monospace, collapsed when long."""
    del colour  # the title says what kind of card it is; the frame stays quiet
    lines = text.splitlines()
    shown = text if expanded or len(lines) <= COLLAPSED_LINES else "\n".join(lines[:COLLAPSED_LINES])
    more = ""
    if len(lines) > COLLAPSED_LINES and toggle:
        label = "Show less" if expanded else f"Show all {len(lines):,} lines"
        more = f'<tr><td><a href="cairn:{toggle}" style="color: {palette.link};">{label}</a></td></tr>'
    body = html.escape(shown[:MAX_SHOWN] + ("\n…" if len(shown) > MAX_SHOWN else ""))
    pre = f'<tr><td><pre style="margin: 0; white-space: pre-wrap;">{body}</pre></td></tr>' if body else ""
    return (
        f'<table width="100%" cellspacing="0" cellpadding="8" bgcolor="{palette.background}" '
        f'style="border: 1px solid {palette.border}; margin-top: 4px; margin-bottom: 4px;">'
        f'<tr><td bgcolor="{palette.header}">{title}</td></tr>{pre}{more}</table>'
    )


def tool_call_html(name: str, arguments: dict[str, Any], palette: Palette) -> str:
    """A call card; a ``use_tool`` call (the proxy declaration policy) shows the call it stands
    for, and says it went through ``use_tool``."""
    through = ""
    inner, inner_arguments = arguments.get("name"), arguments.get("arguments")
    if name == "use_tool" and isinstance(inner, str) and isinstance(inner_arguments, dict):
        name, arguments, through = inner, inner_arguments, " (through use_tool)"
    summary, body = describe_call(name, arguments)
    title = f'<b style="color: {palette.link};">Tool call</b> · {html.escape(summary)}{through}'
    return _block(body, palette.link, palette, title=title)


def result_html(
    content: str,
    *,
    is_error: bool,
    reason: str | None,
    elapsed_ms: float | None,
    expanded: bool,
    palette: Palette,
    resolved: tuple[str, str] | None = None,
) -> str:
    """A result card. ``resolved``: the tool and pin a ``use_tool`` call was checked as (the
    pin only when it ran)."""
    colour = palette.danger if is_error else palette.muted
    label = "Tool error" if is_error else "Tool result"
    notes = [html.escape(reason)] if reason else []
    if resolved is not None and is_error:
        notes.append(f"for {html.escape(resolved[0])}")
    elif resolved is not None:
        notes.append(f"ran as {html.escape(resolved[0])}, pin {html.escape(resolved[1][:8])}")
    if elapsed_ms is not None:
        notes.append(f"{elapsed_ms:,.0f} ms" if elapsed_ms >= 10 else f"{elapsed_ms:.1f} ms")
    said = f' <span style="color: {palette.muted};">· {" · ".join(notes)}</span>' if notes else ""
    title = f'<b style="color: {colour};">{label}</b>{said}'
    return _block(content, colour, palette, title=title, expanded=expanded, toggle="toggle-result")


def approval_html(view: ApprovalView, palette: Palette) -> str:
    summary, body = describe_call(view.tool, view.arguments)
    where = html.escape(view.source)
    head = (
        f"<b>Allow {html.escape(view.tool)}?</b> "
        f'<span style="color: {palette.muted};">· from {where} · {html.escape(view.reason)}</span><br>'
        f"{html.escape(summary)}"
    )
    if view.state == "waiting":
        choices = (
            ("once", "Allow once (Enter)", True),
            ("chat", "Allow in this chat", False),
            ("always", "Always allow", False),
            ("never", "Never allow", False),
            ("deny", "Deny (Esc)", False),
        )
        cells = "".join(
            f'<td bgcolor="{palette.link if primary else palette.header}" '
            f'style="border: 1px solid {palette.link if primary else palette.border};">'
            f'<a href="cairn:approve/{choice}" style="color: {palette.accent_text if primary else palette.link}; '
            f'text-decoration: none;">{label}</a></td>'
            for choice, label, primary in choices
        )
        links = f'<table cellspacing="6" cellpadding="5" style="margin-left: -6px;"><tr>{cells}</tr></table>'
    else:
        colour = palette.ok if view.state == "approved" else palette.danger
        links = f'<b style="color: {colour};">{html.escape(view.answer or view.state)}</b>'
    return _block(body, palette.danger, palette, title=f"{head}{links if view.state == 'waiting' else '<br>' + links}")
