"""What the model is told about the MCP servers a person configured (architecture §1).

One ``guidance:mcp:<server>`` section per configured, enabled server (not per connection: a
server that failed or has not started yet keeps its section): a one-line purpose (the
person's description of it, else its name) and the server's own ``instructions`` from its
initialize result, framed as the server's words, never the person's, the whole capped at
2,000 characters. So the model knows which servers exist before it searches, and searches
fewer times.

The section changes only when the person edits the server's description, or the server's
instructions change; a server's tools coming and going, or a restart, leaves it as it was (the
instructions last seen are remembered, also across restarts of Cairn, with the program that
said them: a different program under the same name starts with none). It grants nothing:
permissions and activation never read it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from desktop.context.sections import GUIDANCE_PREFIX
from desktop.settings.mcp_servers import McpServerSetting
from host.canonical import sha256_hex
from host.files import atomic_write_text

__all__ = ["CAP", "PREFIX", "Remembered", "guidance_text", "ran_as"]

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
    server that fails to start) does not change its section. Each is kept with what ran (the
    transport, command, arguments or URL), so a different program under the same name is not
    described by the old one's words. A file that cannot be read is started afresh."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._said: dict[str, dict[str, str]] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self._said = {
                    name: {"ran": entry["ran"], "said": entry["said"]}
                    for name, entry in data.items()
                    if isinstance(entry, dict)
                    and isinstance(entry.get("ran"), str)
                    and isinstance(entry.get("said"), str)
                }
            except (OSError, ValueError, AttributeError) as exc:
                log.warning("the MCP servers' remembered instructions in %s were not read: %s", path, exc)

    def get(self, server: str, ran: str) -> str:
        """What ``server`` said when it last ran as ``ran`` (``ran_as``); empty if never."""
        entry = self._said.get(server)
        return entry["said"] if entry is not None and entry["ran"] == ran else ""

    def note(self, server: str, ran: str, instructions: str) -> None:
        """A server started as ``ran`` and said ``instructions``."""
        entry = {"ran": ran, "said": instructions}
        if self._said.get(server) == entry:
            return
        self._said[server] = entry
        self._save()

    def keep(self, servers: set[str]) -> None:
        """Forget the servers no longer configured."""
        gone = set(self._said) - servers
        for name in gone:
            del self._said[name]
        if gone:
            self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(self._said, sort_keys=True, indent=1))
        except OSError as exc:
            log.warning("the MCP servers' instructions could not be remembered in %s: %s", self.path, exc)


def ran_as(setting: McpServerSetting) -> str:
    """What a server entry runs, for ``Remembered``: its transport and command or URL."""
    return sha256_hex({"transport": setting.transport, "command": setting.command, "args": setting.args,
                       "url": setting.url})  # fmt: skip
