"""Servers that misbehave, as real processes. Each is marked failed with a reason a person can
act on, every pending call gets an error output, and the chat goes on."""

from __future__ import annotations

import asyncio
import os
import sys
import time

from host.mcp import McpLimits, McpServerConfig, ServerState, ServerStatus
from host.mcp.server import McpServer
from tests.mcp_servers import bad_server, tools_server

QUICK = McpLimits(kill_grace=0.5)


def gone(pid: int | None, within: float = 3.0) -> bool:
    """Whether the process has ended, or ends within ``within`` seconds."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def alive(pid: int | None) -> bool:
    """Whether the process runs; a zombie (dead, not yet reaped by its new parent) does not."""
    assert pid is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True  # no /proc here: the signal said it exists


async def start(config: McpServerConfig, limits: McpLimits = QUICK) -> tuple[McpServer, ServerStatus]:
    server = McpServer(config, limits=limits)
    return server, await server.start()


def test_servers_that_cannot_start() -> None:
    async def scenario() -> list[ServerStatus]:
        configs = [
            bad_server("exit"),
            McpServerConfig(name="missing", command="/no/such/program"),
            McpServerConfig(name="module", command=sys.executable, args=("-m", "no_such_mcp_module")),
        ]
        started = await asyncio.gather(*(start(config) for config in configs))
        for server, _ in started:
            await server.stop()
        return [status for _, status in started]

    exits, missing, module = asyncio.run(scenario())
    assert exits.state is ServerState.FAILED
    assert exits.reason == "the server exited with code 3"
    assert exits.stderr_tail.endswith("RuntimeError: cannot open the database")
    assert missing.state is ServerState.FAILED
    assert missing.reason == "its command '/no/such/program' was not found; check the command and its path"
    assert module.state is ServerState.FAILED
    assert module.reason == "the server exited with code 1"
    assert "No module named no_such_mcp_module" in module.stderr_tail


def test_a_server_that_hangs_on_initialize_is_stopped_at_the_time_limit() -> None:
    async def scenario() -> tuple[ServerStatus, float, int | None]:
        began = time.monotonic()
        server, status = await start(bad_server("hang", start_timeout=1.0, stop_timeout=0.3))
        return status, time.monotonic() - began, server.pid

    status, took, pid = asyncio.run(scenario())
    assert status.state is ServerState.FAILED
    assert status.reason == "it did not finish starting within 1 s (waiting for its answer to initialize)"
    assert took < 4
    assert not alive(pid)


def test_a_server_that_ignores_stop_is_killed_with_its_children() -> None:
    async def scenario() -> tuple[int | None, ServerStatus]:
        server, _ = await start(bad_server("stubborn", start_timeout=1.0, stop_timeout=0.3))
        return server.pid, server.status

    pid, status = asyncio.run(scenario())
    assert status.state is ServerState.FAILED
    assert "did not finish starting within 1 s" in status.reason
    child = int(next(line for line in status.stderr_tail.splitlines() if line.startswith("CHILD ")).split()[1])
    # Both ignored stdin closing and SIGTERM; SIGKILL to the server's process group ended them
    # (a killed process is gone once the kernel has run its exit, a moment later on a busy machine).
    assert gone(pid)
    assert gone(child)


def test_stop_while_starting_stops() -> None:
    async def scenario() -> tuple[ServerStatus, float]:
        server = McpServer(bad_server("hang", start_timeout=30, stop_timeout=0.3), limits=QUICK)
        starting = asyncio.create_task(server.start())
        await asyncio.sleep(0.3)
        began = time.monotonic()
        await server.stop()
        return await starting, time.monotonic() - began

    status, took = asyncio.run(scenario())
    assert status.state is ServerState.STOPPED
    assert took < 3


def test_garbage_and_floods_on_stdout() -> None:
    async def scenario() -> list[ServerStatus]:
        limits = McpLimits(kill_grace=0.5, max_message_bytes=256 * 1024, max_line_bytes=16 * 1024 * 1024)
        started = await asyncio.gather(
            start(bad_server("garbage", stop_timeout=0.3), limits),
            start(bad_server("flood", stop_timeout=0.3), limits),
        )
        return [status for _, status in started]

    garbage, flood = asyncio.run(scenario())
    assert garbage.state is ServerState.FAILED
    assert garbage.reason == (
        "it wrote something that is not JSON-RPC on stdout: 'Hello! Server v1.2 starting up...' (logs belong on stderr)"
    )
    assert flood.state is ServerState.FAILED
    assert flood.reason == "it sent a message over 16 MB on stdout, more than Cairn will read"


def test_a_flood_on_stderr_is_capped_then_failed() -> None:
    limits = McpLimits(kill_grace=0.5, stderr_flood_bytes=4 * 1024 * 1024, stderr_flood_window=5.0)

    async def scenario() -> ServerStatus:
        server, _ = await start(tools_server("noisy", "flood-stderr", stop_timeout=0.3), limits)
        async with asyncio.timeout(10):
            while server.status.state is not ServerState.FAILED:
                await asyncio.sleep(0.05)
        return server.status

    status = asyncio.run(scenario())
    assert status.reason == "it flooded its error output (over 4 MB in 5 s)"
    assert 1000 < len(status.stderr_tail) <= 4097
    assert "noise noise" in status.stderr_tail


def test_too_many_tools_fail_the_server_and_bad_schemas_leave_out_one_tool() -> None:
    async def scenario() -> list[ServerStatus]:
        started = await asyncio.gather(
            start(tools_server("huge", "many", "500", stop_timeout=0.3)),
            start(tools_server("full", "many", "200", stop_timeout=0.3)),
            start(tools_server("schemas", "schemas", stop_timeout=0.3)),
            start(bad_server("wrong-shape", stop_timeout=0.3)),
        )
        for server, _ in started:
            await server.stop()
        return [status for _, status in started]

    huge, full, schemas, wrong = asyncio.run(scenario())
    assert huge.state is ServerState.FAILED
    assert huge.reason == "it offers 500 tools, and Cairn takes at most 200 from one server rather than choose some"
    assert full.state is ServerState.READY
    assert full.tool_count == 200
    assert schemas.state is ServerState.READY
    assert schemas.tool_count == 1
    reasons = {skipped.name: skipped.reason for skipped in schemas.skipped}
    assert reasons.keys() == {"bad_type", "bad_min"}
    assert reasons["bad_type"].startswith("its input schema is not valid JSON Schema at properties/x/type:")
    assert reasons["bad_min"].startswith("its input schema is not valid JSON Schema at properties/x/minLength:")
    # An input schema that is not an object breaks MCP itself; the SDK refuses the whole list.
    assert wrong.state is ServerState.FAILED
    assert (
        wrong.reason
        == "it answered with something that is not valid MCP: tools.0.inputSchema.type: Input should be 'object'"
    )


def test_a_list_changed_storm_fails_the_server_and_its_pending_call() -> None:
    limits = McpLimits(kill_grace=0.5, list_changed_max=20, list_changed_window=5.0)

    async def scenario() -> tuple[str, ServerStatus, str]:
        server, _ = await start(tools_server("storm", stop_timeout=0.3), limits)
        out = await server.call("touch", {"times": 500})
        assert out.is_error
        status = server.status
        async with asyncio.timeout(5):
            while status.state is not ServerState.FAILED:
                await asyncio.sleep(0.02)
                status = server.status
        after = await server.call("add", {"a": 1, "b": 1})
        assert after.is_error
        return out.text, status, after.text

    during, status, after = asyncio.run(scenario())
    assert status.reason == "it said its tools changed more than 20 times in 5 s"
    assert during == f"The MCP server 'storm' stopped during the call: {status.reason}."
    assert after == f"The MCP server 'storm' is not available: {status.reason}"
