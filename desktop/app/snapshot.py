"""What the window may know of the core's state: one immutable snapshot, published as an event.

The GUI thread never reads the core's mutable objects (settings, the current route) and
never calls the keychain. The core publishes an ``AppSnapshot`` whenever any of it changes;
the window renders only that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from desktop.catalog.modelsdev import ModelsDevCatalog
from desktop.catalog.transport import TransportCatalog
from desktop.context.system_state import SKILL_LISTING_BUDGET
from desktop.settings.routes import ResolvedRoute
from desktop.settings.secrets import SecretsView
from desktop.settings.store import Account, Assistant, AutoTitles, SummaryRoute, ToolGrant
from host.content import Mode

__all__ = ["AccountView", "AppSnapshot"]


@dataclass(frozen=True)
class AccountView:
    account: Account
    has_key: bool  # a key is kept (keychain, secrets file or memory)


@dataclass(frozen=True)
class AppSnapshot:
    accounts: tuple[AccountView, ...]
    account_id: str | None  # where the next message goes
    model: str | None
    route: ResolvedRoute | None
    route_problem: str | None  # why there is no route, when there is none
    custom_instructions: str
    theme: str
    workspace: str | None
    skills_dir: Path
    # Why a key saved now would last only this run (no keychain, and no secrets file chosen).
    keychain_problem: str | None
    secrets: SecretsView  # where secrets are kept
    read_only: str | None  # why the journal is read-only, when it is
    transport: TransportCatalog
    models_dev: ModelsDevCatalog
    catalog_models: Mapping[str, tuple[str, ...]]  # provider preset id to the models the catalogs know
    served_models: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # account id: its endpoint's list
    default_mode: Mode = "ask"
    tool_grants: tuple[ToolGrant, ...] = ()  # Always and Never answers
    reply_reserve: int | None = None  # None: automatic
    retained_tail: int | None = None
    summary_route: SummaryRoute | None = None  # None: the chat's own route
    text_size: int | None = None  # points; None: Cairn's default
    assistants: tuple[Assistant, ...] = ()  # presets to start a chat from
    auto_titles: AutoTitles = "free_routes"  # where chat titles come from
    skills_listed: int = SKILL_LISTING_BUDGET  # skills a chat lists one by one; tool_search finds the others
    # A model id's readable name, where the id is not one: the built-in engine's are SHA-256s.
    model_titles: Mapping[str, str] = field(default_factory=dict)

    def model_title(self, model: str | None) -> str:
        return self.model_titles.get(model or "", model or "")

    def models_of(self, account: Account) -> tuple[str, ...]:
        """The models to offer for ``account``: its default first, then what its endpoint
        lists, or (before it has said) what Cairn's catalogs know of its provider."""
        served = self.served_models.get(account.id, ())
        known = served or self.catalog_models.get(account.provider, ())
        return tuple(dict.fromkeys([account.default_model, *known]))

    def account(self, account_id: str | None) -> AccountView | None:
        return next((view for view in self.accounts if view.account.id == account_id), None)
