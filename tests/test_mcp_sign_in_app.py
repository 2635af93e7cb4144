"""Signing in through the front door (``CairnApp.mcp.sign_in``): the entry's ``oauth`` block
reaches the server, the tokens land in the keychain and never in the settings or the log."""

from __future__ import annotations

import asyncio
import logging
import threading

import httpx
import pytest

from desktop.app.cairn import open_cairn
from desktop.settings.secrets import SERVICE, SecretStore
from host.mcp import ServerState
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers.oauth_server import SignInServer


def _browse(url: str) -> None:  # the person's browser, at the seam
    threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=10), daemon=True).start()


def test_sign_in_from_the_front_door(cairn_paths: CairnPaths, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    keyring = MemoryKeyring()
    with SignInServer() as remote, open_cairn(cairn_paths, secrets=SecretStore(keyring), titles=False) as app:

        async def work() -> tuple[ServerState, ServerState, str]:
            async with app.running():
                entry = {"name": "tracker", "transport": "http", "url": remote.url, "oauth": {"scopes": ["tools"]}}
                await app.mcp.save(entry, {}, {})
                await app.mcp.restart("tracker")
                before = app.mcp.views()[0].status
                assert before is not None
                view = await app.mcp.sign_in("tracker", _browse)
                assert view.status is not None
                assert app.mcp.signed_in("tracker")
                return before.state, view.status.state, before.describe()

        before, after, words = asyncio.run(work())
        assert (before, after) == (ServerState.SIGN_IN, ServerState.READY)
        assert words == "tracker: sign in again to tracker"
        (access,) = remote.approver.access
        (refresh,) = remote.approver.refresh
    kept = " ".join(v for (service, _), v in keyring.entries.items() if service == SERVICE)
    assert access in kept
    assert refresh in kept
    settings_text = "".join(p.read_text() for p in cairn_paths.config_dir.rglob("*") if p.is_file())
    assert access not in settings_text
    assert refresh not in settings_text
    assert '"scopes"' in settings_text
    assert access not in caplog.text
    assert refresh not in caplog.text
