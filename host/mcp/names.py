"""Cairn's names for a server's tools: ``<server>__<tool>``, always a valid function name.

Providers accept function names matching ``^[A-Za-z0-9_-]{1,64}$``. Other characters become
``_``; a name that would be longer than 64 characters keeps its first 55 and ends in ``-``
and 8 hex digits of the SHA-256 of the full, unsanitised name, so it is the same after every
restart. Two tools that would get one name are told apart the same way: tools whose names
need no change come first, then the rest, each in code-point order; the first keeps the
plain name and every later one gets the hash suffix.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["MAX_NAME", "tool_names"]

MAX_NAME = 64
_HASH_DIGITS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_SAFE_TOOL = re.compile(r"^[A-Za-z0-9_-]+$")


def tool_names(server: str, tools: Iterable[str]) -> dict[str, str]:
    """Map each of a server's tool names to the name Cairn gives it; no two are equal."""
    ordered = sorted(set(tools), key=lambda name: (not _SAFE_TOOL.match(name), name))
    taken: set[str] = set()
    out: dict[str, str] = {}
    for tool in ordered:
        full = f"{server}__{tool}"
        plain = _UNSAFE.sub("_", full)
        name = plain if len(plain) <= MAX_NAME else _hashed(plain, full, _HASH_DIGITS)
        digits = _HASH_DIGITS
        while name in taken:  # a collision; a second one (of the hashes too) takes more digits
            name = _hashed(plain, full, digits)
            digits += 4
        taken.add(name)
        out[tool] = name
    return out


def _hashed(plain: str, full: str, digits: int) -> str:
    suffix = hashlib.sha256(full.encode("utf-8", "surrogatepass")).hexdigest()[:digits]
    return f"{plain[: MAX_NAME - digits - 1]}-{suffix}"
