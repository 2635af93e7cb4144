"""What Cairn's system content should be right now: instructions, guidance and skills.

Nothing here changes from turn to turn on its own (no clock, no counters), so an idle chat
appends nothing; a change appends only the sections it touches.
"""

from __future__ import annotations

import locale
import os
import platform
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from desktop.context.sections import GUIDANCE_PREFIX, INSTRUCTIONS, SKILL_PREFIX, SKILLS
from host.paths import CairnPaths
from host.skills import Skill, SkillCatalog, SkillStore, Source
from host.tools import ToolSpec

__all__ = [
    "BUILTIN_INSTRUCTIONS",
    "LOAD_SKILL",
    "SKILLS_HEADER",
    "SKILLS_HEADER_NO_TOOLS",
    "SKILLS_HEADER_NO_TOOLS_PARTIAL",
    "SKILLS_HEADER_PARTIAL",
    "SKILL_LISTING_BUDGET",
    "SystemState",
    "environment_guidance",
    "listed_skills",
]

BUILTIN_INSTRUCTIONS = (
    "You are the assistant in Cairn, a desktop chat app. Answer clearly and concisely; use Markdown, "
    "and fenced code blocks with a language name for code.\n"
    "Later in the conversation a system-update block that names a section may replace one section of these "
    "instructions, or mark it removed. Follow the latest version of every section."
)

SKILLS_HEADER = (
    "Skills extend what you can do. Each skill is listed by name with what it is for. Before you follow "
    "a skill, call load_skill with its name to read its full instructions."
)
SKILLS_HEADER_NO_TOOLS = (
    "These skills are listed for reference only: tools are not available in this chat, so their full "
    "instructions cannot be loaded. Use what each description says; say so when a request needs more."
)

# Said when the catalog is larger than what a chat lists. Fixed texts, never a count: a
# count would change with every skill added or removed. Past the budget the header says the
# same whatever the number, so a skill added there appends nothing at all.
SKILLS_HEADER_PARTIAL = (
    f"{SKILLS_HEADER} Not every skill is listed: to find one for a task, call tool_search with 'skill:' and a "
    "few words for what it should do (such as 'skill: release notes'); load_skill reads any skill it finds."
)
SKILLS_HEADER_NO_TOOLS_PARTIAL = f"{SKILLS_HEADER_NO_TOOLS} Not every skill is listed."
SKILL_LISTING_BUDGET = 50  # skills a chat lists one by one; the settings' default (desktop.settings.store)

LOAD_SKILL = ToolSpec(
    name="load_skill",
    description="Read the full instructions of one of the listed skills.",
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name, as listed."}},
        "required": ["name"],
        "additionalProperties": False,
    },
    required_scopes={"skills.read"},
    source="skill",
    read_only=True,
)


def listed_skills(catalog: SkillCatalog, budget: int, listed: Collection[str] = ()) -> list[Skill]:
    """The skills a chat lists, by name: every one of ``listed`` (those it lists already) still
    in the catalog, then the others by name while the budget has room. The budget never takes
    a listed skill away; a skill gone from disk leaves its place to the next by name."""
    kept = frozenset(listed)
    room = budget - sum(1 for skill in catalog.skills if skill.name in kept)
    shown = []
    for skill in catalog.skills:  # sorted by name
        if skill.name in kept:
            shown.append(skill)
        elif room > 0:
            shown.append(skill)
            room -= 1
    return shown


def environment_guidance() -> str:
    """The OS and locale, in one stable sentence."""
    language = locale.getlocale()[0] or os.environ.get("LANG", "").split(".")[0] or "unknown"
    return f"The person uses {platform.system() or 'an unknown OS'} with the locale {language}."


@dataclass(frozen=True)
class SystemState:
    """What the system content should be, built from the settings each time they change.

    Immutable: nothing else keeps its own copy of the instructions, the workspace or the skill
    folders; a change makes a new state, and the next turn hands it to the context engine.
    """

    custom_instructions: str = ""
    workspace: Path | None = None
    environment: str = ""
    skill_roots: tuple[tuple[Source, Path], ...] = ()
    skills_listed: int = SKILL_LISTING_BUDGET

    @classmethod
    def for_app(
        cls,
        paths: CairnPaths,
        custom_instructions: str,
        workspace: Path | None,
        skills_listed: int = SKILL_LISTING_BUDGET,
    ) -> SystemState:
        """The state Cairn runs with: the user's skills folder, the workspace's, this machine."""
        roots: list[tuple[Source, Path]] = [("user", paths.skills_dir)]
        if workspace is not None:
            workspace = workspace.expanduser().absolute()
            roots.append(("workspace", SkillStore.workspace_root(workspace)))
        return cls(custom_instructions, workspace, environment_guidance(), tuple(roots), skills_listed)

    def sections(
        self, catalog: SkillCatalog, *, tools_allowed: bool = True, listed: Collection[str] = ()
    ) -> dict[str, JsonValue]:
        """The sections as they should be. ``listed``: the skills the chat lists already, which
        it keeps listing whatever the budget (see ``listed_skills``)."""
        state: dict[str, JsonValue] = {INSTRUCTIONS: self.instructions()}
        if self.environment:
            state[f"{GUIDANCE_PREFIX}environment"] = self.environment
        if self.workspace is not None:
            state[f"{GUIDANCE_PREFIX}workspace"] = f"The workspace folder is {self.workspace}."
        if catalog.skills:
            shown = listed_skills(catalog, self.skills_listed, listed)
            if len(shown) == len(catalog.skills):
                state[SKILLS] = SKILLS_HEADER if tools_allowed else SKILLS_HEADER_NO_TOOLS
            else:
                state[SKILLS] = SKILLS_HEADER_PARTIAL if tools_allowed else SKILLS_HEADER_NO_TOOLS_PARTIAL
            for skill in shown:
                state[f"{SKILL_PREFIX}{skill.name}"] = f"{skill.name}: {skill.description}"
        return state

    def instructions(self) -> str:
        custom = self.custom_instructions.strip()
        if not custom:
            return BUILTIN_INSTRUCTIONS
        return f"{BUILTIN_INSTRUCTIONS}\n\nThe person's own instructions:\n{custom}"
