"""The application the window and the commands drive, made of its use cases.

``CairnApp`` holds one of each: ``chats`` (the list and each chat's pages), ``options`` (each
chat's route, settings, mode and grants), ``turns`` (everything that asks the model, and the
approvals), ``attachments``, ``accounts``, ``models``, ``preferences``, ``mcp`` (the MCP
servers) and ``secrets`` (where keys are kept, and the secrets file). All
of it runs on the core's asyncio loop (one worker thread), never on the GUI thread: events of
every turn reach ``on_event`` tagged with their chat, and every change of what the window
shows (accounts, the route, settings) is published there as an ``AppSnapshot``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType

from desktop.app.accounts import Accounts
from desktop.app.attachments import Attachments
from desktop.app.chat_options import ChatOptions
from desktop.app.chats import Chats
from desktop.app.local_models import LocalModels
from desktop.app.mcp_servers import McpServers
from desktop.app.model_downloads import ModelDownloads
from desktop.app.models import Models
from desktop.app.preferences import Preferences
from desktop.app.secrets import Secrets
from desktop.app.shared import AppState
from desktop.app.snapshot import AppSnapshot
from desktop.app.turns import Turns
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Settings
from desktop.turn.approvals import Approver
from desktop.turn.elicitations import Elicitor
from host.content import ChatRoute, parse_model_system
from host.paths import CairnPaths

__all__ = ["CairnApp", "open_cairn"]


class CairnApp:
    def __init__(
        self,
        root: Root,
        *,
        on_event: Callable[[object], None] | None = None,
        workspace: Path | None = None,
        titles: bool = True,
    ) -> None:
        self.root = root
        self.paths = root.paths
        self._shared = shared = AppState(root, on_event or (lambda _event: None), workspace)
        self.options = ChatOptions(shared)
        self.preferences = Preferences(shared)
        self.turns = Turns(shared, self.options, self.preferences, titles=titles)
        self.chats = Chats(shared, self.options, self.turns.busy)
        self.attachments = Attachments(shared, self.options)
        self.accounts = Accounts(shared)
        self.models = Models(shared)
        self.mcp = McpServers(shared)
        self.local = LocalModels(shared)
        self.downloads = ModelDownloads(shared)
        self.secrets = Secrets(shared)

    @property
    def settings(self) -> Settings:
        """The settings as the core last read them (read on the core, never on the GUI thread)."""
        return self._shared.settings

    def snapshot(self) -> AppSnapshot:
        """What the window renders; it reads the keychain, so it is made on the core."""
        return self._shared.snapshot()

    def publish(self) -> AppSnapshot:
        return self._shared.publish()

    async def start(self) -> None:
        """Take up the route used last, then start the root's components: the MCP servers that
        start with Cairn."""
        self._resume_last_route()
        await self.root.start()

    def _resume_last_route(self) -> None:
        """New chats start on the route a chat was last given, also after a restart."""
        shared = self._shared
        stored = shared.journal.latest_meta("chat_route")
        meta = parse_model_system(json.loads(stored)) if stored else None
        known = isinstance(meta, ChatRoute) and shared.settings.account(meta.account_id) is not None
        if isinstance(meta, ChatRoute) and known and (meta.account_id, meta.model) != (shared.account_id, shared.model):
            shared.account_id, shared.model = meta.account_id, meta.model
            shared.publish()

    @asynccontextmanager
    async def running(self, *, servers: bool = True) -> AsyncIterator[CairnApp]:
        """Started for a command's work, and stopped after it (its turns too); unlike ``close``,
        it leaves chats deleted in a window open meanwhile where Undo can bring them back.
        Without ``servers`` (work that asks no model) neither the MCP servers start nor the
        journal is read."""
        if servers:
            await self.start()
        else:
            await self.root.start(servers=False)
        try:
            yield self
        finally:
            await self.turns.stop_all()
            await self.root.stop()

    async def close(self) -> None:
        """Stop every reply (what arrived is already kept, marked interrupted), remove the
        chats deleted for good, then stop the root's components."""
        await self.turns.stop_all()
        if not self._shared.journal.read_only:
            self._shared.journal.purge_deleted()
        await self.root.stop()

    def __enter__(self) -> CairnApp:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.root.close()


def open_cairn(
    paths: CairnPaths,
    *,
    on_event: Callable[[object], None] | None = None,
    approver: Approver | None = None,
    elicitor: Elicitor | None = None,
    secrets: SecretStore | None = None,
    workspace: Path | None = None,
    titles: bool = True,
    open_journal: bool = True,
    servers_on_demand: bool = False,
    beside_holder: bool = False,
) -> CairnApp:
    """Assemble Cairn (``desktop.root``) and the app on top of it; use it in a ``with`` block,
    which closes the journal. The journal opens now, or, without ``open_journal``, when first
    needed. Raises ``JournalOpenError``, ``CatalogError``, ``SettingsError`` or
    ``WorkspaceError`` saying what is wrong, with nothing left open. ``servers_on_demand``: an
    MCP server whose tools Cairn knows starts only when a call needs it (``McpHub``).
    ``beside_holder``: a journal another running Cairn holds opens read-only (a listing)."""
    root = Root(
        paths,
        secrets=secrets,
        approver=approver,
        elicitor=elicitor,
        servers_on_demand=servers_on_demand,
        beside_holder=beside_holder,
    )
    try:
        if open_journal:
            root.open_journal()
        return CairnApp(root, on_event=on_event, workspace=workspace, titles=titles)
    except BaseException:
        root.close()
        raise
