"""A deterministic tokenizer and a DeepSeek-like prefix cache.

The prompt is rendered from the request body (tool declarations first, then each message),
split into tokens, and cut into units of ``unit`` tokens. A request hits the cache for the
longest run of whole units that an earlier request already sent as its own prefix; the rest
is a miss. Any changed byte early in the prompt therefore makes everything after it a miss,
as on a real provider.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any

_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def prompt_tokens(body: dict[str, Any]) -> list[str]:
    """The tokens a provider would charge as the prompt of ``body``."""
    pieces = [_canonical(body.get("tools", []))]
    pieces.extend(_canonical(message) for message in body.get("messages", []))
    return tokenize("\n".join(pieces))


class PrefixCache:
    """Remembers which whole-unit prefixes have been sent; thread-safe."""

    def __init__(self, unit: int = 64) -> None:
        self.unit = unit
        self._seen: set[bytes] = set()
        self._lock = threading.Lock()

    def charge(self, tokens: list[str]) -> int:
        """Record ``tokens`` as sent and return how many of them were cached."""
        chain: list[bytes] = []
        digest = b""
        for start in range(0, len(tokens) - self.unit + 1, self.unit):
            unit_text = "\x00".join(tokens[start : start + self.unit]).encode("utf-8")
            digest = hashlib.sha256(digest + unit_text).digest()
            chain.append(digest)
        with self._lock:
            hits = 0
            for digest in chain:
                if digest not in self._seen:
                    break
                hits += 1
            self._seen.update(chain)
        return hits * self.unit
