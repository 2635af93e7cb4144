"""What the front door's use cases share: the root's parts, the settings as last read and the
system state they describe, the route used last, the chats' folded states, and the one
listener every event and snapshot goes to.

Everything here lives on the core's loop. The window never reads it: it reads the
``AppSnapshot`` that ``publish`` sends whenever any of it changes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from desktop.app.served_models import ServedModels
from desktop.app.snapshot import AccountView, AppSnapshot
from desktop.catalog.transport import BUILTIN_PROVIDER
from desktop.root import Root
from desktop.session.states import SessionStates
from desktop.settings.routes import ResolvedRoute, RouteError
from desktop.settings.store import Account, Settings
from host.attachments import AttachmentStore
from host.errors import CairnError
from host.journal import Journal
from host.transcript import TranscriptWriter
from host.usage import UsageLedger

__all__ = ["AppState", "NoRoute", "NoSuchChat", "TurnInProgress"]


class NoRoute(CairnError):
    """There is no account to send to yet."""


class NoSuchChat(CairnError):
    """The chat asked for is not in the journal (deleted meanwhile, or never there)."""


class TurnInProgress(CairnError):
    """The chat is already answering; a second turn waits until the first ends or is stopped."""


class AppState:
    def __init__(self, root: Root, on_event: Callable[[object], None], workspace: Path | None) -> None:
        self.root = root
        self.paths = root.paths
        self.settings: Settings = root.load_settings()
        self.system = root.system_state(self.settings, workspace)
        self.emit = on_event
        # The route used last: new chats start on it; each chat then keeps its own.
        self.account_id: str | None = self.settings.default_account
        self.model: str | None = None
        self.served = ServedModels(self.paths.cache_dir)  # what each account's endpoint lists

    # -- the journal: opened when first needed (a command about accounts never opens it, so it
    # works while a window holds the journal) ----------------------------------------------

    @cached_property
    def journal(self) -> Journal:
        return self.root.open_journal()

    @cached_property
    def writer(self) -> TranscriptWriter:
        return TranscriptWriter(self.journal)

    @cached_property
    def ledger(self) -> UsageLedger:
        return UsageLedger(self.journal)

    @cached_property
    def attachments(self) -> AttachmentStore:
        return AttachmentStore.beside(self.journal.path)

    @cached_property
    def states(self) -> SessionStates:
        return SessionStates(self.journal)

    # -- settings --------------------------------------------------------------------------

    def save_settings(self, **changes: object) -> None:
        """Change only these settings (see ``SettingsStore.change``) and publish."""
        self.settings = self.root.settings_store.change(**changes)
        self.system = self.root.system_state(self.settings)
        self.publish()

    def reload_settings(self) -> None:
        """Take up changes made outside this window (another Cairn command, an edit by hand)."""
        self.settings = self.root.load_settings()
        self.system = self.root.system_state(self.settings)
        self.publish()

    # -- the route used last ---------------------------------------------------------------

    def account(self) -> Account | None:
        return self.settings.account(self.account_id) if self.account_id else None

    def route(self) -> ResolvedRoute:
        account = self.account()
        if account is None:
            raise NoRoute("Add an account in Settings to start chatting.")
        return self.root.route(account, self.model)

    # -- what the window shows -------------------------------------------------------------

    def snapshot(self) -> AppSnapshot:
        """The state the window renders; it reads the keychain, so it is made on the core."""
        route: ResolvedRoute | None = None
        problem: str | None = None
        try:
            route = self.route()
        except (NoRoute, RouteError, ValueError) as exc:
            problem = str(exc)
        root, settings = self.root, self.settings
        secrets = root.secrets.view()
        providers = [p.id for p in root.transport.providers]
        local = root.library.models()
        catalog = {p: tuple(root.routes.catalog_models(p)) for p in [*providers, "custom"]}
        catalog[BUILTIN_PROVIDER] = tuple(m.sha256 for m in local)
        return AppSnapshot(
            accounts=tuple(AccountView(a, root.keys.has_key(a.id)) for a in settings.accounts),
            account_id=self.account_id,
            model=self.model,
            route=route,
            route_problem=problem,
            custom_instructions=settings.custom_instructions,
            theme=settings.theme,
            text_size=settings.text_size,
            workspace=settings.workspace,
            skills_dir=self.paths.skills_dir,
            keychain_problem=secrets.keychain_problem if secrets.place == "memory" else None,
            secrets=secrets,
            read_only=self.journal.read_only_reason if self.journal.read_only else None,
            transport=root.transport,
            models_dev=root.models_dev,
            catalog_models=catalog,
            served_models=self.served_models(),
            model_titles={m.sha256: m.title for m in local},
            default_mode=settings.default_mode,
            tool_grants=tuple(settings.tool_grants),
            reply_reserve=settings.reply_reserve,
            retained_tail=settings.retained_tail,
            summary_route=settings.summary_route,
            assistants=tuple(settings.assistants),
            auto_titles=settings.auto_titles,
            skills_listed=settings.skills_listed,
        )

    def served_models(self) -> dict[str, tuple[str, ...]]:
        """Each account's endpoint's models, as it listed them last."""
        served = {}
        for account in self.settings.accounts:
            try:
                base_url = self.root.routes.resolve(account).actual.base_url
            except (RouteError, ValueError):
                continue
            served[account.id] = self.served.models(account.id, base_url)
        return served

    def publish(self) -> AppSnapshot:
        snapshot = self.snapshot()
        self.emit(snapshot)
        return snapshot
