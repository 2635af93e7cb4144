"""A chat's folded state (``desktop.session.state``): advanced row by row, it is always what a
full fold of the same rows gives, and what the functions that read every row find.

Random histories write every kind of row a chat holds (messages, tool calls and results,
section updates anchored to their user row or not, checkpoints, supersede markers that take
versions out and put them back, plans, modes, grants, fallbacks, a chat's own settings and
route, approvals) into a real journal, and compare the advanced state with a fresh load after
every row.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from desktop.session.chat_settings import chat_settings_of
from desktop.session.parked import parked_calls
from desktop.session.state import SessionState
from desktop.session.states import SessionStates
from desktop.tools.epochs import latest_plan
from host.content import (
    ChatGrant,
    ChatRoute,
    ChatSettings,
    Checkpoint,
    MessageContent,
    ModelSystem,
    PermissionMode,
    PlanRecord,
    RouteFallback,
    SectionEntry,
    TextPart,
    ToolApproval,
    ToolCallPart,
    ToolIdentity,
    ToolResultPart,
)
from host.folds import fold_sections, last_checkpoint, superseded
from host.journal import Journal
from host.permissions import Permissions
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter
from host.versions import Versions

SECTIONS = ("instructions", "skills", "guidance:a", "tool_activation")
TOOL = ToolIdentity(source="lab", tool="shout", pin="p1")

Step = tuple[str, int]  # a kind of row, and a number the kind uses as it likes
KINDS = ["user", "user", "assistant", "assistant", "calls", "result", "section", "anchored", "anchored_old",
         "tombstone", "checkpoint", "supersede", "restore", "plan", "mode", "grant", "revoke", "fallback",
         "settings", "route", "approval"]  # fmt: skip
STEPS = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 7)), max_size=40)


@dataclass
class History:
    """A chat being written, and what the writers of its rows need to know of it."""

    writer: TranscriptWriter
    session: str
    taken: list[str] = field(default_factory=list)  # rows a marker took out, for restores

    def rows(self) -> list[TranscriptRow]:
        return self.writer.rows(self.session)

    def users(self) -> list[str]:
        return [r.id for r in self.rows() if r.role == "user"]

    def calls(self) -> list[ToolCallPart]:
        return [p for r in self.rows() if isinstance(b := r.body(), MessageContent) for p in b.tool_calls()]


def _user(h: History, n: int) -> None:
    h.writer.append_user(h.session, MessageContent(parts=[TextPart(text=f"q{n}")]))


def _assistant(h: History, n: int) -> None:
    h.writer.append_assistant(h.session, MessageContent(parts=[TextPart(text=f"a{n}")]))


def _calls(h: History, n: int) -> None:
    call = ToolCallPart(call_id=f"c{len(h.rows())}", name="lab__shout", arguments={"n": n})
    h.writer.append_assistant(h.session, MessageContent(parts=[call]))


def _result(h: History, n: int) -> None:
    if calls := h.calls():
        result = ToolResultPart(call_id=calls[-1].call_id, content=f"r{n}")
        h.writer.append_tool_result(h.session, MessageContent(parts=[result]))


def _section(h: History, n: int, *, tombstone: bool = False) -> None:
    h.writer.append_system(h.session, SECTIONS[n % 4], None if tombstone else f"s{n}")


def _anchored(h: History, n: int, *, latest: bool = True) -> None:
    if users := h.users():
        anchor = users[-1] if latest else users[n % len(users)]
        h.writer.append_system(h.session, SECTIONS[n % 4], f"anchored {n}", anchor=anchor)


def _checkpoint(h: History, n: int) -> None:
    state = fold_sections(h.writer.model_order(h.session))
    users = h.users()
    h.writer.append_meta(h.session, Checkpoint(
        sections=[SectionEntry(section=k, content=v) for k, v in state.items()], epoch=0, summary=f"sum {n}",
        tail_from=users[-1] if users and n % 2 else None, prompt_version=1, reason="manual", tokens_before=10,
        tokens_after=5, created_at="2026-12-01T00:00:00Z",
    ))  # fmt: skip


def _supersede(h: History, n: int) -> None:
    """Take out a stretch of rows from one on, hidden ones too (as a version's branch is)."""
    markers = {r.id for r in h.rows() if r.role == "system" and r.model_system is None}
    if rows := [r.id for r in h.rows() if r.id not in markers]:
        taken = rows[n % len(rows) :]
        h.writer.append_supersede(h.session, taken)
        h.taken.extend(taken)


def _restore(h: History, n: int) -> None:
    if h.taken:
        h.writer.append_supersede(h.session, [], [h.taken[n % len(h.taken)]])


def _fallback(h: History, n: int) -> None:
    route = {"provider": "p", "model": f"m{n % 2}", "api": "openai-completions", "base_url": "http://x/v1"}
    fallback = ("fold_system_updates", "no_tools")[n % 2]
    h.writer.append_meta(h.session, RouteFallback(route=route, fallback=fallback, reason="refused"))


def _approval(h: History, n: int) -> None:
    if calls := h.calls():
        state = ("waiting", "approved", "denied")[n % 3]
        h.writer.append_meta(h.session, ToolApproval(call_id=calls[-1].call_id, target=TOOL, state=state, reason="r"))


def _plan(n: int) -> PlanRecord:
    return PlanRecord(
        epoch=n, reason="first_request" if n % 2 else "prefix_hash_canonicalized", prefix_sha256="a" * 64,
        tool_schema_sha256="b" * 64, declared=[], policy="on_demand", fallback=None, account_id="acc",
        route={}, mode="ask", specs=[], created_at="2026-12-01T00:00:00Z",
    )  # fmt: skip


def _meta(make: Callable[[int], ModelSystem]) -> Callable[[History, int], None]:
    return lambda h, n: h.writer.append_meta(h.session, make(n)) and None


WRITERS: dict[str, Callable[[History, int], None]] = {
    "user": _user, "assistant": _assistant, "calls": _calls, "result": _result, "section": _section,
    "tombstone": partial(_section, tombstone=True), "anchored": _anchored,
    "anchored_old": partial(_anchored, latest=False), "checkpoint": _checkpoint, "supersede": _supersede,
    "restore": _restore, "fallback": _fallback, "approval": _approval,
    "plan": _meta(_plan),
    "mode": _meta(lambda n: PermissionMode(mode=("ask", "read_only", "auto")[n % 3])),
    "grant": _meta(lambda n: ChatGrant(target=TOOL, allow=True)),
    "revoke": _meta(lambda n: ChatGrant(target=TOOL, allow=False)),
    "settings": _meta(lambda n: ChatSettings(temperature=n / 4)),
    "route": _meta(lambda n: ChatRoute(account_id=f"acc{n % 2}", model=None)),
}  # fmt: skip


def agree(state: SessionState, journal: Journal, session: str) -> None:
    """The advanced ``state`` is a fresh full fold's, and what the row-reading functions say."""
    writer = TranscriptWriter(journal)
    rows = writer.model_order(session)
    fresh = SessionState.load(journal, session)
    for folded in (state, fresh):
        assert [r.id for r in folded.rows] == [r.id for r in rows]
        assert folded.gone == superseded(rows)
        assert folded.sections == fold_sections(rows)
        at = last_checkpoint(rows)
        assert (folded.checkpoint.id if folded.checkpoint else None) == (rows[at].id if at is not None else None)
        assert folded.plan == latest_plan(rows)
        assert folded.chat_settings == chat_settings_of(rows)
        assert folded.chat_route == next((m for r in reversed(rows) if isinstance(m := r.meta(), ChatRoute)), None)
        legacy = Permissions.of_chat(rows, default_mode="ask")
        assert (folded.mode("ask"), folded.grants) == (legacy.mode, legacy.chat)
        assert [p.call.call_id for p in folded.parked()] == [p.call.call_id for p in parked_calls(rows)]
        versions = Versions.of(writer.version_entries(session))
        assert (folded.versions.path(), folded.versions.shown()) == (versions.path(), versions.shown())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
# A section update anchored before a later update of the same section, or before a checkpoint:
# the later one still wins, as in model order (a retry after a step that updated sections).
@example([("user", 0), ("section", 0), ("anchored", 0)])
@example([("user", 0), ("checkpoint", 1), ("anchored", 1)])
# A version taken out, with the section update it held, and put back: it counts again.
@example([("user", 0), ("section", 1), ("assistant", 0), ("supersede", 1), ("restore", 0)])
def test_an_advanced_state_is_a_full_fold_of_the_same_rows(steps: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as folder, Journal.open(Path(folder) / "journal.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session().id
        state = SessionState.load(journal, session)
        history = History(writer, session)
        for kind, n in steps:
            WRITERS[kind](history, n)
            state.advance()
            agree(state, journal, session)


def test_advancing_reads_only_the_rows_written_since(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "journal.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session().id
        for n in range(50):
            writer.append_user(session, MessageContent(parts=[TextPart(text=f"q{n}")]))
        loads = SessionState.folds.loads
        state = SessionState.load(journal, session)
        assert SessionState.folds.loads == loads + 1
        assert state.advance() == ()
        row = writer.append_system(session, "instructions", "be brief")
        assert state.advance() == (row,)
        assert state.sections == {"instructions": "be brief"}
        assert SessionState.folds.loads == loads + 1  # advancing is no full fold


def test_only_the_chats_asked_about_last_are_kept_and_a_chat_in_a_turn_always(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "journal.sqlite3") as journal:
        chats = [journal.create_session().id for _ in range(5)]
        states = SessionStates(journal, keep=2)
        loads = SessionState.folds.loads
        with states.holding(chats[0]):
            first = states.get(chats[0])
            for chat in chats[1:]:
                states.get(chat)
            assert states.get(chats[0]) is first  # held: never let go
            assert SessionState.folds.loads == loads + 5
        states.get(chats[4])
        states.get(chats[1])  # let go meanwhile: loaded again
        assert SessionState.folds.loads == loads + 6
