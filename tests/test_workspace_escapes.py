"""The workspace jail seen through the built-in tools: no path, link or special file gets one
outside the workspace, and the bar is zero: no read returns outside content, no write lands
outside. Each test runs with descriptor-relative opening and with the forced fallback.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from host.tools import jail
from tests.jail_fixtures import INSIDE, SECRET, plant, snapshot
from tests.tool_fixtures import call


@pytest.fixture(params=["dir_fd", "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "fallback":
        monkeypatch.setattr(jail, "DIR_FD_SUPPORTED", False)
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return plant(tmp_path)[0]


@pytest.fixture
def outside(ws: Path) -> Path:
    return ws.parent / "outside"


# -- every escape, through the tools, counted -------------------------------------------------------

ESCAPES = [
    "../outside/secret.txt",
    "link_file",
    "link_dir/secret.txt",
    "link_dir",
    "link_inside",
    "zero",
    "dev/zero",
    "dev/null",
    "fifo",
    "C:\\outside\\secret.txt",
    "\\\\server\\share\\secret.txt",
    "inside.txt\0",
    "sub/../../outside/secret.txt",
]


def test_no_escape_reads_lists_searches_writes_or_edits_anything_outside(
    tmp_path: Path, ws: Path, outside: Path, mode: str
) -> None:
    paths = [*ESCAPES, str(outside / "secret.txt"), f"{ws}2/secret.txt"]
    before_outside, before_sibling = snapshot(outside), snapshot(tmp_path / "ws2")
    executions = 0
    started = time.monotonic()
    for path in paths:
        outputs = [
            call(ws, "read_file", path=path),
            call(ws, "list_folder", path=path),
            call(ws, "search_text", pattern="SECRET", path=path),
            call(ws, "write_file", path=path, content="written"),
            call(ws, "write_file", path=f"{path}/new.txt", content="written"),
            call(ws, "edit_file", path=path, old_text="OUTSIDE", new_text="changed"),
        ]
        for output in outputs:
            if SECRET in output.text or "\0" in output.text:  # outside content, or /dev/zero's
                executions += 1
            assert output.is_error, (path, output.text)
    assert snapshot(outside) == before_outside
    assert snapshot(tmp_path / "ws2") == before_sibling
    assert executions == 0
    assert time.monotonic() - started < 10  # nothing waited on the FIFO or read /dev/zero for long


def test_refusals_say_why(ws: Path, mode: str) -> None:
    assert "symbolic link" in call(ws, "read_file", path="link_file").text
    assert "symbolic link" in call(ws, "read_file", path="link_dir/secret.txt").text
    assert "never follow symbolic links" in call(ws, "write_file", path="link_file", content="x").text
    assert "not a regular file" in call(ws, "read_file", path="fifo").text
    assert "symbolic link" in call(ws, "search_text", pattern="x", path="link_file").text
    assert "not a regular file" in call(ws, "search_text", pattern="x", path="fifo").text
    assert "climbs out" in call(ws, "read_file", path="../outside/secret.txt").text
    assert "outside the workspace" in call(ws, "read_file", path="/etc/passwd").text


def test_the_workspace_itself_still_works_beside_the_traps(ws: Path, mode: str) -> None:
    listing = call(ws, "list_folder").text
    assert "[link]   link_dir (symbolic link; not followed)" in listing
    assert "[other]  fifo" in listing
    assert "[folder] sub/" in listing
    assert INSIDE in call(ws, "read_file", path="inside.txt").text
    assert "1 matching line in 1 file" in call(ws, "search_text", pattern="inside").text
    assert not call(ws, "write_file", path="sub/deeper/new.txt", content="made\n").is_error
    assert (ws / "sub" / "deeper" / "new.txt").read_text() == "made\n"


def test_a_write_onto_a_link_replaces_nothing_and_leaves_the_link(ws: Path, outside: Path, mode: str) -> None:
    assert call(ws, "write_file", path="link_file", content="x").is_error
    assert (ws / "link_file").is_symlink()
    assert (outside / "secret.txt").read_text() == SECRET


def test_a_workspace_that_is_gone_or_a_file_is_named_plainly(tmp_path: Path, mode: str) -> None:
    missing = call(tmp_path / "nowhere", "list_folder")
    assert missing.is_error
    assert "cannot be opened" in missing.text
    assert "Settings → Skills → Workspace" in missing.text
    (tmp_path / "plain").write_text("x")
    assert "is not a folder" in call(tmp_path / "plain", "read_file", path="x").text


# -- special and big files ---------------------------------------------------------------------------


def test_a_fifo_is_refused_at_once_by_every_tool(ws: Path, mode: str) -> None:
    started = time.monotonic()
    assert "not a regular file" in call(ws, "read_file", path="fifo").text
    assert "not a regular file" in call(ws, "edit_file", path="fifo", old_text="a", new_text="b").text
    assert "not a regular file" in call(ws, "write_file", path="fifo", content="x").text
    assert (ws / "fifo").exists()
    assert "No line matches" in call(ws, "search_text", pattern="x", path=".").text
    assert time.monotonic() - started < 5


@pytest.fixture
def big_file(tmp_path: Path) -> Path:
    root = tmp_path / "big"
    root.mkdir()
    line = b"%09d " + b"x" * 89 + b"\n"
    with (root / "big.log").open("wb") as out:
        for block in range(500):
            out.write(b"".join(line % (block * 1000 + i + 1) for i in range(1000)))
    assert (root / "big.log").stat().st_size == 50_000_000
    return root


def test_a_50_mb_file_is_read_capped_and_marked_quickly(big_file: Path) -> None:
    started = time.monotonic()
    first = call(big_file, "read_file", path="big.log")
    took = time.monotonic() - started
    assert not first.is_error
    lines = first.text.splitlines()
    assert lines[0] == "     1\t000000001 " + "x" * 89
    # Numbered lines of 107 characters with their newline: 934 fill the 100,000-character answer.
    assert len(lines) == 934 + 1
    assert lines[-2].startswith("   934\t000000934")
    assert "the most one answer holds" in lines[-1]
    assert "call read_file with offset=935" in lines[-1]
    started = time.monotonic()
    far = call(big_file, "read_file", path="big.log", offset=99_990)
    far_took = time.monotonic() - started
    assert far.text.splitlines()[0].startswith(" 99990\t000099990")
    assert "first 10.0 MB" in far.text
    assert "50.0 MB" in far.text
    beyond = call(big_file, "read_file", path="big.log", offset=100_001)
    assert beyond.is_error
    assert "beyond its first 10.0 MB" in beyond.text
    assert took < 2
    assert far_took < 2
    print(f"50 MB file: first page in {took * 1000:.0f} ms, the last readable page in {far_took * 1000:.0f} ms")


def test_open_files_are_closed(ws: Path) -> None:
    def count() -> int:
        return len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").exists() else 0

    before = count()
    for _ in range(20):
        call(ws, "read_file", path="inside.txt")
        call(ws, "read_file", path="link_dir/secret.txt")
        call(ws, "search_text", pattern="x")
        call(ws, "write_file", path="sub/x.txt", content="x")
    assert count() - before < 5
