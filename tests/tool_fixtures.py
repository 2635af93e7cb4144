"""Running built-in tools from a test: one call, one event loop, as the runtime would."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from host.tools.builtin import builtin_tools
from host.tools.catalog import ToolOutput
from host.tools.limits import DEFAULT_LIMITS, ToolLimits

# One client for the file tools' tests, which never use it: making one per call (an SSL
# context each) would cost more than the calls.
_IDLE_HTTP = httpx.AsyncClient()


def call(
    root: Path | None,
    name: str,
    *,
    limits: ToolLimits = DEFAULT_LIMITS,
    http: httpx.AsyncClient | None = None,
    **arguments: object,
) -> ToolOutput:
    """Run the built-in tool ``name`` of a chat whose workspace is ``root``, within 10 seconds."""
    tool = {t.name: t for t in builtin_tools(root, http=http or _IDLE_HTTP, limits=limits)}[name]
    return asyncio.run(asyncio.wait_for(tool.run(arguments), timeout=10))  # type: ignore[arg-type]
