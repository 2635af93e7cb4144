"""The folders an MCP server is offered as its roots, when the person turns roots on for it.

Roots are off by default: a server connection is shared by every chat, and the reference
filesystem server lets the roots a client offers replace the folders it was started with, so
offering roots can change what a server may reach. Turned on, the roots are the folders the
person listed for the server, or, with none listed, the folders among its command-line
arguments that exist. Switching chats never changes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["argument_folders", "folder_uris", "offered_folders"]


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
