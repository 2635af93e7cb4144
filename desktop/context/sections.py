"""Sections: the named, replaceable pieces of Cairn's system content, and how they change.

The state is a mapping of section name to content. A change between two states is a list
of (section, content) updates in the fixed rendering order, with ``None`` for a section
that is gone. The ``skill:`` prefix belongs to the skill catalog alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from host.errors import CairnError

__all__ = [
    "GUIDANCE_PREFIX",
    "INSTRUCTIONS",
    "SKILLS",
    "SKILL_PREFIX",
    "TOOL_ACTIVATION",
    "TOOL_SCHEMA_PREFIX",
    "SectionNameError",
    "check_caller_section",
    "diff_sections",
    "section_order",
]

INSTRUCTIONS = "instructions"
SKILLS = "skills"
SKILL_PREFIX = "skill:"
GUIDANCE_PREFIX = "guidance:"
TOOL_ACTIVATION = "tool_activation"
TOOL_SCHEMA_PREFIX = "tool_schema:"  # one activated tool's schema, under the proxy declaration policy


class SectionNameError(CairnError, ValueError):
    """A section name that a caller may not use."""


def section_order(name: str) -> tuple[int, str]:
    """The fixed rendering order: instructions, guidance by name, the skills header, skill
    entries by id, tool activation, the activated tools' schemas by name; anything else
    after, by name."""
    if name == INSTRUCTIONS:
        return (0, "")
    if name.startswith(GUIDANCE_PREFIX):
        return (1, name)
    if name == SKILLS:
        return (2, "")
    if name.startswith(SKILL_PREFIX):
        return (3, name)
    if name == TOOL_ACTIVATION:
        return (4, "")
    if name.startswith(TOOL_SCHEMA_PREFIX):
        return (5, name)
    return (6, name)


def check_caller_section(name: str) -> None:
    """Refuse a section a temporary replacement may not set: only ``instructions`` and
    ``guidance:*`` may be replaced. The skill catalog's sections, ``tool_activation`` (seed
    002: temporary replacement preserves the activation metadata) and sections Cairn does not
    manage are never touched, so nothing an override sets can outlive it unrestored."""
    if not name or not name.isprintable():
        raise SectionNameError(f"Section name {name!r} must be non-empty printable text.")
    if name == SKILLS or name.startswith(SKILL_PREFIX):
        raise SectionNameError(f"Section {name!r} belongs to the skill catalog; it cannot be set directly.")
    if name != INSTRUCTIONS and not (name.startswith(GUIDANCE_PREFIX) and len(name) > len(GUIDANCE_PREFIX)):
        raise SectionNameError(
            f"Section {name!r} cannot be replaced for a turn; only 'instructions' and 'guidance:<name>' can."
        )


def diff_sections(current: Mapping[str, JsonValue], desired: Mapping[str, JsonValue]) -> list[tuple[str, JsonValue]]:
    """The updates that turn ``current`` into ``desired``, in rendering order."""
    changed = [(name, content) for name, content in desired.items() if current.get(name, _ABSENT) != content]
    removed = [(name, None) for name in current if name not in desired]
    return sorted([*changed, *removed], key=lambda update: section_order(update[0]))


_ABSENT = object()
