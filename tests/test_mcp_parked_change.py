"""A call parked on a person, to a real MCP server's tool whose definition changes while it waits
(architecture §6, invariant 8): across a restart (the server upgraded while Cairn was closed)
and live (the server changes the tool and says so while the card waits). Approved, the call is
never sent to the server, and the model and the person read the real cause, not "not
activated". The server (tests/mcp_servers/tools_server.py) leaves a line in a file for every
run of ``add``, so "not run" is seen, not assumed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import pytest

from desktop.loopback import LoopbackProvider
from desktop.session.state import SessionState
from desktop.settings.mcp_servers import McpServerSetting, server_setting
from desktop.settings.secrets import SecretStore
from desktop.turn.approvals import Approval
from desktop.turn.events import ApprovalRequested
from desktop.turn.runtime import ChatRuntime
from host.content import ToolResultPart
from host.mcp import ServerState
from host.paths import CairnPaths
from host.permissions import PermissionPolicy, ToolRequest
from host.permissions.gate import PIN_MISMATCH
from tests.epoch_chat import Never
from tests.fake_keyring import MemoryKeyring
from tests.mcp_cairn import Cairn, call, search
from tests.mcp_servers import TOOLS_SERVER

CHANGED = "The definition of lab__add changed while this call waited for your answer"
ADD = call("lab__add", '{"a": 2, "b": 3}')


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def lab_entry(secrets: SecretStore, doc: str, calls: Path, mode: str = "normal") -> McpServerSetting:
    """The lab server, its ``add`` described as ``doc``, each run of ``add`` a line in ``calls``."""
    fields = {"name": "lab", "command": sys.executable, "args": [str(TOOLS_SERVER), mode], "start_timeout": 20}
    return server_setting(secrets, fields, env={"LAB_ADD_DOC": doc, "LAB_CALLS": str(calls)})


def ask_runtime(cairn: Cairn, approver: object) -> ChatRuntime:
    """A runtime on Cairn's services in ask mode, ``approver`` answering its questions."""
    services = cairn.services
    settings = services.load_settings()
    runtime = services.runtime(
        services.route(cairn.account), None, lambda: services.system_state(settings), cairn.events.append,
        policy=lambda: PermissionPolicy(default_mode="ask"),
    )  # fmt: skip
    runtime.approver = runtime.calls.approver = approver  # type: ignore[assignment]
    return runtime


async def until(check, what: str, seconds: float = 30.0) -> None:
    """Poll ``check`` until it holds; fail saying ``what`` did not happen."""
    try:
        async with asyncio.timeout(seconds):
            while not check():
                await asyncio.sleep(0.02)
    except TimeoutError:
        pytest.fail(f"{what} did not happen within {seconds:g} s")


def asked(cairn: Cairn) -> bool:
    return any(isinstance(e, ApprovalRequested) for e in cairn.events)


def result_of(cairn: Cairn, call_id: str) -> ToolResultPart:
    return next(r for r in cairn.results() if r.call_id == call_id)


def runs(calls: Path) -> list[str]:
    return calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []


def told_the_model(provider: LoopbackProvider, call_id: str) -> str:
    """What the last request told the model the call ``call_id`` came to."""
    messages = provider.requests[-1].body["messages"]
    return next(m["content"] for m in messages if m.get("role") == "tool" and m.get("tool_call_id") == call_id)


def parked_then_upgraded(paths: CairnPaths, provider: LoopbackProvider, calls: Path) -> tuple[Cairn, str]:
    """Park a call to the lab's ``add`` (described "A") and close Cairn; then upgrade the server
    as if while Cairn was closed (the same entry, ``add`` described "B"). Cairn's services
    again, on the same chat and route, not started yet, and the call's id."""
    keyring = MemoryKeyring()
    first = Cairn(paths, provider, keyring)

    async def park() -> str:
        async with first.services.running():
            await first.mcp.put(lab_entry(first.services.secrets, "A: add two numbers.", calls))
            runtime = ask_runtime(first, Never())
            assert (await runtime.send(first.session, search("select:lab__add"))).ok
            task = asyncio.create_task(runtime.send(first.session, ADD))
            await until(lambda: asked(first), "the call asking a person")
            task.cancel()  # Cairn closes while the card waits; the server process ends with it
            with contextlib.suppress(asyncio.CancelledError):
                await task
        (parked,) = SessionState.load(first.journal, first.session).parked()
        return parked.call.call_id

    try:
        call_id = asyncio.run(park())
    finally:
        first.services.close()
    assert runs(calls) == []
    settings_path = paths.config_dir / "settings.json"
    saved = json.loads(settings_path.read_text())
    (entry,) = saved["mcp_servers"]
    entry["env"]["LAB_ADD_DOC"] = "B: add two numbers, and remember them forever."
    settings_path.write_text(json.dumps(saved))
    again = Cairn(paths, provider, keyring)
    again.session, again.account = first.session, first.account  # the same chat, on the same route
    return again, call_id


