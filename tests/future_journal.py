"""A journal from a future Cairn, simulated honestly: made with every real migration, then moved
one schema on by a migration of the tests' own (a new table, as a later Cairn might add) that
records a minimum reader version. This Cairn then opens it with the real ``MIGRATIONS``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from host.journal import Journal
from host.schema import MIGRATIONS, Migration, latest_version
from host.transcript import TranscriptWriter
from host.usage import UsageLedger

FUTURE = latest_version() + 1


def future_migrations(min_reader: int | None) -> tuple[Migration, ...]:
    bookmarks = Migration(
        version=FUTURE,
        description="bookmarks (a future Cairn's table)",
        statements=(
            "CREATE TABLE bookmarks (row_id TEXT NOT NULL REFERENCES transcript_rows(id), note TEXT NOT NULL) STRICT",
        ),
        min_reader=min_reader,
    )
    return (*MIGRATIONS, bookmarks)


@dataclass
class Future:
    session: str
    user_row: str
    reply_row: str


def usage_values(session_id: str, row_id: str | None, tokens: int | None) -> dict[str, Any]:
    return {
        "session_id": session_id, "row_id": row_id, "account_id": "acct", "provider": "deepseek",
        "model": "deepseek-flash", "api": "openai-completions", "base_url": "https://api.deepseek.com",
        "prompt_tokens": tokens, "cached_tokens": None if tokens is None else tokens // 2,
        "uncached_tokens": None if tokens is None else tokens - tokens // 2,
        "output_tokens": None if tokens is None else 7, "reasoning_tokens": None if tokens is None else 0,
        "cost_usd": None if tokens is None else 0.001, "body_sha256": "a" * 64,
    }  # fmt: skip


def make_future_journal(path: Path, min_reader: int | None) -> Future:
    with Journal.open(path) as journal:
        writer, ledger = TranscriptWriter(journal), UsageLedger(journal)
        session = journal.create_session("Written by a newer Cairn")
        user = writer.append_user(session.id, {"parts": [{"kind": "text", "text": "Tell me about basalt columns"}]})
        writer.append_system(session.id, "instructions", "Be brief.", anchor=user.id)
        reply = writer.append_assistant(session.id, {"parts": [{"kind": "text", "text": "They form as lava cools."}]})
        ledger.record(**usage_values(session.id, reply.id, 100))
        ledger.record(**usage_values(session.id, None, None), kind="title")
    with Journal.open(path, migrations=future_migrations(min_reader)) as journal:
        assert journal.schema_version == FUTURE
        with journal.write("a bookmark") as conn:
            conn.execute("INSERT INTO bookmarks (row_id, note) VALUES (?, 'nice')", (reply.id,))
    return Future(session.id, user.id, reply.id)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
