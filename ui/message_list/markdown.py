"""Markdown to the HTML subset Qt's rich text understands, with highlighted code and math.

Each fenced code block gets a "Copy" link (``cairn:copy-code/N``); the blocks' plain text is
returned alongside, so the link can copy exactly what the block shows. Long code lines wrap
inside their block (``white-space: pre-wrap``); the kept text has no inserted breaks.

Model text never becomes an action: raw HTML stays text, and a link to a ``cairn:`` address
(or any scheme but web and mail) is shown as the text it was written as.

Text is rendered in top-level blocks (split at blank lines outside code, before a line that
starts a new paragraph), each cached: a streaming reply re-renders only its newest block, and
a finished reply reuses what was rendered while it streamed.
"""

from __future__ import annotations

import contextlib
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

from ui.message_list import math_images
from ui.message_list.markdown_blocks import fenced, split_blocks
from ui.message_list.markdown_math import math_plugin
from ui.widgets.theme import Tokens

__all__ = [
    "LIST_INDENT",
    "RICH_BLOCK",
    "Rendered",
    "fenced",
    "grown_code_html",
    "grown_text_html",
    "palette",
    "render_block",
    "render_markdown",
    "split_blocks",
]

# A block longer than this is shown as plain text (code keeps its own font and shade, without
# colours): its rich layout would hold the window for tens of milliseconds, and, set as one
# piece of HTML, it could not grow a line at a time while it streams.
RICH_BLOCK = 6_000


def palette(dark: bool) -> dict[str, str]:
    """The colours a message's Markdown is drawn in, by role, from the theme's tokens."""
    t = Tokens.of(dark=dark)
    return {
        "text": t.text,
        "muted": t.muted,
        "code_bg": t.code_bg,
        "code_border": t.code_border,
        "quote_rule": t.quote_rule,
        "table_border": t.border_strong,
        "table_header_bg": t.surface_alt,
        "chip_bg": t.chip_bg,
        "link": t.accent,
    }


LIST_INDENT = 24  # pixels per list level; Qt's own 40 pushes nested lists far right
_QT_LIST_INDENT = 40
_QUOTE_RULE_WIDTH = 3


# Qt's HTML reader lets the next paragraph take over an empty block (an empty list item, cell,
# heading or quote) when the whole text is read at once, but not when a streamed document
# appends that paragraph later: so no element is left without text.
_EMPTY = "&nbsp;"


@dataclass
class Rendered:
    """A message's HTML and the exact text of each of its code blocks, in order."""

    html: str
    code_blocks: list[str] = field(default_factory=list)


_LINK_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
_SAFE_SCHEMES = {"http", "https", "mailto"}


def _safe_link(url: str) -> bool:
    scheme = _LINK_SCHEME.match(url.strip())
    return scheme is None or scheme.group(1).lower() in _SAFE_SCHEMES


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
        ["table", "strikethrough"]
    )
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.use(math_plugin, on_open=math_images.prepare)
    for name, rule in _RULES.items():
        md.add_render_rule(name, rule)
    return md


# -- render rules: each takes (renderer, tokens, index, options, env) -------------------------


