"""Cairn's one error root, and the journal's errors.

Every error Cairn raises on purpose is a ``CairnError``: its message says, in a sentence or
two, what happened and what to do, so it can be shown as it is. The command line and the
window each catch it in one place (``desktop.cli.run_command``; the window's notice) and show
the message; anything else that escapes is a defect, logged with its traceback and shown as
one. The family, by room:

    CairnError
    ├── JournalError                    host.errors (below)
    ├── SkillError, ToolError           host.skills, host.tools (a tool's refusal goes to the model)
    ├── NotAVersion, NotABranchPoint    host.versions, host.branching
    ├── AttachmentUnavailable           host.attachments
    ├── ProviderError                   desktop.provider.errors (connection, timeout, status, stream)
    ├── CatalogError                    desktop.catalog.transport
    ├── SettingsError, RouteError, KeychainUnavailable, McpSettingsError, ConfigImportError
    │                                   desktop.settings
    ├── WorkspaceError, SectionNameError, ChatSettingsError
    ├── CompactionFailed, NothingToCompact
    ├── NothingToRetry, TurnInProgress  desktop.turn, desktop.app
    ├── PromptUnavailable               desktop.tools (an MCP prompt the composer asked for)
    ├── NoRoute, NoSuchChat, AttachmentRefused, InputRefused
    │                                   desktop.app
    └── CommandError                    desktop.cli

The journal's own:

    JournalError
    ├── JournalOpenError          the journal cannot be opened; nothing was changed
    │   ├── NotAJournalError      the file is not a Cairn journal (or not SQLite at all)
    │   ├── JournalLockedError    another running Cairn holds it
    │   └── DiskFullError         its disk is full, and it cannot even be read (see host.read_only)
    └── JournalWriteError         a row or session could not be committed
        └── JournalReadOnlyError  the journal is open read-only (a newer Cairn wrote it)

A ``JournalWriteError`` is the one error a writer raises. Its message says what could not
be saved, where and why; it does not say what that means for a request, because only the
caller knows whether one went out. A write before dispatch is a local preparation failure
(the request is not sent, and a retry reuses the row id); a write after a reply arrived
means the reply could not be saved. Every message names the file and says what to do.

A journal from a newer Cairn is not an open error: it opens read-write when its recorded
minimum reader version allows, and read-only otherwise (see ``host.opening``). Nor is a full
disk, when what the journal holds can still be read: it opens read-only (``host.read_only``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "CairnError",
    "DiskFullError",
    "JournalError",
    "JournalLockedError",
    "JournalOpenError",
    "JournalReadOnlyError",
    "JournalWriteError",
    "NotAJournalError",
]


class CairnError(Exception):
    """An error Cairn raises on purpose; its message says what happened and what to do."""


class JournalError(CairnError):
    """Base of every journal error; ``path`` is the journal file concerned."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class JournalOpenError(JournalError):
    """The journal could not be opened. The file on disk was left exactly as it was."""


class NotAJournalError(JournalOpenError):
    """The file exists but is not a Cairn journal."""


class JournalLockedError(JournalOpenError):
    """Another running Cairn has the journal open."""

    def __init__(self, message: str, path: Path, holder_pid: int | None) -> None:
        super().__init__(message, path)
        self.holder_pid = holder_pid


class DiskFullError(JournalOpenError):
    """The journal's disk is full, and the journal cannot be opened even read-only (it does not
    exist yet, or it must be migrated first)."""


class JournalWriteError(JournalError):
    """A write failed or conflicted; nothing of it was committed."""


class JournalReadOnlyError(JournalWriteError):
    """The journal is open read-only, so nothing can be saved to it; nothing was changed."""
