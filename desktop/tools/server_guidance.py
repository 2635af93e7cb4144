"""What the model is told about the MCP servers a person configured (architecture §1).

One ``guidance:mcp:<server>`` section per configured, enabled server (not per connection: a
server that failed or has not started yet keeps its section): a one-line purpose (the
person's description of it, else its name) and the server's own ``instructions`` from its
initialize result, framed as the server's words, never the person's, the whole capped at
2,000 characters. So the model knows which servers exist before it searches, and searches
fewer times.

The section changes only when the person edits the server's description, or the server's
instructions change; a server's tools coming and going, or a restart, leaves it as it was (the
instructions last seen are remembered, also across restarts of Cairn). It grants nothing:
permissions and activation never read it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from desktop.context.sections import GUIDANCE_PREFIX
from host.files import atomic_write_text

__all__ = ["CAP", "PREFIX", "Remembered", "guidance_text"]

log = logging.getLogger(__name__)

CAP = 2_000
PREFIX = f"{GUIDANCE_PREFIX}mcp:"
CUT = "\n[Cairn cut the server's instructions here.]"


def guidance_text(server: str, description: str, instructions: str) -> str:
    """The section's text for ``server``."""
    purpose = " ".join(description.split()).rstrip(".") or f"an MCP server the person added, called {server!r}"
    text = (
        f"MCP server {server!r}: {purpose}. Its tools are named {server}__<tool>; find them with tool_search. "
        "Nothing here allows a call: every call is checked as usual."
    )
    said = instructions.strip()
    if said:
        text += f"\nWhat the server says about itself (its words, not the person's):\n{said}"
    if len(text) > CAP:
        text = text[: CAP - len(CUT)] + CUT
    return text


class Remembered:
    """The instructions each server last gave, kept in a small file so a restart of Cairn (or a
    server that fails to start) does not change its section. A file that cannot be read is
    started afresh."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._said: dict[str, str] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self._said = {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
            except (OSError, ValueError, AttributeError) as exc:
                log.warning("the MCP servers' remembered instructions in %s were not read: %s", path, exc)

    def get(self, server: str) -> str:
        return self._said.get(server, "")

    def note(self, server: str, instructions: str) -> None:
        """A server started and said ``instructions``."""
        if self._said.get(server) == instructions:
            return
        self._said[server] = instructions
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(self._said, sort_keys=True, indent=1))
        except OSError as exc:
            log.warning("the MCP servers' instructions could not be remembered in %s: %s", self.path, exc)
