"""What Settings' MCP tab asks of the front door (``CairnApp.mcp``), headless: saving a server as typed
(its name checked before any secret is stored), renaming it with its secrets, importing a
plan only if nothing changed since it was shown, enabling, restarting and testing by name."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.app.cairn import CairnApp, open_cairn
from desktop.settings.mcp_import import read_import
from desktop.settings.mcp_servers import McpSettingsError, secret_id
from desktop.settings.secrets import SecretStore
from host.mcp import ServerState
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers import TOOLS_SERVER

LAB = {"name": "lab", "command": sys.executable, "args": [str(TOOLS_SERVER)], "start_timeout": 20}


def run(app: CairnApp, work: Callable[[], Awaitable[Any]]) -> Any:
    async def go() -> Any:
        async with app.running():
            return await work()

    return asyncio.run(go())


@pytest.fixture
def keyring() -> MemoryKeyring:
    return MemoryKeyring()


@pytest.fixture
def app(cairn_paths: CairnPaths, keyring: MemoryKeyring):
    with open_cairn(cairn_paths, secrets=SecretStore(keyring), titles=False) as made:
        yield made


def names(app: CairnApp) -> list[str]:
    return [s.name for s in app.mcp.entries().servers]


def test_a_name_clash_stores_no_secret_and_a_rename_takes_the_secrets_along(
    app: CairnApp, keyring: MemoryKeyring
) -> None:
    async def work() -> None:
        await app.mcp.save({"name": "gh", "command": "gh-mcp"}, {"GITHUB_TOKEN": "ghp_one"}, {})
        await app.mcp.save({"name": "other", "command": "x"}, {"GITHUB_TOKEN": "ghp_two"}, {})
        with pytest.raises(McpSettingsError, match="An MCP server named 'gh' already exists"):
            await app.mcp.save({"name": "gh", "command": "x"}, {"GITHUB_TOKEN": "ghp_two"}, {}, replacing="other")
        assert keyring.entries[("Cairn", secret_id("gh", "env", "GITHUB_TOKEN"))] == "ghp_one"  # not overwritten
        renamed = await app.mcp.save(
            {"name": "github", "command": "gh-mcp"}, {"GITHUB_TOKEN": None}, {}, replacing="gh"
        )
        assert renamed.secret_env == ["GITHUB_TOKEN"]

    run(app, work)
    assert names(app) == ["github", "other"]
    assert keyring.entries[("Cairn", secret_id("github", "env", "GITHUB_TOKEN"))] == "ghp_one"
    assert ("Cairn", secret_id("gh", "env", "GITHUB_TOKEN")) not in keyring.entries


def test_an_import_saves_each_server_whose_name_was_not_taken_since_it_was_shown(
    app: CairnApp, keyring: MemoryKeyring, tmp_path: Path
) -> None:
    source = tmp_path / "claude_desktop_config.json"
    entries = {
        "lab": {"command": "uvx", "args": ["lab"]},
        "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_x"}},
    }
    source.write_text(json.dumps({"mcpServers": entries}))
    shown = read_import(source, names(app))

    async def work() -> None:
        await app.mcp.save({**LAB, "enabled": False}, {}, {})  # meanwhile
        result = await app.mcp.import_servers(shown)
        assert [s.name for s in result.saved] == ["gh"]
        (refused,) = result.not_saved
        assert "'lab' was added since this import was shown; import again" in refused.reason
        assert not refused.no_place

    run(app, work)
    assert names(app) == ["lab", "gh"]
    assert app.mcp.entries().get("lab").command == LAB["command"]  # type: ignore[union-attr]  # kept, not the import's
    assert keyring.entries[("Cairn", secret_id("gh", "env", "GITHUB_TOKEN"))] == "ghp_x"


def test_enable_restart_and_test_a_server_by_name(app: CairnApp) -> None:
    async def work() -> None:
        with pytest.raises(McpSettingsError, match="No MCP server is named 'nope'"):
            await app.mcp.set_enabled("nope", True)
        await app.mcp.save({**LAB, "enabled": False}, {}, {})
        with pytest.raises(McpSettingsError, match="'lab' is not running because it is disabled"):
            await app.mcp.restart("lab")
        status, tools = await app.mcp.test("lab")  # a disabled server can still be tried
        assert (status.state, status.tool_count, len(tools)) == (ServerState.READY, 12, 12)
        enabled = await app.mcp.set_enabled("LAB", True)
        assert enabled.enabled
        view = await app.mcp.restart("lab")
        assert view.status is not None
        assert view.status.describe() == "lab: ready, 12 tools"

    run(app, work)
    assert app.mcp.entries().servers[0].enabled
