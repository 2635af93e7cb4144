"""Keeping secrets out of everything Cairn stores, logs, prints or exports.

A provider can echo the API key back (some 401 pages quote it), and a model or a tool can
repeat it. The ``Redactor`` knows every secret this run has handed out (account keys, keys
typed for one run, MCP servers' secret environment values and headers) and replaces each
with ``[redacted]`` in any
text before it reaches the journal, the log, the terminal or an export. Streamed text is
redacted as it streams: a tail that could be the start of a secret is held back until the
next piece shows whether it is one.
"""

from __future__ import annotations

import logging
import threading

from pydantic import JsonValue

__all__ = ["REDACTED", "RedactingFilter", "Redactor", "StreamRedactor"]

REDACTED = "[redacted]"
MIN_SECRET = 8  # shorter values are not secrets worth the false matches


class Redactor:
    """The secrets of this run; thread-safe, because the log filter runs on any thread."""

    def __init__(self) -> None:
        self._secrets: tuple[str, ...] = ()
        self._lock = threading.Lock()

    def add(self, secret: str | None) -> None:
        if not secret or len(secret.strip()) < MIN_SECRET:
            return
        with self._lock:
            if secret not in self._secrets:
                # Longest first, so a secret that contains another is replaced whole.
                self._secrets = tuple(sorted({*self._secrets, secret.strip()}, key=len, reverse=True))

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def redact_json(self, value: JsonValue) -> JsonValue:
        """Every string in ``value`` (object keys included) redacted."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.redact_json(item) for item in value]
        if isinstance(value, dict):
            return {self.redact(key): self.redact_json(item) for key, item in value.items()}
        return value

    def stream(self) -> StreamRedactor:
        return StreamRedactor(self)


class StreamRedactor:
    """Redacts a text that arrives in pieces. ``feed`` returns what may be shown now;
    ``flush`` returns the rest when the text ends."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._redactor.redact(self._held + piece)
        keep = _possible_start(text, self._redactor.secrets)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        rest, self._held = self._redactor.redact(self._held), ""
        return rest


def _possible_start(text: str, secrets: tuple[str, ...]) -> int:
    """The length of the longest tail of ``text`` that is the beginning of some secret."""
    longest = 0
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(text)), longest, -1):
            if text.endswith(secret[:size]):
                longest = size
                break
    return longest


class RedactingFilter(logging.Filter):
    """Redacts a log record's message and traceback before any handler writes it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._redactor.secrets:
            return True
        record.msg, record.args = self._redactor.redact(record.getMessage()), None
        if record.exc_info:
            record.exc_text = self._redactor.redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True
