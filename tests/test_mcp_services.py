"""What Settings' MCP tab asks of the composition root, headless: saving a server as typed
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

from desktop.root import Services
from desktop.settings.mcp_import import read_import
from desktop.settings.mcp_servers import McpSettingsError, secret_id
from desktop.settings.secrets import SecretStore
from host.mcp import ServerState
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers import TOOLS_SERVER

LAB = {"name": "lab", "command": sys.executable, "args": [str(TOOLS_SERVER)], "start_timeout": 20}


def run(services: Services, work: Callable[[], Awaitable[Any]]) -> Any:
    async def go() -> Any:
        async with services.running():
            return await work()

    return asyncio.run(go())


@pytest.fixture
def keyring() -> MemoryKeyring:
    return MemoryKeyring()


@pytest.fixture
def services(cairn_paths: CairnPaths, keyring: MemoryKeyring):
    with Services(cairn_paths, secrets=SecretStore(keyring)) as made:
        yield made


def names(services: Services) -> list[str]:
    return [s.name for s in services.load_settings().servers().servers]


def test_a_name_clash_stores_no_secret_and_a_rename_takes_the_secrets_along(
    services: Services, keyring: MemoryKeyring
) -> None:
    async def work() -> None:
        await services.save_server_fields(
            {"name": "gh", "command": "gh-mcp"}, env={"GITHUB_TOKEN": "ghp_one"}, headers={}
        )
        await services.save_server_fields(
            {"name": "other", "command": "x"}, env={"GITHUB_TOKEN": "ghp_two"}, headers={}
        )
        with pytest.raises(McpSettingsError, match="An MCP server named 'gh' already exists"):
            await services.save_server_fields(
                {"name": "gh", "command": "x"}, env={"GITHUB_TOKEN": "ghp_two"}, headers={}, replacing="other"
            )
        assert keyring.entries[("Cairn", secret_id("gh", "env", "GITHUB_TOKEN"))] == "ghp_one"  # not overwritten
        renamed = await services.save_server_fields(
            {"name": "github", "command": "gh-mcp"}, env={"GITHUB_TOKEN": None}, headers={}, replacing="gh"
        )
        assert renamed.secret_env == ["GITHUB_TOKEN"]

    run(services, work)
    assert names(services) == ["github", "other"]
    assert keyring.entries[("Cairn", secret_id("github", "env", "GITHUB_TOKEN"))] == "ghp_one"
    assert ("Cairn", secret_id("gh", "env", "GITHUB_TOKEN")) not in keyring.entries


def test_an_import_is_saved_only_if_no_name_was_taken_since_it_was_shown(
    services: Services, keyring: MemoryKeyring, tmp_path: Path
) -> None:
    source = tmp_path / "claude_desktop_config.json"
    entries = {
        "lab": {"command": "uvx", "args": ["lab"]},
        "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_x"}},
    }
    source.write_text(json.dumps({"mcpServers": entries}))
    shown = read_import(source, names(services))

    async def work() -> None:
        await services.save_server_fields({**LAB, "enabled": False}, env={}, headers={})  # meanwhile
        with pytest.raises(McpSettingsError, match="'lab' was added since this import was shown; import again"):
            await services.import_servers(shown)
        assert names(services) == ["lab"]
        assert keyring.entries == {}
        await services.import_servers(read_import(source, names(services)))

    run(services, work)
    assert names(services) == ["lab", "gh"]
    assert keyring.entries[("Cairn", secret_id("gh", "env", "GITHUB_TOKEN"))] == "ghp_x"


def test_enable_restart_and_test_a_server_by_name(services: Services) -> None:
    async def work() -> None:
        with pytest.raises(McpSettingsError, match="No MCP server is named 'nope'"):
            await services.set_server_enabled("nope", True)
        await services.save_server_fields({**LAB, "enabled": False}, env={}, headers={})
        with pytest.raises(McpSettingsError, match="'lab' is not running because it is disabled"):
            await services.restart_server("lab")
        status, tools = await services.test_server("lab")  # a disabled server can still be tried
        assert (status.state, status.tool_count, len(tools)) == (ServerState.READY, 12, 12)
        enabled = await services.set_server_enabled("LAB", True)
        assert enabled.enabled
        view = await services.restart_server("lab")
        assert view.status is not None
        assert view.status.describe() == "lab: ready, 12 tools"

    run(services, work)
    assert services.load_settings().servers().servers[0].enabled
