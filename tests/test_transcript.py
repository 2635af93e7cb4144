import json
import math

import pytest

from host.content import SectionUpdate
from host.errors import JournalWriteError
from host.ids import new_id
from host.journal import Journal
from host.paths import CairnPaths
from host.schema import MIGRATIONS, Migration, latest_version
from host.transcript import TranscriptWriter


def test_rows_of_every_role_are_appended_in_order(journal: Journal, writer: TranscriptWriter) -> None:
    session = journal.create_session()
    user = writer.append_user(session.id, {"text": "What is a cairn?"})
    system = writer.append_system(session.id, "instructions", "Be brief.")
    assistant = writer.append_assistant(session.id, {"text": "A pile of stones."})
    tool = writer.append_tool_result(session.id, {"call_id": "c1", "output": "42"})
    rows = writer.rows(session.id)
    assert [r.id for r in rows] == [user.id, system.id, assistant.id, tool.id]
    assert [r.seq for r in rows] == [1, 2, 3, 4]
    assert [r.role for r in rows] == ["user", "system", "assistant", "tool"]
    assert [r.hidden for r in rows] == [False, True, False, False]
    assert rows[1].model_system == {"v": 1, "section": "instructions", "content": "Be brief."}
    assert rows == [user, system, assistant, tool]
    assert sorted(r.id for r in rows) == [r.id for r in rows]


def test_a_supplied_id_is_used_and_a_retry_with_identical_content_is_a_no_op(
    journal: Journal, writer: TranscriptWriter
) -> None:
    session = journal.create_session()
    row_id = new_id()
    first = writer.append_user(session.id, {"text": "hi", "n": 1}, row_id=row_id)
    again = writer.append_user(session.id, {"n": 1, "text": "hi"}, row_id=row_id)
    assert first == again
    assert first.id == row_id
    assert len(writer.rows(session.id)) == 1


def test_writing_an_id_again_with_different_content_is_an_error(journal: Journal, writer: TranscriptWriter) -> None:
    session = journal.create_session()
    row = writer.append_user(session.id, "original")
    with pytest.raises(JournalWriteError, match="already saved with different content"):
        writer.append_user(session.id, "changed", row_id=row.id)
    with pytest.raises(JournalWriteError, match="already saved"):
        writer.append_assistant(session.id, "original", row_id=row.id)
    assert [r.content for r in writer.rows(session.id)] == ["original"]


@pytest.mark.parametrize("row_id", ["not-an-id", "0190a0f0-0000-4000-8000-000000000000"])
def test_ids_that_are_not_uuid7_are_refused(journal: Journal, writer: TranscriptWriter, row_id: str) -> None:
    session = journal.create_session()
    with pytest.raises(JournalWriteError, match="not a UUIDv7"):
        writer.append_user(session.id, "x", row_id=row_id)


def test_failed_writes_raise_the_one_typed_error_and_save_nothing(journal: Journal, writer: TranscriptWriter) -> None:
    session = journal.create_session()
    writer.append_user(session.id, "saved")
    with pytest.raises(JournalWriteError, match="cannot be saved as JSON"):
        writer.append_assistant(session.id, {"score": math.nan})
    with pytest.raises(JournalWriteError, match="not in the journal"):
        writer.append_user(new_id(), "to a session that does not exist")
    with pytest.raises(JournalWriteError, match="Only system rows"):
        writer.append(session.id, "user", "x", anchor=new_id())
    with pytest.raises(JournalWriteError, match="non-empty"):
        writer.append_system(session.id, "", "x")
    assert [r.content for r in writer.rows(session.id)] == ["saved"]
    journal.close()
    with pytest.raises(JournalWriteError, match="closed"):
        writer.append_user(session.id, "after close")


def test_appends_made_together_are_saved_together_or_not_at_all(journal: Journal, writer: TranscriptWriter) -> None:
    session = journal.create_session()
    with writer.together("two sections"):
        writer.append_system(session.id, "instructions", "one")
        writer.append_system(session.id, "guidance:x", "two")
    assert writer.effective_state(session.id) == {"instructions": "one", "guidance:x": "two"}

    def two_more() -> None:
        with writer.together("two more"):
            writer.append_system(session.id, "instructions", "three")
            writer.append_system(session.id, "", "a section with no name")

    with pytest.raises(JournalWriteError, match="non-empty"):
        two_more()
    assert writer.effective_state(session.id) == {"instructions": "one", "guidance:x": "two"}


def test_anchored_rows_sit_just_before_their_user_row(journal: Journal, writer: TranscriptWriter) -> None:
    session = journal.create_session()
    s0 = writer.append_system(session.id, "instructions", "v1")
    u1 = writer.append_user(session.id, "first question")
    a1 = writer.append_assistant(session.id, "first answer")
    u2 = writer.append_user(session.id, "second question")
    s1 = writer.append_system(session.id, "instructions", "v2", anchor=u2.id)
    s2 = writer.append_system(session.id, "guidance:workspace", "/home/me/project", anchor=u2.id)
    a2 = writer.append_assistant(session.id, "second answer")
    s3 = writer.append_system(session.id, "guidance:workspace", None)
    order = [r.id for r in writer.model_order(session.id)]
    assert order == [s0.id, u1.id, a1.id, s1.id, s2.id, u2.id, a2.id, s3.id]
    assert [r.id for r in writer.rows(session.id)] == [s0.id, u1.id, a1.id, u2.id, s1.id, s2.id, a2.id, s3.id]


