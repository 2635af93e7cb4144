"""Folders and files held open inside the workspace jail (see ``host.tools.jail``).

A ``Folder`` is held by a descriptor where the OS opens relative to one, else by a checked
path (the fallback). Everything in it is reached by name, one level at a time, and nothing
is ever followed through a symbolic link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from host.tools.catalog import ToolError

__all__ = ["NO_LINKS", "Folder", "JailError", "Kind", "OpenFile", "Stamp", "show"]

# Module constants rather than inline flags, so a test can prove that the race test catches a
# jail that follows links (by setting _NOFOLLOW to 0).
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_COMMON: int = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOCTTY", 0)
_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_REPARSE_POINT: int = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)

NO_LINKS = "workspace tools never follow symbolic links (inside or outside the workspace); use the path it points to"

Kind = Literal["file", "folder", "link", "other"]


class JailError(ToolError):
    """A path is refused or cannot be opened; the message says why, for the model."""


@dataclass(frozen=True)
class Stamp:
    """What identifies one version of a file: a change of any field means someone wrote it."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, info: os.stat_result) -> Stamp:
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def show(parts: tuple[str, ...]) -> str:
    """A path as the model should write it: relative to the workspace, with '/'."""
    return "/".join(parts) or "."


def kind_of(info: os.stat_result) -> Kind:
    if stat.S_ISLNK(info.st_mode) or getattr(info, "st_file_attributes", 0) & _REPARSE_POINT:
        return "link"
    if stat.S_ISDIR(info.st_mode):
        return "folder"
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "other"


def explain(exc: OSError, shown: str, *, folder: bool = False) -> JailError:
    """An ``OSError`` from opening ``shown``, in words for the model."""
    if exc.errno == errno.ENOENT:
        return JailError(f"There is no {shown!r} in the workspace; list_folder shows what is there.")
    if exc.errno == errno.ELOOP:
        return JailError(f"{shown!r} is a symbolic link, and {NO_LINKS}.")
    if exc.errno == errno.ENOTDIR:
        return JailError(f"{shown!r} is not a folder." if folder else f"A part of {shown!r} is not a folder.")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return JailError(f"Cairn is not allowed to open {shown!r} (permission denied).")
    if exc.errno == errno.EISDIR:
        return JailError(f"{shown!r} is a folder, not a file; list_folder shows what is in it.")
    return JailError(f"{shown!r} cannot be opened ({exc.strerror or type(exc).__name__}).")


def _refuse_unless_regular(info: os.stat_result, shown: str) -> None:
    kind = kind_of(info)
    if kind == "link":
        raise JailError(f"{shown!r} is a symbolic link, and {NO_LINKS}.")
    if kind == "folder":
        raise JailError(f"{shown!r} is a folder, not a file; list_folder shows what is in it.")
    if kind != "file":
        raise JailError(f"{shown!r} is not a regular file (a pipe, a socket or a device), so it is not opened.")


