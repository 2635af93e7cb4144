"""What an account's endpoint serves: asked in the background, remembered across runs, asked
again only when old, and never a reason for anything to fail."""

from __future__ import annotations

import asyncio
import json

from desktop.app import AppSnapshot
from desktop.app.cairn import open_cairn
from desktop.loopback import LoopbackProvider
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SettingsStore
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring


def add(paths: CairnPaths, base_url: str) -> Account:
    account = Account(name="Loop", provider="custom", base_url=base_url, default_model="loopback-chat")
    SettingsStore(paths.config_dir / "settings.json").add_account(account)
    return account


def test_an_endpoint_s_models_are_listed_remembered_and_asked_again_only_when_old(cairn_paths: CairnPaths) -> None:
    published: list[AppSnapshot] = []
    with LoopbackProvider(models=("loopback-chat", "small", "large")) as provider:
        account = add(cairn_paths, provider.base_url)
        with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring()), on_event=published.append) as app:
            assert app.snapshot().models_of(app.settings.accounts[0]) == ("loopback-chat",)  # nothing known yet

            async def scenario() -> None:
                assert await app.models.refresh_served(account.id) is True
                assert published[-1].served_models[account.id] == ("large", "loopback-chat", "small")  # sorted
                provider.models = ("loopback-chat", "small", "large", "newer")
                assert await app.models.refresh_served(account.id) is False  # fresh: not asked again
                assert await app.models.refresh_served(account.id, max_age=0) is True  # the list was opened

            asyncio.run(scenario())
            assert "newer" in app.snapshot().models_of(app.settings.accounts[0])
        cache = cairn_paths.cache_dir / "served-models.json"
        assert "newer" in cache.read_text()
        assert oct(cache.stat().st_mode & 0o777) == "0o600"
    # The endpoint is gone: the next run still offers what it listed last, and asking fails quietly.
    with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring())) as app:
        assert app.snapshot().models_of(app.settings.accounts[0]) == ("loopback-chat", "large", "newer", "small")
        assert asyncio.run(app.models.refresh_served(account.id, max_age=0)) is False


def test_a_changed_address_forgets_the_list_and_a_damaged_cache_costs_nothing(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(models=("loopback-chat", "small")) as first, LoopbackProvider(models=("x",)) as second:
        account = add(cairn_paths, first.base_url)
        with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring())) as app:
            asyncio.run(app.models.refresh_served(account.id))
            assert app.snapshot().served_models[account.id] == ("loopback-chat", "small")
            app.accounts.save(app.settings.accounts[0].model_copy(update={"base_url": second.base_url}), None)
            assert app.snapshot().served_models[account.id] == ()  # another endpoint: its list is not known yet
        cache = cairn_paths.cache_dir / "served-models.json"
        entries = json.loads(cache.read_text())
        entries["other"] = {"models": "not a list", "base_url": 3}
        cache.write_text(json.dumps(entries)[:-3])  # cut short, as a crash mid-write would
        with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring())) as app:
            assert app.snapshot().served_models[account.id] == ()
            assert asyncio.run(app.models.refresh_served(account.id)) is True
            assert app.snapshot().served_models[account.id] == ("x",)


def test_an_endpoint_that_lists_thousands_of_hostile_names_is_cut_to_size(cairn_paths: CairnPaths) -> None:
    names = (*(f"model-{n}" + "x" * (n % 400) for n in range(5_000)), "", "   ")
    with LoopbackProvider(models=names) as provider:
        account = add(cairn_paths, provider.base_url)
        with open_cairn(cairn_paths, secrets=SecretStore(MemoryKeyring())) as app:
            asyncio.run(app.models.refresh_served(account.id))
            served = app.snapshot().served_models[account.id]
            assert len(served) == 2_000
            assert all(0 < len(name) <= 200 for name in served)
