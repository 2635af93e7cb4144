"""`cairn` without a system keychain, run as a person would (this machine's tests have none):
the line that says so once, `cairn secrets where`, the secrets file turned on only when asked,
used by every command (a key saved by `accounts`, read by `chat`), refused when others may
open it, and turned off again, saying what it forgets."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from desktop.loopback import LoopbackProvider, Reply
from host.paths import CairnPaths
from tests.cli_fixtures import cairn

SECRET = "sk-cli-file-5d2e91"
NOTICE = "No system keychain was found, so API keys and other secrets are not kept from one command to the next"


def secrets_file(paths: CairnPaths) -> Path:
    return paths.config_dir / "secrets.json"


def files_holding(root: Path, needle: str) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes())


def test_the_first_command_says_once_that_there_is_no_keychain(cairn_paths: CairnPaths) -> None:
    first = cairn("accounts", "list")
    assert first.returncode == 0
    assert NOTICE in first.stderr
    assert f"`cairn secrets file on` keeps them in a file only you can read ({secrets_file(cairn_paths)})" in (
        first.stderr
    )
    assert NOTICE not in cairn("accounts", "list").stderr  # once
    where = cairn("secrets", "where")
    assert where.stdout.splitlines() == [
        "No system keychain was found, so API keys and other secrets are kept only until Cairn closes.",
        f"`cairn secrets file on` keeps them in a file only you can read: {secrets_file(cairn_paths)}.",
    ]
    asked = cairn("secrets", "file", "on")  # no terminal to ask on, no --yes
    assert asked.returncode == 2
    assert "Nothing was changed: run it again with --yes" in asked.stderr
    assert not secrets_file(cairn_paths).exists()
    assert not (cairn_paths.config_dir / "settings.json").exists()  # telling is not a setting


def test_a_key_saved_in_the_chosen_file_serves_every_command_until_the_file_is_turned_off(
    cairn_paths: CairnPaths,
) -> None:
    on = cairn("secrets", "file", "on", "--yes")
    assert on.returncode == 0, on.stderr
    assert "It is not encrypted" in on.stdout
    assert f"Secrets are kept in {secrets_file(cairn_paths)} from now on." in on.stdout
    assert stat.S_IMODE(secrets_file(cairn_paths).stat().st_mode) == 0o600
    with LoopbackProvider(api_key=SECRET) as provider:
        provider.script(Reply(text="Read from the file."))
        add = cairn(
            "accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat",
            stdin=f"{SECRET}\n", key=None,
        )  # fmt: skip
        assert add.returncode == 0, add.stderr
        assert f"The key is in {secrets_file(cairn_paths)}." in add.stdout
        assert "key saved" in cairn("accounts", "list").stdout
        chat = cairn("chat", "hello", key=None)  # no key in the environment: the file's
        assert chat.returncode == 0, chat.stderr
        assert chat.stdout.strip().endswith("Read from the file.")
        assert provider.requests[0].authorization == f"Bearer {SECRET}"
    home = cairn_paths.data_dir.parent
    assert files_holding(home, SECRET) == ["secrets.json"]  # not the settings, the journal or the log
    assert SECRET not in add.stdout + add.stderr + chat.stdout + chat.stderr

    off = cairn("secrets", "file", "off", "--yes")
    assert off.returncode == 0, off.stderr
    assert "There is no system keychain, so these are kept only until Cairn closes, then forgotten" in off.stdout
    assert "the API key of Loop" in off.stdout
    assert not secrets_file(cairn_paths).exists()
    assert files_holding(home, SECRET) == []
    assert "no key saved" in cairn("accounts", "list").stdout


def test_a_file_others_may_open_is_refused_at_every_command_and_a_chat_says_why(cairn_paths: CairnPaths) -> None:
    assert cairn("secrets", "file", "on", "--yes").returncode == 0
    added = cairn("accounts", "add", "Far", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", stdin=f"{SECRET}\n")
    assert added.returncode == 0, added.stderr
    path = secrets_file(cairn_paths)
    path.chmod(0o644)
    before = path.read_bytes()
    for _ in range(2):
        listed = cairn("accounts", "list")
        assert "can be opened by other users (its mode is 0644), so Cairn did not use it" in listed.stderr
        assert f"chmod 600 {path}" in listed.stderr
    chat = cairn("chat", "hello", key=None)
    assert chat.returncode == 2
    assert "can be opened by other users" in chat.stderr
    assert "Traceback" not in chat.stderr
    assert SECRET not in chat.stdout + chat.stderr
    assert path.read_bytes() == before
    assert json.loads(before)["secrets"]  # still there, untouched, for the person to fix
