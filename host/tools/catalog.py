"""The tool catalog: every tool a turn may run, by name, with its spec and its implementation.

A turn's catalog is built fresh from its sources (skills now; built-in tools and MCP servers
later), so a tool whose schema changed is never run from a stale copy. Its identity is
``tool_schema_sha256`` over every spec it defines, declared or not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from pydantic import JsonValue

import host.identity  # a module, not its names: host.identity imports host.tools.spec
from host.errors import CairnError
from host.tools.spec import ToolSpec

__all__ = ["AUDIO_FORMATS", "Tool", "ToolCatalog", "ToolError", "ToolMedia", "ToolOutput", "ToolRun"]


class ToolError(CairnError):
    """A tool could not do what it was asked; the message goes back to the model."""


# The sounds a model may be sent, by media type, as Chat Completions' ``input_audio`` names
# their format: it takes WAV and MP3 only, so any other sound is described, never kept.
AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


@dataclass(frozen=True)
class ToolMedia:
    """An image (or a sound) a tool returned, as bytes: a route whose model takes it is sent it
    after the tool results; ``text`` describes it for every other."""

    kind: str  # "image" or "audio"
    media_type: str
    data: bytes


@dataclass(frozen=True)
class ToolOutput:
    text: str
    is_error: bool = False
    activated: tuple[str, ...] = ()  # the deferred tools a tool search activated
    # The whole output's length in characters when ``text`` is already cut to a bound (an MCP
    # server's result is cut where it is read): the one note the model reads says this figure.
    length: int | None = None
    media: tuple[ToolMedia, ...] = ()


ToolRun = Callable[[Mapping[str, JsonValue]], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    run: ToolRun

    @property
    def name(self) -> str:
        return self.spec.name


class ToolCatalog:
    """An immutable set of tools with unique names."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        by_name: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in by_name:
                raise ValueError(f"two tools are both named {tool.name!r}; tool names must be unique")
            by_name[tool.name] = tool
        self._tools = dict(sorted(by_name.items()))

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """Every spec, in name order."""
        return tuple(tool.spec for tool in self._tools.values())

    def identity(self) -> str:
        return host.identity.tool_schema_sha256(self.specs)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
