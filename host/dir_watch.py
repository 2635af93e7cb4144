"""Folder and file watches: what happened in watched folders, and to watched files, since a
reader last asked.

On Linux this is inotify, read without blocking and without a thread: a reader drains the
kernel's queue when it asks, so asking costs one ``read`` that finds nothing when nothing
changed. The kernel queues an event before the write that caused it returns, so a change
made before a reader asks is always in what it is told.

A watch only answers for what the kernel reports, so it is refused (and the caller keeps
checking by ``stat``) where reports can be missing: a folder on a network or FUSE file system
(a change made on another machine is never reported here), a path that is not a folder
(or, for a file watch, is a link), or when the kernel's limit of watches is reached.
If the kernel's queue overflows, every reader is told that anything may have changed.

There is one inotify instance for the whole process (``feed()`` shares it), because
instances are few (128 a user by default) and every folder watched is shared by its
readers. Elsewhere than Linux there is no watch: ``feed()`` returns ``None``.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct
import sys
import threading
import weakref

__all__ = ["Feed", "feed"]

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_Q_OVERFLOW, _IGNORED = 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_EVENTS = (_MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
           | _DELETE_SELF | _MOVE_SELF)  # fmt: skip
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name

# File systems whose changes can happen where this kernel never sees them (statfs f_type).
REMOTE_FILE_SYSTEMS = frozenset({
    0x6969,  # NFS
    0x517B, 0xFF534D42, 0xFE534D42,  # SMB, CIFS, SMB2
    0x65735546,  # FUSE (sshfs, rclone, virtiofs and the like)
    0x01021997,  # 9p (WSL's Windows drives, virtual machines' shared folders)
    0x00C36400, 0x5346414F, 0x73757245, 0x01161970, 0x7461636F,  # Ceph, AFS, Coda, GFS2, OCFS2
})  # fmt: skip


class Feed:
    """One reader's view of the shared watch: since it last asked, the paths of the entries
    of watched folders that something happened to, and the watched folders that were
    themselves changed, moved or deleted."""

    def __init__(self, watch: _Inotify) -> None:
        self._watch = watch
        self.pending: set[str] = set()
        self.overflowed = False

    def watch(self, path: str, *, follow: bool = False) -> bool:
        """Watch the folder at ``path`` (following a link at its end only if ``follow``);
        whether changes in it will be reported. Watch first, then look: then nothing that
        changes after looking is missed."""
        return self._watch.add(path, follow)

    def watch_file(self, path: str) -> bool:
        """Watch the file at ``path`` itself (not a link): a write through any of its names,
        or a new name made for it, is reported as ``path``."""
        return self._watch.add(path, False, folder=False)

    def changes(self) -> set[str] | None:
        """What changed since the last call, or ``None``: anything may have."""
        self._watch.drain()
        with self._watch.lock:
            changed, self.pending = self.pending, set()
            overflowed, self.overflowed = self.overflowed, False
        return None if overflowed else changed


class _Inotify:
    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc, self._fd = libc, fd
        self.lock = threading.Lock()
        self._paths: dict[int, set[str]] = {}  # watch descriptor -> the paths it was added as
        self._feeds: weakref.WeakSet[Feed] = weakref.WeakSet()

    def feed(self) -> Feed:
        made = Feed(self)
        with self.lock:
            self._feeds.add(made)
        return made

    def add(self, path: str, follow: bool, folder: bool = True) -> bool:
        if _remote(self._libc, path):
            return False
        mask = _EVENTS | (_ONLYDIR if folder else 0) | (0 if follow else _DONT_FOLLOW)
        with self.lock:
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask)
            if wd < 0:
                return False  # not a folder, a link, gone, or the kernel's limit reached
            self._paths.setdefault(wd, set()).add(path)
        return True

    def drain(self) -> None:
        with self.lock:
            while True:
                try:
                    data = os.read(self._fd, 65536)
                except BlockingIOError:
                    return
                except OSError:
                    self._tell(None)
                    return
                self._take(data)

    def _take(self, data: bytes) -> None:
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _, size = _HEADER.unpack_from(data, offset)
            name = data[offset + _HEADER.size : offset + _HEADER.size + size].rstrip(b"\0")
            offset += _HEADER.size + size
            if mask & _Q_OVERFLOW:
                self._tell(None)
                continue
            if mask & _MOVE_SELF:
                self._libc.inotify_rm_watch(self._fd, wd)  # it watches a folder now elsewhere
            paths = self._paths.pop(wd, set()) if mask & _IGNORED else self._paths.get(wd, set())
            for path in paths:  # an event in the folder names its entry; one on the folder, the folder
                self._tell(os.path.join(path, os.fsdecode(name)) if name else path)

    def _tell(self, path: str | None) -> None:
        for reader in self._feeds:
            if path is None:
                reader.overflowed = True
            else:
                reader.pending.add(path)


def _remote(libc: ctypes.CDLL, path: str) -> bool:
    buffer = ctypes.create_string_buffer(512)  # struct statfs is 120 bytes on 64-bit Linux
    if libc.statfs(os.fsencode(path), buffer) != 0:
        return True  # cannot tell: do not trust a watch there
    kind = ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF  # f_type comes first
    return kind in REMOTE_FILE_SYSTEMS


_opening = threading.Lock()


def feed() -> Feed | None:
    """A reader of the process's folder watch, or ``None`` where there is none."""
    with _opening:
        shared = _instance()
    return shared.feed() if shared is not None else None


@functools.cache
def _instance() -> _Inotify | None:
    return _open()


def _open() -> _Inotify | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None
    return _Inotify(libc, fd) if fd >= 0 else None
