"""What every command shares: its error, and text made safe to print on a terminal."""

from __future__ import annotations

import unicodedata

__all__ = ["CommandError", "printable"]


class CommandError(Exception):
    """A command cannot go on; the message tells the person what to do."""


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with control and format characters shown escaped (``\\x1b``, ``\\u202e``).

    Skill descriptions, file names and model replies are other people's text: printed raw, an
    escape sequence could retitle or clear the terminal, or write to the clipboard, and a
    bidi override could disguise what is shown.
    """
    out: list[str] = []
    for char in text:
        if keep_newlines and char in "\n\t":
            out.append(char)
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs") or char in "\u2028\u2029":
            out.append(char.encode("unicode_escape").decode("ascii") if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)
