"""Real MCP servers, written with the SDK's MCPServer, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import logging
import os
import select
import subprocess
import sys
from collections.abc import Iterator

import pytest

import host.mcp.server
from host.mcp import McpLimits, McpServerConfig, ServerState, ServerStatus
from host.mcp.server import McpServer
from host.mcp.servers import McpServers
from host.tools import ToolCatalog, ToolOutput
from host.tools.progress import Progress, Reporter, reporting
from tests.mcp_servers import TOOLS_SERVER, bad_server, tools_server


def alive(pid: int | None) -> bool:
    assert pid is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def settle(server: McpServer, state: ServerState, within: float = 5.0) -> ServerStatus:
    async with asyncio.timeout(within):
        while server.status.state is not state:
            await asyncio.sleep(0.02)
    return server.status


def test_servers_start_list_run_and_stop() -> None:
    seen: list[ServerStatus] = []
    configs = [
        tools_server("trusted", trusted=True, start_at_launch=True),
        tools_server("plain", start_at_launch=True),
        bad_server("exit", name="lazy"),
    ]

    async def scenario() -> None:
        servers = McpServers(configs, on_change=seen.append, limits=McpLimits(max_result_chars=1000))
        await servers.start_at_launch()  # returns at once
        assert [status.state for status in servers.statuses()] == [
            ServerState.STARTING,
            ServerState.STARTING,
            ServerState.STOPPED,  # not at launch
        ]
        # A turn waits for the servers still starting and starts the lazy one; it crashes at
        # once, and the others carry on.
        statuses = await servers.ensure_started()
        assert [status.state for status in statuses] == [ServerState.READY, ServerState.READY, ServerState.FAILED]
        trusted, plain = servers.servers["trusted"], servers.servers["plain"]
        assert trusted.status.tool_count == 12
        assert plain.status.tool_count == 12

        catalog = ToolCatalog(servers.tools(object()))
        assert len(catalog) == 24
        add = catalog.get("trusted__add")
        assert add is not None
        assert add.spec.source == "mcp:trusted"
        assert add.spec.deferred
        assert add.spec.read_only
        assert add.spec.required_scopes == {"mcp.trusted.read"}
        plain_add = catalog.get("plain__add")
        assert plain_add is not None  # the same readOnlyHint, from a server not marked trusted
        assert not plain_add.spec.read_only
        assert plain_add.spec.required_scopes == {"mcp.plain.write"}
        shout = catalog.get("trusted__shout")
        assert shout is not None
        assert not shout.spec.read_only
        assert shout.spec.required_scopes == {"mcp.trusted.write"}
        assert catalog.get("trusted__odd_name") is not None  # "odd_name" keeps its name...
        assert [t.name for t in catalog if t.name.startswith("trusted__odd_name-")]  # ..."odd.name" gets a hash

        assert await add.run({"a": 2, "b": 3}) == ToolOutput("5")
        failed = await catalog.get("trusted__fail").run({})  # type: ignore[union-attr]
        assert failed.is_error
        assert "fail" in failed.text
        picture = await catalog.get("trusted__picture").run({})  # type: ignore[union-attr]
        assert picture.text == "a picture:\n[image 1: image/png, 2,004 bytes]"
        assert [(m.kind, m.media_type, len(m.data)) for m in picture.media] == [("image", "image/png", 2004)]
        big = await catalog.get("trusted__big").run({"size": 50_000})  # type: ignore[union-attr]
        assert len(big.text) == 1000  # cut where it is read, without a note of its own...
        assert big.length == 50_000  # ...the whole length goes on, for the one note the model reads
        wrong = await add.run({"a": "not a number"})
        assert wrong.is_error

        assert await servers.ensure_started() == statuses  # a failed server is left failed

        pids = [trusted.pid, plain.pid]
        assert all(alive(pid) for pid in pids)
        await servers.stop()
        assert [s.state for s in servers.statuses()] == [ServerState.STOPPED] * 3
        assert not any(alive(pid) for pid in pids)
        assert servers.tools() == []
        ended = await add.run({"a": 1, "b": 1})
        assert ended.is_error
        assert ended.text == "The MCP server 'trusted' is stopped; its tools cannot run now."
        again = await servers.restart("lazy")  # the person's Restart: a new run, a new verdict
        assert again.state is ServerState.FAILED
        assert again.reason == "the server exited with code 3"

    asyncio.run(scenario())
    trusted_states = [status.state for status in seen if status.server == "trusted"]
    assert trusted_states == [ServerState.STARTING, ServerState.READY, ServerState.STOPPED]


def test_tools_list_changed_is_followed_and_identity_moves_only_with_the_specs() -> None:
    changes: list[ServerStatus] = []

    async def scenario() -> None:
        server = McpServer(tools_server("live"), on_change=changes.append)
        await server.start()
        before = ToolCatalog(server.tools()).identity()
        assert before == server.status.tools_sha256

        # The server says its tools changed, but they did not: nothing changes.
        assert (await server.call("touch", {"times": 3})).text == "touched"
        await asyncio.sleep(0.6)
        assert len(changes) == 2
        assert ToolCatalog(server.tools()).identity() == before

        # A new tool: one more change, reported once, with a new identity.
        assert (await server.call("grow", {})).text == "grown"
        async with asyncio.timeout(5):
            while len(changes) < 3:
                await asyncio.sleep(0.02)
        assert server.status.tool_count == 13
        assert server.status.tools_sha256 != before
        assert ToolCatalog(server.tools()).get("live__grown") is not None
        assert ToolCatalog(server.tools()).identity() == server.status.tools_sha256
        await server.stop()

    asyncio.run(scenario())
    assert [c.state for c in changes] == [
        ServerState.STARTING,
        ServerState.READY,
        ServerState.READY,
        ServerState.STOPPED,
    ]


def test_a_burst_of_list_changed_costs_one_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> int:
        server = McpServer(tools_server("burst"), limits=McpLimits(relist_debounce=0.3))
        await server.start()
        listings = 0
        real = host.mcp.server.list_tools

        async def counted(client, limits):  # type: ignore[no-untyped-def]
            nonlocal listings
            listings += 1
            return await real(client, limits)

        monkeypatch.setattr(host.mcp.server, "list_tools", counted)
        await server.call("touch", {"times": 20})
        await asyncio.sleep(0.8)
        await server.stop()
        return listings

    assert asyncio.run(scenario()) == 1


def test_a_call_past_its_time_limit_is_an_error_and_a_cancelled_call_is_cancelled() -> None:
    async def scenario() -> None:
        server = McpServer(tools_server("slow", call_timeout=0.5))
        await server.start()
        out = await server.call("sleep", {"seconds": 5})
        assert out.is_error
        assert out.text == "The MCP server 'slow' did not answer 'sleep' within 0.5 s."
        assert server.status.state is ServerState.READY
        assert (await server.call("add", {"a": 1, "b": 2})).text == "3"

        # Cancellation is the one thing a call lets through; the server stays.
        (tool,) = [tool for tool in server.tools() if tool.name == "slow__sleep"]
        running = asyncio.ensure_future(tool.run({"seconds": 5}))
        await asyncio.sleep(0.2)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert server.status.state is ServerState.READY
        assert (await server.call("add", {"a": 2, "b": 2})).text == "4"

        # Stopping the server answers a pending call at once.
        pending = asyncio.ensure_future(server.call("sleep", {"seconds": 5}))
        await asyncio.sleep(0.1)
        await server.stop()
        assert (await pending) == ToolOutput("The MCP server 'slow' was stopped during the call.", is_error=True)

    asyncio.run(scenario())


def test_secrets_from_the_environment_never_leave_the_server() -> None:
    token = "tok-CAIRN-0123456789"

    async def scenario() -> ServerStatus:
        config = tools_server("vault", env={"CAIRN_TEST_TOKEN": token})
        server = McpServer(config, redact=lambda text: text.replace(token, "[redacted]"))
        await server.start()
        said = await server.call("secret", {})
        assert said.text == "token=[redacted]"
        # It dies in the middle of a call: the call gets an error, the server a reason and a tail.
        died = await server.call("die", {})
        assert died.is_error
        assert died.text == "The MCP server 'vault' stopped during the call: the server exited with code 7."
        return await settle(server, ServerState.FAILED)

    status = asyncio.run(scenario())
    assert status.reason == "the server exited with code 7"
    assert "the token is [redacted]" in status.stderr_tail
    assert "dying now" in status.stderr_tail
    assert token not in repr(status)


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(
        [sys.executable, str(TOOLS_SERVER), "normal", "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().split()[1])
        yield process, f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(timeout=10)


def test_a_streamable_http_server(http_server: tuple[subprocess.Popen[str], str]) -> None:
    process, url = http_server

    async def scenario() -> None:
        config = McpServerConfig(name="web", transport="http", url=url, call_timeout=5, trusted=True)
        server = McpServer(config)
        status = await server.start()
        assert status.state is ServerState.READY
        assert status.tool_count == 12
        tools = ToolCatalog(server.tools())
        assert await tools.get("web__add").run({"a": 20, "b": 22}) == await server.call("add", {"a": 40, "b": 2})  # type: ignore[union-attr]
        assert (await server.call("grow", {})).text == "grown"
        async with asyncio.timeout(5):
            while server.status.tool_count != 13:
                await asyncio.sleep(0.02)

        # The server goes away: calls say so, the status says why.
        process.kill()
        process.wait(timeout=10)
        gone = await server.call("add", {"a": 1, "b": 1})
        assert gone.is_error
        assert "'web'" in gone.text
        failed = await settle(server, ServerState.FAILED)
        assert url in failed.reason or "connection" in failed.reason
        await server.stop()
        assert server.status.state is ServerState.STOPPED

        # Nothing listens there now: starting fails at once, with the address.
        again = await server.start()
        assert again.state is ServerState.FAILED
        assert f"could not be reached at {url}" in again.reason

    asyncio.run(scenario())


def test_stopping_an_http_server_ends_its_session_with_a_delete(
    http_server: tuple[subprocess.Popen[str], str],
) -> None:
    process, url = http_server
    assert process.stdout is not None
    said = process.stdout

    async def scenario() -> None:
        config = McpServerConfig(name="web", transport="http", url=url, call_timeout=5, trusted=True)
        server = McpServer(config)
        for _ in range(2):  # a stop, then a restart's stop: each ends its own session
            assert (await server.start()).state is ServerState.READY
            await server.stop()
            # stop() has returned, so the DELETE has been sent already: no waiting on the loop.
            ready, _, _ = select.select([said], [], [], 5.0)
            assert ready, "the server saw no DELETE"
            assert said.readline().strip() == "DELETE"

    asyncio.run(scenario())


def test_a_call_reports_the_progress_its_server_sends_checked_and_spaced_out() -> None:
    said: list[Progress] = []

    async def scenario() -> None:
        # 2,000 progress notifications take seconds on a busy machine: this test is not about
        # the call's time limit, so it gives the call a minute.
        server = McpServer(tools_server("work", "progress", call_timeout=60.0))
        await server.start()
        with reporting(Reporter(said.append)):
            out = await server.call("steps", {"count": 3, "pause": 0.25})
        assert out.text == "3 steps done"
        assert [(p.done, p.total, p.message) for p in said] == [(n, 3, f"step {n} of 3") for n in (1, 2, 3)]
        assert said[-1].fraction == 1.0
        said.clear()
        with reporting(Reporter(said.append)):
            out = await server.call("chatter", {"times": 2000})
        assert out.text == "said a lot"
        assert 1 <= len(said) < 200  # 2,000 reports in a moment: a few reach the person
        for progress in said:
            assert progress.message.startswith("\\x1b[31mred")  # an escape shown, not done
            assert all(ch.isprintable() for ch in progress.message)
            assert len(progress.message) <= 160
            assert progress.fraction is None or 0 <= progress.fraction <= 1
        assert said[-1].done == 1999  # the last report always arrives
        said.clear()
        assert (await server.call("steps", {"count": 1, "pause": 0})).text == "1 steps done"  # no reporter: none
        assert said == []
        await server.stop()

    asyncio.run(scenario())


def test_stopping_the_public_everything_server_over_http_ends_its_session(caplog: pytest.LogCaptureFixture) -> None:
    import httpx2

    from tests.public_mcp import everything_over_http

    caplog.set_level(logging.INFO, logger="mcp.client.streamable_http")
    with everything_over_http() as url:

        async def scenario() -> None:
            server = McpServer(McpServerConfig(name="everything", transport="http", url=url, trusted=True))
            assert (await server.start()).state is ServerState.READY
            await server.stop()

        asyncio.run(scenario())
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Received session ID: ")]
        session = said[0].removeprefix("Received session ID: ")
        # Had Cairn left the session alive, the server would end it now (200); it is gone (400).
        again = httpx2.delete(url, headers={"mcp-session-id": session}, timeout=5)
        assert again.status_code == 400, again.text
