"""Children left behind: an MCP server that outlives a killed Cairn is ended at the next
start, and never a process that is not ours (a pid reused by another program, a child of a
Cairn that still runs). Real processes, on Linux (elsewhere there is no /proc to tell a
process's start time, and nothing is recorded)."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from desktop.root import Root
from host.children import ChildRecord
from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.stdio import ProcessWatch, open_stdio
from host.paths import CairnPaths
from tests.cli_fixtures import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")


def running(pid: int) -> bool:
    """Whether ``pid`` runs: it exists and has not exited (a zombie waiting to be reaped has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(["sleep", "600"])
    yield child
    child.kill()
    child.wait()


def start_cairn(paths: CairnPaths) -> None:
    """What a Cairn does when it starts, short of its MCP servers."""

    async def start_and_stop(root: Root) -> None:
        await root.start(servers=False)
        await root.stop()

    with Root(paths) as root:
        asyncio.run(start_and_stop(root))


def record_from_a_cairn_now_gone(folder: Path, pid: int) -> Path:
    """``pid`` recorded by a short-lived process, which then exits: its Cairn is gone."""
    code = "import sys; from pathlib import Path; from host.children import ChildRecord\n"
    code += "ChildRecord(Path(sys.argv[1])).started(int(sys.argv[2]), 'a test child')"
    subprocess.run([sys.executable, "-c", code, str(folder), str(pid)], cwd=REPO, check=True, timeout=60)
    return folder / f"{pid}.json"


def test_a_server_a_killed_cairn_left_running_is_ended_at_the_next_start(
    cairn_paths: CairnPaths, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder, marker = cairn_paths.cache_dir / "children", tmp_path / "ready"
    spawner = subprocess.Popen(
        [sys.executable, "-m", "tests.children_spawner", str(folder), str(marker)],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert spawner.stdout is not None
    pid = int(spawner.stdout.readline())
    try:
        while not marker.exists():  # the server now ignores SIGTERM
            time.sleep(0.05)
        spawner.kill()  # Cairn dies without stopping its server
        spawner.wait()
        assert running(pid)  # PR_SET_PDEATHSIG's SIGTERM could not end it
        assert [f.name for f in folder.iterdir()] == [f"{pid}.json"]

        with caplog.at_level(logging.INFO):
            start_cairn(cairn_paths)

        assert not running(pid)
        assert list(folder.iterdir()) == []
        assert f"ended the MCP server stubborn (pid {pid}), left running by a Cairn" in caplog.text
    finally:
        if running(pid):
            subprocess.run(["kill", "-9", str(pid)], check=False)


def test_a_recorded_pid_now_another_programs_is_left_alone(
    cairn_paths: CairnPaths, sleeper: subprocess.Popen[bytes]
) -> None:
    folder = cairn_paths.cache_dir / "children"
    record = record_from_a_cairn_now_gone(folder, sleeper.pid)
    entry = json.loads(record.read_text())
    entry["start_time"] = str(int(entry["start_time"]) - 1)  # our child ended; the pid was given anew
    record.write_text(json.dumps(entry))

    start_cairn(cairn_paths)

    assert running(sleeper.pid)
    assert not record.exists()  # a record of a process gone is cleared


def test_the_children_of_a_cairn_that_still_runs_are_left_alone(
    cairn_paths: CairnPaths, sleeper: subprocess.Popen[bytes]
) -> None:
    folder = cairn_paths.cache_dir / "children"
    ChildRecord(folder).started(sleeper.pid, "a window's server")  # this process is that Cairn

    start_cairn(cairn_paths)

    assert running(sleeper.pid)
    assert (folder / f"{sleeper.pid}.json").exists()


def test_a_server_stopped_cleanly_leaves_no_record(tmp_path: Path) -> None:
    folder = tmp_path / "children"
    config = McpServerConfig(name="quiet", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"))
    limits = McpLimits()
    watch = ProcessWatch(limits, str, lambda _fault: None)
    seen: list[str] = []

    async def run() -> None:
        async with open_stdio(config, watch, limits, ChildRecord(folder)):
            seen.extend(f.name for f in folder.iterdir())

    anyio.run(run)
    assert seen == [f"{watch.pid}.json"]
    assert list(folder.iterdir()) == []
