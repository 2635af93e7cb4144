"""What went wrong with an MCP server, in words: its start, and a request to it."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable
from typing import Any

import httpx2
from mcp.client.auth.exceptions import OAuthRegistrationError
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED
from pydantic import ValidationError

from host.mcp.config import McpServerConfig
from host.mcp.oversize import TOO_LARGE
from host.mcp.status import ServerState, ServerStatus

__all__ = [
    "NO_REGISTRATION",
    "SIGN_IN_AGAIN",
    "Refused",
    "SignInNeeded",
    "WatchedAuth",
    "explain",
    "leaf",
    "needs_sign_in",
    "request_failed",
    "unavailable",
]

# What a call to a server that refused Cairn's sign-in returns: words for the model to pass on.
SIGN_IN_AGAIN = (
    "Sign in again to {name}: the server refused Cairn's sign-in. "
    "Ask the person to sign in to it in Settings (MCP servers), then try again."
)

# A sign-in whose authorisation server has no registration endpoint, or refuses to register:
# the SDK says "Registration failed: 404 …", which tells a person nothing they can do.
NO_REGISTRATION = "this server does not let Cairn register itself; enter a client id in its settings"
_REGISTRATION_REFUSED = re.compile(r"^Registration failed: (401|403|404|405|501)\b")


class Refused(Exception):
    """The server answered, but with something Cairn will not take; the message says what."""


class SignInNeeded(Exception):
    """A remote server wants the person to sign in (no tokens kept, or the server refused them
    and refreshing failed), and no one is there to open a browser. Raised by the caller's
    sign-in (the ``auth`` handed to ``McpServer``); the server's status then says so."""


class WatchedAuth(httpx2.Auth):
    """A caller's sign-in that tells its server when it gave up for want of the person: a
    refusal inside a request closes the connection, and the call must still say why."""

    def __init__(self, inner: httpx2.Auth, on_refused: Callable[[], None]) -> None:
        self._inner, self._on_refused = inner, on_refused
        self.requires_request_body = inner.requires_request_body
        self.requires_response_body = inner.requires_response_body

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self._inner.async_auth_flow(request)
        try:
            sent = await flow.__anext__()
            while True:
                response = yield sent
                sent = await flow.asend(response)
        except StopAsyncIteration:
            return
        except SignInNeeded:
            self._on_refused()
            raise
        finally:
            await flow.aclose()


def unavailable(status: ServerStatus) -> str:
    """Why a request to a server that is not ready cannot be made, in words."""
    if status.state is ServerState.FAILED:
        return f"The MCP server {status.server!r} is not available: {status.reason}"
    if status.state is ServerState.SIGN_IN:
        return SIGN_IN_AGAIN.format(name=status.server)
    return f"The MCP server {status.server!r} is {status.state.value}; its tools cannot run now."


def needs_sign_in(exc: BaseException) -> bool:
    """Whether ``exc``, or the first real exception inside it, is a ``SignInNeeded``."""
    return isinstance(leaf(exc), SignInNeeded)


def leaf(exc: BaseException) -> BaseException:
    """The first real exception inside task-group wrappers."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def explain(exc: BaseException, config: McpServerConfig) -> str:
    exc = leaf(exc)
    if isinstance(exc, Refused):
        return str(exc)
    if isinstance(exc, SignInNeeded):
        return f"sign in again to {config.name}"
    if isinstance(exc, OAuthRegistrationError) and _REGISTRATION_REFUSED.match(str(exc)):
        return NO_REGISTRATION
    if isinstance(exc, FileNotFoundError) and config.transport == "stdio":
        return f"its command {config.command!r} was not found; check the command and its path"
    if isinstance(exc, PermissionError) and config.transport == "stdio":
        return f"its command {config.command!r} could not be run (permission denied)"
    if isinstance(exc, OSError) and config.transport == "stdio":
        return f"its command {config.command!r} could not be started: {exc}"
    if isinstance(exc, httpx2.TransportError):
        return f"it could not be reached at {config.url}: {exc or type(exc).__name__}"
    if isinstance(exc, MCPError):
        return f"it answered with an error: {exc.error.message}"
    if isinstance(exc, ValidationError):
        return f"it answered with something that is not valid MCP: {_first_error(exc)}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _first_error(exc: ValidationError) -> str:
    errors: list[Any] = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", ""))


# Each request in words: the preposition before what it names, and what a valid answer is.
_ASKED = {"the call": ("to", "a tool result"), "the read": ("of", "a resource"), "the request": ("for", "a prompt")}


def request_failed(
    exc: Exception, server: str, what: tuple[str, str], timeout: float, *, fault: str | None, stopping: bool
) -> str:
    """Why one request to ``server`` failed, for the model. ``what``: the request ("the call",
    "the read", "the request" for a prompt) and the tool, URI or prompt it names; ``fault``:
    what the server's process did wrong, if anything; ``stopping``: Cairn was stopping it."""
    during, named = what
    preposition, kind = _ASKED[during]
    if isinstance(exc, TimeoutError):
        return f"The MCP server {server!r} did not answer {named!r} within {timeout:g} s."
    if isinstance(exc, MCPError):
        if stopping:
            return f"The MCP server {server!r} was stopped during {during}."
        if exc.code == TOO_LARGE:  # Cairn's own answer: the server sent more than it reads
            return f"Cairn did not read the answer of the MCP server {server!r} to {named!r}: {exc.error.message}."
        if fault is not None or exc.code == CONNECTION_CLOSED:
            return f"The MCP server {server!r} stopped during {during}: {fault or 'it closed the connection'}."
        return f"The MCP server {server!r} refused {during} {preposition} {named!r}: {exc.error.message}"
    if isinstance(exc, ValidationError):
        return f"The MCP server {server!r} answered {named!r} with something that is not {kind}."
    return f"{during.capitalize()} {preposition} {named!r} on the MCP server {server!r} failed: {leaf(exc)}"
