"""A server over streamable HTTP: the SDK's transport on an httpx client Cairn bounds, with
the caller's sign-in (``auth``), if any."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, create_mcp_http_client

from host.mcp.config import McpServerConfig

__all__ = ["open_http"]


@asynccontextmanager
async def open_http(config: McpServerConfig, auth: httpx2.Auth | None) -> AsyncIterator[TransportStreams]:
    assert config.url is not None
    # The SDK's read timeout stays long (a server holds its event stream open); connecting,
    # writing and waiting for a connection are bounded like a start, so stop() is never slow.
    bound = min(10.0, config.start_timeout)
    timeout = httpx2.Timeout(bound, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    async with (
        create_mcp_http_client(headers=dict(config.headers) or None, timeout=timeout, auth=auth) as http,
        streamable_http_client(config.url, http_client=http) as streams,
    ):
        yield streams
