"""Where Markdown text can be cut into blocks that render alone as they would together.

Pure text, no rendering: ``LiveDocument`` splits a streaming reply with these as it grows, and
``render_markdown`` renders a finished one block by block, so both show the same thing. A
streaming reply is split by a ``BlockSplitter``, which reads each line once however often the
text grows (a 2 MB code block arrives as a thousand updates).
"""

from __future__ import annotations

import itertools
import re

__all__ = ["BlockSplitter", "fenced", "hard_breaks", "split_blocks"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CLOSING = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t\r\f\v]*$", re.MULTILINE)  # a fence with nothing after it
_CONTINUES = re.compile(r"^(\s|[-*+](\s|$)|\d+[.)](\s|$)|>|\|)")  # an empty item ("-") continues its list


def split_blocks(text: str) -> list[str]:
    """Cut ``text`` where rendering the pieces apart gives what rendering it whole would: at a
    blank line outside code, before a line that starts a new paragraph."""
    return BlockSplitter().split(text)


class BlockSplitter:
    """``split_blocks`` for a text that grows: the lines read before are not read again while
    each text extends the last (one that does not is read afresh)."""

    def __init__(self) -> None:
        self._read = ""  # the whole lines read so far
        self._cuts: list[int] = []  # where blocks start, after the first
        self._fence: str | None = None  # the fence of the code block open at the end
        self._previous_blank = False

    def split(self, text: str, since: int = 0) -> list[str]:
        """The blocks of ``text[since:]``, where ``since`` is 0 or where a block starts."""
        if not text.startswith(self._read):
            self.__init__()  # type: ignore[misc]  # the text changed before its end: read it afresh
        offset = len(self._read)
        while (end := text.find("\n", offset)) >= 0:
            self._line(text[offset:end], offset)
            offset = end + 1
        self._read = text[:offset]
        self._cuts = [cut for cut in self._cuts if cut > since]  # ``since`` only grows: the rest is done
        last = text[offset:]  # the line still arriving decides nothing for good
        cuts = [*self._cuts, offset] if offset > since and self._cuts_before(last, offset) else self._cuts
        bounds = [since, *cuts, len(text)]
        return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]

    def _cuts_before(self, line: str, offset: int) -> bool:
        """Whether a new block starts with ``line``: after a blank line outside code, with a line
        that does not go on with a list, a quote, a table or an indented block."""
        start = self._cuts[-1] if self._cuts else 0
        opens = bool(line) and not _CONTINUES.match(line)
        return self._fence is None and self._previous_blank and opens and offset > start

    def _line(self, line: str, offset: int) -> None:
        if self._cuts_before(line, offset):
            self._cuts.append(offset)
        marker = _FENCE.match(line)
        if marker and self._fence is None:
            self._fence = marker.group(1)
        elif marker and _closes(line, marker.group(1), self._fence):
            self._fence = None
        self._previous_blank = self._fence is None and not line.strip()


def _closes(line: str, marker: str, fence: str | None) -> bool:
    """Whether ``line`` (starting with ``marker``) closes ``fence``: the same character, at
    least as many, and nothing after them (a closing fence has no info string)."""
    return (
        fence is not None and marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip().strip(fence[0])
    )


def fenced(block: str, since: int = 0) -> tuple[str, str] | None:
    """A block that opens a code fence: its language and its code so far (without the closing
    fence, if it has come). ``None`` for any other block. The closing fence is looked for
    from ``since`` on (a line's start), where a caller knows none comes before."""
    first, _, _ = block.partition("\n")
    opened = _FENCE.match(first)
    if opened is None:
        return None
    fence = opened.group(1)
    language = first.strip().lstrip(fence[0]).strip().split(" ")[0]
    code_start = len(first) + 1
    for closing in _CLOSING.finditer(block, max(code_start, since)):
        marker = closing.group(1)
        if marker[0] == fence[0] and len(marker) >= len(fence):
            return language, block[code_start : closing.start()].rstrip("\n")
    return language, block[code_start:].rstrip("\n")


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
