"""The context engine: keeps a session's system rows in step with what Cairn's system content
should be, by appending only what changed, where it changed.

Before each request it computes the desired sections (instructions, guidance, the skills
header and one entry per skill), diffs them against the journal's effective state, and
commits one hidden system row per changed section: a replacement, or a tombstone. The top
of the conversation is never rewritten, so the provider's prompt cache stays warm. Sections
it does not manage (tool activation, say, or a newer Cairn's) are left exactly as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from desktop.context import ToolCallPart, ToolResultPart
from desktop.sections import (
    GUIDANCE_PREFIX,
    INSTRUCTIONS,
    SKILL_PREFIX,
    SKILLS,
    check_caller_section,
    diff_sections,
    section_order,
)
from desktop.system_state import LOAD_SKILL, SystemState
from desktop.tool_calls import NoTools, ToolExecutor
from host.skills import SkillCatalog, SkillError, SkillStore
from host.tools import ToolSpec
from host.transcript import TranscriptRow, TranscriptWriter

__all__ = ["ContextEngine", "Prepared", "SkillTools"]


def _managed(section: str) -> bool:
    return section in (INSTRUCTIONS, SKILLS) or section.startswith((GUIDANCE_PREFIX, SKILL_PREFIX))


@dataclass(frozen=True)
class Prepared:
    """What ``prepare`` appended, and the catalog and tools the request goes out with."""

    rows: tuple[TranscriptRow, ...]
    catalog: SkillCatalog
    tools: tuple[ToolSpec, ...]
    sections: tuple[str, ...] = ()


class SkillTools:
    """Runs ``load_skill`` through the skill store's bridge, against the current catalog."""

    def __init__(self, store: SkillStore, fallback: ToolExecutor | None = None) -> None:
        self.store = store
        self.catalog = SkillCatalog()
        self._fallback = fallback or NoTools()

    async def execute(self, call: ToolCallPart) -> ToolResultPart:
        if call.name != LOAD_SKILL.name:
            return await self._fallback.execute(call)
        name = call.arguments.get("name")
        if not isinstance(name, str):
            return ToolResultPart(call_id=call.call_id, content="load_skill needs a skill name.", is_error=True)
        try:
            body = self.store.load_body(name, self.catalog)
        except SkillError as exc:
            return ToolResultPart(call_id=call.call_id, content=str(exc), is_error=True)
        return ToolResultPart(call_id=call.call_id, content=body)


class ContextEngine:
    def __init__(self, state: SystemState) -> None:
        self.state = state
        self.executor = SkillTools(state.skills)

    def desired(self, catalog: SkillCatalog, overrides: Mapping[str, JsonValue] | None = None) -> dict[str, JsonValue]:
        desired = self.state.sections(catalog)
        for name, content in (overrides or {}).items():
            check_caller_section(name)
            if content is None:
                desired.pop(name, None)
            else:
                desired[name] = content
        return desired

    def prepare(
        self,
        writer: TranscriptWriter,
        session_id: str,
        *,
        anchor: str | None,
        overrides: Mapping[str, JsonValue] | None = None,
    ) -> Prepared:
        """Append (and commit) one system row per changed section; see the module docstring.

        ``anchor`` is the user row this turn answers, when it was just committed; updates
        between tool calls have none. Raises ``JournalWriteError`` if a row cannot be saved,
        and then nothing may be sent.
        """
        catalog = self.state.catalog()
        desired = self.desired(catalog, overrides)
        current = {k: v for k, v in writer.effective_state(session_id).items() if _managed(k) or k in desired}
        rows = tuple(
            writer.append_system(session_id, name, content, anchor=anchor)
            for name, content in diff_sections(current, desired)
        )
        self.executor.catalog = catalog
        return Prepared(rows, catalog, tuple(self.state.tools(catalog)), tuple(sorted(desired, key=section_order)))
