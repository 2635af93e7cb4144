"""The redactor: secrets out of every text, streamed text included, and out of the log."""

from __future__ import annotations

import logging

from desktop.settings.redaction import REDACTED, RedactingFilter, Redactor

KEY = "sk-canary-5e1d0c9a7b"


def test_secrets_are_replaced_wherever_they_appear() -> None:
    redactor = Redactor()
    redactor.add(KEY)
    redactor.add("short")  # too short to be a secret worth false matches
    assert redactor.redact(f"401: key {KEY} is invalid; {KEY}!") == f"401: key {REDACTED} is invalid; {REDACTED}!"
    assert redactor.redact("a short word") == "a short word"
    assert redactor.redact_json({"a": [KEY, {"k": f"x{KEY}"}], KEY: 1}) == {
        "a": [REDACTED, {"k": f"x{REDACTED}"}],
        REDACTED: 1,
    }


def test_a_secret_split_across_pieces_never_shows() -> None:
    redactor = Redactor()
    redactor.add(KEY)
    text = f"Your key is {KEY}, and again {KEY}. Done: sk-can"
    for size in range(1, len(text) + 1):
        stream = redactor.stream()
        shown = [stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
        shown.append(stream.flush())
        assert all(KEY[:8] not in piece for piece in shown), size
        assert "".join(shown) == redactor.redact(text), size


def test_log_records_are_redacted_before_any_handler_writes_them() -> None:
    redactor = Redactor()
    redactor.add(KEY)
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Keep()
    handler.addFilter(RedactingFilter(redactor))
    logger = logging.getLogger("cairn.redaction-test")
    logger.addHandler(handler)
    try:
        logger.warning("refused %s", KEY)
        try:
            raise ValueError(f"bad key {KEY}")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    assert records
    assert all(KEY not in record for record in records)
    assert REDACTED in records[0]
