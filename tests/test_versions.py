"""Versions of a message, derived from supersede markers: the tree, switching, and what stays
active. A property test drives random chats of sends, regenerations (some failing), edits of
any message and switches, and checks the branch on screen is always one chain, every message
ever written can be reached by switching, and a branch shown again gives the same context."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host.content import MessageContent, SupersedeContent, TextPart
from host.folds import replay, superseded
from host.journal import Journal
from host.rows import VersionEntry
from host.transcript import TranscriptWriter
from host.versions import NotAVersion, Versions, entries_of, switch_version


class Chat:
    """A chat's rows as the runtime writes them, without the journal: fast enough for hypothesis."""

    def __init__(self) -> None:
        self.entries: list[VersionEntry] = []

    def add(
        self, role: str, *, hidden: bool = False, anchor: str | None = None, marker: SupersedeContent | None = None
    ) -> str:
        row_id = f"r{len(self.entries) + 1}"
        self.entries.append(VersionEntry(row_id, len(self.entries) + 1, role, hidden, anchor, marker))
        return row_id

    def tree(self) -> Versions:
        return Versions.of(self.entries)

    def mark(self, supersedes: list[str], restores: list[str] | None = None) -> None:
        self.add("system", hidden=True, marker=SupersedeContent(supersedes=supersedes, restores=restores or []))

    def turn(self, shape: int) -> None:
        user = self.add("user")
        self.add("system", hidden=True, anchor=user)  # the turn's section updates
        if shape % 3 == 1:  # a tool call, its approval, its result, an update between steps
            self.add("assistant")
            self.add("system", hidden=True)
            self.add("tool")
            self.add("system", hidden=True)
        elif shape % 3 == 2:  # a failed request, then a retry
            self.add("assistant", hidden=True)
        self.add("assistant")

    def regenerate(self, succeeds: bool) -> None:
        tree = self.tree()
        user = next((r for r in reversed(tree.path()) if tree.role[r] == "user"), None)
        if user is None:
            return
        answer = tree.active_child(user)
        if answer is not None:
            self.mark(tree.branch(answer))
        self.add("system", hidden=True)  # sections updated since, unanchored
        if succeeds:
            self.add("assistant")
        else:
            self.add("assistant", hidden=True)  # the error record

    def edit(self, pick: int, shape: int) -> None:
        tree = self.tree()
        users = [r for r in tree.path() if tree.role[r] == "user"]
        if users:
            self.mark(tree.branch(users[pick % len(users)]))
        self.turn(shape)

    def switch(self, pick: int) -> None:
        tree = self.tree()
        shown = tree.shown()
        if not shown:
            return
        row = sorted(shown)[pick % len(shown)]
        group = shown[row]
        marker = tree.switch(group[(pick // len(shown)) % len(group)])
        if marker is not None:
            self.entries.append(VersionEntry(f"r{len(self.entries) + 1}", len(self.entries) + 1, "system", True, None,
                                             marker))  # fmt: skip

    def context(self) -> tuple[str, ...]:
        """The rows a request is built from: every row no marker has taken out."""
        gone = replay(e.marker for e in self.entries if e.marker is not None)
        return tuple(e.id for e in self.entries if e.marker is None and e.id not in gone)


operation = st.tuples(st.sampled_from(["send", "regenerate", "fail", "edit", "switch", "hidden"]), st.integers(0, 50))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=30), st.integers(0, 1000))
def test_versions_keep_one_chain_reach_every_message_and_give_the_same_context_again(
    operations: list[tuple[str, int]], target: int
) -> None:
    chat = Chat()
    seen: dict[tuple[str, ...], tuple[str, ...]] = {}
    for name, n in operations:
        if name == "send":
            chat.turn(n)
        elif name in ("regenerate", "fail"):
            chat.regenerate(succeeds=name == "regenerate")
        elif name == "edit":
            chat.edit(n, n // 7)
        elif name == "switch":
            chat.switch(n)
        else:
            chat.add("system", hidden=True)  # a mode change, a checkpoint: owned by the tip
        _check(chat, seen, switched=name == "switch")
    if (tip := chat.tree().tip()) is not None and chat.tree().role[tip] == "user":
        chat.regenerate(succeeds=True)  # a failed regeneration is followed by a retry
        _check(chat, seen, switched=False)

    # Every visible row ever written is reached by switching, from the top of its branch down.
    tree = chat.tree()
    if not tree.visible:
        return
    wanted = sorted(tree.visible, key=tree.order.__getitem__)[target % len(tree.visible)]
    chain = [wanted]
    while (up := tree.parent[chain[-1]]) is not None:
        chain.append(up)
    for row in reversed(chain):
        tree = chat.tree()
        if row in tree.active:
            continue
        if tree.tip() == tree.parent[row] and tree.active_child(tree.parent[row]) is None:
            # A regeneration failed here: the chat ends with its error, whose Retry answers
            # afresh, and that answer offers the earlier one as a version.
            chat.regenerate(succeeds=True)
            _check(chat, seen, switched=False)
            tree = chat.tree()
        offered = [group for group in tree.shown().values() if row in group]
        assert offered, f"{row} cannot be reached: no message on screen offers it as a version"
        marker = tree.switch(row)
        assert marker is not None
        chat.entries.append(VersionEntry(f"r{len(chat.entries) + 1}", len(chat.entries) + 1, "system", True, None,
                                         marker))  # fmt: skip
        _check(chat, seen, switched=True)
    assert wanted in chat.tree().path()


def _check(chat: Chat, seen: dict[tuple[str, ...], tuple[str, ...]], *, switched: bool) -> None:
    tree = chat.tree()
    context = chat.context()
    assert tree.active == set(context), "the tree and the markers disagree on what is active"
    path = tree.path()
    for before, row in zip([None, *path], path, strict=False):
        assert tree.parent[row] == before, f"the branch on screen is not one chain at {row}"
    if switched and tuple(path) in seen:
        # A branch switched back to: the model is given exactly the rows it had when it was left.
        assert seen[tuple(path)] == context
    seen[tuple(path)] = context


def test_a_regenerated_answer_and_an_edited_message_are_versions_of_what_they_replaced() -> None:
    chat = Chat()
    chat.turn(0)  # r1 user, r2 sections, r3 answer
    chat.regenerate(succeeds=True)  # r4 marker, r5 sections, r6 answer
    tree = chat.tree()
    assert tree.shown() == {"r6": ("r3", "r6")}
    assert tree.branch("r6") == ["r5", "r6"]  # its fresh section updates go with it
    chat.turn(0)  # r7 user, r8 sections, r9 answer
    chat.edit(1, 0)  # r10 marker; r11 user, r12 sections, r13 answer
    tree = chat.tree()
    assert chat.entries[9].marker == SupersedeContent(supersedes=["r7", "r8", "r9"])
    assert tree.shown() == {"r6": ("r3", "r6"), "r11": ("r7", "r11")}

    # Back to the first answer: its branch had no later message.
    marker = tree.switch("r3")
    assert marker == SupersedeContent(supersedes=["r5", "r6", "r11", "r12", "r13"], restores=["r3"])
    chat.entries.append(VersionEntry("r14", 14, "system", True, None, marker))
    assert chat.tree().path() == ["r1", "r3"]
    # And forth: the second answer comes back with the edited message it had last.
    marker = chat.tree().switch("r6")
    assert marker == SupersedeContent(supersedes=["r3"], restores=["r5", "r6", "r11", "r12", "r13"])


def test_a_version_off_screen_or_unknown_cannot_be_switched_to() -> None:
    chat = Chat()
    chat.turn(0)
    chat.turn(0)  # r4 user, r6 answer
    chat.edit(0, 0)  # the first message edited: r7 marker, r8 user, r10 answer
    tree = chat.tree()
    assert tree.switch("r8") is None  # shown already
    with pytest.raises(NotAVersion, match="switch to that branch first"):
        tree.switch("r6")  # its question is in the other version
    with pytest.raises(NotAVersion, match=r"^That message is not in this chat\.$"):
        tree.switch("nope")


def test_the_journal_replays_restores_for_display_context_and_versions(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    session = journal.create_session().id

    def say(role: str, text: str) -> str:
        return writer.append(session, role, MessageContent(parts=[TextPart(text=text)])).id  # type: ignore[arg-type]

    question = say("user", "question")
    first = say("assistant", "first")
    writer.append_supersede(session, [first])
    second = say("assistant", "second")

    def shown() -> list[str]:
        return [r.content["parts"][0]["text"] for r in writer.display_page(session)]  # type: ignore[index,call-overload]

    assert shown() == ["question", "second"]
    assert switch_version(writer, session, first) is not None
    assert shown() == ["question", "first"]
    rows = writer.rows(session)
    assert superseded(rows) == {second}
    assert Versions.of(writer.version_entries(session)).shown() == {first: (first, second)}
    assert writer.version_entries(session) == entries_of(rows)
    assert switch_version(writer, session, first) is None  # shown already: nothing written
    assert len(writer.rows(session)) == len(rows)
    assert question in Versions.of(entries_of(rows)).path()
    # A plain marker is stored as Cairns before ``restores`` wrote it; a switch names both.
    markers = [r.content for r in rows if r.role == "system"]
    assert markers == [
        {"kind": "supersede", "supersedes": [first]},
        {"kind": "supersede", "supersedes": [second], "restores": [first]},
    ]


def test_a_branch_left_takes_its_sections_checkpoint_and_parked_call_with_it(journal: Journal) -> None:
    """What the context is built from follows the version on screen: section updates, a
    compaction checkpoint and a call waiting on a person in a branch left behind do not apply,
    and they apply again when it is switched back to."""
    from desktop.context.messages import context_from_rows
    from desktop.session.parked import parked_calls
    from host.content import Checkpoint, SectionEntry, ToolApproval, ToolCallPart, ToolIdentity
    from host.folds import fold_sections, last_checkpoint

    writer = TranscriptWriter(journal)
    session = journal.create_session().id
    question = writer.append_user(session, MessageContent(parts=[TextPart(text="question")]))
    writer.append_system(session, "instructions", "Be brief.", anchor=question.id)
    first = writer.append_assistant(session, MessageContent(parts=[TextPart(text="first")]))
    writer.append_system(session, "instructions", "Be thorough.")
    saved = [SectionEntry(section="instructions", content="Be thorough.")]
    checkpoint = Checkpoint(
        sections=saved, epoch=0, summary="so far", tail_from=None, prompt_version=1, reason="manual",
        tokens_before=10, tokens_after=5, created_at="2026-01-01T00:00:00Z",
    )  # fmt: skip
    writer.append_meta(session, checkpoint)
    second_question = writer.append_user(session, MessageContent(parts=[TextPart(text="run it")]))
    call = ToolCallPart(call_id="c1", name="run", arguments={})
    writer.append_assistant(session, MessageContent(parts=[call]))
    target = ToolIdentity(source="builtin", tool="run", pin="p")
    writer.append_meta(session, ToolApproval(call_id="c1", target=target, state="waiting", reason="asks"))

    def state() -> tuple[dict[str, object], int | None, list[str], list[str]]:
        rows = writer.model_order(session)
        texts = [m.text() for m in context_from_rows(rows).messages if m.role != "system"]
        return fold_sections(rows), last_checkpoint(rows), [p.call.call_id for p in parked_calls(rows)], texts

    before = state()
    assert before[0] == {"instructions": "Be thorough."}
    assert before[1] is not None
    assert before[2] == ["c1"]
    assert before[3] == ["run it", ""]  # after the checkpoint: its summary, then what follows

    # Regenerate the first answer: its branch (the later update, the checkpoint, the second
    # question and its parked call) goes with it.
    versions = Versions.of(writer.version_entries(session))
    writer.append_supersede(session, versions.branch(first.id))
    writer.append_assistant(session, MessageContent(parts=[TextPart(text="again")]))
    assert state() == ({"instructions": "Be brief."}, None, [], ["question", "again"])

    assert switch_version(writer, session, first.id) is not None
    assert state() == before
    assert second_question.id in Versions.of(writer.version_entries(session)).path()


def test_versions_are_read_from_indexes_without_message_text(journal: Journal) -> None:
    """A long chat's versions cost one pass over an index, not over its messages' text."""
    with journal.read() as conn:
        shape = conn.execute(
            "EXPLAIN QUERY PLAN SELECT id, seq, role, hidden, anchor FROM transcript_rows WHERE session_id = ? "
            "ORDER BY seq",
            ("s",),
        ).fetchall()
        markers = conn.execute(
            "EXPLAIN QUERY PLAN SELECT seq, content FROM transcript_rows WHERE session_id = ? AND role = 'system' "
            "AND model_system IS NULL",
            ("s",),
        ).fetchall()
    assert "USING COVERING INDEX transcript_rows_shape" in shape[-1][-1]
    assert "USING INDEX transcript_rows_markers" in markers[-1][-1]
