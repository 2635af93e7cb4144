"""Cairn's built-in tools: the workspace file tools and fetch_url.

``builtin_tools`` makes them for one chat. They are declared whether or not the chat has a
workspace folder, so adding or removing one never changes the declarations; without one,
the workspace tools answer that none is set and how to choose one. Their specs depend on the
limits only (``builtin_specs``), never on the workspace.

Every run returns a ``ToolOutput``: a failure is an error output whose sentence says what
happened and what to do. Nothing raises out of a run but cancellation. File work runs in a
worker thread, so a big file never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
from pydantic import JsonValue

from host.tools import fetch, text_search, workspace
from host.tools.catalog import Tool, ToolError, ToolOutput
from host.tools.jail import WORKSPACE_SETTING, Jail
from host.tools.limits import DEFAULT_LIMITS, ToolLimits
from host.tools.spec import ToolSpec

__all__ = ["BUILTIN_NAMES", "NO_WORKSPACE", "builtin_specs", "builtin_tools"]

log = logging.getLogger(__name__)

BUILTIN_NAMES = ("edit_file", "fetch_url", "list_folder", "read_file", "search_text", "write_file")
NO_WORKSPACE = (
    "No workspace folder is set for this chat, so there are no files to work with. The person can choose one "
    f"in {WORKSPACE_SETTING}, or start the chat with `cairn chat --workspace DIR`."
)
READ, WRITE, FETCH = "workspace.read", "workspace.write", "network.fetch"
_PATH = "A path relative to the workspace folder (such as 'src/main.py'), or an absolute path inside it."

Arguments = Mapping[str, JsonValue]


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def builtin_specs(limits: ToolLimits = DEFAULT_LIMITS) -> tuple[ToolSpec, ...]:
    """The built-in tools' specs, in name order."""
    return tuple(spec(limits) for spec in (_edit_file, _fetch_url, _list_folder, _read_file, _search_text, _write_file))


_LINKS = "Symbolic links are never followed."


def _edit_file(_limits: ToolLimits) -> ToolSpec:
    return ToolSpec(
        name="edit_file",
        description=(
            "Replace one exact piece of text in a text file in the workspace. old_text must occur exactly "
            "once in the file, matched character for character (spaces, indentation and line breaks "
            "included), so read the file first and include enough surrounding lines to make it unique. "
            "The file is written atomically. To write a whole file, use write_file."
        ),
        parameters=_schema(
            {
                "path": {"type": "string", "minLength": 1, "description": _PATH},
                "old_text": {"type": "string", "minLength": 1, "description": "The exact text to replace."},
                "new_text": {"type": "string", "description": "The text to put in its place (may be empty)."},
            },
            ["path", "old_text", "new_text"],
        ),
        required_scopes={WRITE},
    )


def _fetch_url(limits: ToolLimits) -> ToolSpec:
    return ToolSpec(
        name="fetch_url",
        description=(
            "Fetch one web page over http or https and return it as text: HTML is turned into plain text "
            "with headings, lists and [links](address); JSON, XML and other text come back as they are. "
            f"Binary content (images, PDFs, archives) is refused. At most {limits.fetch_bytes:,} bytes are "
            f"read and {limits.output_chars:,} characters returned; redirects are followed up to "
            f"{limits.fetch_redirects} times. Addresses with a user name or password are refused."
        ),
        parameters=_schema(
            {
                "url": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 8192,
                    "description": "The full address, starting with http:// or https://.",
                }
            },
            ["url"],
        ),
        required_scopes={FETCH},
    )


def _list_folder(limits: ToolLimits) -> ToolSpec:
    return ToolSpec(
        name="list_folder",
        description=(
            "List a folder in the workspace: each entry's type (folder, file, link, other) and a file's "
            f"size, sorted by name, at most {limits.list_entries:,} entries. {_LINKS}"
        ),
        parameters=_schema(
            {"path": {"type": "string", "default": ".", "description": f"{_PATH} '.' is the workspace itself."}},
            [],
        ),
        required_scopes={READ},
        read_only=True,
    )


