"""Running one conversation under one strategy against a loopback provider.

``fixed``, ``on_demand`` and ``proxy`` go through Cairn itself: the real runtime, context
engine, declaration policy and compaction, with the loopback route bound in a catalog of the
bench's own (verified for fixed declarations under ``fixed``; under ``proxy`` the account
chooses the proxy policy). ``rewrite`` and ``drop_oldest`` are the
naive hosts Cairn is compared with, replaying the same conversation:

- ``rewrite`` re-renders its whole system content (every section, in order) and declares its
  whole tool catalog at the top of every request, so any change rewrites the prompt's start;
- ``drop_oldest`` keeps its opening and drops the oldest exchanges to fit the context, instead
  of compacting.

Every figure comes from the usage the loopback provider recorded.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import JsonValue

from desktop.bench.chat import place_tool
from desktop.bench.conversations import Conversation, Step, tool_name
from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.context_engine import ContextEngine
from desktop.context.estimate import ContextBudget, estimate_tokens
from desktop.context.messages import Context, Message, SystemUpdatePart, message_from_row
from desktop.context.projection import project
from desktop.context.sections import SKILL_PREFIX, section_order
from desktop.context.system_state import LOAD_SKILL, SystemState
from desktop.loopback import CALL, LoopbackProvider, RecordedRequest
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.routes import ResolvedRoute, resolve_route
from desktop.settings.store import Account
from desktop.tools.registry import ToolRegistry, TurnInputs
from desktop.tools.sources import skill_tools
from desktop.turn.runtime import ChatRuntime
from host.content import MessageContent, PlanRecord, RouteFallback, ToolResultPart
from host.folds import fold_sections
from host.journal import Journal
from host.paths import CairnPaths
from host.permissions import PermissionPolicy
from host.rows import TranscriptRow
from host.tools import Tool, ToolOutput, ToolSpec
from host.transcript import TranscriptWriter
from host.usage import UsageLedger

__all__ = ["STRATEGIES", "BenchTools", "Run", "apply_step", "bench_state", "run", "strategies_for"]

MODEL = "loopback-chat"
STRATEGIES = ("fixed", "on_demand", "proxy", "rewrite", "drop_oldest")
CAIRN = ("fixed", "on_demand", "proxy")  # the strategies that are Cairn's own


@dataclass
class Run:
    """What one strategy sent for one conversation, request by request."""

    conversation: str
    strategy: str
    requests: list[RecordedRequest]
    turn_of: list[int]  # the turn each request belongs to
    epochs: int = 0
    fallbacks: int = 0  # declaration policies that fell back, and route fallbacks
    notes: list[str] = field(default_factory=list)
    # What Cairn's own usage ledger recorded from the provider's reports (its strategies only).
    ledger_prompt: int | None = None
    ledger_cached: int | None = None
    failed_calls: list[str] = field(default_factory=list)  # tool results that were errors, in words


class BenchTools:
    """The conversation's MCP servers, connected as its steps say, each tool read-only with a
    short schema (a conversation without named servers has one, ``bench``, of ``tools`` tools)."""

    def __init__(self, conversation: Conversation) -> None:
        named = dict(conversation.servers)
        self.servers = named or {"bench": tuple(_spec(n) for n in range(conversation.tools))}
        self.connected: frozenset[str] = frozenset() if named else frozenset(self.servers)

    @property
    def specs(self) -> list[ToolSpec]:
        return [spec for name in sorted(self.connected) for spec in self.servers[name]]

    def follow(self, step: Step) -> None:
        """Connect and disconnect servers as ``step`` says."""
        if step.servers is not None:
            self.connected = step.servers

    def source(self, _inputs: TurnInputs) -> list[Tool]:
        async def answer(arguments: Mapping[str, JsonValue]) -> ToolOutput:
            return ToolOutput(f"Done: {json.dumps(dict(arguments), sort_keys=True)}")

        return [Tool(spec, answer) for spec in self.specs]


def _spec(number: int) -> ToolSpec:
    topics = ("weather", "tides", "maps", "huts", "trains", "sunrise", "avalanche", "water", "rescue", "permits")
    topic = topics[number % len(topics)]
    description = f"Look up {topic} for a place on the trail (service {number}): the latest report, with its time."
    return place_tool(tool_name(number), description, server="bench", place="A place name, as on the map.")


def strategies_for(conversation: Conversation) -> tuple[str, ...]:
    """The strategies that make sense for ``conversation``: a chat past its context cannot be
    sent whole, so the long one is compared with the host that drops, not with a rewrite that
    would overflow."""
    if conversation.context < 16_000:
        return (*CAIRN, "drop_oldest")
    return (*CAIRN, "rewrite")


def run(conversation: Conversation, strategy: str, *, unit: int = 64, work: Path | None = None) -> Run:
    """``conversation`` under ``strategy`` on a fresh loopback provider with ``unit``-token
    cache units."""
    if strategy not in STRATEGIES:
        raise ValueError(f"There is no strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}.")
    with tempfile.TemporaryDirectory(dir=work) as folder:
        home = Path(folder)
        if strategy in CAIRN:
            with LoopbackProvider(cache_unit=unit) as provider:
                return asyncio.run(_cairn(conversation, strategy, provider, home))
        # The naive hosts replay the chat Cairn had (the same turns, tool calls and results),
        # each request built their way, on a provider of their own.
        with LoopbackProvider(cache_unit=unit) as source:
            asyncio.run(_cairn(conversation, "on_demand", source, home))
        with Journal.open(CairnPaths.under(home).journal) as journal:
            rows = TranscriptWriter(journal).model_order(journal.sessions()[0].id)
        with LoopbackProvider(cache_unit=unit) as provider:
            route = _route(conversation, provider.base_url, home / "replay", strategy)
            return _replay(conversation, strategy, rows, route, provider)


def bench_state(paths: CairnPaths, instructions: str) -> SystemState:
    return SystemState(custom_instructions=instructions, environment="The person uses Linux.",
                       skill_roots=(("user", paths.skills_dir),))  # fmt: skip


def apply_step(step: Step, paths: CairnPaths, instructions: str) -> str:
    """Make the step's edits; the instructions from now on."""
    if step.skill is not None:
        name, description = step.skill
        folder = paths.skills_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{description}\n")
    return step.instructions if step.instructions is not None else instructions


