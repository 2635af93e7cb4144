"""One running Cairn per journal, enforced with an OS file lock.

SQLite's own locking lets several processes share a WAL database, but two Cairns appending
to one session would interleave their turns. The lock file beside the journal is held for
as long as the journal is open; the OS drops it when the process dies, even by SIGKILL.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from host.files import PRIVATE_FILE

__all__ = ["LockHeldError", "ProcessLock"]


class LockHeldError(Exception):
    """The lock is held by another process, whose pid is given when it could be read."""

    def __init__(self, holder_pid: int | None) -> None:
        super().__init__(f"held by process {holder_pid}" if holder_pid else "held by another process")
        self.holder_pid = holder_pid


class ProcessLock:
    """An exclusive, non-blocking lock on ``path``, recording the holder's pid."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
        handle = os.fdopen(fd, "a+", encoding="ascii")  # held until release()
        try:
            _lock(handle)
        except OSError:
            text = _read_holder(handle)
            handle.close()
            raise LockHeldError(int(text) if text.isdigit() else None) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is None:
            return
        handle, self._file = self._file, None
        try:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            _unlock(handle)
        finally:
            handle.close()


def _read_holder(handle: IO[str]) -> str:
    try:
        handle.seek(0)
        return handle.read().strip()
    except OSError:  # Windows refuses to read a byte another process has locked
        return ""


if sys.platform == "win32":
    import msvcrt

    def _lock(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
