"""A full disk, and a journal another Cairn holds: `cairn sessions` still lists what exists,
read-only, after one line saying why; nothing is written and nothing already saved is lost.

The full disk is real: a small tmpfs mounted for the test, filled to the last byte. Mounting
needs root (CI runs as root); elsewhere those tests skip, saying so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.loopback import LoopbackProvider
from host.errors import JournalLockedError
from host.journal import Journal
from host.lock import LockHeldError, ProcessLock
from host.paths import CairnPaths
from tests.cli_fixtures import REPO, cairn

FULL_NOTE = "is full, so it was opened read-only"


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A 2 MB filesystem of its own, with CAIRN_HOME on it."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs a tmpfs of its own, which only root may mount")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(disk)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"this machine refuses to mount a tmpfs: {mounted.stderr.decode(errors='replace').strip()}")
    monkeypatch.setenv("CAIRN_HOME", str(disk / "home"))
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> None:
    """Write zeros until the filesystem has no byte left, the last partial block too."""
    with (disk / "filler").open("wb", buffering=0) as out:
        for size in (65536, 4096, 512, 64, 1):
            with contextlib.suppress(OSError):
                while True:
                    out.write(b"\0" * size)
    assert os.statvfs(disk).f_bavail == 0


def crash_after(journal: Path, title: str) -> None:
    """A Cairn that saved a chat and died before closing: the chat is only in the -wal log."""
    code = (
        "import os, sys; from pathlib import Path; from host.journal import Journal\n"
        "journal = Journal.open(Path(sys.argv[1])); journal.create_session(sys.argv[2]); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code, str(journal), title], cwd=REPO, check=True, timeout=60)


def test_sessions_on_a_full_disk_lists_what_exists(small_disk: Path) -> None:
    paths = CairnPaths.from_env()
    with Journal.open(paths.journal) as journal:
        kept = journal.create_session("Closed cleanly")
    fill(small_disk)
    before = paths.journal.read_bytes()

    done = cairn("sessions")

    assert done.returncode == 0, done.stderr
    assert kept.id in done.stdout
    assert "Closed cleanly" in done.stdout
    notes = [line for line in done.stderr.splitlines() if FULL_NOTE in line]
    assert len(notes) == 1, done.stderr
    assert notes[0].startswith("cairn: The disk holding the journal ")
    assert "Traceback" not in done.stderr
    assert paths.journal.read_bytes() == before


def test_sessions_on_a_full_disk_after_a_crash_reads_the_log_too(small_disk: Path) -> None:
    """The crash left the -wal log and its full-size -shm index: reading needs no room, so
    the journal opens as usual, and what is only in the log is listed too."""
    paths = CairnPaths.from_env()
    with Journal.open(paths.journal) as journal:
        journal.create_session("Closed cleanly")
    crash_after(paths.journal, "Only in the log")
    assert paths.journal.with_name("journal.sqlite3-wal").stat().st_size > 0
    fill(small_disk)

    done = cairn("sessions")

    assert done.returncode == 0, done.stderr
    assert "Closed cleanly" in done.stdout
    assert "Only in the log" in done.stdout
    assert "Traceback" not in done.stderr


def test_a_chat_on_a_full_disk_says_the_disk_is_full(small_disk: Path) -> None:
    with LoopbackProvider() as provider:
        added = cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        assert added.returncode == 0, added.stderr
        assert cairn("chat", "Before the disk filled.").returncode == 0
        fill(small_disk)
        done = cairn("chat", "After.")
        assert provider.requests[-1:] == provider.requests[:1]  # the second turn never went out
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "disk is full" in done.stderr, done.stderr
    assert "Before the disk filled." in cairn("sessions").stdout


def test_a_new_journal_on_a_full_disk_is_refused_clearly(small_disk: Path) -> None:
    fill(small_disk)
    done = cairn("sessions")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "the disk is full. Free some space" in done.stderr, done.stderr


def test_sessions_beside_a_running_cairn_lists_read_only(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        kept = journal.create_session("Open in a window")
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.journal_holder", str(cairn_paths.journal)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        listed = cairn("sessions")
        with pytest.raises(JournalLockedError):  # only a listing goes on beside it
            Journal.open(cairn_paths.journal)
    finally:
        holder.communicate("stop\n", timeout=30)
    assert listed.returncode == 0, listed.stderr
    assert kept.id in listed.stdout
    assert f"cairn: Another running Cairn (process {holder.pid}) holds the journal" in listed.stderr


def test_a_lock_on_a_disk_with_no_room_for_the_pid_still_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam: the pid's write, and only it, meets a full disk."""
    real_write = os.write

    def no_room(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    first = ProcessLock(tmp_path / "journal.lock")
    monkeypatch.setattr(os, "write", no_room)
    first.acquire()
    monkeypatch.setattr(os, "write", real_write)
    try:
        with pytest.raises(LockHeldError) as held:
            ProcessLock(tmp_path / "journal.lock").acquire()
        assert held.value.holder_pid is None  # "another process": the pid could not be written
    finally:
        first.release()
    second = ProcessLock(tmp_path / "journal.lock")
    second.acquire()
    second.release()
