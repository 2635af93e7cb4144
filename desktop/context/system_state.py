"""What Cairn's system content should be right now: instructions, guidance and skills.

Nothing here changes from turn to turn on its own (no clock, no counters), so an idle chat
appends nothing; a change appends only the sections it touches.
"""

from __future__ import annotations

import locale
import os
import platform
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from desktop.context.sections import GUIDANCE_PREFIX, INSTRUCTIONS, SKILL_PREFIX, SKILLS
from host.paths import CairnPaths
from host.skills import SkillCatalog, SkillStore, Source
from host.tools import ToolSpec

__all__ = [
    "BUILTIN_INSTRUCTIONS",
    "LOAD_SKILL",
    "SKILLS_HEADER",
    "SKILLS_HEADER_NO_TOOLS",
    "SystemState",
    "environment_guidance",
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

    @classmethod
    def for_app(cls, paths: CairnPaths, custom_instructions: str, workspace: Path | None) -> SystemState:
        """The state Cairn runs with: the user's skills folder, the workspace's, this machine."""
        roots: list[tuple[Source, Path]] = [("user", paths.skills_dir)]
        if workspace is not None:
            workspace = workspace.expanduser().absolute()
            roots.append(("workspace", SkillStore.workspace_root(workspace)))
        return cls(custom_instructions, workspace, environment_guidance(), tuple(roots))

    def sections(self, catalog: SkillCatalog, *, tools_allowed: bool = True) -> dict[str, JsonValue]:
        state: dict[str, JsonValue] = {INSTRUCTIONS: self.instructions()}
        if self.environment:
            state[f"{GUIDANCE_PREFIX}environment"] = self.environment
        if self.workspace is not None:
            state[f"{GUIDANCE_PREFIX}workspace"] = f"The workspace folder is {self.workspace}."
        if catalog.skills:
            state[SKILLS] = SKILLS_HEADER if tools_allowed else SKILLS_HEADER_NO_TOOLS
            for skill in catalog.skills:
                state[f"{SKILL_PREFIX}{skill.name}"] = f"{skill.name}: {skill.description}"
        return state

    def instructions(self) -> str:
        custom = self.custom_instructions.strip()
        if not custom:
            return BUILTIN_INSTRUCTIONS
        return f"{BUILTIN_INSTRUCTIONS}\n\nThe person's own instructions:\n{custom}"