def test_anchors_must_be_user_rows_of_the_same_session(journal: Journal, writer: TranscriptWriter) -> None:
    session, other = journal.create_session(), journal.create_session()
    answer = writer.append_assistant(session.id, "hi")
    foreign_user = writer.append_user(other.id, "elsewhere")
    for anchor in (answer.id, foreign_user.id, new_id()):
        with pytest.raises(JournalWriteError, match="not a user row"):
            writer.append_system(session.id, "instructions", "x", anchor=anchor)


def test_effective_state_folds_updates_and_tombstones_in_model_order(
    journal: Journal, writer: TranscriptWriter
) -> None:
    session = journal.create_session()
    writer.append_system(session.id, "instructions", "v1")
    writer.append_system(session.id, "skill:notes", "Take notes.")
    user = writer.append_user(session.id, "hi")
    writer.append_system(session.id, "skill:notes", None, anchor=user.id)
    writer.append_system(session.id, "tool_activation", {"active": ["search"], "identity": "abc"})
    assert writer.effective_state(session.id) == {
        "instructions": "v1",
        "tool_activation": {"active": ["search"], "identity": "abc"},
    }


def test_unknown_metadata_versions_are_kept_byte_for_byte_and_ignored(
    cairn_paths: CairnPaths,
) -> None:
    future = '{"v":7,"section":"instructions","content":{"rich":true},"extra":"from a newer Cairn"}'
    malformed_v1 = '{"v":1,"sektion":"typo"}'
    with Journal.open(cairn_paths.journal) as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session()
        writer.append_system(session.id, "instructions", "known")
        for text in (future, malformed_v1):
            with journal.write("a row from a newer Cairn") as conn:
                conn.execute(
                    "INSERT INTO transcript_rows (id, session_id, seq, role, hidden, content, model_system,"
                    " anchor, created_at) VALUES (?, ?, (SELECT MAX(seq) + 1 FROM transcript_rows), "
                    "'system', 1, 'null', ?, NULL, '2026-11-30T00:00:00.000000Z')",
                    (new_id(), session.id, text),
                )
        writer.append_user(session.id, "later row")
        assert writer.effective_state(session.id) == {"instructions": "known"}
        rows = writer.rows(session.id)
        assert rows[1].model_system == json.loads(future)
        assert rows[1].section_update() is None
        assert rows[2].section_update() is None

    upgrade = (*MIGRATIONS, Migration(latest_version() + 1, "noop", ("CREATE TABLE later (x TEXT) STRICT",)))
    with Journal.open(cairn_paths.journal, migrations=upgrade) as journal, journal.read() as conn:
        stored = [r[0] for r in conn.execute("SELECT model_system FROM transcript_rows ORDER BY seq")]
    assert stored[1:3] == [future, malformed_v1]


def test_section_update_model_is_versioned() -> None:
    assert SectionUpdate(section="skills", content=None).model_dump() == {
        "v": 1,
        "section": "skills",
        "content": None,
    }


def test_rows_a_newer_cairn_wrote_still_read(journal: Journal, writer: TranscriptWriter) -> None:
    """Fields a newer Cairn added are ignored, a kind it added reads as Unknown, and every
    stored byte stays as it was."""
    from host.content import MessageContent, SectionUpdate, Unknown

    session = journal.create_session()
    newer_reply = {
        "kind": "message",
        "parts": [{"kind": "text", "text": "hi", "confidence": 0.9}],
        "model": "a/b",
        "latency_ms": 812,
    }
    reply = writer.append_assistant(session.id, newer_reply)
    odd = writer.append(session.id, "system", {"kind": "bookmark", "note": "x"}, hidden=True)
    section = writer.append(
        session.id, "system", None, hidden=True, model_system={"v": 1, "section": "instructions", "content": "Be."}
    )
    newer_meta = writer.append(session.id, "system", None, hidden=True, model_system={"v": 3, "kind": "future"})
    rows = writer.rows(session.id)
    body = rows[0].body()
    assert isinstance(body, MessageContent)
    assert body.text() == "hi"
    assert rows[0].content == newer_reply  # stored exactly as written
    assert isinstance(rows[1].body(), Unknown)
    assert isinstance(rows[2].meta(), SectionUpdate)
    assert isinstance(rows[3].meta(), Unknown)
    assert writer.effective_state(session.id) == {"instructions": "Be."}
    assert [r.id for r in rows] == [reply.id, odd.id, section.id, newer_meta.id]
