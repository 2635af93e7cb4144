"""The tool registry: where a turn's tools come from.

A registry holds the tool sources (``desktop.tools.sources``: skills' ``load_skill``, the
built-in workspace tools, the MCP servers), each a function of the turn's inputs. Each
turn asks it for a fresh ``ToolCatalog``, so a tool whose spec changed is never run from an
old copy, and the catalog's identity covers every spec it defines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from desktop.context.system_state import SystemState
from host.skills import SkillCatalog, SkillStore
from host.tools import Tool, ToolCatalog

__all__ = ["ToolRegistry", "ToolSource", "TurnInputs"]


class TurnInputs:
    """What a tool source may build its tools from."""

    def __init__(self, state: SystemState, skills: SkillCatalog, store: SkillStore) -> None:
        self.state, self.skills, self.store = state, skills, store


ToolSource = Callable[[TurnInputs], Iterable[Tool]]


class ToolRegistry:
    def __init__(self, sources: Sequence[ToolSource] = ()) -> None:
        self.sources: list[ToolSource] = list(sources)

    def add(self, source: ToolSource) -> None:
        self.sources.append(source)

    def catalog(self, inputs: TurnInputs) -> ToolCatalog:
        """Every source's tools; two tools with one name are an error (``ValueError``)."""
        return ToolCatalog(tool for source in self.sources for tool in source(inputs))