def _read_file(limits: ToolLimits) -> ToolSpec:
    return ToolSpec(
        name="read_file",
        description=(
            "Read a text file in the workspace. Lines come numbered (number, tab, text). At most "
            f"{limits.read_lines:,} lines and {limits.output_chars:,} characters come back per call, and "
            f"only the first {limits.read_bytes // 1_000_000} MB of a file is read; when a result is cut it "
            "says so and which offset reads on. Binary files are refused. "
            f"{_LINKS}"
        ),
        parameters=_schema(
            {
                "path": {"type": "string", "minLength": 1, "description": _PATH},
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 1,
                    "description": "The first line to return, counting from 1.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": limits.read_lines,
                    "default": limits.read_lines,
                    "description": "How many lines to return at most.",
                },
            },
            ["path"],
        ),
        required_scopes={READ},
        read_only=True,
    )


def _search_text(limits: ToolLimits) -> ToolSpec:
    return ToolSpec(
        name="search_text",
        description=(
            "Search the text files under a workspace folder (or one file) for lines containing a pattern. "
            "Answers 'path:line: text' lines, in path order. Plain text by default; with regex=true a "
            "Python regular expression, where back-references and nested or chained repetition that "
            "could run for hours (like (a+)+ or .*a.*b.*c) are refused. Binary files, .git, .hg, .svn "
            f"and links are skipped. At most {limits.search_results} matches; large searches stop at "
            f"{limits.search_files:,} files or {limits.search_seconds:g} seconds, and say so."
        ),
        parameters=_schema(
            {
                "pattern": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "What to find."},
                "regex": {
                    "type": "boolean",
                    "default": False,
                    "description": "Treat pattern as a regular expression instead of plain text.",
                },
                "ignore_case": {"type": "boolean", "default": False, "description": "Match regardless of case."},
                "path": {
                    "type": "string",
                    "default": ".",
                    "description": f"The folder to search (with everything under it), or one file. {_PATH}",
                },
                "glob": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "description": (
                        "Only files whose name matches this shell pattern, such as '*.py' or '*.{ts,tsx}'; "
                        "with a '/', the path from the workspace is matched, such as 'src/**/*.py'."
                    ),
                },
            },
            ["pattern"],
        ),
        required_scopes={READ},
        read_only=True,
    )


def _write_file(limits: ToolLimits) -> ToolSpec:
    return ToolSpec(
        name="write_file",
        description=(
            "Create a text file in the workspace, or replace one, with the given content (UTF-8). "
            "Missing folders are made. The file is written atomically: a reader sees the old content or "
            f"the new, never half. At most {limits.write_bytes // 1_000_000} MB. To change part of a file, "
            f"use edit_file. {_LINKS}"
        ),
        parameters=_schema(
            {
                "path": {"type": "string", "minLength": 1, "description": _PATH},
                "content": {"type": "string", "description": "The whole new content of the file."},
            },
            ["path", "content"],
        ),
        required_scopes={WRITE},
    )


