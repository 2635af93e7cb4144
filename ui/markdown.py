"""Markdown to the HTML subset Qt's rich text understands, with highlighted code.

Each fenced code block gets a "Copy" link (``cairn:copy-code/N``); the blocks' plain text is
returned alongside, so the link can copy exactly what the block shows.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name, guess_lexer
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
        f'<a href="cairn:copy-code/{number}" style="color: {palette.link};">Copy</a></td></tr>'
        f'<tr><td><pre style="margin: 0;">{_highlight(code, language, palette)}</pre></td></tr></table>'
    )


@lru_cache(maxsize=2)
def _formatter(style: str) -> HtmlFormatter[str]:
    return HtmlFormatter(style=style, noclasses=True, nowrap=True)


def _highlight(code: str, language: str, palette: Palette) -> str:
    try:
        lexer = get_lexer_by_name(language) if language else guess_lexer(code)
    except ClassNotFound:
        return html.escape(code)
    if not language and lexer.name == "Text only":
        return html.escape(code)
    return str(highlight(code, lexer, _formatter(palette.pygments_style)))


def render_markdown(text: str, *, dark: bool = False) -> Rendered:
    env: dict[str, Any] = {"palette": DARK if dark else LIGHT, "code_blocks": []}
    return Rendered(_parser().render(text, env), env["code_blocks"])
