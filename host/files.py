"""Writing files so that a crash leaves either the old file or the new one, never half, and
creating them so that only their owner can read them.

Everything Cairn writes may hold a person's conversations: folders are made 0700 and files
0600 (the journal, whose WAL and shared-memory files SQLite then creates alike, its backups,
the lock, the logs, settings). Folders that already exist above Cairn's own are not touched.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["DISK_FULL", "PRIVATE_DIR", "PRIVATE_FILE", "atomic_write_text", "private_dir", "private_file"]

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
DISK_FULL = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})
"""The ``errno`` values of a write refused for want of room: the disk, or the person's quota, is full."""


def private_dir(path: Path) -> Path:
    """Make ``path`` (and any missing parents) as folders only their owner can open.

    Raises ``OSError``.
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        os.chmod(folder, PRIVATE_DIR)  # mkdir's mode is masked by the umask
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty and owner-only if it does not exist yet; leave it alone if it does.

    Raises ``OSError``.
    """
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return path
    os.close(fd)
    os.chmod(path, PRIVATE_FILE)
    return path


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file in the same folder, fsync, rename).

    The file is owner-only (0600). Raises ``OSError``; on failure the previous file is
    untouched and no temp file is left.
    """
    private_dir(path.parent)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
