"""The workspace jail: every file a built-in tool touches is inside the workspace folder.

A path from a model is relative to the workspace, or absolute and inside it. It is first
checked as text: no NUL byte, no Windows drive (``C:\\x``, ``C:/x``) or UNC path
(``\\\\server\\share``) on any OS, backslashes count as separators everywhere, ``..`` may not
climb above the workspace, and an absolute path must have the workspace's own components as
its leading ones (so ``/ws2`` beside ``/ws`` is outside).

Then it is opened without ever following a symbolic link, inside or outside the workspace:
the simplest rule that cannot be raced. Where the OS opens relative to a directory
descriptor (``os.open in os.supports_dir_fd``: Linux, macOS, the BSDs), the path is walked
one component at a time from a descriptor of the workspace, each folder opened with
``O_DIRECTORY | O_NOFOLLOW`` relative to its parent's descriptor, and a file with
``O_NOFOLLOW | O_NONBLOCK`` and then ``fstat`` to require a regular file (a FIFO or a device is
refused, never waited on). Nothing is looked up by full path after the check, so swapping a
folder for a link between two calls gains nothing. Writes go to a temp file created
``O_EXCL | O_NOFOLLOW`` in the target's folder descriptor and are renamed over the target
through the same descriptor; the rename replaces a directory entry, so it never writes
through a link, nor into the other names of a hard-linked file.

Where descriptors are not available (Windows), the fallback walks the same components by
full path with ``lstat``, refuses links and reparse points (junctions), checks the resolved
path with ``Path.is_relative_to``, opens the file and compares the opened file's identity
with the one it checked. It also refuses names Windows treats specially (``CON``,
``a.txt:stream``, trailing dots). That fallback can still lose a race against a process that
swaps a checked folder for a junction between the check and the open; such a process needs
write access to the workspace.

One thing no path check can see: a hard link inside the workspace to a file outside it
(which its owner made) is read like any file there. Writes replace the name, so they never
change the file outside.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Generator
from pathlib import Path, PurePosixPath

from host.tools.handles import Folder, JailError, OpenFile, Stamp, show

__all__ = ["DIR_FD_SUPPORTED", "Folder", "Jail", "JailError", "OpenFile", "Stamp", "show"]

DIR_FD_SUPPORTED: bool = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.rename in os.supports_dir_fd
    and os.mkdir in os.supports_dir_fd
    and os.unlink in os.supports_dir_fd
    and os.scandir in os.supports_fd
    and hasattr(os, "O_DIRECTORY")
    and hasattr(os, "O_NOFOLLOW")
)

WORKSPACE_SETTING = "Settings → Skills → Workspace"

_DRIVE = re.compile(r"^[A-Za-z]:")
_WINDOWS_DEVICE = re.compile(r"^(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|COM[0-9¹²³]|LPT[0-9¹²³])(\..*)?$", re.IGNORECASE)
_WINDOWS_BAD_CHARS = frozenset('<>:"|?*') | frozenset(chr(c) for c in range(32))
_WALK_SCAN_LIMIT = 100_000


class Jail:
    """The workspace folder, and the only way built-in tools reach files in it.

    ``use_dir_fd`` picks descriptor-relative opening (the default wherever the OS has it)
    or the path-checking fallback; tests force the fallback to exercise it everywhere.
    """

    def __init__(self, root: Path, *, use_dir_fd: bool | None = None) -> None:
        self.given = Path(os.path.abspath(root))
        self.root = Path(os.path.realpath(root))
        self.use_dir_fd = DIR_FD_SUPPORTED if use_dir_fd is None else use_dir_fd
        if self.use_dir_fd and not DIR_FD_SUPPORTED:
            raise ValueError("this OS cannot open files relative to a folder descriptor")

    # -- paths as text -----------------------------------------------------------------------

    def parts(self, path: str) -> tuple[str, ...]:
        """The components of ``path`` below the workspace, ``()`` for the workspace itself.
        Nothing is touched on disk. Raises ``JailError``."""
        if not path:
            raise JailError("The path is empty; give a path relative to the workspace, such as 'src/main.py'.")
        if "\0" in path:
            raise JailError("The path contains a NUL character, which no file name can hold.")
        if _DRIVE.match(path):
            raise JailError(
                f"{path!r} is a Windows drive path; give a path relative to the workspace, such as 'src/main.py'."
            )
        text = path.replace("\\", "/")
        if text.startswith("//"):
            raise JailError(f"{path!r} is a network (UNC) path; only files inside the workspace can be reached.")
        if text.startswith("/"):
            return self._below_root(path, text)
        return self._relative(path, text.split("/"))

    def _below_root(self, original: str, text: str) -> tuple[str, ...]:
        stack: list[str] = []
        for name in PurePosixPath(text).parts[1:]:
            if name == "..":
                if stack:
                    stack.pop()
            else:
                stack.append(name)
        for root in (self.given, self.root):
            base = list(root.parts[1:]) if root.anchor == "/" else None
            if base is not None and stack[: len(base)] == base:
                return self._relative(original, stack[len(base) :])
        raise JailError(
            f"{original!r} is outside the workspace folder {str(self.given)!r}; "
            "tools can only reach files inside it (give a path relative to it)."
        )

    def _relative(self, original: str, components: list[str]) -> tuple[str, ...]:
        stack: list[str] = []
        for name in components:
            if name in ("", "."):
                continue
            if name == "..":
                if not stack:
                    raise JailError(
                        f"{original!r} climbs out of the workspace with '..'; "
                        "tools can only reach files inside the workspace folder."
                    )
                stack.pop()
                continue
            if not self.use_dir_fd:
                _check_windows_name(original, name)
            stack.append(name)
        return tuple(stack)

    # -- opening -----------------------------------------------------------------------------

    def open_root(self) -> Folder:
        """The workspace folder itself. Raises ``JailError``."""
        try:
            info = os.lstat(self.root)
            if not stat.S_ISDIR(info.st_mode):
                raise JailError(
                    f"The workspace {str(self.given)!r} is not a folder; choose another in {WORKSPACE_SETTING}."
                )
            return Folder.root(self.root, by_fd=self.use_dir_fd)
        except OSError as exc:
            raise JailError(
                f"The workspace folder {str(self.given)!r} cannot be opened ({exc.strerror}); "
                f"choose another in {WORKSPACE_SETTING}."
            ) from exc

    def folder(self, parts: tuple[str, ...], *, create: bool = False) -> Folder:
        """The folder at ``parts``, walked one component at a time without following links;
        missing folders are made on the way with ``create``. Raises ``JailError``."""
        current = self.open_root()
        try:
            for name in parts:
                below = current.child(name, create=create)
                current.close()
                current = below
        except BaseException:
            current.close()
            raise
        return current

    def open_file(self, parts: tuple[str, ...]) -> OpenFile:
        """The regular file at ``parts``, opened for reading. Raises ``JailError``."""
        if not parts:
            raise JailError("'.' is the workspace folder, not a file; list_folder shows what is in it.")
        with self.folder(parts[:-1]) as parent:
            return parent.open_file(parts[-1])

    def replace(self, parts: tuple[str, ...], data: bytes, *, expect: Stamp | None = None) -> bool:
        """Write the file at ``parts`` atomically (see ``Folder.replace``), making missing
        folders unless this is an edit (``expect``). Returns whether the file is new."""
        if not parts:
            raise JailError("'.' is the workspace folder; give a file name inside it.")
        with self.folder(parts[:-1], create=expect is None) as parent:
            return parent.replace(parts[-1], data, expect=expect)

    def walk(
        self, parts: tuple[str, ...], *, skip: frozenset[str], max_depth: int
    ) -> Generator[tuple[Folder, str], None, None]:
        """Every regular file under the folder at ``parts`` as ``(its folder, its name)``, in
        name order, depth first. Links and folders named in ``skip`` are passed over, as are
        folders that cannot be opened. Each folder is open only while it is being walked;
        close the iterator to close them early. Raises ``JailError`` for ``parts`` itself."""
        with self.folder(parts) as top:
            yield from _walk(top, skip, max_depth)


def _walk(folder: Folder, skip: frozenset[str], depth: int) -> Generator[tuple[Folder, str], None, None]:
    try:
        entries, _ = folder.scan(limit=_WALK_SCAN_LIMIT)
    except JailError:
        return
    for name, kind in entries:
        if kind == "file":
            yield folder, name
        elif kind == "folder" and name not in skip and depth > 0:
            try:
                child = folder.child(name)
            except JailError:
                continue
            with child:
                yield from _walk(child, skip, depth - 1)


def _check_windows_name(original: str, name: str) -> None:
    """Names Windows gives a meaning of its own: devices, alternate data streams, trimmed names."""
    if _WINDOWS_DEVICE.match(name) or name.endswith((".", " ")) or any(c in _WINDOWS_BAD_CHARS for c in name):
        raise JailError(
            f"{original!r} has the part {name!r}, which Windows treats specially (a device, a data stream "
            "or a trimmed name), so it is refused."
        )
