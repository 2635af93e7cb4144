"""Signing in to a remote MCP server: the SDK's ``OAuthClientProvider`` (discovery, dynamic
registration, PKCE, refresh) over Cairn's secret store, its browser and its redirect catcher.

Two kinds of sign-in are built. ``quiet`` is what a server runs with: it uses and refreshes
the kept tokens, and where the person would have to be asked (no tokens, or the server
refused them and refreshing failed) it raises ``SignInNeeded`` instead, so the server's
status says "sign in again" and no browser opens unasked. ``asking`` is what the person's
"Sign in" builds: it forgets the kept tokens, and the first time the SDK needs the person it
opens their browser (``open_url``, the window's) and waits for the redirect on loopback; a
later refusal in the same run is quiet again.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from desktop.settings.redaction import Redactor
from desktop.settings.secrets import SecretStore
from desktop.settings.sign_in_tokens import SignInTokens
from desktop.tools.redirect_catcher import RedirectCatcher
from host.mcp import McpServerConfig, ServerStatus
from host.mcp.failures import SignInNeeded

__all__ = ["SignIns", "sign_in_alone"]

_PUBLIC_CLIENT = "none"  # no client secret: Cairn is a public (native) client, PKCE instead
_UNUSED_REDIRECT = "http://127.0.0.1/callback"  # a quiet sign-in never sends the browser anywhere


class _Storage:
    """The ``TokenStorage`` the SDK is given: the kept tokens, and the client the person
    entered (for a server without registration) or the one Cairn registered. A quiet
    sign-in never registers: registering is the start of asking the person."""

    def __init__(self, kept: SignInTokens, config: McpServerConfig, redirect_uri: str, *, quiet: bool) -> None:
        self.kept, self._quiet, self._redirect = kept, quiet, redirect_uri
        self._name = config.name
        self._client_id = config.oauth.client_id if config.oauth is not None else None

    async def get_tokens(self) -> OAuthToken | None:
        tokens = await self.kept.get_tokens()
        if tokens is None and self._quiet:  # never signed in, or signed out: before any request
            raise SignInNeeded(f"sign in again to {self._name}")
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self.kept.set_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._client_id:
            return OAuthClientInformationFull(
                client_id=self._client_id, redirect_uris=[self._redirect],
                token_endpoint_auth_method=_PUBLIC_CLIENT, grant_types=["authorization_code", "refresh_token"],
            )  # fmt: skip
        return await self.kept.get_client_info()

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self._quiet:
            raise SignInNeeded(f"sign in again to {self._name}")
        if not self._client_id:
            await self.kept.set_client_info(client_info)


class _Provider(OAuthClientProvider):
    """The SDK's provider, told when kept tokens expire: it knows that only for tokens it got
    in this run, and would send an expired one (and be refused) instead of refreshing it."""

    def __init__(self, storage: _Storage, **kwargs: object) -> None:
        super().__init__(storage=storage, **kwargs)  # type: ignore[arg-type]
        self._kept = storage.kept

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.context.current_tokens is not None:
            self.context.token_expiry_time = self._kept.expires_at()


class SignIns:
    """Builds each server's sign-in over the one secret store; every token it sees goes to
    the redactor first."""

    def __init__(self, secrets: SecretStore, redactor: Redactor) -> None:
        self._secrets, self._redactor = secrets, redactor

    def tokens(self, server: str) -> SignInTokens:
        return SignInTokens(self._secrets, server, redact_add=self._redactor.add)

    def quiet(self, config: McpServerConfig) -> httpx2.Auth:
        """The sign-in a server runs with: kept tokens, refreshed; never asks the person."""

        async def refuse(_url: str) -> None:
            raise SignInNeeded(f"sign in again to {config.name}")

        async def nothing() -> AuthorizationCodeResult:
            raise SignInNeeded(f"sign in again to {config.name}")

        storage = _Storage(self.tokens(config.name), config, _UNUSED_REDIRECT, quiet=True)
        return self._provider(config, storage, refuse, nothing)

    async def asking(
        self, config: McpServerConfig, open_url: Callable[[str], None]
    ) -> tuple[httpx2.Auth, RedirectCatcher]:
        """A sign-in that asks the person once, and its catcher (open; the caller closes it
        when the server has started). The kept tokens are forgotten first: "Sign in" means
        sign in now, perhaps as someone else."""
        kept = self.tokens(config.name)
        kept.forget()
        catcher = RedirectCatcher(port=await self._port(kept, config))
        await catcher.open()
        if not config.oauth or not config.oauth.client_id:
            registered = await kept.get_client_info()
            if registered is not None and catcher.redirect_uri not in {str(u) for u in registered.redirect_uris or ()}:
                kept.forget_client()  # registered for another port: register again
        asked = False

        async def redirect(url: str) -> None:
            nonlocal asked
            if asked:  # signed in already in this run: a later refusal is quiet
                raise SignInNeeded(f"sign in again to {config.name}")
            asked = True
            catcher.expect(url)
            open_url(url)

        storage = _Storage(kept, config, catcher.redirect_uri, quiet=False)
        return self._provider(config, storage, redirect, catcher.result), catcher

    async def _port(self, kept: SignInTokens, config: McpServerConfig) -> int:
        """The loopback port to catch the redirect on: the one Cairn registered before (a
        registered client's redirect address is fixed), or the one the person registered
        their client id with, else any free one."""
        if config.oauth is not None and config.oauth.redirect_port is not None:
            return config.oauth.redirect_port
        registered = await kept.get_client_info()
        for uri in registered.redirect_uris or () if registered is not None else ():
            port = urlsplit(str(uri)).port
            if urlsplit(str(uri)).hostname == "127.0.0.1" and port is not None and _free(port):
                return port
        return 0

    def _provider(
        self,
        config: McpServerConfig,
        storage: _Storage,
        redirect: Callable[[str], object],
        callback: Callable[[], object],
    ) -> httpx2.Auth:
        assert config.url is not None
        scopes = " ".join(config.oauth.scopes) if config.oauth is not None and config.oauth.scopes else None
        metadata = OAuthClientMetadata(
            client_name="Cairn", redirect_uris=[storage._redirect],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method=_PUBLIC_CLIENT, scope=scopes,
        )  # fmt: skip
        return _Provider(
            storage,
            server_url=config.url,
            client_metadata=metadata,
            redirect_handler=redirect,
            callback_handler=callback,
        )


async def sign_in_alone(
    sign_ins: SignIns, config: McpServerConfig, open_url: Callable[[str], None], redact: Callable[[str], str]
) -> ServerStatus:
    """Sign in to a server Cairn does not run now (the command line): start it on its own with
    a sign-in that asks the person, then stop it; the tokens stay in the secret store. Its
    status once it was ready or failed."""
    from host.mcp.server import McpServer  # the SDK's client: only when signing in

    auth, catcher = await sign_ins.asking(config, open_url)
    # The person is in their browser: the start may take as long as the catcher waits.
    patient = config.model_copy(update={"start_timeout": max(config.start_timeout, catcher.timeout)})
    server = McpServer(patient, redact=redact, auth=auth)
    try:
        return await server.start()
    finally:
        await server.stop()
        catcher.close()


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
