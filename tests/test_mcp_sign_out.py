"""Signing in and out of a remote MCP server, beyond the window's Sign in: `cairn mcp sign-in`
and `sign-out`, the front door's sign_out (a running server stops using the tokens at once),
the tokens forgotten with the server, and a server that does not let Cairn register itself
said in words. Against the loopback authorisation server; the browser is played by httpx at
the seam (``webbrowser.open`` for the command, ``open_url`` for the front door)."""

from __future__ import annotations

import argparse
import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest

from desktop.app import CairnApp
from desktop.app.cairn import open_cairn
from desktop.cli import add_commands, run_command
from desktop.settings.redaction import Redactor
from desktop.settings.secrets import SERVICE, SecretStore
from desktop.tools.mcp_sign_in import SignIns
from host.mcp import McpServerConfig, ServerState
from host.mcp.config import McpOAuth
from host.mcp.failures import NO_REGISTRATION, SIGN_IN_AGAIN
from host.mcp.servers import McpServers
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers.oauth_server import SignInServer


def browse(url: str) -> bool:  # the person's browser, at the seam
    threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=10), daemon=True).start()
    return True


def kept_ids(keyring: MemoryKeyring, server: str = "tracker") -> set[str]:
    """The ids of the server's sign-in secrets in the keychain."""
    return {key for (service, key) in keyring.entries if service == SERVICE and key.startswith(f"mcp:{server}:oauth")}


@pytest.fixture
def remote() -> Iterator[SignInServer]:
    with SignInServer() as server:
        yield server


def entry(url: str) -> dict[str, object]:
    return {"name": "tracker", "transport": "http", "url": url, "oauth": {"scopes": ["tools"]}, "call_timeout": 10}


def command(paths: CairnPaths, keyring: MemoryKeyring, *args: str) -> int:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    return run_command(parser.parse_args(["mcp", *args]), paths, SecretStore(keyring))


def saved(paths: CairnPaths, keyring: MemoryKeyring, fields: dict[str, object]) -> None:
    with open_cairn(paths, secrets=SecretStore(keyring), titles=False, open_journal=False) as app:
        asyncio.run(app.mcp.save(fields, {}, {}))


def test_cairn_mcp_sign_in_prints_the_address_opens_the_browser_and_sign_out_forgets_the_tokens(
    cairn_paths: CairnPaths, remote: SignInServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    keyring = MemoryKeyring()
    saved(cairn_paths, keyring, entry(remote.url))
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or browse(url))

    assert command(cairn_paths, keyring, "sign-in", "tracker") == 0
    out = capsys.readouterr().out
    assert "Open this address to sign in to tracker:" in out
    assert len(opened) == 1
    assert opened[0] in out  # printed as well as opened: a terminal without a browser can copy it
    assert "tracker: ready, 1 tool" in out
    assert kept_ids(keyring) == {"mcp:tracker:oauth:tokens", "mcp:tracker:oauth:client"}

    assert command(cairn_paths, keyring, "sign-out", "tracker") == 0
    assert capsys.readouterr().out.strip() == "tracker: signed out."
    assert kept_ids(keyring) == {"mcp:tracker:oauth:client"}  # the registration stays for the next sign-in
    assert command(cairn_paths, keyring, "sign-out", "tracker") == 0
    assert capsys.readouterr().out.strip() == "tracker: was not signed in."