def _catalog(path: Path, base_url: str, *, fixed: bool) -> Path:
    """The transport catalog with the loopback endpoint bound exactly, verified for fixed
    declarations when ``fixed`` (a binding of the bench's own, never shipped)."""
    data: dict[str, Any] = json.loads(load_transport_catalog().model_dump_json())
    data["bindings"].append(
        {"provider": "custom", "model": MODEL, "base_url": base_url, "flags": {"mid_conversation_system": True},
         "function_limit": 128, "fixed_declarations_verified": fixed}
    )  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _route(conversation: Conversation, base_url: str, home: Path, strategy: str) -> ResolvedRoute:
    paths = CairnPaths.under(home)
    home.mkdir(parents=True, exist_ok=True)
    account = Account(id="account-bench", name="Bench", provider="custom", base_url=base_url, default_model=MODEL,
                      context_limit=conversation.context,
                      tool_declarations="proxy" if strategy == "proxy" else "automatic")  # fmt: skip
    catalog = load_transport_catalog(_catalog(home / "catalog.json", base_url, fixed=strategy == "fixed"))
    return resolve_route(account, None, catalog, load_models_dev(paths.cache_dir))


async def _cairn(
    conversation: Conversation, strategy: str, provider: LoopbackProvider, home: Path, turns: int | None = None
) -> Run:
    paths = CairnPaths.under(home)
    paths.skills_dir.mkdir(parents=True, exist_ok=True)
    route = _route(conversation, provider.base_url, home, strategy)
    tools = BenchTools(conversation)
    engine = ContextEngine(ToolRegistry([skill_tools, tools.source]))
    policy = PermissionPolicy(default_mode="auto")
    result = Run(conversation.name, strategy, [], [])
    instructions = [""]  # the current instructions, read by the state on each request
    with Journal.open(paths.journal) as journal:
        session = journal.create_session("bench").id
        async with httpx.AsyncClient(timeout=60) as http:
            runtime = ChatRuntime(journal, route, OpenAICompatClient(http, route.actual.base_url, api_key=None),
                                  engine=engine, system=lambda: bench_state(paths, instructions[0]),
                                  policy=lambda: policy)  # fmt: skip
            for number, step in enumerate(conversation.steps[:turns]):
                instructions[0] = apply_step(step, paths, instructions[0])
                tools.follow(step)
                seen = len(provider.requests)
                outcome = await runtime.send(session, _proxied(step.text) if strategy == "proxy" else step.text)
                if not outcome.ok:
                    raise RuntimeError(f"turn {number} of {conversation.name} ({strategy}) failed: {outcome.error}")
                result.turn_of += [number] * (len(provider.requests) - seen)
        rows = TranscriptWriter(journal).model_order(session)
        totals = UsageLedger(journal).totals(session)
    result.requests = list(provider.requests)
    result.ledger_prompt, result.ledger_cached = totals.prompt_tokens, totals.cached_tokens
    plans = [m for r in rows if isinstance(m := r.meta(), PlanRecord)]
    result.epochs = len({p.epoch for p in plans})
    result.fallbacks = sum(1 for p in plans if p.fallback) + sum(1 for r in rows if isinstance(r.meta(), RouteFallback))
    result.notes = sorted({p.fallback for p in plans if p.fallback})
    result.failed_calls = _failed_calls(rows)
    return result


