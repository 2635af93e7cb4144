"""What a server logs reaches cairn.log and its panel's lines: redacted, printable, cut, and
bounded against a flood. Our own SDK server, and the public everything server."""

from __future__ import annotations

import asyncio
import logging

import pytest

from host.mcp import ServerState
from host.mcp.server import McpServer
from host.mcp.server_log import BURST, LINE_CHARS
from tests.mcp_servers import tools_server
from tests.public_mcp import everything


def redact(text: str) -> str:
    return text.replace("sk-SECRET", "[redacted]")


async def started(server: McpServer) -> None:
    status = await server.start()
    assert status.state is ServerState.READY, status.reason


def test_a_server_log_line_is_redacted_printable_cut_and_in_cairn_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="host.mcp.server_log")

    async def scenario() -> list[str]:
        server = McpServer(tools_server("lab", "logs"), redact=redact)
        await started(server)
        try:
            (say,) = server.tools()
            await say.run({"times": 2, "text": "key sk-SECRET \x1b[31mred" + "x" * 2000})
            async with asyncio.timeout(5):
                while len(server.log.lines()) < 2:
                    await asyncio.sleep(0.02)
            return server.log.lines()
        finally:
            await server.stop()

    lines = asyncio.run(scenario())
    assert len(lines) == 2
    assert all(line.startswith("info: key [redacted] \\x1b[31mred") for line in lines)
    assert all(len(line) == LINE_CHARS + 1 and line.endswith("…") for line in lines)
    logged = [r.getMessage() for r in caplog.records if r.name == "host.mcp.server_log"]
    assert len(logged) == 2
    assert logged[0].startswith("MCP server lab says info: key [redacted]")
    assert "sk-SECRET" not in caplog.text


def test_a_flood_of_log_lines_is_bounded() -> None:
    async def scenario() -> list[str]:
        server = McpServer(tools_server("lab", "logs"))
        await started(server)
        try:
            (say,) = server.tools()
            output = await say.run({"times": 400})
            assert not output.is_error
            await asyncio.sleep(0.3)  # notifications sent before the result are all read by now
            return server.log.lines()
        finally:
            await server.stop()

    lines = asyncio.run(scenario())
    assert len(lines) == BURST
    assert lines[-1] == f"info: hello {BURST - 1}"


def test_the_public_everything_server_log_reaches_cairn() -> None:
    async def scenario() -> list[str]:
        server = McpServer(everything())
        await started(server)
        try:
            toggle = next(t for t in server.tools() if t.name.endswith("toggle-simulated-logging"))
            await toggle.run({})
            async with asyncio.timeout(30):  # it logs every 5 s, at a random level (debug is not asked for)
                while not server.log.lines():
                    await asyncio.sleep(0.1)
            return server.log.lines()
        finally:
            await server.stop()

    lines = asyncio.run(scenario())
    assert lines[0].split(":")[0] in {"info", "notice", "warning", "error", "critical", "alert", "emergency"}
