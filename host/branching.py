"""Branching a chat into a new one: the branch on screen up to an answer, copied.

The new chat gets a copy of every row the model saw up to that answer (its messages and its
hidden rows: section updates, checkpoints, the chat's mode and route), each under a new id,
with anchors and a checkpoint's retained tail pointing at the copies. Supersede markers and
the rows they took out stay behind: the new chat starts with one version of everything. Its
first request therefore begins with the same bytes the original sent, and the provider's
prompt cache still holds them.

All of it is one transaction: a new chat appears whole or not at all.
"""

from __future__ import annotations

from host.canonical import canonical_json_bytes
from host.content import Checkpoint, SupersedeContent, dump
from host.errors import CairnError, JournalWriteError
from host.folds import superseded
from host.ids import new_id
from host.journal import Journal, SessionRecord, utc_now
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter

__all__ = ["NotABranchPoint", "branch_rows", "branch_session"]


class NotABranchPoint(CairnError):
    """The message asked for is not one a new chat can start from."""


def branch_rows(rows: list[TranscriptRow], row_id: str) -> list[TranscriptRow]:
    """The rows (storage order) a branch at the answer ``row_id`` copies: the active ones up to
    it, and those anchored to a user row among them."""
    gone = superseded(rows)
    target = next((r for r in rows if r.id == row_id), None)
    if target is None or target.id in gone or target.hidden or target.role != "assistant":
        raise NotABranchPoint("A new chat can start only from an answer shown in this chat.")
    kept: list[TranscriptRow] = []
    users: set[str] = set()
    for row in rows:
        if row.id in gone or (row.model_system is None and isinstance(row.body(), SupersedeContent)):
            continue
        if row.seq <= target.seq or (row.anchor is not None and row.anchor in users):
            kept.append(row)
            if row.role == "user":
                users.add(row.id)
    return kept


def branch_session(journal: Journal, session_id: str, row_id: str, title: str) -> SessionRecord:
    """A new chat titled ``title`` holding the branch of ``session_id`` up to ``row_id``."""
    rows = branch_rows(TranscriptWriter(journal).rows(session_id), row_id)
    ids = {row.id: new_id() for row in rows}
    new_session = new_id()
    now = utc_now()
    with journal.write("the new chat's messages") as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (new_session, title, now, now),
        )
        for seq, row in enumerate(rows, start=1):
            system = row.model_system
            meta = row.meta()
            if isinstance(meta, Checkpoint) and meta.tail_from is not None:
                system = dump(meta.model_copy(update={"tail_from": ids.get(meta.tail_from)}))
            try:
                content = canonical_json_bytes(row.content).decode("utf-8")
                system_text = None if system is None else canonical_json_bytes(system).decode("utf-8")
            except (TypeError, ValueError) as exc:  # a row this Cairn cannot write back as it read it
                raise JournalWriteError(f"The chat cannot be copied: {exc}", journal.path) from exc
            conn.execute(
                "INSERT INTO transcript_rows (id, session_id, seq, role, hidden, content, model_system, anchor, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    ids[row.id],
                    new_session,
                    seq,
                    row.role,
                    int(row.hidden),
                    content,
                    system_text,
                    None if row.anchor is None else ids.get(row.anchor),
                    row.created_at,
                ),
            )
    return SessionRecord(id=new_session, title=title, created_at=now, updated_at=now)
