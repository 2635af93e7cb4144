"""Five public MCP servers nobody at Cairn wrote: how long each takes from start to ready, and
what a tool call costs over stdio and over streamable HTTP.

    .venv/bin/python -m benchmarks.mcp_public [--starts 3] [--calls 100]

The servers are the ones ``make public-mcp`` installs into ``.mcp-public/`` (the reference
``everything``, ``filesystem`` and ``memory`` servers on Node.js, ``mcp-server-time`` and
``mcp-server-git`` on Python). *Start* is from ``McpServer.start()`` to the status ``ready``
with its tools listed: the process starting, the initialize handshake and ``tools/list``.
*Call* is from ``Tool.run`` to its ``ToolOutput`` for the everything server's ``echo`` tool,
over stdio and over streamable HTTP (the same server started with ``streamableHttp``): the
JSON-RPC round trip through both SDKs, the transport, and the result's conversion.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from host.mcp import McpServerConfig, ServerState
from host.mcp.server import McpServer
from tests.public_mcp import everything, everything_over_http, filesystem, git_server, memory, time_server


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def start_ms(config: McpServerConfig) -> tuple[float, int]:
    server = McpServer(config)
    began = time.perf_counter()
    status = await server.start()
    took = (time.perf_counter() - began) * 1000
    try:
        if status.state is not ServerState.READY:
            raise SystemExit(f"{config.name} did not start: {status.reason}")
        return took, status.tool_count
    finally:
        await server.stop()


async def calls_ms(config: McpServerConfig, count: int) -> list[float]:
    server = McpServer(config)
    status = await server.start()
    if status.state is not ServerState.READY:
        raise SystemExit(f"{config.name} did not start: {status.reason}")
    try:
        echo = next(tool for tool in server.tools() if tool.name.endswith("__echo"))
        for _ in range(5):  # warm: the first calls pay for code paths loaded once
            await echo.run({"message": "warm"})
        took = []
        for i in range(count):
            began = time.perf_counter()
            output = await echo.run({"message": f"ping {i}"})
            took.append((time.perf_counter() - began) * 1000)
            if output.is_error:
                raise SystemExit(f"the echo call failed: {output.text}")
        return took
    finally:
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        folder = Path(home)
        repository = folder / "repository"
        repository.mkdir()
        _git(repository)
        servers = [
            everything(),
            filesystem(folder),
            memory(folder / "memory.jsonl"),
            time_server(),
            git_server(repository),
        ]
        print("From start to ready with its tools listed (median of", args.starts, "starts):")
        for config in servers:
            runs = [asyncio.run(start_ms(config)) for _ in range(args.starts)]
            times = [took for took, _ in runs]
            print(f"  {config.name:<11} {statistics.median(times):7.0f} ms  ({runs[0][1]} tools)")
        print(f"A tool call (the everything server's echo), {args.calls} calls:")
        stdio = asyncio.run(calls_ms(everything(), args.calls))
        print(f"  stdio            median {statistics.median(stdio):.2f} ms, p99 {percentile(stdio, 0.99):.2f} ms")
        with everything_over_http() as url:
            http = asyncio.run(calls_ms(McpServerConfig(name="web", transport="http", url=url), args.calls))
        print(f"  streamable HTTP  median {statistics.median(http):.2f} ms, p99 {percentile(http, 0.99):.2f} ms")


def _git(repository: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repository, check=True, capture_output=True)

    git("init", "-q")
    (repository / "README").write_text("a repository for the git server\n")
    git("add", "README")
    git("-c", "user.name=Cairn", "-c", "user.email=cairn@example.org", "commit", "-qm", "first")


if __name__ == "__main__":
    main()
