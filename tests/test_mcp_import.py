"""Importing Claude Desktop's MCP servers: the plan shown before saving, names made valid and
unique, secrets to the keychain, each server saved that can be, and files that are broken or
hostile."""

from __future__ import annotations

import json
from pathlib import Path

import keyring.errors
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.settings.mcp_import import ConfigImportError, apply_import, claude_config_path, read_import
from desktop.settings.mcp_servers import secret_id
from desktop.settings.secrets import SecretStore
from host.mcp.config import SERVER_NAME_PATTERN
from tests.fake_keyring import MemoryKeyring

CLAUDE = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
        "github": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnop1234", "GITHUB_HOST": "github.com"},
        },
        "brave.search": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-brave-search"],
            "env": {"BRAVE_API_KEY": "BSA-not-a-real-key"},
        },
        "remote": {
            "type": "http",
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer xyz123456"},
        },
        "old": {"type": "sse", "url": "https://mcp.example.com/sse"},
        "broken": {"args": ["no", "command"]},
        "typed": {"command": "x", "args": "not a list"},
        "off": {"command": "uvx", "args": ["mcp-server-time"], "disabled": True},
    },
    "globalShortcut": "",
}


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_the_plan_shows_what_would_be_kept_and_why_entries_are_left_out(tmp_path: Path) -> None:
    plan = read_import(write(tmp_path, CLAUDE), existing=["filesystem"])
    names = [s.name for s in plan.servers]
    assert names == ["github", "brave-search", "remote", "off"]
    text = "\n".join(plan.lines())
    assert "ghp_abcdefghijklmnop1234" not in text
    assert "Bearer" not in text
    assert "secrets: GITHUB_PERSONAL_ACCESS_TOKEN" in text
    assert "env GITHUB_HOST" in text
    assert "brave-search (was 'brave.search')" in text
    assert "off: uvx mcp-server-time [disabled]" in text
    assert "'filesystem': a server of that name is already set up in Cairn" in text
    assert "'old': it uses the older SSE transport" in text
    assert "'broken': it has no command" in text
    assert "'typed': its args are not a list of strings" in text


def test_applying_the_plan_keeps_secrets_in_the_keychain(tmp_path: Path) -> None:
    keyring = MemoryKeyring()
    servers, refused = apply_import(read_import(write(tmp_path, CLAUDE)), SecretStore(keyring))
    assert refused == []
    by_name = {s.name: s for s in servers}
    github = by_name["github"]
    assert github.env == {"GITHUB_HOST": "github.com"}
    assert github.secret_env == ["GITHUB_PERSONAL_ACCESS_TOKEN"]
    assert keyring.entries[("Cairn", secret_id("github", "env", "GITHUB_PERSONAL_ACCESS_TOKEN"))].startswith("ghp_")
    assert by_name["remote"].secret_headers == ["Authorization"]
    assert by_name["remote"].transport == "http"
    assert not by_name["off"].enabled
    assert "ghp_" not in json.dumps([s.model_dump() for s in servers])


class OneSecretKeyring(MemoryKeyring):
    """A keychain that takes one secret, then refuses (it filled up, or got locked)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        if self.entries:
            raise keyring.errors.PasswordSetError("the collection is locked")
        super().set_password(service, username, password)


def test_an_import_saves_each_server_it_can_and_a_refused_one_leaves_no_secret_behind(tmp_path: Path) -> None:
    store = OneSecretKeyring()
    both = {"command": "two", "env": {"A_TOKEN": "tok-aaaaaaaaaaaa", "B_TOKEN": "tok-bbbbbbbbbbbb"}}
    plan = read_import(write(tmp_path, {"mcpServers": {"plain": {"command": "p"}, "two": both}}))
    servers, refused = apply_import(plan, SecretStore(store))
    assert [s.name for s in servers] == ["plain"]
    assert [(r.name, r.no_place) for r in refused] == [("two", True)]
    assert "B_TOKEN of the MCP server 'two' looks like a secret, and the system keychain refused" in refused[0].reason
    assert store.entries == {}  # A_TOKEN went in, and out again when B_TOKEN was refused


def test_a_name_taken_since_the_plan_costs_only_that_server(tmp_path: Path) -> None:
    plan = read_import(write(tmp_path, {"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}))
    servers, refused = apply_import(plan, SecretStore(MemoryKeyring()), existing=["B"])
    assert [s.name for s in servers] == ["a"]
    assert [r.name for r in refused] == ["b"]
    assert "An MCP server named 'b' was added since this import was shown" in refused[0].reason


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"mcpServers": [1]}', "is not an object of servers"),
        ('{"other": 1}', 'has no "mcpServers" block'),
        ("\udcff", "is not valid JSON"),
        ("[" * 100_000, "is not valid JSON"),
    ],
)
def test_a_file_that_cannot_be_imported_says_why(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(ConfigImportError, match=message):
        read_import(path)


def test_a_huge_or_missing_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    huge.write_bytes(b'{"mcpServers": {}, "pad": "' + b"x" * (2 * 1024 * 1024) + b'"}')
    with pytest.raises(ConfigImportError, match="larger than 1 MB"):
        read_import(huge)
    with pytest.raises(ConfigImportError, match="does not exist"):
        read_import(tmp_path / "missing.json")


def test_a_file_with_more_servers_than_anyone_runs_is_refused_whole(tmp_path: Path) -> None:
    many = tmp_path / "many.json"
    servers = {f"srv{n}": {"command": "python", "env": {"API_KEY": f"sk-{n:040d}"}} for n in range(101)}
    many.write_text(json.dumps({"mcpServers": servers}))
    with pytest.raises(ConfigImportError, match="lists 101 MCP servers; Cairn imports at most 100 at a time"):
        read_import(many)
    del servers["srv100"]
    many.write_text(json.dumps({"mcpServers": servers}))
    assert len(read_import(many).servers) == 100


def test_claude_desktops_own_file_is_looked_for_where_it_lives(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert claude_config_path() == tmp_path / "Claude" / "claude_desktop_config.json"
    with pytest.raises(ConfigImportError, match="Claude Desktop's configuration was not found at"):
        read_import(None)
    claude_config_path().parent.mkdir()
    write(claude_config_path().parent, CLAUDE)
    assert len(read_import(None).servers) == 5


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.text(min_size=0, max_size=80), min_size=1, max_size=12))
def test_any_names_become_valid_unique_server_names(tmp_path: Path, names: list[str]) -> None:
    block = {name: {"command": "run"} for name in names}
    path = tmp_path / "names.json"
    path.write_text(json.dumps({"mcpServers": block}), encoding="utf-8")
    plan = read_import(path, existing=["server"])
    kept = [s.name for s in plan.servers]
    assert len(kept) + len(plan.skipped) == len(block)
    assert len({n.casefold() for n in kept}) == len(kept)
    import re

    assert all(re.fullmatch(SERVER_NAME_PATTERN, n) and len(n) <= 32 for n in kept)
    assert all(ord(c) >= 32 for line in plan.lines() for c in line)
