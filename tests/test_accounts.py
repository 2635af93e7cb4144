"""Accounts in the settings file, keys in the keychain, and no key ever on disk."""

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import keyring.backends.fail
import pytest

from desktop.logs import configure_logging
from desktop.loopback import LoopbackProvider
from desktop.settings.secrets import KeychainUnavailable, SecretStore
from desktop.settings.store import Account, Settings, SettingsError, SettingsStore
from host.journal import Journal
from host.paths import CairnPaths
from tests.chat_fixtures import chat_runtime, route_for
from tests.fake_keyring import BrokenKeyring, MemoryKeyring

REPO = Path(__file__).resolve().parents[1]
SECRET = "sk-cairn-secret-7f3a9c2e41d8"


def store(paths: CairnPaths) -> SettingsStore:
    return SettingsStore(paths.config_dir / "settings.json")


def test_accounts_are_added_edited_and_removed(cairn_paths: CairnPaths) -> None:
    settings = store(cairn_paths)
    first = Account(name="DeepSeek", provider="deepseek", default_model="deepseek-flash")
    second = Account(name="Local", provider="ollama", default_model="qwen3:8b", headers={"X-Team": "a"})
    settings.add_account(first)
    settings.add_account(second)
    loaded = settings.load()
    assert [a.name for a in loaded.accounts] == ["DeepSeek", "Local"]
    assert loaded.default_account == first.id
    settings.replace_account(second.model_copy(update={"default_model": "llama3.2"}))
    assert settings.load().account("local").default_model == "llama3.2"
    settings.remove_account(first.id)
    assert settings.load().default_account == second.id
    raw = json.loads((cairn_paths.config_dir / "settings.json").read_text())
    assert raw["schema_version"] == 2


def test_duplicate_names_are_refused(cairn_paths: CairnPaths) -> None:
    settings = store(cairn_paths)
    settings.add_account(Account(name="Work", provider="openai", default_model="gpt-5"))
    with pytest.raises(SettingsError, match="already exists"):
        settings.add_account(Account(name="work", provider="deepseek", default_model="deepseek-flash"))


@pytest.mark.parametrize("header", ["Authorization", "X-Api-Key", "api_key", "Cookie"])
def test_credential_headers_are_refused(header: str) -> None:
    with pytest.raises(ValueError, match=r"keychain|valid HTTP header"):
        Account(name="A", provider="openai", default_model="gpt-5", headers={header: "x"})


def test_a_broken_settings_file_is_reported_and_kept(cairn_paths: CairnPaths) -> None:
    path = cairn_paths.config_dir / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(SettingsError, match="cannot be read") as caught:
        store(cairn_paths).load()
    assert str(path) in str(caught.value)
    assert path.read_text() == "{not json"


def test_a_bad_value_names_where_it_is(cairn_paths: CairnPaths) -> None:
    path = cairn_paths.config_dir / "settings.json"
    path.parent.mkdir(parents=True)
    bad = Settings().model_dump()
    bad["accounts"] = [{"name": "A", "provider": "custom", "default_model": "m", "base_url": "nope"}]
    path.write_text(json.dumps(bad))
    with pytest.raises(SettingsError, match=r"accounts\.0\.base_url"):
        store(cairn_paths).load()


def test_keys_go_to_the_keychain() -> None:
    backend = MemoryKeyring()
    secrets = SecretStore(backend)
    secrets.set("acct", SECRET)
    assert backend.entries == {("Cairn", "acct"): SECRET}
    assert secrets.get("acct") == SECRET
    secrets.delete("acct")
    assert secrets.get("acct") is None
    secrets.delete("acct")  # deleting twice is fine


def test_without_a_keychain_cairn_says_so_and_offers_memory_only() -> None:
    secrets = SecretStore(keyring.backends.fail.Keyring())
    assert "No system keychain" in (secrets.keychain_problem() or "")
    with pytest.raises(KeychainUnavailable, match="in memory for this run only"):
        secrets.set("acct", SECRET)
    secrets.set("acct", SECRET, memory_only=True)
    assert secrets.get("acct") == SECRET
    assert SecretStore(keyring.backends.fail.Keyring()).get("acct") is None  # gone with the run


def test_a_keychain_that_refuses_is_reported() -> None:
    with pytest.raises(KeychainUnavailable, match="refused the key"):
        SecretStore(BrokenKeyring()).set("acct", SECRET)


def files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_full_chat_leaves_the_key_in_no_file(cairn_paths: CairnPaths, journal: Journal) -> None:
    configure_logging(cairn_paths.log_dir, level=logging.DEBUG)
    secrets = SecretStore(MemoryKeyring())
    with LoopbackProvider(api_key=SECRET) as provider:
        account = Account(name="Loop", provider="custom", base_url=provider.base_url, default_model="loopback-chat")
        store(cairn_paths).add_account(account)
        secrets.set(account.id, SECRET)
        route = route_for(account, cairn_paths)
        session = journal.create_session()

        async def run() -> None:
            async with chat_runtime(journal, route, secrets.get(account.id)) as chat:
                assert (await chat.runtime.send(session.id, "hello")).ok
                assert (await chat.runtime.send(session.id, "again")).ok

        asyncio.run(run())
        assert provider.requests[0].authorization == f"Bearer {SECRET}"
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert (cairn_paths.log_dir / "cairn.log").stat().st_size > 0
    home = Path(os.environ["CAIRN_HOME"])
    assert files_holding(home, SECRET.encode()) == []
    assert files_holding(home, b"sk-cairn") == []


def test_the_cli_chat_leaves_the_key_in_no_file(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=SECRET) as provider:
        env = {**os.environ, "CAIRN_API_KEY": SECRET}
        add = subprocess.run(
            [sys.executable, "-m", "desktop", "accounts", "add", "Loop", "--base-url", provider.base_url,
             "--model", "loopback-chat"],
            cwd=REPO, env=env, input=f"{SECRET}\n", capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert add.returncode == 0, add.stderr
        assert "No system keychain" in add.stderr or "keychain" in add.stdout
        chat = subprocess.run(
            [sys.executable, "-m", "desktop", "chat", "hello", "there"],
            cwd=REPO, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert chat.returncode == 0, chat.stderr
    assert SECRET not in chat.stdout + chat.stderr + add.stdout + add.stderr
    assert files_holding(Path(os.environ["CAIRN_HOME"]), SECRET.encode()) == []
