"""Where Markdown text can be cut into blocks that render alone as they would together.

Pure text, no rendering: ``LiveDocument`` splits a streaming reply with these as it grows, and
``render_markdown`` renders a finished one block by block, so both show the same thing.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CONTINUES = re.compile(r"^(\s|[-*+](\s|$)|\d+[.)](\s|$)|>|\|)")  # an empty item ("-") continues its list


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
        if marker and fence is None:
            fence = marker.group(1)
        elif marker and _closes(line, marker.group(1), fence):
            fence = None
        previous_blank = fence is None and not line.strip()
        offset += len(line) + 1
    blocks.append(text[start:])
    return [b for b in blocks if b]


def _closes(line: str, marker: str, fence: str | None) -> bool:
    """Whether ``line`` (starting with ``marker``) closes ``fence``: the same character, at
    least as many, and nothing after them (a closing fence has no info string)."""
    return (
        fence is not None and marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip().strip(fence[0])
    )


def fenced(block: str) -> tuple[str, str] | None:
    """A block that opens a code fence: its language and its code so far (without the closing
    fence, if it has come). ``None`` for any other block."""
    first, _, rest = block.partition("\n")
    opened = _FENCE.match(first)
    if opened is None:
        return None
    fence = opened.group(1)
    lines = rest.split("\n")
    for number, line in enumerate(lines):
        closing = _FENCE.match(line)
        if closing and _closes(line, closing.group(1), fence):
            lines = lines[:number]
            break
    return first.strip().lstrip(fence[0]).strip().split(" ")[0], "\n".join(lines).rstrip("\n")
