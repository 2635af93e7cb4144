"""A server over streamable HTTP: the SDK's transport on an httpx client Cairn bounds, with
the caller's sign-in (``auth``), if any. Leaving it ends the server's session with a DELETE,
even when a stop cancelled the owner task: the SDK sends it as its transport exits, which a
cancelled scope would cut at once, so the transport is left shielded, within a deadline."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT

from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.http_cap import cap_answers

__all__ = ["open_http"]


@asynccontextmanager
async def open_http(
    config: McpServerConfig, auth: httpx2.Auth | None, limits: McpLimits
) -> AsyncIterator[TransportStreams]:
    assert config.url is not None
    # The SDK's read timeout stays long (a server holds its event stream open); connecting,
    # writing and waiting for a connection are bounded like a start, so stop() is never slow.
    bound = min(10.0, config.start_timeout)
    timeout = httpx2.Timeout(bound, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    # An answer is held to the cap a stdio server's is: a JSON body by Cairn (host.mcp.http_cap),
    # an event by the SDK.
    hooks = cap_answers(limits.max_message_bytes, config.name)
    async with httpx2.AsyncClient(headers=config.headers, timeout=timeout, auth=auth, event_hooks=hooks) as http:
        failure: BaseException | None = None
        # A scope around the SDK's own (one opened inside it could not close in order).
        with anyio.CancelScope() as leaving:
            async with streamable_http_client(
                config.url, http_client=http, max_sse_event_size=limits.max_message_bytes
            ) as streams:
                try:
                    yield streams
                finally:
                    failure = sys.exc_info()[1]
                    leaving.shield = True
                    leaving.deadline = anyio.current_time() + bound
        if leaving.cancelled_caught and failure is not None:
            raise failure  # the DELETE ran out of time; what ended the session still counts
