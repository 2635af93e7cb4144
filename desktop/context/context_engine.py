"""The context engine: keeps a session's system rows in step with what Cairn's system content
should be, by appending only what changed, where it changed.

Before each request it computes the desired sections (instructions, guidance, the skills
header and one entry per skill), diffs them against the journal's effective state, and
commits one hidden system row per changed section: a replacement, or a tombstone. The top
of the conversation is never rewritten, so the provider's prompt cache stays warm. Sections
it does not manage (tool activation, say, or a newer Cairn's) are left exactly as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from desktop.context.sections import (
    GUIDANCE_PREFIX,
    INSTRUCTIONS,
    SKILL_PREFIX,
    SKILLS,
    TOOL_SCHEMA_PREFIX,
    check_caller_section,
    diff_sections,
    section_order,
)
from desktop.context.system_state import SystemState
from desktop.tools.registry import ToolRegistry, TurnInputs
from desktop.tools.sources import skill_tools
from host.rows import TranscriptRow
from host.skills import SkillCatalog, SkillStore, Source
from host.tools import ToolCatalog
from host.transcript import TranscriptWriter

__all__ = ["ContextEngine", "Prepared", "listed_in"]


def listed_in(current: Mapping[str, JsonValue]) -> frozenset[str]:
    """The skills a chat lists now: its ``skill:<id>`` sections that are not tombstoned."""
    return frozenset(name[len(SKILL_PREFIX) :] for name, content in current.items()
                     if name.startswith(SKILL_PREFIX) and content is not None)  # fmt: skip


def _managed(section: str) -> bool:
    return section in (INSTRUCTIONS, SKILLS) or section.startswith((GUIDANCE_PREFIX, SKILL_PREFIX, TOOL_SCHEMA_PREFIX))


@dataclass(frozen=True)
class Prepared:
    """What ``prepare`` appended, and the skill catalog and tools the request goes out with."""

    rows: tuple[TranscriptRow, ...]
    skills: SkillCatalog
    tools: ToolCatalog
    sections: tuple[str, ...] = ()


class ContextEngine:
    """Prepares each request's system rows and tools from a ``SystemState``.

    It keeps no copy of the state; it keeps only the skill stores' parse caches, one per set
    of skill folders, so a scan before every request costs a few ``stat`` calls.
    """

    def __init__(
        self, registry: ToolRegistry | None = None, guidance: Callable[[], Mapping[str, JsonValue]] | None = None
    ) -> None:
        """``guidance``: sections about the tools' sources (the MCP servers'), asked for at
        every request; a route that takes no tools is not given them."""
        self._stores: dict[tuple[tuple[Source, Path], ...], SkillStore] = {}
        self.registry = registry or ToolRegistry([skill_tools])
        self._guidance = guidance

    def store(self, state: SystemState) -> SkillStore:
        store = self._stores.get(state.skill_roots)
        if store is None:
            store = self._stores[state.skill_roots] = SkillStore(list(state.skill_roots))
        return store

    def skills(self, state: SystemState) -> SkillCatalog:
        return self.store(state).scan()

    def desired(
        self,
        state: SystemState,
        catalog: SkillCatalog,
        overrides: Mapping[str, JsonValue] | None = None,
        *,
        tools_allowed: bool = True,
        current: Mapping[str, JsonValue] | None = None,
    ) -> dict[str, JsonValue]:
        """The sections as they should be; ``current``, the chat's effective sections, says
        which skills it lists already (they stay listed whatever the budget)."""
        desired = state.sections(catalog, tools_allowed=tools_allowed, listed=listed_in(current or {}))
        if tools_allowed and self._guidance is not None:
            desired.update(self._guidance())
        for name, content in (overrides or {}).items():
            check_caller_section(name)
            if content is None:
                desired.pop(name, None)
            else:
                desired[name] = content
        return desired

    def tools(self, state: SystemState, catalog: SkillCatalog) -> ToolCatalog:
        """The turn's tools, fresh from the registry's sources."""
        return self.registry.catalog(TurnInputs(state, catalog, self.store(state)))

    def prepare(
        self,
        writer: TranscriptWriter,
        session_id: str,
        state: SystemState,
        *,
        anchor: str | None,
        overrides: Mapping[str, JsonValue] | None = None,
        tools_allowed: bool = True,
        tool_sections: Mapping[str, JsonValue] | None = None,
        tools: ToolCatalog | None = None,
        current: Mapping[str, JsonValue] | None = None,
        skills: SkillCatalog | None = None,
    ) -> Prepared:
        """Append (and commit) one system row per changed section; see the module docstring.

        ``anchor`` is the user row this turn answers, when it was just committed; updates
        between tool calls have none. Raises ``JournalWriteError`` if a row cannot be saved,
        and then nothing may be sent. ``tools_allowed`` is false for a route that takes no
        tools: then nothing is declared, and the skills are listed for reference only.
        ``tool_sections``: ``tool_activation`` and the ``tool_schema:`` sections, for a chat
        with deferred tools (a chat without them keeps its activation section as it is, and
        loses its schema sections). ``tools``: the request's catalog, when the caller has built it already.
        ``current``: the chat's effective sections, when the caller has them folded already.
        ``skills``: this request's skill catalog, when the caller has scanned already.
        """
        catalog = self.skills(state) if skills is None else skills
        if current is None:
            current = writer.effective_state(session_id)
        desired = self.desired(state, catalog, overrides, tools_allowed=tools_allowed, current=current)
        desired.update(tool_sections or {})
        current = {k: v for k, v in current.items() if _managed(k) or k in desired}
        rows: tuple[TranscriptRow, ...] = ()
        if updates := diff_sections(current, desired):
            with writer.together("this request's system content"):  # one commit, not one a section
                rows = tuple(
                    writer.append_system(session_id, name, content, anchor=anchor) for name, content in updates
                )
        if tools is None:
            tools = self.tools(state, catalog) if tools_allowed else ToolCatalog()
        return Prepared(rows, catalog, tools, tuple(sorted(desired, key=section_order)))
