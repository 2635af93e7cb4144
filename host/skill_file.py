"""One ``SKILL.md``, read as the hostile file it may be, and the stamp that says it is unchanged.

Only a regular file is opened (never a FIFO or a device, and never by waiting on it), reads
are capped, the front matter is capped before YAML sees it, and anything at all that goes
wrong while reading (a YAML bomb's RecursionError included) becomes the file's problem, a
reason in words; reading never raises.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["MAX_FRONT_MATTER", "MAX_SKILL_BYTES", "SKILL_FILE", "Parsed", "Stamp", "parse_file", "stamp_of"]

MAX_SKILL_BYTES = 1_000_000
MAX_FRONT_MATTER = 16_384
SKILL_FILE = "SKILL.md"
_SIZE = 4  # a stamp's size


@dataclass(frozen=True)
class Parsed:
    stamp: Stamp
    front: dict[str, object] | None
    body: str
    problem: str | None


# What says a path is unchanged: its kind, inode, device, size, mtime and ctime, following
# links (a link that leads nowhere is stamped as the link itself). A file rewritten in place
# changes its mtime and ctime; one replaced by another file changes its inode.
Stamp = tuple[int, ...]


def stamp_of(path: str | Path, *, follow: bool = True) -> Stamp | None:
    """``path``'s stamp, or ``None`` when nothing is there; a link's own, unless ``follow``."""
    try:
        info, followed = (os.stat(path), 1) if follow else (os.lstat(path), 0)
    except (OSError, ValueError):
        try:
            info, followed = os.lstat(path), 0
        except (OSError, ValueError):
            return None
    return (followed, stat.S_IFMT(info.st_mode), info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns)  # fmt: skip


def _too_big(size: int) -> str:
    return f"{SKILL_FILE} is {size / 1e6:.1f} MB; the limit is {MAX_SKILL_BYTES // 1_000_000} MB"


def _read_regular_file(path: Path) -> bytes:
    """The file's bytes, at most ``MAX_SKILL_BYTES + 1`` of them. Opened without following a
    link and without blocking, and refused unless it is a regular file, so a FIFO or a
    device named SKILL.md can never make Cairn wait. Raises ``OSError`` or ``ValueError``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{SKILL_FILE} is not a regular file (a pipe, a device or a folder?), so it is refused")
        chunks: list[bytes] = []
        left = MAX_SKILL_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 65536))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_file(path: Path, stamp: Stamp) -> Parsed:
    try:
        return _parse_checked(path, stamp)
    except Exception as exc:  # noqa: BLE001 - hostile input: one file only ever invalidates its own skill
        return Parsed(stamp, None, "", f"{SKILL_FILE} could not be read ({type(exc).__name__})")


def _parse_checked(path: Path, stamp: Stamp) -> Parsed:
    text = _read_text(path, stamp[_SIZE])
    if isinstance(text, _Problem):
        return Parsed(stamp, None, "", text.reason)
    return _front_matter(text, stamp)


@dataclass(frozen=True)
class _Problem:
    reason: str


def _read_text(path: Path, size: int) -> str | _Problem:
    if size > MAX_SKILL_BYTES:
        return _Problem(_too_big(size))
    try:
        data = _read_regular_file(path)
    except OSError as exc:
        return _Problem(f"{SKILL_FILE} cannot be read ({exc.strerror})")
    except ValueError as exc:
        return _Problem(str(exc))
    if len(data) > MAX_SKILL_BYTES:
        return _Problem(_too_big(len(data)))
    try:
        return data.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return _Problem(f"{SKILL_FILE} is not UTF-8 text")


def _front_matter(text: str, stamp: Stamp) -> Parsed:
    if not text.startswith("---\n"):
        return Parsed(stamp, None, "", f"{SKILL_FILE} does not start with YAML front matter between '---' lines")
    end = text.find("\n---", 3)
    if end < 0:
        return Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is never closed with '---'")
    if end - 4 > MAX_FRONT_MATTER:
        return Parsed(
            stamp, None, "", f"{SKILL_FILE}'s front matter is {end - 4:,} characters; at most {MAX_FRONT_MATTER:,}"
        )
    try:
        front = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        return Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is not valid YAML{line}")
    except RecursionError:
        return Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is nested too deeply to read")
    if not isinstance(front, dict):
        return Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is not a mapping of fields")
    after = text[end + 4 :]
    body = after.split("\n", 1)[1] if "\n" in after else ""
    return Parsed(stamp, {str(k): v for k, v in front.items()}, body, None)