def _fence(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    token = tokens[index]
    colours: dict[str, str] = env["palette"]
    blocks: list[str] = env["code_blocks"]
    language = (token.info or "").strip().split(" ")[0]
    code = token.content.rstrip("\n")
    number = len(blocks)
    blocks.append(code)
    label = html.escape(language) if language else "code"
    shown = (_highlight if env["highlight"] else _uncoloured)(code, language, env["dark"]) if code else _EMPTY
    return (
        f'<table width="100%" cellspacing="0" cellpadding="6" bgcolor="{colours["code_bg"]}" '
        f'border="1" style="border-collapse: collapse; border-style: solid; border-color: {colours["code_border"]}; '
        'margin-top: 6px; margin-bottom: 6px;">'
        f'<tr><td><span style="color: {colours["muted"]};">{label}</span>&nbsp;&nbsp;'
        f'<a href="cairn:copy-code/@{number}@" style="color: {colours["link"]};">Copy</a></td></tr>'
        f'<tr><td><pre style="margin: 0; white-space: pre-wrap;">{shown}</pre></td></tr></table>'
    )


def _code_inline(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    return _chip(tokens[index].content, env)


def _chip(text: str, env: dict[str, Any]) -> str:
    # Qt cannot pad an inline span: narrow no-break spaces in the chip's colour stand in.
    return (
        f'<span style="background-color: {env["palette"]["chip_bg"]};">&#8239;'
        f"<code>{html.escape(text)}</code>&#8239;</span>"
    )


def _math(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    token = tokens[index]
    block = token.type == "math_block"
    display = block or bool(token.meta.get("display"))
    colour = env["palette"]["muted" if env["quotes"] else "text"]
    style = env["math_style"]
    # Formulas that reach below the baseline sit right on a line only if they reach equally far.
    inline = [(t.content, bool(t.meta.get("display"))) for t in tokens if t.type == "math_inline"]
    deepest = 0.0 if block else math_images.reach(inline, style=style)
    image = math_images.formula_html(token.content, colour=colour, style=style, display=display, reach=deepest)
    closers = {"$": "$", "$$": "$$", "\\(": "\\)", "\\[": "\\]"}
    shown = image or _chip(f"{token.markup}{token.content}{closers[token.markup]}", env)
    return f'<p align="center">{shown}</p>' if block else shown


def _table_open(_r: Any, _t: list[Any], _i: int, _o: Any, env: dict[str, Any]) -> str:
    border = env["palette"]["table_border"]
    return (
        f'<table border="1" cellspacing="0" cellpadding="5" style="border-collapse: collapse; '
        f'border-style: solid; border-color: {border}; margin-top: 6px; margin-bottom: 6px;">'
    )


def _cell(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    token = tokens[index]
    style = str(token.attrGet("style") or "")
    align = style.removeprefix("text-align:") if style.startswith("text-align:") else "left"
    shade = f' bgcolor="{env["palette"]["table_header_bg"]}"' if token.tag == "th" else ""
    return f'<{token.tag} align="{html.escape(align)}"{shade}>{_filler(tokens, index)}'


def _filled(renderer: Any, tokens: list[Any], index: int, options: Any, env: dict[str, Any]) -> str:
    return str(renderer.renderToken(tokens, index, options, env)) + _filler(tokens, index)


def _filler(tokens: list[Any], index: int) -> str:
    """Something to stand in an element that would otherwise hold no text."""
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    empty = after is None or after.nesting == -1 or after.type == "hr" or (after.type == "inline" and not after.content)
    return _EMPTY if empty else ""


def _quote_open(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    env["quotes"] += 1
    colours = env["palette"]
    return (
        '<table width="100%" cellspacing="0" cellpadding="0" style="margin-top: 6px; margin-bottom: 6px;"><tr>'
        f'<td width="{_QUOTE_RULE_WIDTH}" bgcolor="{colours["quote_rule"]}"></td>'
        f'<td style="padding-left: 10px; color: {colours["muted"]};">{_filler(tokens, index)}'
    )


def _quote_close(_r: Any, _t: list[Any], _i: int, _o: Any, env: dict[str, Any]) -> str:
    env["quotes"] -= 1
    return "</td></tr></table>"


def _list_open(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    token = tokens[index]
    nested = env["lists"] > 0
    env["lists"] += 1
    # Qt indents every level by 40 px; a negative margin brings each level back to LIST_INDENT.
    style = f"margin-left: {LIST_INDENT - _QT_LIST_INDENT}px;"
    if nested:
        style += " margin-top: 0; margin-bottom: 0;"
    start = token.attrGet("start")
    first = f' start="{int(start)}"' if start is not None else ""
    return f'<{token.tag}{first} style="{style}">'


def _list_close(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    env["lists"] -= 1
    return f"</{tokens[index].tag}>"


def _link_open(renderer: Any, tokens: list[Any], index: int, options: Any, env: dict[str, Any]) -> str:
    tokens[index].attrSet("style", f"color: {env['palette']['link']};")
    return str(renderer.renderToken(tokens, index, options, env))


def _rule(_r: Any, _t: list[Any], _i: int, _o: Any, env: dict[str, Any]) -> str:
    return f'<hr style="background-color: {env["palette"]["table_border"]};" />'


def _image(_r: Any, tokens: list[Any], index: int, _o: Any, env: dict[str, Any]) -> str:
    # A painted message cannot fetch images, and loading a local path would read the disk on
    # the GUI thread: show what the image is of.
    alt = html.escape(tokens[index].content or "image")
    return f'<span style="color: {env["palette"]["muted"]};">[{alt}]</span>'


_RULES = {
    "fence": _fence,
    "code_block": _fence,
    "code_inline": _code_inline,
    "math_inline": _math,
    "math_block": _math,
    "table_open": _table_open,
    "th_open": _cell,
    "td_open": _cell,
    "blockquote_open": _quote_open,
    "blockquote_close": _quote_close,
    "bullet_list_open": _list_open,
    "ordered_list_open": _list_open,
    "bullet_list_close": _list_close,
    "ordered_list_close": _list_close,
    "list_item_open": _filled,
    "heading_open": _filled,
    "link_open": _link_open,
    "image": _image,
    "hr": _rule,
}


COMMON_LANGUAGES = ("python", "javascript", "typescript", "bash", "json", "html", "css", "sql", "rust", "go", "java")


def warm_up() -> None:
    """Load what rendering code needs before the first reply does: Pygments reads a lexer's
    module the first time it is asked (60 ms for Python's), which on the GUI thread is a stall.
    Pure Python, no Qt: it runs on a thread of its own."""
    _parser()
    for style in {Tokens.of(dark=False).pygments_style, Tokens.of(dark=True).pygments_style}:
        formatter = _formatter(style)
        for language in COMMON_LANGUAGES:
            with contextlib.suppress(ClassNotFound):
                highlight("x = 1\n", _lexer(language), formatter)


@lru_cache(maxsize=2)
def _formatter(style: str) -> HtmlFormatter[str]:
    return HtmlFormatter(style=style, noclasses=True, nowrap=True)


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    return get_lexer_by_name(language)


def _uncoloured(code: str, language: str, _dark: bool) -> str:
    """The code as ``_highlight`` shows it, without its colours (Pygments drops the blank lines
    at either end)."""
    try:
        known = bool(language) and _lexer(language.lower()) is not None
    except ClassNotFound:
        known = False
    return html.escape(code.strip("\n") if known else code)


def _highlight(code: str, language: str, dark: bool) -> str:
    # Never guess a language: guessing tries every lexer Pygments has, which takes far too
    # long on the GUI thread. A block without a language is shown as plain text.
    if not language:
        return html.escape(code)
    try:
        lexer = _lexer(language.lower())
    except ClassNotFound:
        return html.escape(code)
    return str(highlight(code, lexer, _formatter(Tokens.of(dark=dark).pygments_style)))


# -- blocks -------------------------------------------------------------------------------------

# Only our own href can hold the placeholder: model text cannot write a quote inside a tag.
_LOCAL_BLOCK = re.compile(r'href="cairn:copy-code/@(\d+)@"')


@lru_cache(maxsize=4096)
def _render_block(block: str, dark: bool, style: math_images.MathStyle, highlight: bool) -> tuple[str, tuple[str, ...]]:
    env: dict[str, Any] = {
        "palette": palette(dark),
        "dark": dark,
        "highlight": highlight,
        "math_style": style,
        "code_blocks": [],
        "quotes": 0,
        "lists": 0,
    }
    # Qt reads the newline after a block's last tag as a space at the end of that block.
    return _parser().render(block, env).strip(), tuple(env["code_blocks"])


def render_block(
    block: str, *, dark: bool, first_code_block: int = 0, highlight: bool = True
) -> tuple[str, tuple[str, ...]]:
    """One top-level block's HTML, its code blocks numbered from ``first_code_block``; a block
    over ``RICH_BLOCK`` as plain text. ``highlight=False`` leaves code uncoloured (a block still
    streaming is drawn again at every refresh: it is coloured once it is whole)."""
    if len(block) > RICH_BLOCK:  # as LiveDocument grows it, line by line
        code = fenced(block)
        if code is not None:
            shell = grown_code_html(code[0], first_code_block, dark)
            return shell.replace(_ZWSP, html.escape(code[1]) or _ZWSP), (code[1],)
        lines = block.rstrip("\n").split("\n")
        return "".join(grown_text_html().replace(_ZWSP, html.escape(line) or _EMPTY) for line in lines), ()
    body, codes = _render_block(block, dark, math_images.style_now(), highlight)
    html_ = _LOCAL_BLOCK.sub(lambda m: f'href="cairn:copy-code/{int(m.group(1)) + first_code_block}"', body)
    return html_, codes


def render_markdown(text: str, *, dark: bool = False) -> Rendered:
    """The whole of ``text``, block by block: what a streamed LiveDocument also ends up showing."""
    rendered = Rendered("")
    pieces = []
    for block in split_blocks(text):
        body, codes = render_block(block, dark=dark, first_code_block=len(rendered.code_blocks))
        pieces.append(body)
        rendered.code_blocks.extend(codes)
    rendered.html = "".join(pieces)
    return rendered


_GROWN_BLOCK = "margin-top: 0; margin-bottom: 0; white-space: pre-wrap;"
_ZWSP = "&#8203;"


def grown_code_html(language: str, number: int, dark: bool) -> str:
    """The start of a long code block shown plain: its label and Copy link, then the paragraph
    its lines go into (holding one zero-width space, which the first line replaces)."""
    colours = palette(dark)
    label = html.escape(language) if language else "code"
    copy = f'<a href="cairn:copy-code/{number}" style="color: {colours["link"]};">Copy</a>'
    return (
        f'<p style="margin-top: 6px; margin-bottom: 0;"><span style="color: {colours["muted"]};">'
        f"{label} · long, shown without colours</span>&nbsp;&nbsp;{copy}</p>"
        f'<pre style="{_GROWN_BLOCK} background-color: {colours["code_bg"]};">{_ZWSP}</pre>'
    )


def grown_text_html() -> str:
    """The start of a long block shown as plain text: a paragraph its lines go into."""
    return f'<p style="{_GROWN_BLOCK}">{_ZWSP}</p>'
