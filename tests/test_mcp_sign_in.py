"""Signing in to a remote MCP server, end to end against an authorisation + resource server on
loopback built with the SDK's server auth. The test plays the person's browser: it follows
the authorisation URL (the server approves at once) to Cairn's loopback redirect catcher."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator

import httpx
import pytest

from desktop.settings.redaction import Redactor
from desktop.settings.secrets import SERVICE, SecretStore
from desktop.tools.mcp_sign_in import SignIns
from desktop.tools.redirect_catcher import RedirectCatcher
from host.mcp import McpServerConfig, ServerState
from host.mcp.config import McpOAuth
from host.mcp.servers import McpServers
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers.oauth_server import SignInServer


class Browser:
    """The person's browser (the seam): follows each URL it is sent in a thread of its own."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.pages: list[str] = []

    def __call__(self, url: str) -> None:
        self.opened.append(url)
        threading.Thread(target=self._visit, args=(url,), daemon=True).start()

    def _visit(self, url: str) -> None:
        self.pages.append(httpx.get(url, follow_redirects=True, timeout=10).text)


@pytest.fixture
def remote() -> Iterator[SignInServer]:
    with SignInServer() as server:
        yield server


def _setup(url: str, oauth: McpOAuth | None = None) -> tuple[McpServerConfig, SignIns, MemoryKeyring, Redactor]:
    config = McpServerConfig(name="tracker", transport="http", url=url, oauth=oauth or McpOAuth(), call_timeout=10)
    backend, redactor = MemoryKeyring(), Redactor()
    return config, SignIns(SecretStore(backend), redactor), backend, redactor


async def _sign_in(servers: McpServers, sign_ins: SignIns, config: McpServerConfig, browser: Browser) -> ServerState:
    auth, catcher = await sign_ins.asking(config, browser)
    try:
        return (await servers.sign_in(config.name, auth)).state
    finally:
        catcher.close()


def test_discovery_registration_pkce_sign_in_and_a_call(remote: SignInServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    config, sign_ins, backend, redactor = _setup(remote.url)
    browser = Browser()

    async def scenario() -> None:
        servers = McpServers([config], redact=redactor.redact, auth=sign_ins.quiet)
        first = (await servers.ensure_started())[0]  # no tokens yet: no browser, words instead
        assert first.state is ServerState.SIGN_IN
        assert "sign in again to tracker" in first.describe()
        assert browser.opened == []
        assert remote.approver.clients == {}
        assert await _sign_in(servers, sign_ins, config, browser) is ServerState.READY
        assert "code_challenge_method=S256" in browser.opened[0]
        assert "You are signed in" in browser.pages[0]
        assert len(remote.approver.clients) == 1  # registered dynamically
        assert (await servers.servers["tracker"].call("whoami", {})).text == "signed in as tester"
        await servers.stop()
        # A restart signs in quietly with the kept tokens.
        again = McpServers([config], redact=redactor.redact, auth=sign_ins.quiet)
        assert (await again.ensure_started())[0].state is ServerState.READY
        await again.stop()

    asyncio.run(scenario())
    kept = "".join(value for (service, _), value in backend.entries.items() if service == SERVICE)
    (access,) = remote.approver.access
    assert access in kept  # the tokens are in the keychain ...
    assert access not in caplog.text
    assert access not in redactor.redact(f"x {access} x")


def test_a_server_without_registration_takes_the_entered_client_id(remote: SignInServer) -> None:
    with SignInServer(registration=False) as closed:
        port = _free_port()
        closed.add_client("entered-id", f"http://127.0.0.1:{port}/callback")
        config, sign_ins, _, redactor = _setup(closed.url, McpOAuth(client_id="entered-id", redirect_port=port))

        async def scenario() -> None:
            servers = McpServers([config], redact=redactor.redact, auth=sign_ins.quiet)
            assert await _sign_in(servers, sign_ins, config, Browser()) is ServerState.READY
            assert (await servers.servers["tracker"].call("whoami", {})).text == "signed in as tester"
            await servers.stop()

        asyncio.run(scenario())
        assert list(closed.approver.clients) == ["entered-id"]


def test_an_expired_access_token_is_refreshed_even_after_a_restart(remote: SignInServer) -> None:
    remote.approver.lifetime = 3  # long enough that a start on a busy machine finishes inside it
    config, sign_ins, _, redactor = _setup(remote.url)

    async def scenario() -> None:
        servers = McpServers([config], redact=redactor.redact, auth=sign_ins.quiet)
        assert await _sign_in(servers, sign_ins, config, Browser()) is ServerState.READY
        await asyncio.sleep(3.5)
        assert (await servers.servers["tracker"].call("whoami", {})).text == "signed in as tester"
        assert remote.approver.refreshed >= 1
        await servers.stop()
        await asyncio.sleep(3.5)
        before = remote.approver.refreshed
        again = McpServers([config], redact=redactor.redact, auth=sign_ins.quiet)
        assert (await again.ensure_started())[0].state is ServerState.READY
        assert remote.approver.refreshed > before
        await again.stop()

    asyncio.run(scenario())


def test_a_revoked_refresh_token_means_sign_in_again_in_words(remote: SignInServer) -> None:
    config, sign_ins, _, redactor = _setup(remote.url)
    browser = Browser()

    async def scenario() -> None:
        servers = McpServers([config], redact=redactor.redact, auth=sign_ins.quiet)
        assert await _sign_in(servers, sign_ins, config, browser) is ServerState.READY
        remote.approver.revoke_all()
        out = await servers.servers["tracker"].call("whoami", {})
        assert out.is_error
        assert out.text.startswith("Sign in again to tracker")
        assert "Traceback" not in out.text
        assert servers.servers["tracker"].status.state is ServerState.SIGN_IN
        assert len(browser.opened) == 1  # no browser opened unasked
        await servers.stop()
        restarted = McpServers([config], redact=redactor.redact, auth=sign_ins.quiet)
        assert (await restarted.ensure_started())[0].state is ServerState.SIGN_IN
        await restarted.stop()

    asyncio.run(scenario())


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_redirect_catcher_takes_only_the_state_it_was_sent_with() -> None:
    async def scenario() -> None:
        catcher = RedirectCatcher(timeout=5)
        await catcher.open()
        catcher.expect("http://issuer/authorize?state=right&code_challenge=x")
        async with httpx.AsyncClient() as browser:
            wrong = await browser.get(catcher.redirect_uri, params={"code": "evil", "state": "wrong"})
            probe = await browser.get(catcher.redirect_uri.replace("/callback", "/"))
            right = await browser.get(catcher.redirect_uri, params={"code": "good", "state": "right"})
        assert (wrong.status_code, probe.status_code, right.status_code) == (400, 400, 200)
        caught = await catcher.result()
        assert (caught.code, caught.state) == ("good", "right")

    asyncio.run(scenario())
