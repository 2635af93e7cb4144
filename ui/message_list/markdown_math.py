"""Where a reply's TeX is: markdown-it rules that turn math delimiters into math tokens.

Inline: ``$...$``, ``\\(...\\)``, and ``$$...$$`` or ``\\[...\\]`` inside a line of text.
Display: a block that starts a line with ``$$`` or ``\\[`` and ends one with ``$$`` or ``\\]``;
a blank line ends the search, as it ends a TeX display.

A single ``$`` follows the usual rule, so prices stay text: the opening ``$`` has no space
after it, the closing one no space before it and no digit after it ("$5 and $10" is text).
The tokens carry the TeX; ui.message_list.markdown decides how they look.
"""

from __future__ import annotations

from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

__all__ = ["math_plugin"]

_INLINE = (("\\(", "\\)", False), ("\\[", "\\]", True), ("$$", "$$", True))
_BLOCK = (("$$", "$$"), ("\\[", "\\]"))


def math_plugin(md: MarkdownIt, on_open: Callable[[], None] = lambda: None) -> None:
    """Add ``math_inline`` and ``math_block`` tokens; ``on_open`` runs when an opening
    delimiter has no closing one yet (a formula is probably arriving)."""
    md.inline.ruler.before("escape", "math_inline", _inline_rule(on_open))
    md.block.ruler.before("fence", "math_block", _block_rule, {"alt": ["paragraph", "reference", "blockquote", "list"]})


def _inline_rule(on_open: Callable[[], None]) -> Callable[[StateInline, bool], bool]:
    def rule(state: StateInline, silent: bool) -> bool:
        src, start, end = state.src, state.pos, state.posMax
        found = _delimited(src, start, end)
        if found is None:
            return False
        opener, tex, after, display = found
        if after < 0:
            if after == -1:
                on_open()
            return False
        if not silent:
            token = state.push("math_inline", "math", 0)
            token.content = tex
            token.markup = opener
            token.meta = {"display": display}
        state.pos = after
        return True

    return rule


def _delimited(src: str, start: int, end: int) -> tuple[str, str, int, bool] | None:
    """(opener, tex, position after the closer, display) for math starting at ``start``;
    the position is -1 when no closer came yet and -2 when this is not math at all."""
    for opener, closer, display in _INLINE:
        if src.startswith(opener, start):
            close = src.find(closer, start + len(opener), end)
            if close < 0:
                return opener, "", -1, display
            tex = src[start + len(opener) : close]
            return opener, tex, (close + len(closer) if tex.strip() else -2), display
    if start >= end or src[start] != "$":
        return None
    first = start + 1
    if first >= end or src[first].isspace():
        return "$", "", -2, False
    index = first
    while index < end:
        char = src[index]
        if char == "\\":
            index += 2
            continue
        if char == "$":
            following = src[index + 1] if index + 1 < end else ""
            if src[index - 1].isspace() or following.isdigit():
                return "$", "", -2, False
            return "$", src[first:index], index + 1, False
        index += 1
    return "$", "", (-2 if src[first].isdigit() else -1), False


def _line(state: StateBlock, number: int) -> str:
    return state.src[state.bMarks[number] + state.tShift[number] : state.eMarks[number]]


def _block_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    if state.is_code_block(start_line):
        return False
    first = _line(state, start_line)
    found = next(((o, c) for o, c in _BLOCK if first.startswith(o)), None)
    if found is None:
        return False
    opener, closer = found
    rest = first[len(opener) :].rstrip()
    if closer in rest:  # one line: the closer must end it
        if rest.find(closer) != len(rest) - len(closer):
            return False
        lines, last = [rest[: -len(closer)]], start_line
    else:
        lines, last = [rest], start_line + 1
        while True:
            if last >= end_line or state.isEmpty(last) or state.sCount[last] < state.blkIndent:
                return False
            text = _line(state, last).rstrip()
            if text.endswith(closer):
                lines.append(text[: -len(closer)])
                break
            lines.append(text)
            last += 1
    tex = "\n".join(lines)
    if not tex.strip():
        return False
    if silent:
        return True
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = tex
    token.markup = opener
    token.map = [start_line, last + 1]
    state.line = last + 1
    return True
