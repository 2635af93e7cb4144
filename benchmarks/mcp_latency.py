"""How long an MCP stdio server takes to start, and a call to come back as a ToolOutput.

    .venv/bin/python -m benchmarks.mcp_latency [--starts 5] [--calls 200]

The server is the tests' ``tools_server.py``, written with the SDK's ``MCPServer``, run as a
child process over stdio. *Start* is from ``McpServer.start()`` to the status ``ready`` with
its tools listed: spawning Python, importing the SDK in the child, the initialize handshake
and ``tools/list``. *Call* is from ``Tool.run`` to its ``ToolOutput`` for the server's ``add``
tool: the JSON-RPC round trip through both SDKs and the result's conversion. It is not a
turn: the gate, the journal's commit and the runtime's work are not in it (see
``benchmarks.tool_latency`` for those).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from host.mcp import McpServerConfig, ServerState
from host.mcp.server import McpServer
from host.tools import ToolCatalog, ToolOutput

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    started = asyncio.run(starts(args.starts))
    called = asyncio.run(calls(args.calls))
    print(f"MCP stdio server, start to ready with its tools listed: median {statistics.median(started):.0f} ms "
          f"over {args.starts} starts (min {min(started):.0f}, max {max(started):.0f})")  # fmt: skip
    print(f"MCP stdio tool call to its ToolOutput: median {statistics.median(called):.2f} ms, "
          f"p99 {percentile(called, 0.99):.2f} ms over {args.calls} calls (no gate, no journal)")  # fmt: skip


if __name__ == "__main__":
    main()
