"""What five idle MCP servers cost a `cairn chat` turn that uses none of their tools.

    .venv/bin/python -m benchmarks.mcp_idle_servers [--turns 3]

Times ``cairn chat hello`` as a person runs it (a fresh interpreter, a fresh CAIRN_HOME, the
loopback provider) with no MCP servers, then with the five public servers of
``tests/public_mcp`` (everything, filesystem, memory, time, git; installed by ``make test``
into ``.mcp-public/``) imported as a Claude Desktop file. The difference is what the servers
cost the turn. The first chat with the servers waits for them (Cairn has never seen their
tools); every later one goes at once with the tools they listed last. Prints the first turn
and the median of the ``--turns`` turns after it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from desktop.loopback import LoopbackProvider
from tests import public_mcp

KEY = "sk-bench"
REPO = Path(__file__).resolve().parents[1]


def cairn(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CAIRN_HOME": str(home), "CAIRN_API_KEY": KEY}
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )


def five(folder: Path) -> dict[str, dict[str, object]]:
    repository = folder / "repo"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    configs = [
        public_mcp.everything(), public_mcp.filesystem(folder), public_mcp.memory(folder / "memory.json"),
        public_mcp.time_server(), public_mcp.git_server(repository),
    ]  # fmt: skip
    return {c.name: {"command": c.command, "args": list(c.args), "env": dict(c.env)} for c in configs}


def timed_turns(base_url: str, servers: dict[str, dict[str, object]], turns: int) -> tuple[float, float]:
    """The first turn's time, and the median of the ``turns`` after it."""
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        cairn(home, "accounts", "add", "Loop", "--base-url", base_url, "--model", "loopback-chat")
        if servers:
            source = Path(folder) / "claude_desktop_config.json"
            source.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
            cairn(home, "mcp", "import", str(source), "--yes")
        times = []
        for _ in range(turns + 1):
            started = time.perf_counter()
            done = cairn(home, "chat", "hello")
            times.append(time.perf_counter() - started)
            if done.returncode != 0:
                raise SystemExit(f"cairn chat failed: {done.stderr.strip()}")
        return times[0], statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=3)
    turns = parser.parse_args().turns
    with LoopbackProvider(api_key=KEY) as provider, tempfile.TemporaryDirectory() as folder:
        _, none = timed_turns(provider.base_url, {}, turns)
        first, with_five = timed_turns(provider.base_url, five(Path(folder)), turns)
    print(f"cairn chat, no MCP servers:                   {none:6.2f} s (median of {turns})")
    print(f"cairn chat, five idle servers, the first one: {first:6.2f} s (it waits: their tools are new)")
    print(f"cairn chat, five idle servers, later ones:    {with_five:6.2f} s (median of {turns})")
    print(f"what the five cost a turn:                    {with_five - none:6.2f} s (the first: {first - none:.2f} s)")


if __name__ == "__main__":
    main()
