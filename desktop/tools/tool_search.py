"""``tool_search``: how the model finds and activates deferred tools (every MCP tool), and
finds skills. Always declared where tools are (architecture §1, "core tools change once").

A query is one of:

- words, ranked over each deferred tool's name and description (``desktop.tools.ranking``):
  only the matches that score at least 70% of the best one's are activated (five at most), and
  the next few are returned as suggestions, not active, that the model can select by name;
  every activation changes what an on-demand request declares, so a junk match costs a re-read
  of the prompt;
- ``select:name1,name2``: exactly the tools named;
- ``skill:`` and words: the skills that match, listed or not, to load with ``load_skill``
  (nothing is activated: a skill needs no activation).

Nothing is activated past the route's function limit where activation adds declarations. A
tool that the chat's mode or a Never answer would refuse is still activated, and marked so:
activation is not permission, and the gate still checks every call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import JsonValue

from desktop.tools.activation import Activation
from desktop.tools.ranking import best_matches, meaningful, rank_named
from host.permissions import Permissions, identity_of
from host.skills import SkillCatalog
from host.tools import Tool, ToolOutput, ToolSpec

__all__ = ["SKILLS_LISTED", "TOOL_SEARCH", "tool_search"]

SKILLS_LISTED = 10  # the most skills one skill: search names
TOOL_SEARCH = ToolSpec(
    name="tool_search",
    description=(
        "Find tools that are available but not active yet (such as tools from MCP servers) and activate them, "
        "or find skills. Give a few words for what you need: the best-matching tools are activated and others "
        "are suggested. Give 'select:name1,name2' to activate tools by their exact names, such as a suggestion. "
        "Give 'skill:' and a few words to find skills, listed or not, to load with load_skill. Activated tools "
        "can be called from your next step."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": 500,
                "description": "Words, select:name1,name2, or skill: and words",
            }
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    required_scopes={"tools.read"},
    source="builtin",
    read_only=True,
)


def tool_search(
    deferred: Sequence[Tool],
    activation: Activation,
    *,
    room: Callable[[], int | None],
    permissions: Permissions,
    skills: SkillCatalog | None = None,
) -> Tool:
    """The tool, bound to this turn's deferred tools, activation and skills. ``room`` says how
    many more tools may be activated (``None``: no limit applies)."""
    by_name = {tool.name: tool for tool in deferred}

    async def run(arguments: Mapping[str, JsonValue]) -> ToolOutput:
        query = str(arguments.get("query", "")).strip()
        if query.lower().startswith("skill:"):
            return find_skills(query[len("skill:") :].strip(), skills or SkillCatalog())
        missing: list[str] = []
        suggested: list[ToolSpec] = []
        if query.lower().startswith("select:"):
            wanted = list(dict.fromkeys(n.strip() for n in query[len("select:") :].split(",") if n.strip()))
            found = [by_name[n].spec for n in wanted if n in by_name]
            missing = [n for n in wanted if n not in by_name]
        elif not meaningful(query):
            return ToolOutput(
                f"{query!r} has only common words; say what the tool should do (such as 'weather forecast'), "
                "or select tools by name with 'select:name1,name2'.",
                is_error=True,
            )
        else:
            found, suggested = best_matches(query, [t.spec for t in deferred])
        fresh = [s for s in found if s.name not in activation.active]
        space = room()
        if space is not None and len(fresh) > space:
            kept, dropped = fresh[: max(space, 0)], fresh[max(space, 0) :]
        else:
            kept, dropped = fresh, []
        activation.active.update(s.name for s in kept)
        lines = [_line(s, by_name[s.name], permissions) for s in found if s not in dropped]
        if dropped:
            names = ", ".join(s.name for s in dropped)
            lines.append(f"Not activated, because this model takes no more tools in a request: {names}.")
        if missing:
            lines.append(f"No tool is named {', '.join(missing)}.")
        if not found:
            return ToolOutput(f"No tool matches {query!r}." + (f" {lines[-1]}" if missing else ""), is_error=True)
        activated = tuple(sorted(s.name for s in found if s not in dropped))
        text = "Active now:\n" + "\n".join(lines)
        if suggested:
            text += "\nAlso matching, not active (select them by name if you need them):\n" + "\n".join(
                _line(s, by_name[s.name], permissions) for s in suggested
            )
        return ToolOutput(text, activated=activated)

    return Tool(TOOL_SEARCH, run)


def find_skills(words: str, skills: SkillCatalog) -> ToolOutput:
    """The skills that match ``words``, best first, for ``load_skill``."""
    if not skills.skills:
        return ToolOutput("There are no skills in this chat.", is_error=True)
    if not meaningful(words):
        return ToolOutput("Say what the skill is for after 'skill:', such as 'skill: release notes'.", is_error=True)
    ranked = rank_named(words, [(s.name, s.description) for s in skills.skills])[:SKILLS_LISTED]
    if not ranked:
        return ToolOutput(f"No skill matches {words!r}.", is_error=True)
    lines = [f"- {skills.skills[i].name}: {skills.skills[i].description}" for _, i in ranked]
    return ToolOutput("Skills that match (read one with load_skill before you follow it):\n" + "\n".join(lines))


def _line(spec: ToolSpec, tool: Tool, permissions: Permissions) -> str:
    notes = []
    if permissions.mode == "read_only" and not spec.read_only:
        notes.append("this chat is read-only, so calls to it will be refused")
    if identity_of(tool) in permissions.never:
        notes.append("you chose never to allow it, so calls to it will be refused")
    said = f" ({'; '.join(notes)})" if notes else ""
    return f"- {spec.name}: {spec.description}{said}"
