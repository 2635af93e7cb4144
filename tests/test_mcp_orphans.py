"""A server outlives no Cairn: killed without a chance to stop its servers (SIGKILL), Cairn
leaves none running, on Linux, where the kernel sends each SIGTERM when Cairn dies."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_fixtures import REPO

# Cairn's side: a server that takes no notice of its stdin closing (busy, or stuck: the
# bad server's "hang" reads one line and then only sleeps), started through Cairn's own stdio
# transport, its pid printed, then nothing until Cairn is killed.
STARTS_ONE = """
import asyncio
from host.mcp.server import McpServer
from tests.mcp_servers import bad_server

async def main():
    server = McpServer(bad_server("hang", start_timeout=120))
    server.launch()
    while server.pid is None:
        await asyncio.sleep(0.01)
    print(server.pid, flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("setpriv") is None, reason="Linux's setpriv")
def test_a_killed_cairn_leaves_no_server_running() -> None:
    cairn = subprocess.Popen(
        [sys.executable, "-c", STARTS_ONE], cwd=REPO, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert cairn.stdout is not None
        server = int(cairn.stdout.readline())
        assert alive(server)
        os.kill(cairn.pid, signal.SIGKILL)  # no stop, no stdin closed: only the kernel can tell it
        cairn.wait(timeout=10)
        deadline = time.monotonic() + 20
        while alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(server)
    finally:
        cairn.kill()
        cairn.wait(timeout=10)
