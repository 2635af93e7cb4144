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


_TEXT_OF = "(SELECT COALESCE(group_concat(value, ' '), '') FROM json_tree({0}) WHERE key = 'text' AND type = 'text')"
_TEXT_OF_NEW = _TEXT_OF.format("NEW.content")
_TEXT_OF_ROW = _TEXT_OF.format("r.content")

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
    Migration(
        version=3,
        description="search index and deletion with undo",
        statements=(
            "ALTER TABLE sessions ADD COLUMN deleted_at TEXT",
            # Every "text" field of a visible row's content is searchable; hidden rows are not.
            "CREATE VIRTUAL TABLE transcript_search USING fts5(body, session_id UNINDEXED, row_id UNINDEXED)",
            f"""
            CREATE TRIGGER transcript_search_insert AFTER INSERT ON transcript_rows
            WHEN NEW.hidden = 0 AND NEW.role IN ('user', 'assistant')
            BEGIN
                INSERT INTO transcript_search (body, session_id, row_id)
                SELECT {_TEXT_OF_NEW}, NEW.session_id, NEW.id;
            END
            """,
            """
            CREATE TRIGGER transcript_search_delete AFTER DELETE ON transcript_rows
            BEGIN
                DELETE FROM transcript_search WHERE row_id = OLD.id;
            END
            """,
            f"""
            INSERT INTO transcript_search (body, session_id, row_id)
            SELECT {_TEXT_OF_ROW}, r.session_id, r.id FROM transcript_rows AS r
            WHERE r.hidden = 0 AND r.role IN ('user', 'assistant')
            """,
        ),
    ),
)


def latest_version(migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    return migrations[-1].version if migrations else 0
