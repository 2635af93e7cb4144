"""Models on this computer: the built-in account, the model library and the engine.

The built-in account is an account like any other (provider ``built-in``, endpoint
``builtin://engine``, model = a model file's SHA-256), so routes, compaction, the inspector,
usage and the command line treat it as they treat any other. It is made the first time it
is asked for, with the default model assembled into Cairn's models folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from desktop.app.shared import AppState
from desktop.catalog.transport import BUILTIN_PROVIDER
from desktop.engine.engine import EngineStatus
from desktop.engine.known import known_models
from desktop.engine.library import LibraryError, ModelEntry
from desktop.engine.machine import LoadPlan
from desktop.settings.store import Account

__all__ = ["BUILTIN_ACCOUNT", "BUILTIN_PROVIDER", "LocalModels", "ModelsOverview"]

BUILTIN_ACCOUNT = "Built-in"


@dataclass(frozen=True)
class ModelsOverview:
    """What Settings → Models shows: each model with how it would start now, which one the
    Built-in account runs, the engine, and the saved chats' settings and disk use."""

    models: tuple[tuple[ModelEntry, LoadPlan], ...]
    chosen: str | None  # the Built-in account's model
    built: bool
    status: EngineStatus
    idle_minutes: float
    states_gb: float
    states_bytes: int


class LocalModels:
    def __init__(self, shared: AppState) -> None:
        self._shared = shared
        self._root = shared.root
        self._root.watch_engine(shared.emit)  # the window follows the engine's EngineStatus

    # -- the engine ----------------------------------------------------------------------------

    @property
    def built(self) -> bool:
        """Whether this computer has the engine (``make engine`` built it, or the app carries it)."""
        return self._root.build is not None

    def status(self) -> EngineStatus:
        return self._root.local_engine.status()

    async def unload(self) -> None:
        """Stop the engine and free its memory; the next message on a built-in route starts it."""
        await self._root.slots.unload()

    def overview(self) -> ModelsOverview:
        settings = self._shared.settings
        account = self.builtin_account()
        return ModelsOverview(
            models=tuple((m, m.plan()) for m in self.listing()),
            chosen=account.default_model if account is not None else None,
            built=self.built,
            status=self.status(),
            idle_minutes=settings.engine_idle_minutes,
            states_gb=settings.engine_states_gb,
            states_bytes=self._root.slots.states.disk_use(),
        )

    def save_engine_settings(self, idle_minutes: float, states_gb: float) -> None:
        """When an idle chat is saved, and how much disk its saved states may take (the
        oldest go first, at once when the budget shrinks)."""
        self._shared.save_settings(engine_idle_minutes=idle_minutes, engine_states_gb=states_gb)
        self._root.slots.states.set_budget(int(states_gb * 1e9))

    # -- the library -----------------------------------------------------------------------------

    def listing(self) -> list[ModelEntry]:
        return self._root.library.models()

    def find(self, key: str) -> ModelEntry | None:
        return self._root.library.find(key)

    def add(self, path: Path, *, copy: bool = False) -> ModelEntry:
        """Add a GGUF file; ``LibraryError`` says what is wrong with it."""
        return self._root.library.add(path, copy=copy)

    def inspect(self, path: Path) -> str:
        """What the GGUF file at ``path`` says it is, in words (``LibraryError`` when it is not
        a model this engine runs): asked before the person chooses to keep or copy it."""
        facts = self._root.library.check(path)
        count = facts.parameters / 1e9
        size = f"{count:.1f}B" if count >= 1 else f"{facts.parameters / 1e6:.0f}M"
        return f"{facts.name} · {facts.architecture} · {size} · {facts.quantization} · {facts.size / 2**20:,.0f} MiB"

    def set_options(self, sha256: str, **options: int | None) -> ModelEntry:
        """Threads, context or batch for one model (``None``: the machine's choice); the engine
        uses them the next time it loads the model."""
        return self._root.library.set_options(sha256, **options)

    def set_template(self, sha256: str, template: Path | None) -> ModelEntry:
        """A chat template file for one model (``None``: its own again); whether the chats on
        it offer tools follows what that template renders."""
        return self._root.library.set_template(sha256, template)

    def remove(self, sha256: str) -> int:
        """Remove a model (its file too, when Cairn keeps it); the bytes freed."""
        account = self.builtin_account()
        if account is not None and account.default_model == sha256:
            others = [m for m in self.listing() if m.sha256 != sha256]
            if others:
                self._save(account.model_copy(update={"default_model": others[0].sha256}))
        return self._root.library.remove(sha256)

    def default_model(self) -> ModelEntry | None:
        """The default model, assembled into the models folder on first use (``LibraryError``
        when that fails); ``None`` when it is not installed."""
        return self._root.library.default_model()

    # -- the account ---------------------------------------------------------------------------

    def builtin_account(self) -> Account | None:
        settings = self._root.load_settings()
        return next((a for a in settings.accounts if a.provider == BUILTIN_PROVIDER), None)

    def ensure_account(self, model: ModelEntry | None = None) -> Account:
        """The built-in account, made with the default model the first time (``LibraryError``
        when there is no model to run)."""
        existing = self.builtin_account()
        if existing is not None and self._root.library.find(existing.default_model) is not None:
            return existing
        chosen = model or self.default_model()
        if chosen is None:
            raise LibraryError(
                "There is no model on this computer yet. Add a GGUF model file in Settings → Models, or run "
                "`make run` in Cairn's folder, which installs the default one."
            )
        account = self._account_for(chosen, existing)
        self._save(account)
        return account

    def _account_for(self, model: ModelEntry, existing: Account | None) -> Account:
        known = model.known()
        values = {
            "name": existing.name if existing else BUILTIN_ACCOUNT,
            "provider": BUILTIN_PROVIDER,
            "default_model": model.sha256,
            "instructions_in_first_message": bool(known and known.instructions_in_first_message),
        }
        if existing is not None:
            return existing.model_copy(update=values)
        return Account.model_validate(values)

    def choose_model(self, sha256: str) -> Account:
        """Make ``sha256`` the built-in account's model. A chat on it starts its cache again."""
        entry = self._root.library.find(sha256)
        if entry is None:
            raise LibraryError("That model is not in the library.")
        account = self._account_for(entry, self.builtin_account())
        self._save(account)
        return account

    def _save(self, account: Account) -> None:
        shared, store = self._shared, self._root.settings_store
        if shared.settings.account(account.id) is None:
            shared.settings = store.add_account(account)
        else:
            shared.settings = store.replace_account(account)
        shared.publish()

    @staticmethod
    def default_note() -> str:
        """What the start page says of the default model."""
        catalog = known_models()
        known = next(k for k in catalog.known if k.sha256 == catalog.default)
        return known.note
