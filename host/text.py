"""Other people's text, made safe to show: control and format characters escaped.

Skill descriptions, folder names, provider messages and model replies are written by others.
Shown raw, an escape sequence could retitle or clear a terminal or write to its clipboard, a
bidi override could disguise what is shown, and a line break could forge another line.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable"]


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with control and format characters shown escaped (``\\x1b``, ``\\u202e``)."""
    out: list[str] = []
    for char in text:
        if keep_newlines and char in "\n\t":
            out.append(char)
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs") or char in "\u2028\u2029":
            out.append(char.encode("unicode_escape").decode("ascii") if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)
