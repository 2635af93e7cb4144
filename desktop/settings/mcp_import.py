"""Importing MCP servers from Claude Desktop's ``claude_desktop_config.json``.

Its ``mcpServers`` block maps a name to ``{"command", "args", "env"}`` (stdio) or, in the
variants other hosts write, ``{"url", "type", "headers"}``. ``read_import`` turns a file into a
plan to show before anything is saved: each server as Cairn would keep it (its name made valid
and unique, its secrets marked), and a reason for each entry left out. ``apply_import`` builds
each server it can through ``server_setting``, so secrets go to the secret store, and says why
of each it could not (its secrets with nowhere to go, a name taken meanwhile).

The file is treated as hostile: at most 1 MB is read, every field is checked for its type, and
names and reasons are made printable before they are shown.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.settings.mcp_servers import (
    McpServerSetting,
    McpSettingsError,
    SecretsNotKept,
    looks_secret,
    secret_id,
    server_setting,
)
from desktop.settings.secret_file import SecretFileError
from desktop.settings.secrets import SecretStore
from host.errors import CairnError
from host.text import printable

__all__ = [
    "ConfigImportError",
    "ImportPlan",
    "ImportedServer",
    "NotImported",
    "apply_import",
    "claude_config_path",
    "read_import",
]

MAX_BYTES = 1024 * 1024
# More servers than anyone runs: each is a process, and a file with more is not a person's.
MAX_SERVERS = 100
_INVALID = re.compile(r"[^A-Za-z0-9_-]+")


class ConfigImportError(CairnError):
    """The file cannot be imported at all; the message says why and what to do."""


@dataclass(frozen=True)
class ImportedServer:
    """One server of the file as Cairn would keep it."""

    name: str
    original: str  # its name in the file
    fields: dict[str, Any]
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def secrets(self) -> list[str]:
        """The env variables and headers that are kept as secrets, never in the settings."""
        return sorted(k for k, v in [*self.env.items(), *self.headers.items()] if looks_secret(k, v))

    def describe(self) -> str:
        """One line, with no secret value: what will run, and what is kept where."""
        if self.fields.get("transport") == "http":
            what = f"HTTP {self.fields['url']}"
        else:
            what = " ".join([str(self.fields["command"]), *self.fields.get("args", [])])
        renamed = f" (was {printable(self.original)!r})" if self.original != self.name else ""
        plain = sorted(set(self.env) - set(self.secrets))
        notes = []
        if plain:
            notes.append(f"env {', '.join(plain)}")
        if self.secrets:
            notes.append(f"secrets: {', '.join(self.secrets)}")
        if not self.fields.get("enabled", True):
            notes.append("disabled")
        extra = f" [{'; '.join(notes)}]" if notes else ""
        return printable(f"{self.name}{renamed}: {what}{extra}")


@dataclass(frozen=True)
class ImportPlan:
    source: Path
    servers: tuple[ImportedServer, ...] = ()
    skipped: tuple[str, ...] = ()  # one reason per entry left out

    def lines(self) -> list[str]:
        out = [f"From {printable(str(self.source))}:"]
        out += [f"  + {s.describe()}" for s in self.servers] or ["  (no server to import)"]
        out += [f"  - {printable(reason)}" for reason in self.skipped]
        return out


def claude_config_path() -> Path:
    """Where Claude Desktop keeps its configuration on this system."""
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "Claude" / "claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude" / "claude_desktop_config.json"


def read_import(path: Path | None, existing: Iterable[str] = ()) -> ImportPlan:
    """The plan for importing ``path`` (default: Claude Desktop's own file) next to the
    servers named ``existing``. ``ConfigImportError`` when the file cannot be read at all."""
    source = path or claude_config_path()
    data = _load(source, given=path is not None)
    block = data.get("mcpServers")
    if block is None:
        raise ConfigImportError(f'{source} has no "mcpServers" block, so there is nothing to import.')
    if not isinstance(block, dict):
        raise ConfigImportError(
            f'The "mcpServers" block of {source} is not an object of servers; nothing was imported.'
        )
    if len(block) > MAX_SERVERS:
        raise ConfigImportError(
            f"{source} lists {len(block):,} MCP servers; Cairn imports at most {MAX_SERVERS} at a time, each being "
            "a program it may start. Nothing was imported: import a shorter list."
        )
    taken = {name.casefold() for name in existing}
    servers: list[ImportedServer] = []
    skipped: list[str] = []
    for original, entry in block.items():
        try:
            fields, env, headers = _entry(entry)
        except ValueError as exc:
            skipped.append(f"{original!r}: {exc}")
            continue
        if _valid_name(original) and original.casefold() in taken:
            skipped.append(f"{original!r}: a server of that name is already set up in Cairn; it was kept as it is")
            continue
        name = _unique(_sanitise(original), taken)
        taken.add(name.casefold())
        servers.append(ImportedServer(name, original, {"name": name, **fields}, env, headers))
    return ImportPlan(source, tuple(servers), tuple(skipped))


@dataclass(frozen=True)
class NotImported:
    """A server of the plan that was not saved, and why (a sentence that names it).
    ``no_place``: its secrets had nowhere to be kept (no keychain, no secrets file chosen);
    kept in memory it would be saved."""

    name: str
    reason: str
    no_place: bool = False


def apply_import(
    plan: ImportPlan, secrets: SecretStore, existing: Iterable[str] = (), *, memory_only: bool = False
) -> tuple[list[McpServerSetting], list[NotImported]]:
    """The plan's servers as entries to save, their secrets in the store (for this run only
    with ``memory_only``), and the ones that could not be: their names taken since by one of
    ``existing``, or their secrets refused. A server refused halfway through its secrets leaves
    none of them behind."""
    taken = {name.casefold() for name in existing}
    built: list[McpServerSetting] = []
    refused: list[NotImported] = []
    for imported in plan.servers:
        if imported.name.casefold() in taken:
            reason = (
                f"An MCP server named {imported.name!r} was added since this import was shown; import again to see "
                "what it would add now."
            )
            refused.append(NotImported(imported.name, reason))
            continue
        try:
            built.append(
                server_setting(
                    secrets,
                    imported.fields,
                    env=dict(imported.env),
                    headers=dict(imported.headers),
                    memory_only=memory_only,
                )
            )
        except McpSettingsError as exc:
            _forget(secrets, imported)
            refused.append(NotImported(imported.name, str(exc), no_place=isinstance(exc, SecretsNotKept)))
    return built, refused


def _forget(secrets: SecretStore, imported: ImportedServer) -> None:
    """Whatever of a refused server's secrets went in before one was refused."""
    with contextlib.suppress(SecretFileError):  # a file that refused them holds none of them
        for name in imported.env:
            secrets.delete(secret_id(imported.name, "env", name))
        for name in imported.headers:
            secrets.delete(secret_id(imported.name, "header", name))


