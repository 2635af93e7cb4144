"""``tool_search``: how the model finds and activates deferred tools (every MCP tool).

A query is words, ranked over each deferred tool's name and description with BM25, or
``select:name1,name2`` for exact names. Common words ("in", "a", "the", "tool") are left out
and plurals folded, so a search for "the weather in a valley" ranks on what it asks for. A
word search activates only the matches that score at least half the best one's (five at most)
and returns the next few as suggestions, not active, that the model can select by name; every
activation changes what an on-demand request declares, so a junk match costs a re-read of the
prompt. ``select:`` activates exactly the names given. Nothing is activated past the route's
function limit where activation adds declarations.

A tool that the chat's mode or a Never answer would refuse is still activated, and marked so:
activation is not permission, and the gate still checks every call.
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

__all__ = ["STOP_WORDS", "TOOL_SEARCH", "best_matches", "rank", "tool_search"]

TOP = 5  # at most this many activated by one word search
SUGGEST = 5  # and this many more named as suggestions
RELATIVE = 0.5  # a match is activated when it scores at least this share of the best one's
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "get",
        "give",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "need",
        "of",
        "on",
        "or",
        "please",
        "show",
        "some",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "this",
        "those",
        "to",
        "tool",
        "tools",
        "use",
        "using",
        "want",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
TOOL_SEARCH = ToolSpec(
    name="tool_search",
    description=(
        "Find tools that are available but not active yet (such as tools from MCP servers) and activate them. "
        "Give a few words for what you need: the best matches are activated and others are suggested. Or give "
        "'select:name1,name2' to activate tools by their exact names, such as a suggestion. Activated tools can "
        "be called from your next step."
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


def _fold(word: str) -> str:
    """A plural folded to its singular, roughly: enough for "tickets" to find "ticket"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    words = _WORD.findall(text.lower().replace("_", " ").replace("-", " "))
    return [_fold(w) for w in words if w not in STOP_WORDS]


def rank(query: str, specs: Sequence[ToolSpec]) -> list[tuple[float, ToolSpec]]:
    """``specs`` that match ``query`` and their scores, best first (BM25 over name and
    description, common words left out)."""
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
    return [(-negative, spec) for negative, _, spec in sorted(scored)]


def best_matches(query: str, specs: Sequence[ToolSpec]) -> tuple[list[ToolSpec], list[ToolSpec]]:
    """The matches a word search activates (those scoring at least ``RELATIVE`` of the best,
    ``TOP`` at most) and the ones it suggests (the next ``SUGGEST``)."""
    ranked = rank(query, specs)
    if not ranked:
        return [], []
    floor = ranked[0][0] * RELATIVE
    strong = [spec for score, spec in ranked if score >= floor][:TOP]
    rest = [spec for _, spec in ranked if spec not in strong][:SUGGEST]
    return strong, rest


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
        suggested: list[ToolSpec] = []
        if query.lower().startswith("select:"):
            wanted = [n.strip() for n in query[len("select:") :].split(",") if n.strip()]
            found = [by_name[n].spec for n in wanted if n in by_name]
            missing = [n for n in wanted if n not in by_name]
        elif not _words(query):
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


def _line(spec: ToolSpec, tool: Tool, permissions: Permissions) -> str:
    notes = []
    if permissions.mode == "read_only" and not spec.read_only:
        notes.append("this chat is read-only, so calls to it will be refused")
    if identity_of(tool) in permissions.never:
        notes.append("you chose never to allow it, so calls to it will be refused")
    said = f" ({'; '.join(notes)})" if notes else ""
    return f"- {spec.name}: {spec.description}{said}"
