"""A text too long to lay out in the chat (a generated file, a log): what it is, how to see
it whole, and its first lines, plain. Laying out 2 MB of text takes over a second and about
120 MB; its first lines take a millisecond."""

from __future__ import annotations

import html

from desktop.app import shown_size
from ui.widgets.theme import Tokens

__all__ = ["LONG_REPLY", "PREVIEW_LINES", "long_text_html"]

LONG_REPLY = 100_000  # characters past which a message's text is shown plain and in part
PREVIEW_LINES = 40  # the lines of a long reply shown in the chat
PREVIEW_LINE = 400  # characters of each
_LINE = "margin-top: 0; margin-bottom: 0; white-space: pre-wrap;"


def long_text_html(text: str, t: Tokens, *, streaming: bool) -> str:
    """A text too long to lay out in the chat: what it is, how to see it whole, and its first
    lines, plain."""
    lines = text.count("\n") + 1
    size = shown_size(len(text.encode("utf-8", "surrogatepass")))
    so_far = " so far" if streaming else ""
    links = (
        ""
        if streaming
        else "&nbsp;&nbsp;".join(
            f'<a href="cairn:{href}" style="color: {t.accent};">{label}</a>'
            for href, label in (("open-whole", "Open whole"), ("copy", "Copy"), ("save-as", "Save as…"))
        )
    )
    note = (
        f'<p style="color: {t.muted}; margin-bottom: 6px;">A long reply ({size}, {lines:,} lines{so_far}): '
        f"shown here as plain text, its first {min(lines, PREVIEW_LINES)} lines.&nbsp;&nbsp;{links}</p>"
    )
    shown = []
    for line in text.split("\n", PREVIEW_LINES)[:PREVIEW_LINES]:
        cut = line[:PREVIEW_LINE] + ("…" if len(line) > PREVIEW_LINE else "")
        shown.append(f'<p style="{_LINE}">{html.escape(cut) or "&nbsp;"}</p>')
    more = f'<p style="color: {t.muted};">…</p>' if lines > PREVIEW_LINES else ""
    return note + "".join(shown) + more
