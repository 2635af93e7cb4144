"""The transcript: every row of a session, appended and never rewritten.

Rows are user messages, assistant messages, tool results and hidden rows: error records,
supersede markers, and system rows carrying versioned ``model_system`` metadata. What a row
holds is defined once, in ``host.content``; rows are written and read only through it.
Metadata of a kind or version this Cairn does not know is kept byte for byte and ignored, so
an older Cairn can still read a newer journal.
"""

from __future__ import annotations

import json
import sys
from contextlib import AbstractContextManager
from typing import Any

from pydantic import BaseModel, JsonValue

from host.canonical import canonical_json_bytes
from host.content import (
    CONTENT,
    ModelSystem,
    RowContent,
    SectionUpdate,
    SupersedeContent,
    dump,
    parse_content,
)
from host.errors import JournalWriteError
from host.folds import fold_sections, order_for_model, replay
from host.ids import is_uuid7, new_id
from host.journal import Journal, utc_now
from host.rows import Role, TranscriptRow, VersionEntry

__all__ = ["TranscriptWriter"]

_COLUMNS = "id, session_id, seq, role, hidden, content, model_system, anchor, created_at"


class TranscriptWriter:
    """Appends rows to sessions, and reads them back in the orders that matter.

    Every append returns only after its commit. Writing an id again with identical content
    is a no-op that returns the stored row, so a retry can reuse its id; writing it with
    different content is a ``JournalWriteError``. Every failure is a ``JournalWriteError``.
    """

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    # -- appending -----------------------------------------------------------------------

    def append_user(
        self, session_id: str, content: RowContent | JsonValue, *, row_id: str | None = None
    ) -> TranscriptRow:
        return self.append(session_id, "user", content, row_id=row_id)

    def append_assistant(
        self, session_id: str, content: RowContent | JsonValue, *, row_id: str | None = None
    ) -> TranscriptRow:
        return self.append(session_id, "assistant", content, row_id=row_id)

    def append_tool_result(
        self, session_id: str, content: RowContent | JsonValue, *, row_id: str | None = None
    ) -> TranscriptRow:
        return self.append(session_id, "tool", content, row_id=row_id)

    def append_system(
        self,
        session_id: str,
        section: str,
        content: JsonValue,
        *,
        anchor: str | None = None,
        row_id: str | None = None,
    ) -> TranscriptRow:
        """Append a hidden system row replacing ``section`` (``content=None``: a tombstone).

        With ``anchor`` (a user row id) the row is placed just before that user row in
        model order, for updates computed after the user row was already committed.
        """
        if not section or not section.isprintable():
            raise JournalWriteError(f"Section name {section!r} must be non-empty printable text.", self._journal.path)
        return self.append_meta(
            session_id, SectionUpdate(section=section, content=content), anchor=anchor, row_id=row_id
        )

    def append_meta(
        self, session_id: str, meta: ModelSystem, *, anchor: str | None = None, row_id: str | None = None
    ) -> TranscriptRow:
        """Append a hidden system row carrying ``meta`` (anchored like ``append_system``)."""
        return self.append(
            session_id, "system", None, hidden=True, model_system=dump(meta), anchor=anchor, row_id=row_id
        )

    def append(
        self,
        session_id: str,
        role: Role,
        content: RowContent | JsonValue,
        *,
        hidden: bool = False,
        model_system: JsonValue = None,
        anchor: str | None = None,
        row_id: str | None = None,
    ) -> TranscriptRow:
        """Append one row and return it once committed (see the class docstring).

        Typed content is stored in its one JSON form (``host.content``); plain JSON is stored
        as given, for rows that carry no Cairn shape.
        """
        path = self._journal.path
        if isinstance(content, BaseModel):
            content = CONTENT.dump_python(content, mode="json", exclude_none=True)
        row_id = row_id or new_id()
        if not is_uuid7(row_id):
            raise JournalWriteError(f"Row id {row_id!r} is not a UUIDv7; let Cairn choose row ids.", path)
        if anchor is not None and role != "system":
            raise JournalWriteError("Only system rows can be anchored to a user row.", path)
        try:
            content_text = canonical_json_bytes(content).decode("utf-8")
            system_text = None if model_system is None else canonical_json_bytes(model_system).decode("utf-8")
        except (TypeError, ValueError) as exc:
            raise JournalWriteError(f"A {role} row cannot be saved as JSON: {exc}", path) from exc

        with self._journal.write(f"a {role} row") as conn:
            existing = conn.execute(f"SELECT {_COLUMNS} FROM transcript_rows WHERE id = ?", (row_id,)).fetchone()
            if existing is not None:
                stored = _row(existing)
                if (stored.session_id, stored.role, stored.hidden, stored.anchor) == (
                    session_id,
                    role,
                    hidden,
                    anchor,
                ) and (existing[5], existing[6]) == (content_text, system_text):
                    return stored
                raise JournalWriteError(
                    f"Row {row_id} is already saved with different content; a retry must resend "
                    "exactly what was written, or use a new id.",
                    path,
                )
            if (
                conn.execute("SELECT 1 FROM sessions WHERE id = ? AND deleted_at IS NULL", (session_id,)).fetchone()
                is None
            ):
                raise JournalWriteError(f"Session {session_id} is not in the journal; it may have been deleted.", path)
            if anchor is not None:
                target = conn.execute(
                    "SELECT role FROM transcript_rows WHERE id = ? AND session_id = ?", (anchor, session_id)
                ).fetchone()
                if target is None or target[0] != "user":
                    raise JournalWriteError(f"Anchor {anchor} is not a user row of session {session_id}.", path)
            seq = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM transcript_rows WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            now = utc_now()
            conn.execute(
                f"INSERT INTO transcript_rows ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row_id, session_id, seq, role, int(hidden), content_text, system_text, anchor, now),
            )
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
        return _row((row_id, session_id, seq, role, hidden, content_text, system_text, anchor, now))

    def together(self, what: str) -> AbstractContextManager[object]:
        """One write transaction around several appends: each joins it, and all of them have
        committed (or none has) when the ``with`` block returns. ``what`` names them for an error."""
        return self._journal.write(what)

    def append_supersede(self, session_id: str, row_ids: list[str], restores: list[str] | None = None) -> TranscriptRow:
        """Record that ``row_ids`` are replaced (an edited message, a regenerated answer), and
        that ``restores`` are back (an earlier version the person switched to).

        Rows are never changed; this hidden marker row takes them out of (or puts them back
        into) what the model and the person see from now on.
        """
        marker = SupersedeContent(supersedes=list(row_ids), restores=list(restores or []))
        return self.append(session_id, "system", marker, hidden=True)

    # -- reading -------------------------------------------------------------------------

    def rows(self, session_id: str, *, after_seq: int = 0) -> list[TranscriptRow]:
        """The session's rows in storage order (by ``seq``): every one, or those after ``after_seq``."""
        with self._journal.read() as conn:
            found = conn.execute(
                f"SELECT {_COLUMNS} FROM transcript_rows WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, after_seq),
            ).fetchall()
        return [_row(r) for r in found]

    def seq_of(self, session_id: str, row_id: str) -> int | None:
        """Where the row ``row_id`` of the session is in storage order (``None``: not there)."""
        with self._journal.read() as conn:
            found = conn.execute(
                "SELECT seq FROM transcript_rows WHERE id = ? AND session_id = ?", (row_id, session_id)
            ).fetchone()
        return None if found is None else int(found[0])

    def display_page(self, session_id: str, *, before_seq: int | None = None, limit: int = 200) -> list[TranscriptRow]:
        """Up to ``limit`` rows a person sees, the newest ones before ``before_seq`` (see
        ``display_range``)."""
        return self.display_range(session_id, before_seq=before_seq, limit=limit)[0]

    def display_range(
        self, session_id: str, *, before_seq: int | None = None, after_seq: int | None = None, limit: int = 200
    ) -> tuple[list[TranscriptRow], bool]:
        """Up to ``limit`` rows a person sees (every role but system, and the compaction
        checkpoints, shown as markers), in storage order: the newest before ``before_seq``, or
        the oldest after ``after_seq``, or the newest of all; and whether no more of them come
        that way. Rows an edit or a regeneration set aside are not among them, and never cut a
        page short. Its cost does not grow with the session's length."""
        newer = after_seq is not None
        cursor = after_seq if after_seq is not None else before_seq if before_seq is not None else 2**62
        shown: list[TranscriptRow] = []
        with self._journal.read() as conn:
            markers = conn.execute(
                "SELECT content FROM transcript_rows WHERE session_id = ? AND role = 'system' AND model_system IS NULL "
                "ORDER BY seq",
                (session_id,),
            ).fetchall()
            parsed = (parse_content(json.loads(text)) for (text,) in markers)
            gone = replay(m for m in parsed if isinstance(m, SupersedeContent))
            while True:
                found = conn.execute(
                    f"SELECT {_COLUMNS} FROM transcript_rows WHERE session_id = ? AND seq {'>' if newer else '<'} ? "
                    "AND (role != 'system' OR (model_system IS NOT NULL "
                    "AND json_extract(model_system, '$.kind') = 'checkpoint')) "
                    f"ORDER BY seq {'ASC' if newer else 'DESC'} LIMIT ?",
                    (session_id, cursor, limit),
                ).fetchall()
                rows = [_row(r) for r in found]
                shown += [row for row in rows if row.id not in gone]
                ended = len(found) < limit
                if ended or len(shown) >= limit:
                    break
                cursor = rows[-1].seq
        ended = ended and len(shown) <= limit
        shown = shown[:limit]
        return (shown if newer else shown[::-1]), ended

    def version_entries(self, session_id: str) -> list[VersionEntry]:
        """What the versions of the session's messages are derived from (``host.versions``):
        every row's id, role and place, and the supersede markers' content, in storage order.
        One query that reads no message text."""
        with self._journal.read() as conn:
            # Both are answered from indexes (schema 6), without reading message text.
            found = conn.execute(
                "SELECT id, seq, role, hidden, anchor FROM transcript_rows WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
            markers = dict(
                conn.execute(
                    "SELECT seq, content FROM transcript_rows WHERE session_id = ? AND role = 'system' "
                    "AND model_system IS NULL",
                    (session_id,),
                ).fetchall()
            )
        entries = [
            VersionEntry(row_id, seq, role, bool(hidden), anchor, None) for row_id, seq, role, hidden, anchor in found
        ]
        if markers:
            for index, entry in enumerate(entries):
                if (text := markers.get(entry.seq)) is not None:
                    marker = parse_content(json.loads(text))
                    entries[index] = entry._replace(marker=marker if isinstance(marker, SupersedeContent) else None)
        return entries

    def model_order(self, session_id: str) -> list[TranscriptRow]:
        """The rows in the order the model sees them.

        Storage order, except that each anchored row is placed just before its user row;
        rows anchored to the same user row keep their storage order.
        """
        return order_for_model(self.rows(session_id))

    def effective_state(self, session_id: str) -> dict[str, Any]:
        """Section name to content, folded from the system rows in model order."""
        return fold_sections(self.model_order(session_id))


def _row(r: tuple[Any, ...]) -> TranscriptRow:
    # Built without validation: what the journal holds was validated and written as canonical
    # JSON by ``append``, and checking every value again cost more than reading it. The JSON
    # stays text until the row is read (``TranscriptRow``).
    return TranscriptRow.stored(
        id=r[0],
        session_id=sys.intern(r[1]),  # one string for every row of a chat
        seq=r[2],
        role=r[3],
        hidden=bool(r[4]),
        content_text=r[5],
        system_text=r[6],
        anchor=r[7],
        created_at=r[8],
    )
