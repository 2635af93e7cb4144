"""One configured MCP server as the window and the commands show it, and the lines
``cairn.log`` gets when a server starts, fails or stops."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from desktop.settings.mcp_servers import McpServerSetting
from host.mcp import ServerState, ServerStatus

__all__ = ["ServerView", "clock", "log_change"]

log = logging.getLogger("desktop.tools.mcp_hub")  # where cairn.log's server lines have always come from


@dataclass(frozen=True)
class ServerView:
    """One configured server as the window and the commands show it."""

    name: str
    setting: McpServerSetting | None  # None: its entry in the settings cannot be read
    status: ServerStatus | None = None  # None: disabled, or it cannot run
    problem: str = ""
    retry_at: float | None = None  # failed: when Cairn tries it again (epoch seconds)

    @property
    def enabled(self) -> bool:
        return self.setting is not None and self.setting.enabled

    def describe(self) -> str:
        """One line for a person."""
        if self.problem:
            return f"{self.name}: cannot run: {self.problem}"
        if not self.enabled:
            return f"{self.name}: disabled"
        assert self.status is not None
        if self.status.state is ServerState.FAILED and self.retry_at is not None:
            return f"{self.status.describe()} (Cairn tries it again after {clock(self.retry_at)})"
        return self.status.describe()


def log_change(old: ServerStatus | None, new: ServerStatus) -> None:
    """cairn.log gets one line per start, failure and stop of a server (not per status update):
    outside the window, this is where a crashed or hung server leaves its word."""
    if old is not None and old.state is new.state:
        return
    if new.state is ServerState.FAILED:
        tail = new.stderr_tail.strip().splitlines()[-1:] if new.stderr_tail.strip() else []
        log.warning("MCP server %s: failed: %s%s", new.server, new.reason, f" (stderr: {tail[0]})" if tail else "")
    elif new.state is not ServerState.STOPPED or old is not None:
        log.info("%s", "MCP server " + new.describe())


def clock(at: float) -> str:
    """A time of day, for a person: 16:42."""
    return time.strftime("%H:%M", time.localtime(at))
