"""How one MCP server is reached, and the limits Cairn holds every server to.

This module imports nothing from the ``mcp`` SDK, so settings can hold and validate server
configurations without paying for the SDK's import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["SERVER_NAME_PATTERN", "McpLimits", "McpOAuth", "McpServerConfig"]

# A server's name starts every tool name (``<server>__<tool>``) and sits in its scopes
# (``mcp.<server>.read``): no dot, and no ``__`` or ``_`` at either end, so the text before a
# tool name's first ``__`` is always its server and two servers' tools can never share a name.
SERVER_NAME_PATTERN = r"^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$"


class McpOAuth(BaseModel):
    """What signing in to a remote server needs beyond its url.

    ``client_id`` is for a server that does not offer dynamic registration: the person
    registers Cairn with it (redirect address ``http://127.0.0.1:<redirect_port>/callback``) and
    enters the id. ``scopes`` empty means the server's own choice.
    Tokens are never here: they live in the secret store.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    client_id: str | None = Field(default=None, max_length=512)
    scopes: tuple[str, ...] = ()
    redirect_port: int | None = Field(default=None, ge=1024, le=65535)


class McpServerConfig(BaseModel):
    """One MCP server as the person configured it.

    ``env`` values may be secrets: the caller adds each to its redactor and passes the
    redactor's ``redact`` to ``McpServer``, so nothing the server says carries them.
    ``trusted`` lets the server's ``readOnlyHint`` make a tool read-only; an untrusted
    server's tools always need the write scope. ``start_at_launch`` is the caller's flag:
    start the server when Cairn starts, or only when a turn first needs its tools. ``roots``
    (``file://`` URIs) is offered when the server asks; ``None`` declares no roots at all.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=SERVER_NAME_PATTERN, max_length=32)
    transport: Literal["stdio", "http"] = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    oauth: McpOAuth | None = None
    trusted: bool = False
    start_at_launch: bool = False
    start_timeout: float = Field(default=30.0, gt=0, le=600)
    call_timeout: float = Field(default=120.0, gt=0, le=3600)
    roots: tuple[str, ...] | None = None  # file:// URIs offered as roots; None: roots off, none declared
    stop_timeout: float = Field(default=5.0, gt=0, le=60)

    @model_validator(mode="after")
    def _reachable(self) -> McpServerConfig:
        if self.transport == "stdio":
            if not self.command or not self.command.strip():
                raise ValueError(f"the MCP server {self.name!r} runs over stdio, so it needs a command")
            if self.url is not None:
                raise ValueError(f"the MCP server {self.name!r} runs over stdio, so it takes no url")
        else:
            if not self.url or urlsplit(self.url).scheme not in ("http", "https") or not urlsplit(self.url).hostname:
                raise ValueError(f"the MCP server {self.name!r} runs over HTTP, so it needs an http(s) url")
            if self.command is not None:
                raise ValueError(f"the MCP server {self.name!r} runs over HTTP, so it takes no command")
        if self.oauth is not None and self.transport != "http":
            raise ValueError(f"the MCP server {self.name!r} runs over stdio, so it has no sign-in")
        return self


@dataclass(frozen=True)
class McpLimits:
    """What Cairn lets one server send before it stops listening to it.

    Not part of the person's settings: tests shrink them, the defaults suit real servers.
    """

    max_tools: int = 200
    max_prompts: int = 200  # listed by one server for the composer
    max_message_bytes: int = 4 * 1024 * 1024  # one JSON-RPC line on stdio, read whole
    max_line_bytes: int = 1024 * 1024 * 1024  # a longer line is read on, held in part; past this it is a flood
    max_result_chars: int = 1_000_000  # what one call's output keeps
    max_description_chars: int = 8_000
    max_instructions_chars: int = 8_000  # what is kept of the server's own instructions
    stderr_tail_chars: int = 4_096  # the tail shown in a failed status
    stderr_kept_bytes: int = 16_384
    stderr_flood_bytes: int = 10 * 1024 * 1024  # within stderr_flood_window seconds
    stderr_flood_window: float = 10.0
    relist_debounce: float = 0.2
    list_changed_max: int = 50  # within list_changed_window seconds
    list_changed_window: float = 10.0
    list_timeout: float = 30.0  # a re-listing after tools/list_changed
    max_list_pages: int = 50
    max_resources: int = 1_000  # what one server's resource list shows
    kill_grace: float = 2.0  # after SIGTERM, before SIGKILL
