"""``tool_search``: how the model finds and activates deferred tools (every MCP tool).

A query is words, ranked over each deferred tool's name and description with BM25, or
``select:name1,name2`` for exact names. A query activates at most its top five matches and
``select:`` exactly the names given, never past the route's function limit where activation
adds declarations. It returns the names with their descriptions. A tool that the chat's mode
or a Never answer would refuse is still activated, and marked so: activation is not
permission, and the gate still checks every call.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from pydantic import JsonValue

from desktop.tools.activation import Activation
from host.permissions import Permissions, identity_of
from host.tools import Tool, ToolOutput, ToolSpec

__all__ = ["TOOL_SEARCH", "rank", "tool_search"]

TOP = 5
TOOL_SEARCH = ToolSpec(
    name="tool_search",
    description=(
        "Find tools that are available but not active yet (such as tools from MCP servers) and activate them. "
        "Give a few words for what you need, or 'select:name1,name2' to activate tools by exact name. Activated "
        "tools can be called from your next step."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Words, or select:a,b"}
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    required_scopes={"tools.read"},
    source="builtin",
    read_only=True,
)
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("_", " ").replace("-", " "))


def rank(query: str, specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    """``specs`` that match ``query``, best first (BM25 over name and description)."""
    documents = [_words(f"{s.name} {s.name} {s.description}") for s in specs]  # the name counts twice
    terms = set(_words(query))
    if not terms or not documents:
        return []
    average = sum(len(d) for d in documents) / len(documents)
    frequency = Counter(term for d in documents for term in set(d))
    scored = []
    for spec, document in zip(specs, documents, strict=True):
        counts = Counter(document)
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (len(documents) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(document) / average))
        if score > 0:
            scored.append((-score, spec.name, spec))
    return [spec for _, _, spec in sorted(scored)]


def tool_search(
    deferred: Sequence[Tool],
    activation: Activation,
    *,
    room: Callable[[], int | None],
    permissions: Permissions,
) -> Tool:
    """The tool, bound to this turn's deferred tools and activation. ``room`` says how many
    more tools may be activated (``None``: no limit applies)."""
    by_name = {tool.name: tool for tool in deferred}

    async def run(arguments: Mapping[str, JsonValue]) -> ToolOutput:
        query = str(arguments.get("query", "")).strip()
        missing: list[str] = []
        if query.lower().startswith("select:"):
            wanted = [n.strip() for n in query[len("select:") :].split(",") if n.strip()]
            found = [by_name[n].spec for n in wanted if n in by_name]
            missing = [n for n in wanted if n not in by_name]
        else:
            found = rank(query, [t.spec for t in deferred])[:TOP]
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
        return ToolOutput("Active now:\n" + "\n".join(lines), activated=activated)

    return Tool(TOOL_SEARCH, run)


def _line(spec: ToolSpec, tool: Tool, permissions: Permissions) -> str:
    notes = []
    if permissions.mode == "read_only" and not spec.read_only:
        notes.append("this chat is read-only, so calls to it will be refused")
    if identity_of(tool) in permissions.never:
        notes.append("you chose never to allow it, so calls to it will be refused")
    said = f" ({'; '.join(notes)})" if notes else ""
    return f"- {spec.name}: {spec.description}{said}"
