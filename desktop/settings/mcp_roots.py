"""The folders an MCP server is offered as its roots, when the person turns roots on for it.

Roots are off by default: a server connection is shared by every chat, and the reference
filesystem server lets the roots a client offers replace the folders it was started with, so
offering roots can change what a server may reach. Turned on, the roots are the folders the
person listed for the server, or, with none listed, the folders among its command-line
arguments that exist. Switching chats never changes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from host.text import printable

__all__ = ["RootsChange", "argument_folders", "folder_uris", "offered_folders", "roots_change"]


def argument_folders(args: Sequence[str], cwd: str | None = None) -> list[str]:
    """The existing folders among a server's arguments, as absolute paths, each once. A
    relative one counts from the server's working folder, and only when it has one: Cairn's
    own working folder says nothing of the server."""
    found: list[str] = []
    for arg in args:
        if not arg.strip() or arg.startswith("-"):
            continue
        path = Path(arg).expanduser()
        if not path.is_absolute():
            if cwd is None:
                continue
            path = Path(cwd).expanduser() / path
        if path.is_dir() and str(path.resolve()) not in found:
            found.append(str(path.resolve()))
    return found


def offered_folders(enabled: bool, listed: Sequence[str], args: Sequence[str], cwd: str | None) -> list[str] | None:
    """The folders a server is offered: ``None`` when roots are off, else those listed, or
    with none listed its argument folders."""
    if not enabled:
        return None
    return [str(Path(folder).expanduser()) for folder in listed] if listed else argument_folders(args, cwd)


def folder_uris(folders: Iterable[str]) -> tuple[str, ...]:
    """``file://`` URIs of folders (absolute; a relative one is taken from Cairn's folder)."""
    return tuple(Path(folder).expanduser().absolute().as_uri() for folder in folders)


@dataclass(frozen=True)
class RootsChange:
    """What a server will be offered instead of what it is offered now (``None``: roots off),
    to put to the person before it is saved: the server is shared by every chat."""

    server: str
    before: tuple[str, ...] | None
    after: tuple[str, ...] | None

    def question(self) -> str:
        """The change in words, for the question the person answers."""
        name = printable(self.server)
        if self.after is None:
            return (
                f"{name} will no longer be offered folders: it reaches only what its own arguments give it, "
                "in every chat (if it is running, it restarts)."
            )
        how = (
            "If it is running, it restarts to be offered them."
            if self.before is None
            else "It is told at once if it is running."
        )
        if not self.after:
            return f"{name} will be offered no folders, so a server that follows roots may reach none. {how}"
        listed = "\n".join(f"    {printable(folder)}" for folder in self.after)
        return (
            f"{name} will then reach these folders, in every chat (a server that follows roots, such as the "
            f"reference filesystem server, reaches them instead of the folders in its arguments):\n{listed}\n{how}"
        )


def roots_change(server: str, before: list[str] | None, fields: Mapping[str, object]) -> RootsChange | None:
    """The change ``fields`` (a server's entry as entered) make to the folders offered, or
    ``None`` when they offer what ``before`` does."""
    listed, args, cwd = fields.get("roots"), fields.get("args"), fields.get("cwd")
    after = offered_folders(
        bool(fields.get("roots_enabled")),
        [str(folder) for folder in listed] if isinstance(listed, list) else [],
        [str(arg) for arg in args] if isinstance(args, list) else [],
        cwd if isinstance(cwd, str) else None,
    )
    if after == before:
        return None
    return RootsChange(
        server, tuple(before) if before is not None else None, tuple(after) if after is not None else None
    )
