"""The journal's schema, as forward-only migrations.

Each migration moves the schema from ``version - 1`` to ``version`` and runs in one
transaction together with the ``user_version`` bump, so a crash leaves either the old
schema or the new one. Migrations only add; they never drop user data. Later tables
(checkpoints, epochs, request usage, tool calls) are each one more entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["APPLICATION_ID", "MIGRATIONS", "Migration", "latest_version"]

# Written to SQLite's header so a Cairn journal can be told from any other database.
APPLICATION_ID = 0x43414952  # "CAIR"


@dataclass(frozen=True)
class Migration:
    """One forward step of the schema."""

    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        description="sessions and transcript rows",
        statements=(
            f"PRAGMA application_id = {APPLICATION_ID}",
            """
            CREATE TABLE sessions (
                id          TEXT PRIMARY KEY,
                title       TEXT NOT NULL DEFAULT '',
                created_at  TEXT NOT NULL,
                updated_at  TEXT NOT NULL
            ) STRICT
            """,
            """
            CREATE TABLE transcript_rows (
                id           TEXT PRIMARY KEY,
                session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                seq          INTEGER NOT NULL CHECK (seq > 0),
                role         TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
                hidden       INTEGER NOT NULL CHECK (hidden IN (0, 1)),
                content      TEXT NOT NULL,
                model_system TEXT,
                anchor       TEXT REFERENCES transcript_rows(id),
                created_at   TEXT NOT NULL,
                UNIQUE (session_id, seq)
            ) STRICT
            """,
            "CREATE INDEX transcript_rows_anchor ON transcript_rows(anchor) WHERE anchor IS NOT NULL",
            "CREATE INDEX sessions_updated ON sessions(updated_at)",
        ),
    ),
    Migration(
        version=2,
        description="usage of each request",
        statements=(
            """
            CREATE TABLE request_usage (
                id               TEXT PRIMARY KEY,
                session_id       TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                row_id           TEXT REFERENCES transcript_rows(id),
                account_id       TEXT NOT NULL,
                provider         TEXT NOT NULL,
                model            TEXT NOT NULL,
                api              TEXT NOT NULL,
                base_url         TEXT NOT NULL,
                prompt_tokens    INTEGER NOT NULL CHECK (prompt_tokens >= 0),
                cached_tokens    INTEGER NOT NULL CHECK (cached_tokens >= 0),
                uncached_tokens  INTEGER NOT NULL CHECK (uncached_tokens >= 0),
                output_tokens    INTEGER NOT NULL CHECK (output_tokens >= 0),
                reasoning_tokens INTEGER NOT NULL CHECK (reasoning_tokens >= 0),
                cost_usd         REAL,
                body_sha256      TEXT NOT NULL,
                created_at       TEXT NOT NULL
            ) STRICT
            """,
            "CREATE INDEX request_usage_session ON request_usage(session_id, created_at)",
        ),
    ),
)


def latest_version(migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    return migrations[-1].version if migrations else 0
