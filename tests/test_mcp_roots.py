"""Roots, against the public reference filesystem server (which lets the roots a client offers
replace the folders it was started with): off by default, so Cairn declares no roots and the
server keeps its argument folder; on, the folders listed for it; a changed list told to the
running server, not restarted. And the settings: old entries load, the default folders."""

from __future__ import annotations

import asyncio
from pathlib import Path

from desktop.settings.mcp_roots import roots_change
from desktop.settings.mcp_servers import McpServerSetting, read_entries
from desktop.settings.secrets import SecretStore
from host.mcp import ServerState
from host.mcp.servers import McpServers
from tests.fake_keyring import MemoryKeyring
from tests.public_mcp import filesystem


async def allowed(servers: McpServers, name: str = "files") -> str:
    output = await servers.servers[name].call("list_allowed_directories", {})
    assert not output.is_error, output.text
    return output.text


async def reaches(servers: McpServers, folder: Path, within: float = 10.0) -> str:
    """What the server says it may reach, once ``folder`` is among it (it asks for the roots
    on its own task, after the handshake)."""
    async with asyncio.timeout(within):
        while str(folder.resolve()) not in (text := await allowed(servers)):
            await asyncio.sleep(0.05)
    return text


def folders(tmp_path: Path, *names: str) -> list[Path]:
    made = [tmp_path / name for name in names]
    for folder in made:
        folder.mkdir()
    return made


def test_with_roots_off_the_server_keeps_its_argument_folder_and_hears_of_no_roots(tmp_path: Path) -> None:
    (given,) = folders(tmp_path, "given")

    async def scenario() -> tuple[str, str]:
        servers = McpServers([filesystem(given)])
        try:
            (status,) = await servers.ensure_started()
            assert status.state is ServerState.READY
            text = await allowed(servers)
            await asyncio.sleep(0.3)  # the server's word on roots comes after the handshake
            return text, servers.servers["files"].stderr_tail()
        finally:
            await servers.stop()

    text, stderr = asyncio.run(scenario())
    assert str(given.resolve()) in text
    assert "Client does not support MCP Roots" in stderr


def test_with_roots_on_the_listed_folder_replaces_the_argument_and_a_change_reaches_the_running_server(
    tmp_path: Path,
) -> None:
    given, listed, later = folders(tmp_path, "given", "listed", "later")

    async def scenario() -> tuple[str, str, int | None, int | None]:
        servers = McpServers([filesystem(given, roots=(listed.as_uri(),))])
        try:
            await servers.ensure_started()
            first = await reaches(servers, listed)
            pid = servers.servers["files"].pid
            await servers.reconfigure([filesystem(given, roots=(later.as_uri(),))])
            second = await reaches(servers, later)
            return first, second, pid, servers.servers["files"].pid
        finally:
            await servers.stop()

    first, second, pid_before, pid_after = asyncio.run(scenario())
    assert str(given.resolve()) not in first
    assert str(listed.resolve()) not in second
    assert pid_before == pid_after  # told, not restarted


def test_turning_roots_on_restarts_the_server_to_declare_them(tmp_path: Path) -> None:
    given, listed = folders(tmp_path, "given", "listed")

    async def scenario() -> tuple[str, int | None, int | None]:
        servers = McpServers([filesystem(given)])
        try:
            await servers.ensure_started()
            pid = servers.servers["files"].pid
            await servers.reconfigure([filesystem(given, roots=(listed.as_uri(),))])
            await servers.ensure_started()
            return await reaches(servers, listed), pid, servers.servers["files"].pid
        finally:
            await servers.stop()

    text, pid_before, pid_after = asyncio.run(scenario())
    assert str(given.resolve()) not in text
    assert pid_before != pid_after


def test_an_old_entry_loads_with_roots_off_and_roots_default_to_the_folders_among_its_arguments(
    tmp_path: Path,
) -> None:
    given, elsewhere = folders(tmp_path, "given", "elsewhere")
    old = {"name": "files", "command": "npx", "args": ["-y", "server", str(given), str(tmp_path / "gone")]}
    (entry,) = read_entries([old]).servers
    secrets = SecretStore(MemoryKeyring())
    assert not entry.roots_enabled
    assert entry.config(secrets)[0].roots is None

    on = entry.model_copy(update={"roots_enabled": True})
    assert on.config(secrets)[0].roots == (given.resolve().as_uri(),)  # "-y", "server" and a gone folder are not
    listed = on.model_copy(update={"roots": [str(elsewhere)]})
    assert listed.config(secrets)[0].roots == (elsewhere.as_uri(),)

    again = McpServerSetting.model_validate_json(listed.model_dump_json())
    assert (again.roots_enabled, again.roots) == (True, [str(elsewhere)])


def test_the_question_says_what_the_server_will_reach_and_whether_it_restarts(tmp_path: Path) -> None:
    (given,) = folders(tmp_path, "given")
    entry = {"name": "files", "command": "npx", "args": [str(given)]}
    assert roots_change("files", None, entry) is None  # off before and after: nothing to ask

    on = roots_change("files", None, {**entry, "roots_enabled": True})
    assert on is not None
    assert str(given.resolve()) in on.question()
    assert "in every chat" in on.question()
    assert "restarts" in on.question()

    assert roots_change("files", [str(given.resolve())], {**entry, "roots_enabled": True}) is None
    off = roots_change("files", [str(given.resolve())], entry)
    assert off is not None
    assert "no longer be offered folders" in off.question()
    assert "its own arguments" in off.question()
