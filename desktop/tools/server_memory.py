"""What Cairn remembers of each configured MCP server between its runs (and Cairn's).

Per server, with what ran (``ran_as``: its transport and command or URL, so a different
program under the same name is not described by the old one's words):

- ``said``: the instructions of its last initialize result (its ``guidance:mcp:`` section);
- ``tools``: its last successfully listed tools, each as the server names it with its spec.
  For the catalog these *are* the server's tools while it starts, has failed for now, or waits
  for a sign-in, so servers coming and going never change the catalog (whose identity covers
  every spec, and whose change starts a declaration epoch); only a real change in a listing
  does;
- ``failed``: its last failure, when, and how many in a row, so a server that cannot start is
  not paid for again on every turn (or every ``cairn chat``): it is tried again after a while,
  the while growing with each failure in a row, and at once when the person restarts it.

Kept in one small JSON file, rewritten atomically when something changes. A file or entry
that cannot be read is started afresh: this is a memory, never a source of truth.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from desktop.settings.mcp_servers import McpServerSetting
from desktop.tools.server_views import clock
from host.canonical import sha256_hex
from host.files import atomic_write_text
from host.tools import ToolSpec

__all__ = ["RETRY_AFTER", "Failure", "ServerMemory", "ran_as"]

log = logging.getLogger(__name__)

RETRY_AFTER = (60.0, 300.0, 900.0, 3600.0)  # seconds, by failures in a row; the last repeats


@dataclass(frozen=True)
class Failure:
    """A server's last failure: why, when (epoch seconds), and when it is tried again."""

    reason: str
    at: float
    retry_at: float

    def due(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.retry_at


class ServerMemory:
    def __init__(self, path: Path | None, earlier: Path | None = None) -> None:
        """``earlier``: the file of an older Cairn that kept only instructions, read once when
        ``path`` does not exist yet."""
        self.path = path
        self._entries: dict[str, dict[str, Any]] = {}
        self._specs: dict[str, list[tuple[str, ToolSpec]] | None] = {}  # parsed once, for every request
        source = path if path is None or path.exists() or earlier is None else earlier
        if source is not None and source.exists():
            try:
                data = json.loads(source.read_text(encoding="utf-8"))
                self._entries = {
                    name: entry
                    for name, entry in data.items()
                    if isinstance(name, str) and isinstance(entry, dict) and isinstance(entry.get("ran"), str)
                }
            except (OSError, ValueError, AttributeError) as exc:
                log.warning("what Cairn remembered of its MCP servers (%s) was not read: %s", source, exc)

    # -- reading --------------------------------------------------------------------------------

    def said(self, server: str, ran: str) -> str:
        """What ``server`` said about itself when it last ran as ``ran``; empty if never."""
        said = self._entry(server, ran).get("said")
        return said if isinstance(said, str) else ""

    def tools(self, server: str, ran: str) -> list[tuple[str, ToolSpec]] | None:
        """``server``'s last listed tools (its own name, the spec), or None if it never listed
        them as ``ran``."""
        entry = self._entry(server, ran)
        if not entry:
            return None
        if server not in self._specs:
            self._specs[server] = _specs(server, entry.get("tools"))
        return self._specs[server]

    def failure(self, server: str, ran: str) -> Failure | None:
        failed = self._entry(server, ran).get("failed")
        if not isinstance(failed, dict):
            return None
        try:
            return Failure(str(failed["reason"]), float(failed["at"]), float(failed["retry_at"]))
        except (KeyError, TypeError, ValueError):
            return None

    def last_known(self, setting: McpServerSetting) -> str:
        """What is known of ``setting``'s server from its last run: its tools, or its failure."""
        failure = self.failure(setting.name, ran_as(setting))
        if failure is not None:
            return f"failed at {clock(failure.at)}: {failure.reason}"
        known = self.tools(setting.name, ran_as(setting))
        if known is None:
            return "not started yet"
        return f"started fine last time, {len(known)} tool{'' if len(known) == 1 else 's'}"

    def _entry(self, server: str, ran: str) -> dict[str, Any]:
        entry = self._entries.get(server)
        return entry if entry is not None and entry.get("ran") == ran else {}

    # -- noting ---------------------------------------------------------------------------------

    def ready(self, server: str, ran: str, said: str, tools: list[tuple[str, ToolSpec]]) -> None:
        """``server`` started as ``ran``, said ``said`` and listed ``tools``: its failures end."""
        listed = [{"own": own, "spec": spec.model_dump(mode="json")} for own, spec in tools]
        self._put(server, {"ran": ran, "said": said, "tools": listed})

    def failed(self, server: str, ran: str, reason: str, now: float | None = None) -> Failure:
        """``server`` failed: remember it, with when it is tried again."""
        now = time.time() if now is None else now
        entry = dict(self._entry(server, ran)) or {"ran": ran}
        previous = entry.get("failed")
        row = int(previous.get("row", 0)) + 1 if isinstance(previous, dict) else 1
        retry_at = now + RETRY_AFTER[min(row, len(RETRY_AFTER)) - 1]
        entry["failed"] = {"reason": reason, "at": now, "retry_at": retry_at, "row": row}
        self._put(server, entry)
        return Failure(reason, now, retry_at)

    def forgive(self, server: str) -> None:
        """The person restarts ``server``: whatever failed before, try it now."""
        entry = self._entries.get(server)
        if entry is not None and "failed" in entry:
            self._put(server, {key: value for key, value in entry.items() if key != "failed"})

    def keep(self, servers: set[str]) -> None:
        """Forget the servers no longer configured."""
        gone = set(self._entries) - servers
        for name in gone:
            del self._entries[name]
            self._specs.pop(name, None)
        if gone:
            self._save()

    def _put(self, server: str, entry: dict[str, Any]) -> None:
        if self._entries.get(server) == entry:
            return
        self._entries[server] = entry
        self._specs.pop(server, None)
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(self._entries, sort_keys=True, indent=1))
        except OSError as exc:
            log.warning("what Cairn knows of its MCP servers could not be kept in %s: %s", self.path, exc)


def _specs(server: str, listed: object) -> list[tuple[str, ToolSpec]] | None:
    if not isinstance(listed, list):
        return None
    try:
        return [(str(item["own"]), ToolSpec.model_validate(item["spec"])) for item in listed]
    except (KeyError, TypeError, ValidationError) as exc:
        log.warning("the remembered tools of the MCP server %s were not read: %s", server, exc)
        return None


def ran_as(setting: McpServerSetting) -> str:
    """What a server entry runs: its transport and command or URL."""
    return sha256_hex({"transport": setting.transport, "command": setting.command, "args": setting.args,
                       "url": setting.url})  # fmt: skip