class OpenFile:
    """A regular file opened for reading inside the jail. Close it (or use ``with``)."""

    def __init__(self, fd: int, parts: tuple[str, ...], info: os.stat_result) -> None:
        self.fd = fd
        self.parts = parts
        self.size = info.st_size
        self.stamp = Stamp.of(info)

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes (fewer only at the end of the file)."""
        chunks: list[bytes] = []
        while n > 0 and (chunk := os.read(self.fd, min(n, 1 << 20))):
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> OpenFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Folder:
    """A folder inside the jail, held open. ``fd`` is its descriptor, or None in the fallback,
    where ``path`` was checked instead; ``root`` is the workspace, for the fallback's check."""

    def __init__(self, parts: tuple[str, ...], fd: int | None, path: Path, root: Path) -> None:
        self.parts = parts
        self._fd = fd
        self._path = path
        self._root = root

    @classmethod
    def root(cls, root: Path, *, by_fd: bool) -> Folder:
        """The workspace folder itself (a resolved path), held by descriptor when ``by_fd``.
        Raises ``OSError``."""
        if not by_fd:
            return cls((), None, root, root)
        return cls((), os.open(root, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _COMMON), root, root)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- system calls by name, relative to this folder ---------------------------------------

    def lstat(self, name: str) -> os.stat_result:
        """The entry itself, never what a link points to. Raises ``OSError``."""
        if self._fd is not None:
            return os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        return os.lstat(self._path / name)

    def _open(self, name: str, flags: int, mode: int = 0o777) -> int:
        if self._fd is not None:
            return os.open(name, flags, mode, dir_fd=self._fd)
        return os.open(self._path / name, flags, mode)

    def _unlink(self, name: str) -> None:
        if self._fd is not None:
            os.unlink(name, dir_fd=self._fd)
        else:
            os.unlink(self._path / name)

    # -- looking -----------------------------------------------------------------------------

    def scan(self, limit: int) -> tuple[list[tuple[str, Kind]], bool]:
        """The entries' names and kinds, sorted by name, from at most ``limit`` entries; and
        whether the folder had more. Nothing is followed. Raises ``JailError``."""
        found: list[tuple[str, Kind]] = []
        more = False
        try:
            with os.scandir(self._fd if self._fd is not None else self._path) as scan:
                for entry in scan:
                    if len(found) >= limit:
                        more = True
                        break
                    with contextlib.suppress(OSError):  # an entry removed meanwhile is not shown
                        found.append((entry.name, _entry_kind(entry, by_stat=self._fd is None)))
        except OSError as exc:
            raise explain(exc, show(self.parts), folder=True) from exc
        return sorted(found), more

    def size(self, name: str) -> int | None:
        """The size of the regular file ``name`` (not followed), or None."""
        try:
            info = self.lstat(name)
        except OSError:
            return None
        return info.st_size if kind_of(info) == "file" else None

    # -- opening -----------------------------------------------------------------------------

    def child(self, name: str, *, create: bool = False) -> Folder:
        """The subfolder ``name``, never through a link; made first if missing and ``create``.
        Raises ``JailError``."""
        parts = (*self.parts, name)
        if self._fd is None:
            return self._checked_child(name, parts, create=create)
        flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _COMMON
        try:
            return Folder(parts, self._open(name, flags), self._path / name, self._root)
        except FileNotFoundError as exc:
            if not create:
                raise explain(exc, show(parts), folder=True) from exc
        except OSError as exc:
            raise self._refusal(exc, name, parts, folder=True) from exc
        try:
            with contextlib.suppress(FileExistsError):  # made meanwhile: opened below all the same
                os.mkdir(name, 0o777, dir_fd=self._fd)
            # If a link was swapped in since mkdir, O_NOFOLLOW refuses it here.
            return Folder(parts, self._open(name, flags), self._path / name, self._root)
        except OSError as exc:
            raise self._refusal(exc, name, parts, folder=True) from exc

    def open_file(self, name: str) -> OpenFile:
        """The regular file ``name`` opened for reading. A link, FIFO, device or folder is
        refused without being followed or waited on: it is looked at first (so a device is
        not even opened), then opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again on
        the descriptor (so a swap in between gains nothing). Raises ``JailError``."""
        parts = (*self.parts, name)
        shown = show(parts)
        try:
            before = self.lstat(name)
        except OSError as exc:
            raise explain(exc, shown) from exc
        _refuse_unless_regular(before, shown)
        try:
            fd = self._open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _COMMON)
        except OSError as exc:
            raise self._refusal(exc, name, parts) from exc
        try:
            info = os.fstat(fd)
            _refuse_unless_regular(info, shown)
            if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
                raise JailError(f"{shown!r} was replaced while it was being opened; try again.")
            return OpenFile(fd, parts, info)
        except BaseException:
            os.close(fd)
            raise

    def replace(self, name: str, data: bytes, *, expect: Stamp | None = None) -> bool:
        """Write ``data`` as the file ``name`` atomically: a temp file made ``O_EXCL |
        O_NOFOLLOW`` in this folder, fsynced, then renamed over the target. An existing file
        keeps its permissions. With ``expect`` the target must still be that version, checked
        again just before the rename (a lost-update guard for edits). Returns whether the
        file is new. Raises ``JailError``."""
        shown = show((*self.parts, name))
        existing = self._writable_target(name, shown, expect)
        temp = f".cairn-{secrets.token_hex(6)}.partial"
        mode = 0o600 if existing is not None else 0o666  # a new file gets the umask's permissions
        try:
            fd = self._open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _COMMON, mode)
        except OSError as exc:
            raise JailError(f"{shown!r} could not be written ({exc.strerror or type(exc).__name__}).") from exc
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if existing is not None and hasattr(os, "fchmod"):
                    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
                os.fsync(fd)
            finally:
                os.close(fd)
            self._writable_target(name, shown, expect)
            if self._fd is not None:
                os.rename(temp, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
            else:
                os.replace(self._path / temp, self._path / name)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                self._unlink(temp)
            if isinstance(exc, OSError):
                raise JailError(f"{shown!r} could not be written ({exc.strerror or type(exc).__name__}).") from exc
            raise
        return existing is None

    # -- checks ------------------------------------------------------------------------------

    def _writable_target(self, name: str, shown: str, expect: Stamp | None) -> os.stat_result | None:
        try:
            info = self.lstat(name)
        except FileNotFoundError:
            if expect is not None:
                raise JailError(f"{shown!r} was removed while it was being edited; nothing was written.") from None
            return None
        except OSError as exc:
            raise explain(exc, shown) from exc
        kind = kind_of(info)
        if kind == "link":
            raise JailError(f"{shown!r} is a symbolic link, and {NO_LINKS}; nothing was written.")
        if kind == "folder":
            raise JailError(f"{shown!r} is a folder; give a file name inside it.")
        if kind != "file":
            raise JailError(f"{shown!r} is not a regular file (a pipe or a device?), so it is not replaced.")
        if expect is not None and Stamp.of(info) != expect:
            raise JailError(f"{shown!r} changed while it was being edited; read it again, then retry the edit.")
        return info

    def _refusal(self, exc: OSError, name: str, parts: tuple[str, ...], *, folder: bool = False) -> JailError:
        """Why an open failed; a link is named as one whatever errno the OS chose for it."""
        with contextlib.suppress(OSError):
            if kind_of(self.lstat(name)) == "link":
                return JailError(f"{show(parts)!r} is a symbolic link, and {NO_LINKS}.")
        return explain(exc, show(parts), folder=folder)

    def _checked_child(self, name: str, parts: tuple[str, ...], *, create: bool) -> Folder:
        """The fallback: look at the entry, refuse links and junctions, check where it
        resolves. It can lose a race that the descriptor walk cannot; see the jail's docs."""
        path = self._path / name
        shown = show(parts)
        try:
            if create and not os.path.lexists(path):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(path)
            info = os.lstat(path)
        except OSError as exc:
            raise explain(exc, shown, folder=True) from exc
        kind = kind_of(info)
        if kind == "link":
            raise JailError(f"{shown!r} is a symbolic link or junction, and {NO_LINKS}.")
        if kind != "folder":
            raise JailError(f"{shown!r} is not a folder.")
        if not Path(os.path.realpath(path)).is_relative_to(self._root):
            raise JailError(f"{shown!r} leads outside the workspace, so it is refused.")
        return Folder(parts, None, path, self._root)


def _entry_kind(entry: os.DirEntry[str], *, by_stat: bool) -> Kind:
    """An entry's kind from what the listing already knows; ``by_stat`` where that misses
    Windows junctions (the fallback), whose reparse attribute only ``stat`` carries."""
    if by_stat:
        return kind_of(entry.stat(follow_symlinks=False))
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"