def builtin_tools(
    workspace_folder: Path | None,
    *,
    http: httpx.AsyncClient,
    limits: ToolLimits = DEFAULT_LIMITS,
) -> list[Tool]:
    """The built-in tools for a chat whose workspace is ``workspace_folder`` (or none), in name
    order. ``http`` is the client fetch_url uses; nothing else reaches the network."""
    jail = Jail(workspace_folder) if workspace_folder is not None else None
    specs = {spec.name: spec for spec in builtin_specs(limits)}

    def on_files(name: str, work: Callable[[Jail, _Args], str]) -> Tool:
        spec = specs[name]

        async def run(arguments: Arguments) -> ToolOutput:
            args = _Args(spec, arguments)
            if jail is None:
                return ToolOutput(NO_WORKSPACE, is_error=True)
            return ToolOutput(await asyncio.to_thread(work, jail, args))

        return Tool(spec, _guarded(spec, run))

    async def search_run(jail: Jail, args: _Args) -> str:
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(
                text_search.search_text,
                jail,
                args.text("pattern"),
                regex=args.flag("regex"),
                ignore_case=args.flag("ignore_case"),
                path=args.text("path", "."),
                glob=args.optional_text("glob"),
                limits=limits,
                cancel=cancel,
            )
        finally:
            cancel.set()  # a cancelled await leaves the thread running: this stops it at its next check

    async def search_tool(arguments: Arguments) -> ToolOutput:
        args = _Args(specs["search_text"], arguments)
        if jail is None:
            return ToolOutput(NO_WORKSPACE, is_error=True)
        return ToolOutput(await search_run(jail, args))

    async def fetch_tool(arguments: Arguments) -> ToolOutput:
        args = _Args(specs["fetch_url"], arguments)
        return await fetch.fetch_url(http, args.text("url"), limits)

    return [
        on_files(
            "edit_file",
            lambda j, a: workspace.edit_file(j, a.text("path"), a.text("old_text"), a.text("new_text"), limits),
        ),
        Tool(specs["fetch_url"], _guarded(specs["fetch_url"], fetch_tool)),
        on_files("list_folder", lambda j, a: workspace.list_folder(j, a.text("path", "."), limits)),
        on_files(
            "read_file",
            lambda j, a: workspace.read_file(
                j, a.text("path"), a.integer("offset", 1), a.integer("limit", limits.read_lines), limits
            ),
        ),
        Tool(specs["search_text"], _guarded(specs["search_text"], search_tool)),
        on_files("write_file", lambda j, a: workspace.write_file(j, a.text("path"), a.text("content"), limits)),
    ]


def _guarded(
    spec: ToolSpec, run: Callable[[Arguments], Awaitable[ToolOutput]]
) -> Callable[[Arguments], Awaitable[ToolOutput]]:
    """``run`` with every failure but cancellation turned into an error output."""

    async def guarded(arguments: Arguments) -> ToolOutput:
        try:
            return await run(arguments)
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True)
        except OSError as exc:
            log.warning("%s failed: %s", spec.name, exc)
            return ToolOutput(f"{spec.name} failed: {exc.strerror or exc}.", is_error=True)
        except Exception as exc:  # a run never raises but cancellation; the log keeps the trace
            log.exception("%s failed unexpectedly", spec.name)
            return ToolOutput(
                f"{spec.name} failed unexpectedly ({type(exc).__name__}); this is a fault in Cairn, not in the "
                "request. Try another way.",
                is_error=True,
            )

    return guarded


class _Args:
    """A call's arguments read against its schema, each wrong one a ``ToolError`` naming it.
    The permission gate checks the schema first; this is the tool's own guard."""

    def __init__(self, spec: ToolSpec, arguments: Arguments) -> None:
        self.tool = spec.name
        self.properties: dict[str, Any] = spec.parameters["properties"]
        if not isinstance(arguments, Mapping):
            raise ToolError(f"{self.tool} needs its arguments as a JSON object.")
        unknown = sorted(set(arguments) - set(self.properties))
        if unknown:
            raise ToolError(
                f"{self.tool} has no argument {unknown[0]!r}; it takes {', '.join(sorted(self.properties))}."
            )
        missing = [name for name in spec.parameters["required"] if name not in arguments]
        if missing:
            raise ToolError(f"{self.tool} needs the argument {missing[0]!r}.")
        self.arguments = arguments

    def text(self, name: str, default: str | None = None) -> str:
        value = self.arguments.get(name, default)
        if not isinstance(value, str):
            raise ToolError(f"{self.tool}'s argument {name!r} must be text.")
        return value

    def optional_text(self, name: str) -> str | None:
        return None if self.arguments.get(name) is None else self.text(name)

    def flag(self, name: str) -> bool:
        value = self.arguments.get(name, False)
        if not isinstance(value, bool):
            raise ToolError(f"{self.tool}'s argument {name!r} must be true or false.")
        return value

    def integer(self, name: str, default: int) -> int:
        value = self.arguments.get(name, default)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ToolError(f"{self.tool}'s argument {name!r} must be a whole number.")
        low = self.properties[name].get("minimum")
        high = self.properties[name].get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"from {low}" + (f" to {high}" if high is not None else " up")
            raise ToolError(f"{self.tool}'s argument {name!r} is {value}; it must be {bounds}.")
        return value
