"""Markdown to the HTML subset Qt's rich text understands, with highlighted code.

Each fenced code block gets a "Copy" link (``cairn:copy-code/N``); the blocks' plain text is
returned alongside, so the link can copy exactly what the block shows.

Text is rendered in top-level blocks (split at blank lines outside code, before a line that
starts a new paragraph), each cached: a streaming reply re-renders only its newest block, and
a finished reply reuses what was rendered while it streamed.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

__all__ = ["Rendered", "render_markdown"]


@dataclass(frozen=True)
class Palette:
    code_background: str
    code_border: str
    link: str
    pygments_style: str


LIGHT = Palette("#f4f5f7", "#d9dce1", "#2f6fdb", "friendly")
DARK = Palette("#1f2329", "#343a43", "#7aa7ff", "monokai")


@dataclass
class Rendered:
    html: str
    code_blocks: list[str] = field(default_factory=list)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
        ["table", "strikethrough"]
    )
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _fence)
    return md


def _fence(_renderer: Any, tokens: list[Any], index: int, _options: Any, env: dict[str, Any]) -> str:
    token = tokens[index]
    palette: Palette = env["palette"]
    blocks: list[str] = env["code_blocks"]
    language = (token.info or "").strip().split(" ")[0]
    code = token.content.rstrip("\n")
    number = len(blocks)
    blocks.append(code)
    label = html.escape(language) if language else "code"
    return (
        f'<table width="100%" cellspacing="0" cellpadding="6" bgcolor="{palette.code_background}" '
        f'style="border: 1px solid {palette.code_border}; margin-top: 4px; margin-bottom: 4px;">'
        f'<tr><td><span style="color: gray;">{label}</span>&nbsp;&nbsp;'
        f'<a href="cairn:copy-code/@{number}@" style="color: {palette.link};">Copy</a></td></tr>'
        f'<tr><td><pre style="margin: 0;">{_highlight(code, language, palette)}</pre></td></tr></table>'
    )


@lru_cache(maxsize=2)
def _formatter(style: str) -> HtmlFormatter[str]:
    return HtmlFormatter(style=style, noclasses=True, nowrap=True)


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    return get_lexer_by_name(language)


def _highlight(code: str, language: str, palette: Palette) -> str:
    # Never guess a language: guessing tries every lexer Pygments has, which takes far too
    # long on the GUI thread. A block without a language is shown as plain text.
    if not language:
        return html.escape(code)
    try:
        lexer = _lexer(language.lower())
    except ClassNotFound:
        return html.escape(code)
    return str(highlight(code, lexer, _formatter(palette.pygments_style)))


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CONTINUES = re.compile(r"^(\s|[-*+] |\d+[.)] |>|\|)")
_LOCAL_BLOCK = re.compile(r"cairn:copy-code/@(\d+)@")


def split_blocks(text: str) -> list[str]:
    """Cut ``text`` where rendering the pieces apart gives what rendering it whole would."""
    blocks: list[str] = []
    start = 0
    fence: str | None = None
    lines = text.split("\n")
    offset = 0
    previous_blank = False
    for line in lines:
        marker = _FENCE.match(line)
        if fence is None and previous_blank and line and not _CONTINUES.match(line) and offset > start:
            blocks.append(text[start:offset])
            start = offset
        if marker and (fence is None or marker.group(1).startswith(fence)):
            fence = None if fence is not None else marker.group(1)[:3]
        previous_blank = fence is None and not line.strip()
        offset += len(line) + 1
    blocks.append(text[start:])
    return [b for b in blocks if b]


@lru_cache(maxsize=4096)
def _render_block(block: str, dark: bool) -> tuple[str, tuple[str, ...]]:
    env: dict[str, Any] = {"palette": DARK if dark else LIGHT, "code_blocks": []}
    return _parser().render(block, env), tuple(env["code_blocks"])


def render_block(block: str, *, dark: bool, first_code_block: int = 0) -> tuple[str, tuple[str, ...]]:
    """One top-level block's HTML, its code blocks numbered from ``first_code_block``."""
    body, codes = _render_block(block, dark)
    html_ = _LOCAL_BLOCK.sub(lambda m: f"cairn:copy-code/{int(m.group(1)) + first_code_block}", body)
    return html_, codes


def render_markdown(text: str, *, dark: bool = False) -> Rendered:
    rendered = Rendered("")
    pieces = []
    for block in split_blocks(text):
        body, codes = render_block(block, dark=dark, first_code_block=len(rendered.code_blocks))
        pieces.append(body)
        rendered.code_blocks.extend(codes)
    rendered.html = "".join(pieces)
    return rendered