def _proxied(text: str) -> str:
    """``text`` with each scripted call of a deferred tool made through ``use_tool``, as a model
    under the proxy policy makes it (the core tools are called as they are)."""

    def through(match: re.Match[str]) -> str:
        name, arguments = match.group(1), match.group(2)
        if "__" not in name:  # a core tool: tool_search, a built-in
            return match.group(0)
        return f"[[call use_tool {json.dumps({'name': name, 'arguments': json.loads(arguments)})}]]"

    return CALL.sub(through, text)


def _failed_calls(rows: list[TranscriptRow]) -> list[str]:
    failed = []
    for row in rows:
        body = row.body()
        if row.role == "tool" and isinstance(body, MessageContent):
            failed += [part.content[:200] for part in body.parts if isinstance(part, ToolResultPart) and part.is_error]
    return failed


def _replay(
    conversation: Conversation,
    strategy: str,
    rows: list[TranscriptRow],
    route: ResolvedRoute,
    provider: LoopbackProvider,
) -> Run:
    """A naive host's requests for the chat in ``rows``: at each reply, its whole system
    content rendered at the top and its whole tool catalog declared; ``drop_oldest`` also drops
    the oldest messages to fit the context instead of compacting."""
    servers = BenchTools(conversation)
    threshold = ContextBudget(conversation.context, "account").threshold
    result = Run(conversation.name, strategy, [], [], epochs=1)
    turn = -1
    with httpx.Client(timeout=60) as http:
        for index, row in enumerate(rows):
            if row.role == "user" and not row.hidden:
                turn += 1
                servers.follow(conversation.steps[turn])
            if row.role != "assistant" or row.hidden:
                continue
            before = rows[:index]
            state = fold_sections(before)
            top = Message(role="system", parts=[SystemUpdatePart(section=k, content=state[k])
                                                for k in sorted(state, key=section_order)])  # fmt: skip
            rest = [m for m in (message_from_row(r) for r in before if r.role != "system") if m is not None]
            tools = [*servers.specs, *([LOAD_SKILL] if any(k.startswith(SKILL_PREFIX) for k in state) else [])]
            body = project(Context(messages=[top, *rest], tools=tools), route, stream=False).body_bytes
            while strategy == "drop_oldest" and estimate_tokens(len(body)) > threshold and len(rest) > 1:
                rest.pop(0)
                while len(rest) > 1 and rest[0].role != "user":  # never a result without its call
                    rest.pop(0)
                body = project(Context(messages=[top, *rest], tools=tools), route, stream=False).body_bytes
            http.post(f"{provider.base_url}/chat/completions", content=body,
                      headers={"Content-Type": "application/json"})  # fmt: skip
            result.turn_of.append(max(turn, 0))
    result.requests = list(provider.requests)
    return result
