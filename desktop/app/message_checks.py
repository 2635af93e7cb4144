"""What a message must be before Cairn sends it: text, valid Unicode, and not too big.

The window and the CLI both check here, so a message is refused the same way wherever it
was typed, pasted or piped, and nothing is written to the journal first.
"""

from __future__ import annotations

import re

from host.errors import CairnError
from host.text import printable

__all__ = ["MAX_MESSAGE_CHARS", "InputRefused", "decode_input", "message_problem", "printable"]

MAX_MESSAGE_CHARS = 1_000_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def message_problem(text: str, *, where: str = "composer") -> tuple[str | None, str]:
    """What stops ``text`` from being sent, if anything, and the text to keep in the composer.
    ``where`` is "composer" (the window) or "message" (the command line): it shapes the advice."""
    window = where == "composer"
    broken = len(_SURROGATE.findall(text))
    if broken:
        cleaned = _SURROGATE.sub("\ufffd", text)
        return (
            f"The message held {broken} character{'s' if broken > 1 else ''} that are not valid text (unpaired "
            "UTF-16 surrogates). "
            + (
                "Cairn replaced them with � in the composer; check the message and send it again."
                if window
                else "Send valid UTF-8 text."
            ),
            cleaned,
        )
    if "\x00" in text:
        return (
            "The message holds NUL bytes, so it looks like binary data rather than text. Send text, or the "
            "file's contents as text.",
            text.replace("\x00", ""),
        )
    if len(text) > MAX_MESSAGE_CHARS:
        size = len(text.encode("utf-8", "replace")) / 1e6
        return (
            f"The message is {size:.1f} MB; Cairn sends at most {MAX_MESSAGE_CHARS // 1_000_000} MB of text in one "
            "message. "
            + ("It is still in the composer: shorten it" if window else "Shorten it")
            + ", or send it in parts.",
            text,
        )
    return None, text


class InputRefused(CairnError, ValueError):
    """Input that is not text Cairn can send; the message says why and what to do."""


def decode_input(data: bytes, where: str) -> str:
    """Bytes read from ``where`` (stdin, say) as text; ``InputRefused`` saying why when they are not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputRefused(
            f"The message on {where} is not UTF-8 text (byte {exc.start} is {data[exc.start : exc.start + 1]!r}); "
            "send text, or convert it to UTF-8 first."
        ) from None
