"""The journal's schema, as forward-only migrations.

Each migration moves the schema from ``version - 1`` to ``version`` and runs in one
transaction together with the ``user_version`` bump, so a crash leaves either the old
schema or the new one. Migrations never drop user data; one that must reshape a table
rebuilds it in that same transaction and copies every row.

The schema is meant to stay small. A chat's system state (activation, declaration epochs
with their plan records, tool calls with their pins and approval state, chat-scoped grants,
compaction checkpoints) is kept as versioned ``model_system`` metadata
on hidden transcript rows, never in new tables: a kind or version this Cairn does not know
is kept byte for byte and ignored, so older and newer Cairns share one journal without a
migration. Only a table change that is truly needed is a migration here.

Since version 4 the journal records its **minimum reader version** in ``journal_meta``: the
oldest schema version whose Cairn can safely read *and write* it. Every migration says what
that minimum is once it has run (``Migration.min_reader``). A Cairn that meets a journal
newer than it knows opens it read-write when the recorded minimum is at most its own latest
version, and read-only otherwise (see ``host.opening``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "APPLICATION_ID",
    "CHAT_SHIFT",
    "MESSAGE_TEXT",
    "META_MIN_READER",
    "MIGRATIONS",
    "SEARCH_PENDING",
    "SEARCH_TERMS",
    "Migration",
    "latest_version",
]

# Written to SQLite's header so a Cairn journal can be told from any other database.
APPLICATION_ID = 0x43414952  # "CAIR"

# The ``journal_meta`` key holding the minimum reader version, as decimal text.
META_MIN_READER = "min_reader_version"


@dataclass(frozen=True)
class Migration:
    """One forward step of the schema.

    ``min_reader`` is the minimum reader version the journal records once this migration
    has run; ``None`` leaves the recorded one as it is (the journal has no ``journal_meta``
    before version 4, so migrations 1 to 3 leave it unset). How to choose it: if a Cairn
    that knows only an older schema ``k`` could still read and write every table correctly
    after this change (it ignores a new table, a new nullable column with a default, a new
    index), keep the previous minimum. If an older Cairn would misread or corrupt something
    (it would drop a new column's value on a rewrite, break a new constraint, read a new
    NULL as a number), raise it to this migration's version.
    """

    version: int
    description: str
    statements: tuple[str, ...]
    min_reader: int | None = None

    def __post_init__(self) -> None:
        if self.min_reader is not None and not 1 <= self.min_reader <= self.version:
            raise ValueError(
                f"migration {self.version}: min_reader {self.min_reader} must be between 1 and {self.version}"
            )


_TEXT_OF = "(SELECT COALESCE(group_concat(value, ' '), '') FROM json_tree({0}) WHERE key = 'text' AND type = 'text')"
_TEXT_OF_NEW = _TEXT_OF.format("NEW.content")
_TEXT_OF_ROW = _TEXT_OF.format("r.content")
# Search (migration 10): a message's index row is its chat's number shifted left by this,
# or'ed with its seq, so each chat's messages are one range of rowids.
CHAT_SHIFT = 32
# ``journal_meta`` key: rows at or below this rowid are not yet in ``message_index``.
SEARCH_PENDING = "search_index_pending"
# What is searched in a visible message: its text parts and its tool results (``{0}`` is its
# content). ``host.search_text.message_text`` reads the same text in Python.
MESSAGE_TEXT = (
    "(SELECT COALESCE(group_concat(CASE json_extract(value, '$.kind') WHEN 'text' THEN json_extract(value, '$.text') "
    "WHEN 'tool_result' THEN json_extract(value, '$.content') END, ' '), '') FROM json_each({0}, '$.parts'))"
)
# Each connection's view of the index's words, for expanding a long prefix (made when the
# connection is set up: a read-only one cannot make it later).
SEARCH_TERMS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.message_terms USING fts5vocab(main, message_index, 'row')"
# A row the new index holds: visible, a message, and written after the build began (or
# indexed by it already).
_SEARCHED = (
    "{0}.hidden = 0 AND {0}.role IN ('user', 'assistant', 'tool') AND {0}.rowid > "
    f"COALESCE((SELECT CAST(value AS INTEGER) FROM journal_meta WHERE key = '{SEARCH_PENDING}'), 0)"
)
_USAGE_V2_COLUMNS = (
    "id, session_id, row_id, account_id, provider, model, api, base_url, prompt_tokens, cached_tokens, "
    "uncached_tokens, output_tokens, reasoning_tokens, cost_usd, body_sha256, created_at"
)

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
    Migration(
        version=4,
        description="journal_meta with the minimum reader version; usage that was not reported is NULL, "
        "and each request has a kind",
        # The first recorded minimum. A Cairn of schema 3 would read a NULL token count as a
        # number (or fail on it), so only Cairns that know schema 4 may use the journal. A
        # later migration keeps 4 when a schema-4 Cairn can still read and write every table
        # correctly after it, and raises it to its own version otherwise (see ``Migration``).
        min_reader=4,
        statements=(
            "CREATE TABLE journal_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT",
            # SQLite cannot drop NOT NULL in place: build the new table, copy every row,
            # drop the old one and take its name. No table refers to request_usage, so
            # foreign keys stay on and check every copied row.
            """
            CREATE TABLE request_usage_v4 (
                id               TEXT PRIMARY KEY,
                session_id       TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                row_id           TEXT REFERENCES transcript_rows(id),
                account_id       TEXT NOT NULL,
                provider         TEXT NOT NULL,
                model            TEXT NOT NULL,
                api              TEXT NOT NULL,
                base_url         TEXT NOT NULL,
                prompt_tokens    INTEGER CHECK (prompt_tokens >= 0),
                cached_tokens    INTEGER CHECK (cached_tokens >= 0),
                uncached_tokens  INTEGER CHECK (uncached_tokens >= 0),
                output_tokens    INTEGER CHECK (output_tokens >= 0),
                reasoning_tokens INTEGER CHECK (reasoning_tokens >= 0),
                cost_usd         REAL,
                body_sha256      TEXT NOT NULL,
                created_at       TEXT NOT NULL,
                kind             TEXT NOT NULL DEFAULT 'chat'
            ) STRICT
            """,
            f"INSERT INTO request_usage_v4 ({_USAGE_V2_COLUMNS}, kind) "
            f"SELECT {_USAGE_V2_COLUMNS}, 'chat' FROM request_usage",
            "DROP TABLE request_usage",
            "ALTER TABLE request_usage_v4 RENAME TO request_usage",
            "CREATE INDEX request_usage_session ON request_usage(session_id, created_at)",
        ),
    ),
    Migration(
        version=5,
        description="the size of each request's body, for estimating the next one",
        # A schema-4 Cairn still reads and writes every table correctly (it inserts without
        # the column, which is then NULL), so the minimum reader stays 4.
        min_reader=None,
        statements=(
            "ALTER TABLE request_usage ADD COLUMN body_bytes INTEGER CHECK (body_bytes IS NULL OR body_bytes >= 0)",
        ),
    ),
    Migration(
        version=6,
        description="indexes for the versions of messages: each row's shape, and the supersede markers",
        # Indexes only: a schema-5 (or 4) Cairn reads and writes every table as before.
        min_reader=None,
        statements=(
            # Covers host.versions' query, so a long chat's versions are found without reading
            # any message text.
            "CREATE INDEX transcript_rows_shape ON transcript_rows(session_id, seq, role, hidden, anchor, id)",
            "CREATE INDEX transcript_rows_markers ON transcript_rows(session_id, seq) "
            "WHERE role = 'system' AND model_system IS NULL",
        ),
    ),
    Migration(
        version=7,
        description="requests stopped or failed mid-reply, with an estimate of their tokens",
        # An older Cairn (4 to 6) still reads and writes every table correctly: it inserts without the
        # columns (its requests are then complete, with no estimate) and reads an interrupted
        # request as one whose usage was not reported, which it is. The minimum reader stays 4.
        min_reader=None,
        statements=(
            "ALTER TABLE request_usage ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0 CHECK (interrupted IN (0, 1))",
            "ALTER TABLE request_usage ADD COLUMN estimated_tokens INTEGER "
            "CHECK (estimated_tokens IS NULL OR estimated_tokens >= 0)",
        ),
    ),
    Migration(
        version=8,
        description="pinned and archived chats",
        # An older Cairn (4 to 7) still reads and writes every table correctly: it lists sessions
        # with the columns it names, so a pinned or archived chat shows there as an ordinary one,
        # and it never rewrites a session row whole. The minimum reader stays 4.
        min_reader=None,
        statements=(
            "ALTER TABLE sessions ADD COLUMN pinned_at TEXT",
            "ALTER TABLE sessions ADD COLUMN archived_at TEXT",
        ),
    ),
    # Migration 9 follows migration 8 (written on another branch at the same time).
    Migration(
        version=9,
        description="the search index keeps one- and two-letter prefixes, so a short query stays fast; "
        "the newest hidden metadata is found without reading every row",
        # The same table, columns and triggers with a prefix index added, and an index: an older
        # Cairn (4 to 8) reads and writes every table as before. The minimum reader stays 4.
        min_reader=None,
        statements=(
            # FTS5 cannot add a prefix index in place: build the new table from the old one's
            # text (rowids kept, so newer messages still sort last), then take its name.
            "DROP TRIGGER transcript_search_insert",
            "DROP TRIGGER transcript_search_delete",
            "CREATE VIRTUAL TABLE transcript_search_next "
            "USING fts5(body, session_id UNINDEXED, row_id UNINDEXED, prefix='1 2')",
            "INSERT INTO transcript_search_next (rowid, body, session_id, row_id) "
            "SELECT rowid, body, session_id, row_id FROM transcript_search",
            "DROP TABLE transcript_search",
            "ALTER TABLE transcript_search_next RENAME TO transcript_search",
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
            # Journal.latest_meta at launch walks this newest first instead of scanning every row.
            "CREATE INDEX transcript_rows_meta ON transcript_rows(created_at, id) "
            "WHERE role = 'system' AND model_system IS NOT NULL",
        ),
    ),
    Migration(
        version=10,
        description="a search index of one row per message, numbered by chat so a search can skip from chat "
        "to chat, with prefix indexes up to four letters and tool results; filled in the background",
        # An older Cairn (4 to 9) reads and writes every table as before: the new triggers keep
        # the new index, and its own search answers from ``transcript_search`` until the
        # background build has filled the new index and drops the old one (after that an older
        # Cairn's search finds nothing, and nothing else changes). The minimum reader stays 4.
        min_reader=None,
        statements=(
            # A chat's number, stable whatever VACUUM does to the sessions table's own rowids.
            "CREATE TABLE search_chats (number INTEGER PRIMARY KEY, session_id TEXT NOT NULL UNIQUE) STRICT",
            "INSERT INTO search_chats (session_id) SELECT id FROM sessions ORDER BY rowid",
            "CREATE TRIGGER search_chats_insert AFTER INSERT ON sessions "
            "BEGIN INSERT INTO search_chats (session_id) VALUES (NEW.id); END",
            "CREATE TRIGGER search_chats_delete AFTER DELETE ON sessions "
            "BEGIN DELETE FROM search_chats WHERE session_id = OLD.id; END",
            # Contentless (the text is the journal's, read again for a snippet), without
            # positions (every query is words and prefixes, never a phrase), one- to
            # four-letter prefixes indexed (a longer prefix is expanded to its words).
            "CREATE VIRTUAL TABLE message_index USING fts5(body, content='', detail=none, columnsize=0, "
            "prefix='1 2 3 4')",
            # The rows already written are indexed by ``host.search_index``, newest first;
            # until then, rows at or below this rowid are not in the new index.
            f"INSERT INTO journal_meta (key, value) SELECT '{SEARCH_PENDING}', CAST(COALESCE(max(rowid), 0) AS TEXT) "
            "FROM transcript_rows",
            f"""
            CREATE TRIGGER message_index_insert AFTER INSERT ON transcript_rows
            WHEN {_SEARCHED.format("NEW")}
            BEGIN
                INSERT INTO message_index (rowid, body)
                SELECT (c.number << {CHAT_SHIFT}) | NEW.seq, {MESSAGE_TEXT.format("NEW.content")}
                FROM search_chats AS c WHERE c.session_id = NEW.session_id;
            END
            """,
            f"""
            CREATE TRIGGER message_index_delete AFTER DELETE ON transcript_rows
            WHEN {_SEARCHED.format("OLD")}
            BEGIN
                INSERT INTO message_index (message_index, rowid, body)
                SELECT 'delete', (c.number << {CHAT_SHIFT}) | OLD.seq, {MESSAGE_TEXT.format("OLD.content")}
                FROM search_chats AS c WHERE c.session_id = OLD.session_id;
            END
            """,
        ),
    ),
)


def latest_version(migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    return migrations[-1].version if migrations else 0
