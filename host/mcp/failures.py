"""What went wrong with an MCP server, in words: its start, and a request to it."""

from __future__ import annotations

from typing import Any

import httpx2
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from host.mcp.config import McpServerConfig

__all__ = ["Refused", "explain", "leaf"]


class Refused(Exception):
    """The server answered, but with something Cairn will not take; the message says what."""


def leaf(exc: BaseException) -> BaseException:
    """The first real exception inside task-group wrappers."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def explain(exc: BaseException, config: McpServerConfig) -> str:
    exc = leaf(exc)
    if isinstance(exc, Refused):
        return str(exc)
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
