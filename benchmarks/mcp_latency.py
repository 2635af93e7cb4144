"""How long an MCP stdio server takes to start, and a call to come back as a ToolOutput.

    .venv/bin/python -m benchmarks.mcp_latency [--starts 5] [--calls 200]

The server is the tests' ``tools_server.py``, written with the SDK's ``MCPServer``, run as a
child process over stdio. *Start* is from ``McpServer.start()`` to the status ``ready`` with
its tools listed: spawning Python, importing the SDK in the child, the initialize handshake
and ``tools/list``. *Call* is from ``Tool.run`` to its ``ToolOutput`` for the server's ``add``
tool: the JSON-RPC round trip through both SDKs and the result's conversion. *Committed* is
the whole path a turn takes for that call: the gate (catalog, hooks, JSON Schema, mode,
scopes, grant), the call to the server, the cap and redaction and the committed tool row in a
real journal (WAL, synchronous=FULL). The tool's own work (adding two numbers) is nothing, so
*committed* is what Cairn and the protocol add.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from desktop.settings.redaction import Redactor
from desktop.turn.approvals import DenyQuestions
from desktop.turn.tool_calls import ToolCalls
from host.content import ToolCallPart, ToolResultPart
from host.journal import Journal
from host.mcp import McpServerConfig, ServerState
from host.mcp.server import McpServer
from host.permissions import Permissions, ToolGate
from host.tools import ToolCatalog, ToolOutput
from host.transcript import TranscriptWriter

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp_servers" / "tools_server.py"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def config() -> McpServerConfig:
    return McpServerConfig(name="bench", command=sys.executable, args=(str(SERVER),), stop_timeout=2.0)


async def starts(count: int) -> list[float]:
    times = []
    for _ in range(count):
        server = McpServer(config())
        began = time.perf_counter()
        status = await server.start()
        times.append((time.perf_counter() - began) * 1000)
        assert status.state is ServerState.READY, status
        await server.stop()
    return times


async def calls(count: int) -> list[float]:
    server = McpServer(config())
    await server.start()
    add = ToolCatalog(server.tools()).get("bench__add")
    assert add is not None
    times = []
    try:
        for n in range(count + 10):
            began = time.perf_counter()
            out = await add.run({"a": n, "b": 1})
            took = (time.perf_counter() - began) * 1000
            assert out == ToolOutput(str(n + 1)), out
            if n >= 10:  # the first calls warm both processes up
                times.append(took)
    finally:
        await server.stop()
    return times


async def committed(count: int, folder: Path) -> list[float]:
    server = McpServer(config())
    await server.start()
    catalog = ToolCatalog(server.tools())
    times = []
    try:
        with Journal.open(folder / "journal.sqlite3") as journal:
            writer = TranscriptWriter(journal)
            session = journal.create_session("latency")
            caller = ToolCalls(writer, gate=ToolGate(), approver=DenyQuestions(), redactor=Redactor(),
                               emit=lambda _event: None, remember=lambda _target, _allow: None)  # fmt: skip
            for n in range(count + 10):
                call = ToolCallPart(call_id=f"c{n}", name="bench__add", arguments={"a": n, "b": 1})
                began = time.perf_counter()
                await caller.answer_all(session.id, [call], catalog, Permissions(mode="auto"))
                took = (time.perf_counter() - began) * 1000
                result = writer.rows(session.id)[-1].body().parts[0]  # type: ignore[union-attr]
                assert isinstance(result, ToolResultPart)
                assert result.content == str(n + 1), result
                if n >= 10:
                    times.append(took)
    finally:
        await server.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    started = asyncio.run(starts(args.starts))
    called = asyncio.run(calls(args.calls))
    with tempfile.TemporaryDirectory() as folder:
        whole = asyncio.run(committed(args.calls, Path(folder)))
    print(f"MCP stdio server, start to ready with its tools listed: median {statistics.median(started):.0f} ms "
          f"over {args.starts} starts (min {min(started):.0f}, max {max(started):.0f})")  # fmt: skip
    print(f"MCP stdio tool call to its ToolOutput: median {statistics.median(called):.2f} ms, "
          f"p99 {percentile(called, 0.99):.2f} ms over {args.calls} calls (no gate, no journal)")  # fmt: skip
    print(f"MCP stdio tool call to its committed result (gate, call, journal): median {statistics.median(whole):.2f} "
          f"ms, p99 {percentile(whole, 0.99):.2f} ms over {args.calls} calls")  # fmt: skip


if __name__ == "__main__":
    main()
