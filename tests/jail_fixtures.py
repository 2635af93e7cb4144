"""A workspace planted with every way out, for the jail's tests and the tools' escape tests."""

from __future__ import annotations

import os
from pathlib import Path

SECRET = "OUTSIDE-SECRET-7f3a"
INSIDE = "inside-content"


def plant(tmp_path: Path) -> tuple[Path, Path]:
    """``(workspace, outside)``: outside holds secret.txt; the workspace holds links to it (a file
    and a folder), a link that stays inside, links to /dev/zero and /dev, a FIFO, and beside it
    ``ws2``, a folder with the workspace's name as its prefix."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "inside.txt").write_text(INSIDE)
    (root / "sub").mkdir()
    (root / "sub" / "note.txt").write_text("note")
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "link_dir").symlink_to(outside, target_is_directory=True)
    (root / "link_inside").symlink_to(root / "inside.txt")  # even a link that stays inside is refused
    (root / "zero").symlink_to("/dev/zero")
    (root / "dev").symlink_to("/dev", target_is_directory=True)
    os.mkfifo(root / "fifo")
    sibling = tmp_path / "ws2"
    sibling.mkdir()
    (sibling / "secret.txt").write_text(SECRET)
    return root, outside


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every entry under ``folder`` (not followed), a file with its bytes and mtime: what
    'unchanged' means."""
    found: dict[str, tuple[bytes, int]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(folder))] = (path.read_bytes(), path.stat().st_mtime_ns)
        else:
            found[str(path.relative_to(folder))] = (b"", 0)
    return found
