"""A remote MCP server that needs sign-in, on loopback: the SDK's authorisation server routes
over an in-memory provider that approves every request at once (the person's "Allow"), and
an ``MCPServer`` that checks each bearer token. Runs as a real uvicorn server in a thread."""

from __future__ import annotations

import asyncio
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


@dataclass
class Approver:
    """Every client, code and token the server knows; tests reach in to expire or revoke."""

    lifetime: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    refreshed: int = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["tools"], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource,
        )  # fmt: skip
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(authorization_code.client_id, authorization_code.scopes)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.refreshed += 1
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def expire_access(self) -> None:
        self.access.clear()

    def revoke_all(self) -> None:
        self.access.clear()
        self.refresh.clear()

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.lifetime
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes, expires_at=expires)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(access_token=access, refresh_token=refresh, expires_in=self.lifetime, scope=" ".join(scopes))


class SignInServer:
    """The server in a thread: ``url`` is its MCP endpoint, ``approver`` its state."""

    def __init__(self, *, registration: bool = True) -> None:
        self.approver = Approver()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self._sock = sock
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.url = f"{base}/mcp"
        auth = AuthSettings(
            issuer_url=base, resource_server_url=self.url, validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(enabled=registration, valid_scopes=["tools"]),
            revocation_options=RevocationOptions(enabled=True), required_scopes=["tools"],
        )  # fmt: skip
        server = MCPServer("signed", auth_server_provider=self.approver, auth=auth)

        @server.tool()
        def whoami() -> str:
            """Say that the call was signed in."""
            return "signed in as tester"

        config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._server.serve(sockets=[sock])), daemon=True)

    def add_client(self, client_id: str, redirect_uri: str) -> None:
        """A client registered by hand, as on a server without dynamic registration."""
        self.approver.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id, redirect_uris=[redirect_uri], token_endpoint_auth_method="none",  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"], scope="tools",
        )  # fmt: skip

    def __enter__(self) -> SignInServer:
        self._thread.start()
        while not self._server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()
