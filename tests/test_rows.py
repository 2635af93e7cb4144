"""A transcript row as read from the journal: equal to the one appended, read typed once,
never changed, and small until read (a chat's state holds every row of the chat)."""

from __future__ import annotations

import pickle
import sys

import pytest

from host.content import MessageContent
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter


def test_a_row_read_back_is_the_row_appended_and_reads_typed_once(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("rows")
        appended = writer.append_user(session.id, {"parts": [{"kind": "text", "text": "stones"}]})
        (read,) = writer.rows(session.id)
    assert read == appended
    assert read.model_dump() == appended.model_dump()
    assert read.content == {"parts": [{"kind": "text", "text": "stones"}]}  # as appended, byte for byte
    body = read.body()
    assert isinstance(body, MessageContent)
    assert body.text() == "stones"
    assert read.body() is body  # parsed once
    assert read.meta() is None
    with pytest.raises(AttributeError, match="never changes"):
        read.seq = 9  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(read)) == read


def test_rows_of_one_chat_share_its_id_and_keep_their_json_as_text(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("rows")
        for n in range(3):
            writer.append_user(session.id, {"parts": [{"kind": "text", "text": f"message {n} " * 40}]})
        rows = writer.rows(session.id)
    assert len({id(r.session_id) for r in rows}) == 1
    assert not hasattr(rows[0], "__dict__")
    unread = sys.getsizeof(rows[0]) + sum(sys.getsizeof(v) for v in rows[0]._content if isinstance(v, str))
    assert unread < 1_000  # the decoded content alone is a dict of lists of dicts, a few KB
