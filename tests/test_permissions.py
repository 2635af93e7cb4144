"""The permission engine through the runtime, against the loopback provider: the gate's order,
modes, scopes, grants, parked approvals that survive a restart, and attacks that must never
run anything (0 executions is the bar: a tool with a side effect counts them)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import pytest
from pydantic import JsonValue

from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SystemState
from desktop.loopback import LoopbackProvider, Reply
from desktop.tools.registry import ToolRegistry, TurnInputs
from desktop.tools.sources import skill_tools
from desktop.turn.approvals import Approval, Choice
from desktop.turn.events import ApprovalRequested
from host.content import ChatGrant, MessageContent, PermissionMode, ToolApproval, ToolIdentity, ToolResultPart
from host.journal import Journal
from host.paths import CairnPaths
from host.permissions import Decision, PermissionPolicy, ToolGate, ToolRequest, identity_of
from host.tools import Tool, ToolOutput, ToolSpec
from host.transcript import TranscriptWriter
from tests.chat_fixtures import chat_runtime, loopback_account, route_for
from tests.epoch_chat import Never

WRITE = ToolSpec(
    name="write_note",
    description="Write a note to a file.",
    parameters={
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 100}},
        "required": ["text"],
        "additionalProperties": False,
    },
    required_scopes={"workspace.write"},
)
READ = ToolSpec(
    name="read_note",
    description="Read the note.",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
    required_scopes={"workspace.read"},
    read_only=True,
)


@dataclass
class Notes:
    """Tools with a side effect: every write lands in a file and is counted."""

    folder: Path
    writes: list[str] = field(default_factory=list)
    spec: ToolSpec = WRITE

    def source(self, _inputs: TurnInputs) -> list[Tool]:
        async def write(arguments: Mapping[str, JsonValue]) -> ToolOutput:
            text = str(arguments["text"])
            self.writes.append(text)
            (self.folder / f"note-{len(self.writes)}.txt").write_text(text)
            return ToolOutput(f"wrote {text!r}")

        async def read(_arguments: Mapping[str, JsonValue]) -> ToolOutput:
            return ToolOutput(" / ".join(self.writes) or "(no notes)")

        return [Tool(self.spec, write), Tool(READ, read)]


class Answers:
    """An approver that answers from a script, and records what it was asked."""

    def __init__(self, *choices: Choice) -> None:
        self.choices = list(choices)
        self.asked: list[str] = []

    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        self.asked.append(request.call.name)
        return Approval(self.choices.pop(0))


def call(name: str, arguments: str, call_id: str = "c1") -> Reply:
    return Reply(tool_calls=((call_id, name, arguments),))


def results(journal: Journal, session_id: str) -> list[ToolResultPart]:
    rows = TranscriptWriter(journal).rows(session_id)
    return [p for r in rows if r.role == "tool" for p in r.body().parts if isinstance(p, ToolResultPart)]  # type: ignore[union-attr]


def run_chat(
    journal: Journal,
    route,
    notes: Notes,
    session_id: str,
    *texts: str,
    approver=None,
    policy: PermissionPolicy | None = None,
    gate: ToolGate | None = None,
    remembered: list[tuple[ToolIdentity, bool]] | None = None,
):
    events: list[object] = []

    async def run() -> None:
        async with chat_runtime(journal, route) as chat:
            runtime = chat.runtime
            runtime.engine = ContextEngine(ToolRegistry([skill_tools, notes.source]))
            runtime.system = SystemState
            if gate is not None:
                runtime.gate = runtime.calls.gate = gate
            if approver is not None:
                runtime.approver = runtime.calls.approver = approver
            if policy is not None:
                runtime.policy = lambda: policy
            if remembered is not None:
                runtime.calls._remember = lambda target, allow: remembered.append((target, allow))
            for text in texts:
                await runtime.send(session_id, text)
            events.extend(chat.events)

    asyncio.run(run())
    return events


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def test_in_ask_mode_a_reading_tool_runs_and_a_changing_one_asks(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    provider.script(call("read_note", "{}"), Reply(text="read"), call("write_note", '{"text": "hi"}'), Reply(text="ok"))
    approver = Answers("once")
    events = run_chat(journal, route_for(loopback_account(provider), cairn_paths), notes, session.id, "a", "b",
                      approver=approver)  # fmt: skip
    assert approver.asked == ["write_note"]
    assert notes.writes == ["hi"]
    read, write = results(journal, session.id)
    assert (read.decision, read.reason) == ("allow", "it only reads")
    assert (write.decision, write.reason) == ("allow", "you allowed it once")
    assert write.elapsed_ms is not None
    assert any(isinstance(e, ApprovalRequested) and e.tool.name == "write_note" for e in events)
    states = [m.state for r in TranscriptWriter(journal).rows(session.id) if isinstance(m := r.meta(), ToolApproval)]
    assert states == ["waiting", "approved"]


@pytest.mark.parametrize(
    ("choice", "writes", "again_asked"),
    [("once", 2, True), ("chat", 2, False), ("always", 2, False), ("never", 0, False), ("deny", 0, True)],
)
def test_each_answer_is_kept_as_long_as_it_should_be(
    journal: Journal,
    cairn_paths: CairnPaths,
    provider: LoopbackProvider,
    tmp_path: Path,
    choice: Choice,
    writes: int,
    again_asked: bool,
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    remembered: list[tuple[ToolIdentity, bool]] = []
    route = route_for(loopback_account(provider), cairn_paths)
    provider.script(call("write_note", '{"text": "one"}'), Reply(text="1"))
    run_chat(journal, route, notes, session.id, "first", approver=Answers(choice), remembered=remembered)
    # The settings as they are after the answer: Always and Never live there.
    policy = PermissionPolicy(
        always=frozenset(t for t, allow in remembered if allow),
        never=frozenset(t for t, allow in remembered if not allow),
    )
    provider.script(call("write_note", '{"text": "two"}', "c2"), Reply(text="2"))
    second = Answers(choice)
    run_chat(journal, route, notes, session.id, "second", approver=second, policy=policy)
    assert len(notes.writes) == writes
    assert bool(second.asked) is again_asked
    grants = [m for r in TranscriptWriter(journal).rows(session.id) if isinstance(m := r.meta(), ChatGrant)]
    assert len(grants) == (1 if choice == "chat" else 0)
    assert [allow for _, allow in remembered] == {"always": [True], "never": [False]}.get(choice, [])


def test_a_changed_spec_is_asked_about_again(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    route = route_for(loopback_account(provider), cairn_paths)
    provider.script(call("write_note", '{"text": "one"}'), Reply(text="1"))
    run_chat(journal, route, notes, session.id, "first", approver=Answers("chat"))
    notes.spec = WRITE.model_copy(update={"description": "Write a note, now to the cloud."})
    provider.script(call("write_note", '{"text": "two"}', "c2"), Reply(text="2"))
    second = Answers("deny")
    run_chat(journal, route, notes, session.id, "second", approver=second)
    assert second.asked == ["write_note"]  # the chat grant was for the old pin
    assert notes.writes == ["one"]


def test_modes_read_only_and_auto(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    route = route_for(loopback_account(provider), cairn_paths)
    writer = TranscriptWriter(journal)
    read_only = journal.create_session()
    writer.append_meta(read_only.id, PermissionMode(mode="read_only"))
    provider.script(
        call("write_note", '{"text": "no"}'), Reply(text="refused"), call("read_note", "{}"), Reply(text="r")
    )
    asked = Answers()
    run_chat(journal, route, notes, read_only.id, "write", "read", approver=asked)
    refused, read = results(journal, read_only.id)
    assert refused.decision == "deny"
    assert "read-only" in refused.content
    assert read.decision == "allow"
    assert asked.asked == []
    auto = journal.create_session()
    writer.append_meta(auto.id, PermissionMode(mode="auto"))
    provider.script(call("write_note", '{"text": "yes"}'), Reply(text="done"))
    run_chat(journal, route, notes, auto.id, "write", approver=asked)
    assert notes.writes == ["yes"]
    assert asked.asked == []
    # Changed mid-chat: the next call follows the new mode.
    writer.append_meta(auto.id, PermissionMode(mode="read_only"))
    provider.script(call("write_note", '{"text": "later"}', "c9"), Reply(text="no"))
    run_chat(journal, route, notes, auto.id, "again", approver=asked)
    assert notes.writes == ["yes"]


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (call("delete_everything", "{}"), "No tool named 'delete_everything'"),
        (call("write_note", '{"text": 5}'), "do not fit its schema at text"),
        (call("write_note", '{"text": "x", "to": "/etc/passwd"}'), "do not fit its schema"),
        (call("write_note", '{"text": "' + "y" * 200 + '"}'), "do not fit its schema at text"),
        (call("write note; rm -rf", "{}"), "No tool named"),
        (call("../write_note", "{}"), "No tool named"),
    ],
)
def test_calls_that_must_never_run(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path, reply: Reply, why: str
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    provider.script(reply, Reply(text="ok"))
    approver = Answers("once", "once")
    run_chat(journal, route_for(loopback_account(provider), cairn_paths), notes, session.id, "go", approver=approver,
             policy=PermissionPolicy(default_mode="auto"))  # fmt: skip
    assert notes.writes == []
    assert list(notes.folder.iterdir()) == []
    (result,) = results(journal, session.id)
    assert result.decision == "deny"
    assert why in result.content
    assert approver.asked == []  # refused before anyone is asked


def test_hooks_run_in_order_and_a_denying_hook_stops_the_call(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    seen: list[str] = []

    async def before(request: ToolRequest) -> Decision | None:
        seen.append(f"before:{request.call.name}")
        return Decision.deny("a hook said no") if "forbidden" in str(request.call.arguments) else None

    async def after(request: ToolRequest, result: ToolResultPart) -> ToolResultPart:
        seen.append(f"after:{request.call.name}")
        return result.model_copy(update={"content": result.content + " (checked)"})

    session = journal.create_session()
    provider.script(
        call("write_note", '{"text": "forbidden"}'),
        Reply(text="1"),
        call("write_note", '{"text": "fine"}', "c2"),
        Reply(text="2"),
        call("nothing_here", "{}", "c3"),
        Reply(text="3"),
    )
    run_chat(journal, route_for(loopback_account(provider), cairn_paths), notes, session.id, "a", "b", "c",
             gate=ToolGate([before], [after]), policy=PermissionPolicy(default_mode="auto"))  # fmt: skip
    # A tool that is not in the catalog is refused before any hook runs.
    assert seen == ["before:write_note", "before:write_note", "after:write_note"]
    assert notes.writes == ["fine"]
    first, second, third = results(journal, session.id)
    assert first.content == "a hook said no"
    assert second.content.endswith("(checked)")
    assert third.decision == "deny"


def test_a_huge_result_is_capped_before_the_model_or_the_journal(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    from desktop.turn.tool_calls import MAX_RESULT_CHARS

    huge = ToolSpec(name="dump", description="Dump.", read_only=True)

    def source(_inputs: TurnInputs) -> list[Tool]:
        async def dump(_arguments: Mapping[str, JsonValue]) -> ToolOutput:
            return ToolOutput("x" * 50_000_000)

        return [Tool(huge, dump)]

    session = journal.create_session()
    provider.script(call("dump", "{}"), Reply(text="ok"))

    async def run() -> None:
        async with chat_runtime(journal, route_for(loopback_account(provider), cairn_paths)) as chat:
            chat.runtime.engine = ContextEngine(ToolRegistry([source]))
            assert (await chat.runtime.send(session.id, "dump")).ok

    asyncio.run(run())
    (result,) = results(journal, session.id)
    assert len(result.content) < MAX_RESULT_CHARS + 200
    assert "Cairn cut this result here: 49,900,000 more characters" in result.content
    sent = provider.requests[1].body["messages"][-1]["content"]
    assert len(sent) < MAX_RESULT_CHARS + 200


def test_a_parked_call_survives_a_restart_and_resumes_once(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    route = route_for(loopback_account(provider), cairn_paths)
    provider.script(call("write_note", '{"text": "after restart"}'), Reply(text="Written."))

    async def park_then_close() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine(ToolRegistry([notes.source]))
            chat.runtime.approver = chat.runtime.calls.approver = Never()
            task = asyncio.create_task(chat.runtime.send(session.id, "write it"))
            while not any(isinstance(e, ApprovalRequested) for e in chat.events):
                await asyncio.sleep(0.01)
            task.cancel()  # Cairn closes while the card waits
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(park_then_close())
    assert notes.writes == []
    writer = TranscriptWriter(journal)
    from desktop.session.parked import parked_calls

    (parked,) = parked_calls(writer.model_order(session.id))
    assert parked.approval.target.pin == identity_of(Tool(WRITE, None)).pin  # type: ignore[arg-type]

    async def resume() -> None:  # a new process: a new runtime, the same journal
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine(ToolRegistry([notes.source]))
            outcome = await chat.runtime.resume(session.id, parked.call.call_id, Approval("once"))
            assert outcome.ok, outcome.error

    asyncio.run(resume())
    assert notes.writes == ["after restart"]  # one execution
    assert len(results(journal, session.id)) == 1  # one result row
    assert parked_calls(writer.model_order(session.id)) == []
    first, second = provider.requests
    assert second.body["messages"][: len(first.body["messages"])] == first.body["messages"]
    for earlier, later in pairwise(provider.requests):
        assert later.body.get("tools") == earlier.body.get("tools")


def test_a_tool_that_changed_while_parked_fails_with_pin_mismatch(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    route = route_for(loopback_account(provider), cairn_paths)
    provider.script(call("write_note", '{"text": "stale"}'), Reply(text="Understood."))

    async def park() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine(ToolRegistry([notes.source]))
            chat.runtime.approver = chat.runtime.calls.approver = Never()
            task = asyncio.create_task(chat.runtime.send(session.id, "write it"))
            while not any(isinstance(e, ApprovalRequested) for e in chat.events):
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        notes.spec = WRITE.model_copy(update={"required_scopes": {"workspace.write", "network.fetch"}})
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine(ToolRegistry([notes.source]))
            assert (await chat.runtime.resume(session.id, "c1", Approval("once"))).ok

    asyncio.run(park())
    assert notes.writes == []
    (result,) = results(journal, session.id)
    assert result.content.startswith("tool_pin_mismatch")
    assert "changed while this call waited" in provider.requests[-1].body["messages"][-1]["content"]


def test_a_new_message_supersedes_a_parked_call(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    route = route_for(loopback_account(provider), cairn_paths)
    provider.script(call("write_note", '{"text": "never"}'), Reply(text="Fine, something else."))

    async def run() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine(ToolRegistry([notes.source]))
            chat.runtime.approver = chat.runtime.calls.approver = Never()
            task = asyncio.create_task(chat.runtime.send(session.id, "write it"))
            while not any(isinstance(e, ApprovalRequested) for e in chat.events):
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await chat.runtime.send(session.id, "No, do something else.")).ok

    asyncio.run(run())
    assert notes.writes == []
    (result,) = results(journal, session.id)
    assert result.content == "denied: superseded by a new message"
    messages = provider.requests[-1].body["messages"]
    assert [m["role"] for m in messages[-3:]] == ["assistant", "tool", "user"]
    rows = TranscriptWriter(journal).rows(session.id)
    roles = [r.role for r in rows if not r.hidden]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    assert isinstance(rows[-1].body(), MessageContent)


@pytest.mark.parametrize(
    ("calls", "why"),
    [
        ((("", "write_note", '{"text": "no id"}'),), "without an id or a name"),
        ((("c1", "", '{"text": "no name"}'),), "without an id or a name"),
        ((("c1", "write_note", '{"text": "a"}'), ("c1", "write_note", '{"text": "b"}')), "same id 'c1'"),
    ],
)
def test_forged_calls_in_the_stream_are_refused_and_recorded(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path, calls, why: str
) -> None:
    from host.content import ErrorContent

    notes = Notes(tmp_path / "notes")
    notes.folder.mkdir()
    session = journal.create_session()
    provider.script(Reply(tool_calls=calls))
    run_chat(journal, route_for(loopback_account(provider), cairn_paths), notes, session.id, "go",
             approver=Answers("once", "once"), policy=PermissionPolicy(default_mode="auto"))  # fmt: skip
    assert notes.writes == []
    rows = TranscriptWriter(journal).rows(session.id)
    errors = [b for r in rows if isinstance(b := r.body(), ErrorContent)]
    assert len(errors) == 1
    assert why in errors[0].error.message
    assert not [r for r in rows if r.role == "tool"]
