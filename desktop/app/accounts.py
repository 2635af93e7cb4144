"""Accounts and the route used last: finding, saving and removing accounts, their keys in the
secret store, and the routes they resolve to."""

from __future__ import annotations

from desktop.app.shared import AppState
from desktop.catalog.transport import ProviderPreset
from desktop.settings.routes import ResolvedRoute
from desktop.settings.store import Account

__all__ = ["Accounts"]


class Accounts:
    def __init__(self, shared: AppState) -> None:
        self._shared = shared
        self._root = shared.root

    def route(self) -> ResolvedRoute:
        """The route used last, the one new chats start on; ``NoRoute`` without an account."""
        return self._shared.route()

    def choose(self, account_id: str, model: str | None) -> ResolvedRoute:
        """Make this account and model the route used last, the one new chats start on."""
        shared = self._shared
        shared.account_id, shared.model = account_id, model
        route = shared.route()
        shared.publish()
        return route

    def api_key(self, account: Account) -> str | None:
        """The account's key (kept, or from the environment); redacted from then on."""
        return self._root.api_key(account)

    def keep_key(self, account_id: str, key: str, *, memory_only: bool = False) -> None:
        """Keep a key for the account (see ``AccountKeys.keep``); ``KeychainUnavailable``."""
        self._root.keys.keep(account_id, key, memory_only=memory_only)

    def keychain_problem(self) -> str | None:
        """Why a key kept now would last only this run (no keychain, and no secrets file
        chosen), or ``None``."""
        view = self._root.secrets.view()
        return view.keychain_problem if view.place == "memory" else None

    def find(self, name_or_id: str | None = None) -> Account | None:
        """The account named (or with the id) ``name_or_id``; the default one without it."""
        settings = self._root.load_settings()
        key = name_or_id or settings.default_account
        return settings.account(key) if key else None

    def listing(self) -> tuple[list[Account], str | None]:
        """Every account as the settings file has it now, and the default one's id."""
        settings = self._root.load_settings()
        return list(settings.accounts), settings.default_account

    def has_key(self, account_id: str) -> bool:
        return self._root.keys.has_key(account_id)

    def presets(self) -> list[ProviderPreset]:
        return list(self._root.transport.providers)

    def preset(self, provider: str) -> ProviderPreset | None:
        return self._root.transport.preset(provider)

    def resolve(self, account: Account, model: str | None = None) -> ResolvedRoute:
        """Where a request on ``account`` (and ``model``) goes; ``RouteError`` says why not."""
        return self._root.route(account, model)

    def save(self, account: Account, key: str | None, *, memory_only: bool = False) -> None:
        """Save the account; the key goes to the secret store. ``KeychainUnavailable`` (the
        account itself is saved) when it has nowhere to go and ``memory_only`` was not asked for."""
        shared, store = self._shared, self._root.settings_store
        if shared.settings.account(account.id) is None:
            shared.settings = store.add_account(account)
        else:
            shared.settings = store.replace_account(account)
        shared.account_id = shared.account_id or account.id
        try:
            if key:
                self._root.keys.keep(account.id, key, memory_only=memory_only)
        finally:
            shared.publish()

    def add(self, account: Account) -> None:
        """Add a new account; ``SettingsError`` when its name is taken."""
        self._shared.settings = self._root.settings_store.add_account(account)
        self._shared.publish()

    def replace(self, account: Account) -> None:
        """Save an edited account in place of the one with its id; ``SettingsError``."""
        self._shared.settings = self._root.settings_store.replace_account(account)
        self._shared.publish()

    def remove(self, account_id: str) -> None:
        shared = self._shared
        shared.settings = self._root.settings_store.remove_account(account_id)
        self._root.keys.forget(account_id)
        if shared.account_id == account_id:
            shared.account_id, shared.model = shared.settings.default_account, None
        shared.publish()
