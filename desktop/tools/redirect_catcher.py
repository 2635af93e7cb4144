"""The one-shot loopback listener that catches a sign-in's redirect (RFC 8252 §7.3).

It listens on 127.0.0.1 only, answers one request to ``/callback`` whose ``state`` is the one
the authorisation URL carried, and closes. Any other request (a probe, a stale tab, a state
that does not match) gets a plain refusal and is otherwise ignored, so a page on the person's
machine cannot hand Cairn a code of its choosing.
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

__all__ = ["RedirectCatcher", "SignInAbandoned"]

_PAGE = "<!doctype html><meta charset=utf-8><title>Cairn</title><p>{}</p>"


class SignInAbandoned(Exception):
    """The sign-in was refused in the browser, or nobody finished it in time."""


class RedirectCatcher:
    """``await open()``, give ``redirect_uri`` to the sign-in, ``expect(url)`` the URL the
    browser is sent to, then ``await result()``; ``close()`` in any case."""

    def __init__(self, *, port: int = 0, timeout: float = 300.0) -> None:
        self._port, self._timeout = port, timeout
        self._server: asyncio.Server | None = None
        self._state: str | None = None
        self._caught: asyncio.Future[AuthorizationCodeResult] | None = None

    async def open(self) -> None:
        self._caught = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self._port)

    @property
    def timeout(self) -> float:
        """How long ``result()`` waits for the person, in seconds."""
        return self._timeout

    @property
    def redirect_uri(self) -> str:
        assert self._server is not None, "open() first"
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/callback"

    def expect(self, authorization_url: str) -> None:
        """Take the ``state`` the browser is sent with: only a redirect carrying it counts."""
        self._state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0] or None

    async def result(self) -> AuthorizationCodeResult:
        assert self._caught is not None, "open() first"
        try:
            return await asyncio.wait_for(asyncio.shield(self._caught), self._timeout)
        except TimeoutError:
            raise SignInAbandoned(f"nobody finished signing in within {self._timeout:g} s") from None
        finally:
            self.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            words = self._take(line)
            status = "200 OK" if words.startswith("You are signed in") else "400 Bad Request"
            body = _PAGE.format(words).encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()

    def _take(self, request_line: str) -> str:
        parts = request_line.split()
        if len(parts) < 2 or parts[0] != "GET" or urlsplit(parts[1]).path != "/callback":
            return "Cairn is waiting for a sign-in here; this is not it."
        query = parse_qs(urlsplit(parts[1]).query)
        state = query.get("state", [None])[0]
        if self._state is None or state != self._state or self._caught is None or self._caught.done():
            return "This sign-in is not the one Cairn is waiting for. Start it again from Cairn."
        if "error" in query:
            reason = query.get("error_description", query["error"])[0]
            self._caught.set_exception(SignInAbandoned(f"the server refused the sign-in: {reason}"))
            return "The sign-in was refused. You can close this tab and try again from Cairn."
        self._caught.set_result(
            AuthorizationCodeResult(code=query.get("code", [""])[0], state=state, iss=query.get("iss", [None])[0])
        )
        return "You are signed in. You can close this tab and go back to Cairn."
