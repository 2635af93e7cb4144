"""A chat with the lab's deferred tools on the loopback provider, each turn run on a fresh
runtime as after a restart (``LabChat``), the scripted messages that search and call, what a
search leaves when Cairn stops between its result and the next request, an approver that
grants for the chat (``Grants``) and one nobody answers (``Never``), a call left waiting on it
(``park``, ``parked_after_search``), and a plan rewritten as an older writer recorded it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import httpx

from desktop.loopback import LoopbackProvider
from desktop.session.state import SessionState
from desktop.tools.epochs import frozen_prefix
from desktop.turn.approvals import Approval
from desktop.turn.events import ApprovalRequested, RuntimeEvent
from desktop.turn.runtime import ChatRuntime
from host.canonical import sha256_hex
from host.content import MessageContent, PlanRecord, TextPart, ToolCallPart, ToolResultPart
from host.journal import Journal
from host.paths import CairnPaths
from host.permissions import ToolRequest
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter
from tests.lab_tools import Hooks, Lab, lab_account, lab_catalog, lab_route, lab_runtime

__all__ = [
    "NOT_ACTIVE",
    "SEARCH",
    "WEATHER",
    "Grants",
    "LabChat",
    "Never",
    "as_an_older_writer",
    "interrupted_search",
    "park",
    "parked_after_search",
]

NOT_ACTIVE = "lab__weather is not activated in this chat; find it with the tool search first."
SEARCH = '[[call tool_search {"query": "weather forecast"}]]'
WEATHER = '[[call lab__weather {"city": "Oslo"}]]'


class LabChat:
    """One chat's world: the lab, the hooks, the route, and a way to run turns (each run a
    fresh runtime, as after a restart)."""

    def __init__(self, journal: Journal, paths: CairnPaths, provider: LoopbackProvider, tmp: Path, *, fixed=False):
        self.journal, self.paths, self.provider = journal, paths, provider
        self.lab, self.hooks = Lab(), Hooks()
        self.catalog = lab_catalog(tmp / "transport.json", provider.base_url, fixed=fixed)
        self.account = lab_account(provider.base_url)
        self.route = lab_route(self.account, self.catalog, paths)
        self.session = journal.create_session().id
        self.events: list[RuntimeEvent] = []

    def run(self, *texts: str, mode: str = "auto", approver=None, setup: Callable[[ChatRuntime], None] | None = None):
        async def go() -> list[str | None]:
            async with httpx.AsyncClient(timeout=10) as http:
                runtime = lab_runtime(self.journal, self.route, http, self.lab, self.hooks, mode=mode,
                                      approver=approver, events=self.events)  # fmt: skip
                if setup is not None:
                    setup(runtime)
                return [(await runtime.send(self.session, text)).error for text in texts]

        return asyncio.run(go())

    @property
    def rows(self) -> list[TranscriptRow]:
        return TranscriptWriter(self.journal).model_order(self.session)

    def plans(self) -> list[PlanRecord]:
        return [m for r in self.rows if isinstance(m := r.meta(), PlanRecord)]

    def results(self) -> list[ToolResultPart]:
        return [p for r in self.rows if r.role == "tool" and isinstance(b := r.body(), MessageContent)
                for p in b.parts if isinstance(p, ToolResultPart)]  # fmt: skip


def interrupted_search(chat: LabChat, activated: list[str], *, error: bool = False) -> None:
    """What a search leaves when Cairn stops after saving its result, before the next request
    wrote the activation section."""
    writer = TranscriptWriter(chat.journal)
    writer.append_user(chat.session, MessageContent(parts=[TextPart(text="find the weather tool")]))
    call = ToolCallPart(call_id="s1", name="tool_search", arguments={"query": "weather"})
    writer.append_assistant(chat.session, MessageContent(parts=[call]))
    result = ToolResultPart(call_id="s1", name="tool_search", content="Active now: ...", activated=activated,
                            is_error=error)  # fmt: skip
    writer.append(chat.session, "tool", MessageContent(parts=[result]))


class Grants:
    """Answers every question with "This chat", and counts the questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        self.asked.append(request.call.name)
        return Approval("chat")


def as_an_older_writer(journal: Journal, session_id: str) -> None:
    """Rewrite the session's plan as a writer that kept scope sets in insertion order would
    have: the two-scope tool's scopes reversed, and both hashes over that order."""
    rows = TranscriptWriter(journal).rows(session_id)
    (row,) = [r for r in rows if isinstance(r.meta(), PlanRecord)]
    plan = dict(row.model_system)  # type: ignore[arg-type]
    specs = sorted(plan["specs"], key=lambda s: s["name"])
    sync = next(s for s in specs if s["name"] == "lab__sync")
    assert sync["required_scopes"] == ["mcp.lab.read", "mcp.lab.write"]
    sync["required_scopes"] = ["mcp.lab.write", "mcp.lab.read"]
    prefix = frozen_prefix(TranscriptWriter(journal).model_order(session_id))
    pinned = [s for s in specs if s["name"] in plan["declared"]]
    plan["prefix_sha256"] = sha256_hex({"prefix": prefix, "tools": pinned})
    plan["tool_schema_sha256"] = sha256_hex({"tools": specs})
    plan["specs"] = specs
    with journal.write("an older writer's plan") as connection:
        connection.execute("UPDATE transcript_rows SET model_system = ? WHERE id = ?", (json.dumps(plan), row.id))


class Never:
    """An approver nobody answers: the turn waits until it is cancelled (Cairn closes)."""

    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def park(runtime: ChatRuntime, journal: Journal, session_id: str, text: str, events: list[RuntimeEvent]) -> str:
    """Send ``text`` on ``runtime`` (whose approver is ``Never``, its events going to
    ``events``), wait until its call asks a person, then close as Cairn does; the id of the
    call left waiting."""
    task = asyncio.create_task(runtime.send(session_id, text))
    while not any(isinstance(e, ApprovalRequested) for e in events):
        await asyncio.sleep(0.01)
    task.cancel()  # Cairn closes while the card waits
    with contextlib.suppress(asyncio.CancelledError):
        await task
    (parked,) = SessionState.load(journal, session_id).parked()
    return parked.call.call_id


def parked_after_search(chat: LabChat, tool: str, text: str) -> str:
    """Activate ``tool`` by name, then send ``text`` in ask mode on a runtime nobody answers and
    close Cairn while its call waits; the id of the call left waiting."""

    async def go() -> str:
        async with httpx.AsyncClient(timeout=10) as http:
            runtime = lab_runtime(chat.journal, chat.route, http, chat.lab, chat.hooks, mode="ask", approver=Never(),
                                  events=chat.events)  # fmt: skip
            assert (await runtime.send(chat.session, f'[[call tool_search {{"query": "select:{tool}"}}]]')).ok
            return await park(runtime, chat.journal, chat.session, text, chat.events)

    return asyncio.run(go())
