"""What a server logs (``notifications/message``), kept where a person can read it.

Each message goes to Cairn's log (``cairn.log``) as a line naming the server, at the level the
server gave, and the last ``KEPT`` lines stay with the server for its status panel. A server is
hostile until shown otherwise: the text is redacted, made printable and cut to ``LINE_CHARS``;
past ``BURST`` lines in ``WINDOW`` seconds the rest are dropped and counted, and the count is
logged once the flood ends.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections import deque
from collections.abc import Callable

from mcp import types as mcp_types
from mcp.shared.exceptions import MCPDeprecationWarning

from host.mcp.rate import Rate
from host.text import printable

__all__ = ["ServerLog"]

log = logging.getLogger("host.mcp.server_log")

# ``logging/setLevel`` is deprecated from the 2026-07-28 protocol on, and is what every server
# of the handshake era understands: Cairn asks it of those only, so the SDK's warning (printed
# on a person's terminal by ``cairn chat``) says nothing they could act on.
warnings.filterwarnings("ignore", message="The logging capability is deprecated", category=MCPDeprecationWarning)

KEPT = 200  # lines kept per server for its panel
LINE_CHARS = 500
BURST = 50  # lines within WINDOW seconds; more are dropped and counted
WINDOW = 10.0

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.ERROR,
    "alert": logging.ERROR,
    "emergency": logging.ERROR,
}


class ServerLog:
    """One server's log messages: ``said`` is the SDK's ``logging_callback``."""

    def __init__(self, server: str, redact: Callable[[str], str]) -> None:
        self.server = server
        self._redact = redact
        self._lines: deque[str] = deque(maxlen=KEPT)
        self._rate = Rate(BURST, WINDOW)
        self._dropped = 0

    def lines(self) -> list[str]:
        """The last lines the server logged, oldest first, as shown: ``level: text``."""
        return list(self._lines)

    async def said(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        if not self._rate.allow():
            self._dropped += 1
            return
        if self._dropped:
            self._keep(logging.WARNING, f"{self._dropped:,} more lines were dropped: it logged too fast")
            self._dropped = 0
        level = params.level if params.level in _LEVELS else "info"
        source = f"{params.logger}: " if isinstance(params.logger, str) and params.logger else ""
        self._keep(_LEVELS[level], f"{level}: {source}{_text(params.data)}")

    def _keep(self, level: int, line: str) -> None:
        shown = printable(self._redact(line))
        if len(shown) > LINE_CHARS:
            shown = f"{shown[:LINE_CHARS]}…"
        self._lines.append(shown)
        log.log(level, "MCP server %s says %s", self.server, shown)


def _text(data: object) -> str:
    if isinstance(data, str):
        return data
    try:
        return json.dumps(data, ensure_ascii=False, sort_keys=True)[: LINE_CHARS * 2]
    except (TypeError, ValueError):
        return repr(data)[: LINE_CHARS * 2]