def test_signing_out_stops_a_running_server_using_the_tokens_and_removing_it_forgets_them(
    cairn_paths: CairnPaths, remote: SignInServer
) -> None:
    keyring = MemoryKeyring()
    with open_cairn(cairn_paths, secrets=SecretStore(keyring), titles=False) as app:

        async def whoami(app: CairnApp) -> str:
            await app.root.mcp.prepare()
            (tool,) = [t for t in app.root.mcp.tools() if t.name == "tracker__whoami"] or [None]
            return "no tool" if tool is None else (await tool.run({})).text

        async def work() -> tuple[str, str, ServerState | None, bool]:
            async with app.running():
                await app.mcp.save(entry(remote.url), {}, {})
                await app.mcp.sign_in("tracker", browse)
                before = await whoami(app)
                assert await app.mcp.sign_out("tracker")
                view = app.mcp.views()[0]
                after = await whoami(app)
                await app.mcp.sign_in("tracker", browse)
                await app.mcp.remove("tracker")
                return before, after, view.status.state if view.status else None, app.mcp.signed_in("tracker")

        before, after, state, still = asyncio.run(work())
    assert before == "signed in as tester"
    assert state is ServerState.SIGN_IN
    # Its tools stay in the catalog (servers coming and going never change it); a call says why not.
    assert after == SIGN_IN_AGAIN.format(name="tracker")
    assert not still
    assert kept_ids(keyring) == set()  # tokens and registration, forgotten with the server


def test_a_server_that_refuses_registration_says_to_enter_a_client_id(cairn_paths: CairnPaths) -> None:
    keyring = MemoryKeyring()
    with (
        SignInServer(registration=False) as closed,
        open_cairn(cairn_paths, secrets=SecretStore(keyring), titles=False) as app,
    ):

        async def work() -> str:
            async with app.running():
                await app.mcp.save(entry(closed.url), {}, {})
                view = await app.mcp.sign_in("tracker", browse)
                return view.describe()

        words = asyncio.run(work())
    assert words.startswith(f"tracker: failed: {NO_REGISTRATION}")
    assert "404" not in words


def test_a_sign_in_is_forgotten_when_its_server_moves_to_another_address_or_name(
    cairn_paths: CairnPaths, remote: SignInServer
) -> None:
    keyring = MemoryKeyring()
    with open_cairn(cairn_paths, secrets=SecretStore(keyring), titles=False) as app:

        async def work() -> tuple[set[str], set[str], set[str], set[str]]:
            async with app.running():
                await app.mcp.save(entry(remote.url), {}, {})
                await app.mcp.sign_in("tracker", browse)
                signed = kept_ids(keyring)
                await app.mcp.save({**entry(remote.url), "description": "issues"}, {}, {}, "tracker")
                unchanged = kept_ids(keyring)
                await app.mcp.save({**entry("http://127.0.0.1:9/mcp")}, {}, {}, "tracker")
                moved = kept_ids(keyring)
                await app.mcp.save(entry(remote.url), {}, {}, "tracker")
                await app.mcp.sign_in("tracker", browse)
                await app.mcp.save({**entry(remote.url), "name": "issues"}, {}, {}, "tracker")
                return signed, unchanged, moved, kept_ids(keyring) | kept_ids(keyring, "issues")

        signed, unchanged, moved, renamed = asyncio.run(work())
    assert signed == unchanged == {"mcp:tracker:oauth:tokens", "mcp:tracker:oauth:client"}
    assert moved == set()  # never sent to another address
    assert renamed == set()  # signing in again under the new name is asked, not assumed


def test_a_person_slower_than_the_start_time_limit_still_signs_in(remote: SignInServer) -> None:
    config = McpServerConfig(name="tracker", transport="http", url=remote.url, oauth=McpOAuth(), start_timeout=1)
    sign_ins = SignIns(SecretStore(MemoryKeyring()), Redactor())

    def slow_person(url: str) -> None:
        threading.Timer(2.0, browse, args=(url,)).start()  # reads the page before pressing Allow

    async def scenario() -> tuple[ServerState, McpServerConfig]:
        servers = McpServers([config], auth=sign_ins.quiet)
        auth, catcher = await sign_ins.asking(config, slow_person)
        try:
            state = (await servers.sign_in("tracker", auth, patience=catcher.timeout)).state
            return state, servers.servers["tracker"].config
        finally:
            catcher.close()
            await servers.stop()

    state, kept = asyncio.run(scenario())
    assert state is ServerState.READY
    assert kept == config  # the patience was for the sign-in only