def resumed(cairn: Cairn, call_id: str, *, once_ready: bool) -> ToolResultPart:
    """Start Cairn, approve the parked call once (``once_ready``: after the upgraded server has
    started and listed its tools, as a person who answers a moment after Cairn opens; else at
    once, while it starts), stop Cairn; the call's result."""

    async def go() -> None:
        async with cairn.services.running():
            if once_ready:
                await cairn.services.mcp.prepare()  # launched, if starting Cairn did not
                await until(lambda: (described(cairn) or "").startswith("B:"), "the upgraded server being ready")
            outcome = await ask_runtime(cairn, Never()).resume(cairn.session, call_id, Approval("once"))
            assert outcome.ok, outcome.error

    try:
        asyncio.run(go())
        return result_of(cairn, call_id)
    finally:
        cairn.services.close()


def described(cairn: Cairn) -> str | None:
    """How the running lab server describes ``add`` now, if it is ready."""
    server = cairn.services.mcp.running("lab")
    tools = server.tools() if server is not None and server.status.state is ServerState.READY else []
    return next((t.spec.description for t in tools if t.spec.name == "lab__add"), None)


def test_a_call_parked_before_its_server_was_upgraded_is_refused_for_that_reason_on_resume(
    cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.txt"
    cairn, call_id = parked_then_upgraded(cairn_paths, provider, calls)
    refused = resumed(cairn, call_id, once_ready=True)
    assert runs(calls) == []  # never sent to the server
    assert refused.is_error
    assert refused.decision == "deny"
    assert refused.content.startswith(PIN_MISMATCH)
    assert CHANGED in refused.content
    assert "not activated" not in refused.content
    assert CHANGED in told_the_model(provider, call_id)


def test_a_call_approved_while_its_upgraded_server_still_starts_is_not_sent_and_says_why(
    cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    # Until the server lists its tools again, Cairn offers the ones it listed when it last ran
    # (desktop/tools/remembered_tools.py): the call passes the gate against that old definition,
    # and the remembered tool itself refuses to send it once the server lists the new one.
    calls = tmp_path / "calls.txt"
    cairn, call_id = parked_then_upgraded(cairn_paths, provider, calls)
    refused = resumed(cairn, call_id, once_ready=False)
    assert runs(calls) == []  # never sent to the server
    assert refused.is_error
    said = "The definition of lab__add changed since the MCP server 'lab' last ran, so this call, made against "
    assert refused.content.startswith(said)
    assert "not activated" not in refused.content
    assert said in told_the_model(provider, call_id)


class Later:
    """An approver that answers "once" when the test says so."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        await self.go.wait()
        return Approval("once")


def test_a_call_whose_tool_changes_while_it_waits_is_refused_for_that_reason_when_approved(
    cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.txt"
    cairn = Cairn(cairn_paths, provider, MemoryKeyring())

    async def go() -> None:
        async with cairn.services.running():
            await cairn.mcp.put(lab_entry(cairn.services.secrets, "A: add two numbers.", calls, "reword"))
            approver = Later()
            runtime = ask_runtime(cairn, approver)
            assert (await runtime.send(cairn.session, search("select:lab__add"))).ok
            task = asyncio.create_task(runtime.send(cairn.session, ADD))
            await until(lambda: asked(cairn), "the call asking a person")
            server = cairn.services.mcp.running("lab")
            assert server is not None
            # While the card waits, the server changes add and sends tools/list_changed.
            said = await server.call("reword", {"doc": "B: add two numbers, and remember them forever."})
            assert said.text == "reworded", said.text
            await until(lambda: (described(cairn) or "").startswith("B:"), "Cairn seeing add's new definition")
            approver.go.set()  # the person, who read A, says yes
            outcome = await task
            assert outcome.error is None, outcome.error

    try:
        asyncio.run(go())
        call_id = next(e.call.call_id for e in cairn.events if isinstance(e, ApprovalRequested))
        refused = result_of(cairn, call_id)
    finally:
        cairn.services.close()
    assert runs(calls) == []  # never sent to the server
    assert refused.is_error
    assert refused.decision == "deny"
    assert refused.content.startswith(PIN_MISMATCH)
    assert CHANGED in refused.content
    assert "not activated" not in refused.content
    assert CHANGED in told_the_model(provider, call_id)
