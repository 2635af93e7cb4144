"""Reading text files in bounded pieces: telling text from binary, and lines under a budget."""

from __future__ import annotations

from collections.abc import Iterator

from host.tools.handles import OpenFile

__all__ = ["LineReader", "counted", "decode_line", "looks_binary", "size_text"]

# Control bytes that text files do carry: backspace, tab, newline, form feed, carriage return, escape.
_TEXT_CONTROLS = frozenset(b"\b\t\n\f\r\x1b")
_BLOCK = 1 << 16


def looks_binary(sample: bytes) -> bool:
    """Whether the start of a file is binary: a NUL byte (images, archives, UTF-16) or more
    than one byte in ten a control character."""
    if b"\0" in sample:
        return True
    controls = sum(1 for byte in sample if (byte < 0x20 and byte not in _TEXT_CONTROLS) or byte == 0x7F)
    return controls * 10 > len(sample)


def decode_line(raw: bytes, *, first: bool = False) -> str:
    """One line as text: UTF-8, with anything else replaced (shown as U+FFFD), no CR, no BOM."""
    text = raw.decode("utf-8", errors="replace").removesuffix("\r")
    return text.removeprefix("\ufeff") if first else text


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``1 line``, ``2 lines``, ``1,000 files``."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def size_text(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.1f} KB"
    return f"{size:,} bytes"


class LineReader:
    """The lines of an open file (without their newline), read in blocks until ``budget``
    bytes have been read. A line longer than ``keep`` bytes keeps only its start, and comes
    with ``True`` (cut). After iterating, ``stopped`` says whether the budget ran out before
    the end of the file; a line the budget cut in two is then not given at all."""

    def __init__(self, file: OpenFile, first: bytes, *, budget: int, keep: int) -> None:
        self._file = file
        self._first = first[:budget]
        self._budget = budget
        self._keep = keep
        self.bytes_read = len(self._first)
        self.stopped = False

    def __iter__(self) -> Iterator[tuple[bytes, bool]]:
        carry, carry_cut = b"", False
        block = self._first
        while True:
            if block:
                pieces = block.split(b"\n")
                for i, piece in enumerate(pieces):
                    cut = carry_cut if i == 0 else False
                    if i == 0 and carry:
                        piece = carry + piece  # noqa: PLW2901 - the line began in the block before
                    if len(piece) > self._keep:
                        piece, cut = piece[: self._keep], True  # noqa: PLW2901 - kept short on purpose
                    if i < len(pieces) - 1:
                        yield piece, cut
                    else:
                        carry, carry_cut = piece, cut
            if self.bytes_read >= self._budget:
                self.stopped = self._file.read(1) != b""
                if self.stopped:
                    return
                block = b""
            else:
                block = self._file.read(min(_BLOCK, self._budget - self.bytes_read))
                self.bytes_read += len(block)
            if not block:
                if carry or carry_cut:
                    yield carry, carry_cut
                return
