"""Deferred tools for the declaration tests, as an MCP server's would arrive: a small lab of
read-only tools and one that needs two scopes, each run counted.

Also the pieces to drive a chat with them: a transport catalog that binds the loopback
endpoint (optionally verified for fixed declarations), the route, and a runtime whose gate
counts every before-tool hook call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import JsonValue

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SystemState
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.routes import ResolvedRoute, resolve_route
from desktop.settings.store import Account
from desktop.tools.registry import ToolRegistry, TurnInputs
from desktop.tools.sources import skill_tools
from desktop.turn.approvals import Approver
from desktop.turn.events import RuntimeEvent
from desktop.turn.runtime import ChatRuntime
from host.journal import Journal
from host.paths import CairnPaths
from host.permissions import Decision, PermissionPolicy, ToolGate, ToolRequest
from host.tools import Tool, ToolOutput, ToolSpec

MODEL = "loopback-chat"
SOURCE = "mcp:lab"
# Two scopes, built as a set: their iteration order depends on PYTHONHASHSEED.
SYNC_SCOPES = {"mcp.lab.read", "mcp.lab.write"}

LAB: dict[str, tuple[str, str]] = {  # name: (description, its one string argument)
    "lab__weather": ("Weather forecast for a city.", "city"),
    "lab__stocks": ("Share price of a stock symbol.", "symbol"),
    "lab__tides": ("Tide table for a port.", "port"),
    "lab__translate": ("Translate text into English.", "text"),
    "lab__clock": ("The time in a city now.", "city"),
    "lab__moon": ("Moon phase tonight.", "where"),
}


def lab_spec(name: str, description: str, argument: str, *, scopes: Iterable[str] = ("mcp.lab.read",)) -> ToolSpec:
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {argument: {"type": "string", "maxLength": 200}},
        "additionalProperties": False,
    }
    return ToolSpec(
        name=name,
        description=description,
        parameters=parameters,
        required_scopes=set(scopes),
        source=SOURCE,
        read_only=set(scopes) == {"mcp.lab.read"},
        deferred=True,
    )


def sync_spec() -> ToolSpec:
    return lab_spec("lab__sync", "Synchronise the lab notebook.", "notebook", scopes=SYNC_SCOPES)


@dataclass
class Lab:
    """The deferred tools; ``specs`` may be changed between turns (a server's list_changed)."""

    specs: dict[str, ToolSpec] = field(
        default_factory=lambda: {n: lab_spec(n, d, a) for n, (d, a) in LAB.items()} | {"lab__sync": sync_spec()}
    )
    runs: list[str] = field(default_factory=list)

    def source(self, _inputs: TurnInputs) -> list[Tool]:
        def runner(name: str) -> Callable[[Mapping[str, JsonValue]], Any]:
            async def run(arguments: Mapping[str, JsonValue]) -> ToolOutput:
                self.runs.append(name)
                return ToolOutput(f"{name} answered {json.dumps(dict(arguments), sort_keys=True)}")

            return run

        return [Tool(spec, runner(name)) for name, spec in sorted(self.specs.items())]


def lab_catalog(path: Path, base_url: str, *, fixed: bool, function_limit: int = 128) -> Path:
    """A copy of the transport catalog with one exact binding for the loopback endpoint,
    verified for fixed declarations when ``fixed``."""
    data: dict[str, Any] = json.loads(load_transport_catalog().model_dump_json())
    data["bindings"].append(
        {
            "provider": "custom",
            "model": MODEL,
            "base_url": base_url,
            "flags": {"mid_conversation_system": True},
            "function_limit": function_limit,
            "fixed_declarations_verified": fixed,
        }
    )
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def lab_account(base_url: str, *, name: str = "Lab") -> Account:
    """The same account in every process (its id comes from its name): a plan records it."""
    return Account(id=f"account-{name.lower().replace(' ', '-')}", name=name, provider="custom", base_url=base_url,
                   default_model=MODEL, context_limit=128_000)  # fmt: skip


def lab_route(account: Account, catalog: Path, paths: CairnPaths, model: str | None = None) -> ResolvedRoute:
    return resolve_route(account, model, load_transport_catalog(catalog), load_models_dev(paths.cache_dir))


@dataclass
class Hooks:
    """A before-tool hook that only counts: which calls reached the hooks."""

    seen: list[str] = field(default_factory=list)

    async def before(self, request: ToolRequest) -> Decision | None:
        self.seen.append(request.call.name)
        return None


def lab_runtime(
    journal: Journal,
    route: ResolvedRoute,
    http: httpx.AsyncClient,
    lab: Lab,
    hooks: Hooks,
    *,
    mode: str = "auto",
    approver: Approver | None = None,
    events: list[RuntimeEvent] | None = None,
) -> ChatRuntime:
    policy = PermissionPolicy(default_mode=mode)  # type: ignore[arg-type]
    return ChatRuntime(
        journal,
        route,
        OpenAICompatClient(http, route.actual.base_url, api_key=None),
        engine=ContextEngine(ToolRegistry([skill_tools, lab.source])),
        system=SystemState,
        gate=ToolGate([hooks.before]),
        approver=approver,
        policy=lambda: policy,
        on_event=(events.append if events is not None else None),
    )
