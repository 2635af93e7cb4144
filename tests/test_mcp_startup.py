"""A turn does not wait for every MCP server: a server's tools are the ones it listed when it
last ran until it is ready again, so the first request goes at once and the catalog (and with
it the declaration epoch and the chat's activations) does not change while servers start or
fail; a call to such a tool waits for its server, and is refused in words when the tool
changed meanwhile; a failure is remembered, also across restarts of Cairn, and the server is
tried again later rather than on every turn. Real server processes (tests/mcp_servers), the
loopback provider, the journal, each Cairn a fresh composition root on the same home."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import McpServerSetting, server_setting
from desktop.turn.events import RequestStarted
from host.mcp import ServerState
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_cairn import Cairn, call, search
from tests.mcp_servers import TOOLS_SERVER

SLOW = "5"  # seconds the server takes to start: far more than a turn with the loopback provider


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def keyring() -> MemoryKeyring:
    return MemoryKeyring()


def entry(cairn: Cairn, **env: str) -> McpServerSetting:
    given = {"name": "lab", "command": sys.executable, "args": [str(TOOLS_SERVER)], "start_timeout": 20}
    return server_setting(cairn.services.secrets, given, env=env)


def first_run(paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring) -> Cairn:
    """A chat in which the server starts for the first time (the turn waits for it: Cairn has
    never seen its tools) and ``lab__add`` is found and called."""
    cairn = Cairn(paths, provider, keyring)

    async def add(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn))

    assert cairn.run(add, search("select:lab__add"), call("lab__add", '{"a": 1, "b": 2}')) == [None, None]
    assert cairn.results()[-1].content == "3"
    cairn.services.close()
    return cairn


def again(
    paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring, first: Cairn, *, on_demand: bool = False
) -> Cairn:
    """Cairn started again, on the same chat and account."""
    made = Cairn(paths, provider, keyring, servers_on_demand=on_demand)
    made.session, made.account = first.session, first.account
    return made


def requests(cairn: Cairn) -> list[RequestStarted]:
    return [event for event in cairn.events if isinstance(event, RequestStarted)]


@pytest.mark.slow  # the server takes its time to start, on purpose
def test_a_turn_goes_at_once_with_the_tools_a_server_listed_when_it_last_ran(
    cairn_paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring
) -> None:
    first = first_run(cairn_paths, provider, keyring)
    cairn = again(cairn_paths, provider, keyring, first)
    states = []

    async def slow(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn, LAB_SLOW_START=SLOW), replacing="lab")

    async def look(cairn: Cairn) -> None:
        view = cairn.services.mcp.view("lab")
        states.append(view.status.state if view is not None and view.status is not None else None)

    errors = cairn.run(slow, "hello", look, call("lab__add", '{"a": 2, "b": 2}'), look)
    assert errors == [None, None]
    # The first turn went while the server was still starting...
    assert states == [ServerState.STARTING, ServerState.READY]
    # ...with the catalog it had before: same schema identity, same epoch, the activation kept,
    # so the call (to a tool found in the earlier run) waited for the server and ran.
    assert cairn.results()[-1].content == "4"
    assert [plan.reason for plan in cairn.plans()] == ["first_request"]
    identities = {event.tool_schema_sha256 for event in requests(cairn)}
    assert len(identities) == 1
    cairn.services.close()


def test_on_demand_a_known_server_starts_only_when_a_call_needs_it(
    cairn_paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring
) -> None:
    """As ``cairn chat`` runs servers: its process ends with its turn, so a server launched for
    a turn that calls none of its tools would cost its start and its stop for nothing."""
    first = first_run(cairn_paths, provider, keyring)
    cairn = again(cairn_paths, provider, keyring, first, on_demand=True)
    states = []

    async def look(cairn: Cairn) -> None:
        view = cairn.services.mcp.view("lab")
        states.append(view.status.state if view is not None and view.status is not None else None)

    assert cairn.run(None, "hello", look, call("lab__add", '{"a": 2, "b": 3}'), look) == [None, None]
    assert states == [ServerState.STOPPED, ServerState.READY]
    assert cairn.results()[-1].content == "5"
    assert [plan.reason for plan in cairn.plans()] == ["first_request"]
    cairn.services.close()

    # A resource read starts the server the same way.
    reader = again(cairn_paths, provider, keyring, first, on_demand=True)
    read = call("read_resource", json.dumps({"server": "lab", "uri": "lab://notes"}))
    assert reader.run(None, read) == [None]
    assert reader.results()[-1].content == "[lab://notes (text/plain)]\nNotebook: the teal flask is empty."
    reader.services.close()


def test_a_tool_that_changed_while_its_server_started_is_refused_in_words(
    cairn_paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring
) -> None:
    first = first_run(cairn_paths, provider, keyring)
    cairn = again(cairn_paths, provider, keyring, first)

    async def changed(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn, LAB_ADD_DOC="Add two whole numbers."), replacing="lab")

    assert cairn.run(changed, call("lab__add", '{"a": 2, "b": 2}'), "and now?") == [None, None]
    refused = cairn.results()[-1]
    assert refused.is_error
    assert refused.content == (
        "The definition of lab__add changed since the MCP server 'lab' last ran, so this call, made against "
        "the old one, was not sent. The next request carries the new definition."
    )
    # The real change, and only that, starts an epoch.
    assert [plan.reason for plan in cairn.plans()] == ["first_request", "schema_changed"]
    cairn.services.close()


def test_a_failure_is_remembered_and_tried_again_later_not_on_every_turn(
    cairn_paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="desktop.tools.mcp_hub")
    first = first_run(cairn_paths, provider, keyring)
    broken = again(cairn_paths, provider, keyring, first)

    async def breaks(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn, LAB_FAIL_AT_START="1"), replacing="lab")

    assert broken.run(breaks, call("lab__add", '{"a": 2, "b": 2}')) == [None]
    failed = broken.results()[-1]
    assert failed.is_error
    assert failed.content.startswith("The MCP server lab: failed: the server exited with code 3 (Cairn tries it again")
    assert [plan.reason for plan in broken.plans()] == ["first_request"]  # its tools stay declared
    broken.services.close()

    def starts() -> int:
        return sum(record.getMessage() == "MCP server lab: starting" for record in caplog.records)

    # The next Cairn does not start it again before the retry is due, and says why it cannot.
    counted = starts()
    later = again(cairn_paths, provider, keyring, first)
    lines: list[str] = []

    async def look(cairn: Cairn) -> None:
        view = cairn.services.mcp.view("lab")
        lines.append(view.describe() if view is not None else "")

    assert later.run(None, "hello", look, call("lab__add", '{"a": 2, "b": 2}')) == [None, None]
    assert starts() == counted
    assert lines[0].startswith("lab: failed: the server exited with code 3 (Cairn tries it again after ")
    assert later.results()[-1].content == failed.content
    later.services.close()

    # Once the retry is due, it is tried again: fixed now, it is ready, and its failure forgotten.
    memory = cairn_paths.cache_dir / "mcp-servers.json"
    kept = json.loads(memory.read_text(encoding="utf-8"))
    kept["lab"]["failed"]["retry_at"] = 0
    memory.write_text(json.dumps(kept), encoding="utf-8")
    fixed = again(cairn_paths, provider, keyring, first)

    async def fix(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn), replacing="lab")

    assert fixed.run(fix, call("lab__add", '{"a": 3, "b": 4}')) == [None]
    assert starts() == counted + 1
    assert fixed.results()[-1].content == "7"
    assert "failed" not in json.loads(memory.read_text(encoding="utf-8"))["lab"]
    fixed.services.close()