def _load(source: Path, *, given: bool) -> dict[str, Any]:
    try:
        with source.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        if given:
            raise ConfigImportError(
                f"{source} does not exist; give the path of a claude_desktop_config.json."
            ) from None
        raise ConfigImportError(
            f"Claude Desktop's configuration was not found at {source}; give the file to import instead."
        ) from None
    except OSError as exc:
        raise ConfigImportError(f"{source} cannot be read ({exc.strerror or exc}).") from exc
    if len(raw) > MAX_BYTES:
        raise ConfigImportError(
            f"{source} is larger than 1 MB, which no Claude Desktop configuration is; nothing was read."
        )
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigImportError(f"{source} is not valid JSON ({_short(exc)}); nothing was imported.") from exc
    if not isinstance(data, dict):
        raise ConfigImportError(f"{source} does not hold a JSON object; nothing was imported.")
    return data


def _entry(entry: object) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    if not isinstance(entry, dict):
        raise ValueError("its entry is not an object")
    env = _strings(entry.get("env", {}), "env")
    headers = _strings(entry.get("headers", {}), "headers")
    enabled = not entry.get("disabled", False)
    kind = str(entry.get("type") or entry.get("transport") or "").lower()
    if "url" in entry or kind in ("http", "streamable-http", "streamablehttp", "sse"):
        if kind == "sse":
            raise ValueError("it uses the older SSE transport, which Cairn does not speak; use its streamable HTTP URL")
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError("its url is not an http(s) URL")
        return {"transport": "http", "url": url, "enabled": enabled}, env, headers
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("it has no command")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("its args are not a list of strings")
    fields: dict[str, Any] = {"transport": "stdio", "command": command, "args": args, "enabled": enabled}
    cwd = entry.get("cwd")
    if isinstance(cwd, str) and cwd:
        fields["cwd"] = cwd
    return fields, env, headers


def _strings(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f"its {what} is not an object of text values")
    return dict(value)


def _valid_name(name: str) -> bool:
    return _sanitise(name) == name


def _sanitise(name: str) -> str:
    cleaned = _INVALID.sub("-", name)
    cleaned = re.sub(r"_{2,}", "_", cleaned).strip("_-")[:32].strip("_")
    return cleaned or "server"


def _unique(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate.casefold() in taken:
        suffix = f"-{number}"
        candidate, number = f"{name[: 32 - len(suffix)].rstrip('_')}{suffix}", number + 1
    return candidate


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
