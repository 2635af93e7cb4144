"""One running Cairn per journal, enforced with an OS file lock.

SQLite's own locking lets several processes share a WAL database, but two Cairns appending
to one session would interleave their turns. The lock file beside the journal is held for
as long as the journal is open; the OS drops it when the process dies, even by SIGKILL.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from host.files import DISK_FULL, PRIVATE_FILE

__all__ = ["LockHeldError", "ProcessLock"]


class LockHeldError(Exception):
    """The lock is held by another process, whose pid is given when it could be read."""

    def __init__(self, holder_pid: int | None) -> None:
        super().__init__(f"held by process {holder_pid}" if holder_pid else "held by another process")
        self.holder_pid = holder_pid


class ProcessLock:
    """An exclusive, non-blocking lock on ``path``, recording the holder's pid when the disk
    has room for it (on a full disk the lock is held all the same, unrecorded)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock; ``LockHeldError`` when another process has it, ``OSError`` when the
        file cannot be opened (a full disk: ``errno`` in ``host.files.DISK_FULL``)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            _lock(fd)
        except OSError:
            text = _read_holder(fd)
            os.close(fd)
            raise LockHeldError(int(text) if text.isdigit() else None) from None
        try:
            _record_pid(fd)
        except OSError:
            _unlock(fd)
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
            _unlock(fd)
        finally:
            os.close(fd)


def _record_pid(fd: int) -> None:
    """This process's pid, for a second Cairn's refusal to name. Raw writes, never buffered:
    a write the disk had no room for must not be tried again when the file is closed."""
    try:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, str(os.getpid()).encode("ascii"))
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise
        # A full disk: the lock holds without the pid; a second Cairn says "another process".


def _read_holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:  # Windows refuses to read a byte another process has locked
        return ""


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
