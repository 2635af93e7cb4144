"""Compute Cairn's identity hashes in a fresh interpreter and print them as JSON.

Run under PYTHONHASHSEED 0 to 99 by tests/test_hash_seeds.py, through ``tests.seed_chat render``
(one process per seed for both sweeps). Every spec passes
through a deep copy, a JSON round trip and a journal write and read; each stage's
identities are printed, and all of them, in every process, must agree. Beyond the specs:
a model with set fields at several depths, an enum built from a set inside a tool's
parameters, and a whole rendered request of a chat with tools (no HTTP). Each fixture's raw
set iteration order is printed too, so the sweep can show that some seed iterates it
unsorted, which is what makes the sweep able to fail.
"""

import hashlib
import json
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.messages import Context, Message, SystemUpdatePart, TextPart
from desktop.context.projection import project
from desktop.settings.routes import resolve_route
from desktop.settings.store import Account
from host.canonical import canonical_json_bytes
from host.identity import prefix_sha256, tool_schema_sha256
from host.journal import Journal
from host.tools import ToolSpec
from host.transcript import TranscriptWriter


def specs() -> list[ToolSpec]:
    # Scope sets are built by insertion, as callers do; their iteration order follows the
    # interpreter's hash seed, which is exactly what identity must not depend on.
    def scopes(*names: str) -> set[str]:
        out: set[str] = set()
        for name in names:
            out.add(name)
        return out

    schema = {"type": "object", "required": ["to"], "properties": {"to": {"type": "string"}}}
    return [
        ToolSpec(
            name="email_feedback",
            description="Send feedback.",
            parameters=schema,
            required_scopes=scopes("email.write", "email.read"),
        ),
        ToolSpec(
            name="email_unsubscribe",
            description="Unsubscribe from a list.",
            parameters=schema,
            required_scopes=scopes("email.read", "email.write"),
            deferred=True,
            source="mcp:mail",
        ),
        ToolSpec(
            name="calendar_create",
            description="Create an event.",
            parameters={"properties": {"when": {"type": "string"}}, "type": "object"},
            required_scopes=scopes("calendar.write", "contacts.read", "calendar.read", "audit.log"),
        ),
        ToolSpec(name="files_read", description="Read a file.", required_scopes=scopes("fs.read")),
    ]


PREFIX = [
    {"role": "system", "content": "You are Cairn.", "section": "instructions"},
    {"section": "skills", "role": "system", "content": "Skills can be loaded."},
]


def identities(tools: list[ToolSpec]) -> list[str]:
    pinned = [t for t in tools if not t.deferred]
    return [prefix_sha256(PREFIX, pinned), tool_schema_sha256(tools)]


def built(*names: str) -> set[str]:
    out: set[str] = set()
    for name in names:
        out.add(name)
    return out


class PlanRecord(BaseModel):
    """A model with sets at several depths, as a plan record might hold them."""

    declared: set[str]
    by_server: dict[str, frozenset[str]]
    groups: list[set[str]]


def plan_record() -> PlanRecord:
    return PlanRecord(
        declared=built("search", "read_file", "write_file", "fetch"),
        by_server={"mail": frozenset(built("send", "archive", "label"))},
        groups=[built("b", "a", "c"), built("delta", "alpha")],
    )


ENUM = ("celsius", "fahrenheit", "kelvin", "rankine")


def enum_tool() -> ToolSpec:
    parameters = {
        "type": "object",
        "properties": {"unit": {"type": "string", "enum": built(*ENUM)}},
        "required": ["unit"],
    }
    return ToolSpec(name="convert", description="Convert a temperature.", parameters=parameters)


def rendered_request(tools: list[ToolSpec]) -> bytes:
    account = Account(name="DeepSeek", provider="deepseek", default_model="deepseek-flash")
    route = resolve_route(account, None, load_transport_catalog(), load_models_dev(Path("/nonexistent")))
    messages = [
        Message(role="system", parts=[SystemUpdatePart(section="instructions", content="You are Cairn.")]),
        Message(role="system", parts=[SystemUpdatePart(section="tool_activation", content={"active": ["a", "b"]})]),
        Message(role="user", parts=[TextPart(text="Convert 20 C.")]),
    ]
    return project(Context(messages=messages, tools=tools), route).body_bytes


def set_behaviour() -> dict[str, object]:
    """How this process iterates a two-member scope set: built in each insertion order, and
    through successive rebuilds (``model_copy(deep=True)``, as every copy and every read of a
    plan makes one). The design record names three behaviours over the hash seeds: one fixed
    order per process, insertion order, and an order that reverses on every rebuild."""
    forward, backward = list(built("email.read", "email.write")), list(built("email.write", "email.read"))
    spec = ToolSpec(name="email_feedback", description="Send feedback.", parameters={"type": "object"},
                    required_scopes=built("email.read", "email.write"))  # fmt: skip
    rebuilds = [list(spec.required_scopes)]
    for _ in range(4):
        spec = spec.model_copy(deep=True)
        rebuilds.append(list(spec.required_scopes))
    return {"forward": forward, "backward": backward, "rebuilds": rebuilds}


def probe() -> dict[str, object]:
    """Every identity this process computes, each stage's, and the raw set orders."""
    original = specs()
    stages = {"original": identities(original)}
    copied = [t.model_copy(deep=True).model_copy(deep=True) for t in original]
    stages["deep_copy"] = identities(copied)
    reloaded = [ToolSpec.model_validate_json(t.model_dump_json()) for t in copied]
    stages["json_round_trip"] = identities(reloaded)
    with tempfile.TemporaryDirectory() as folder, Journal.open(Path(folder) / "j.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session()
        for tool in reloaded:
            writer.append_tool_result(session.id, {"json_mode": tool.model_dump(mode="json")})
            writer.append_tool_result(session.id, {"python_mode": tool.model_dump()})
        rows = writer.rows(session.id)
        from_json = [ToolSpec.model_validate(r.content["json_mode"]) for r in rows[0::2]]  # type: ignore[index,call-overload]
        from_python = [ToolSpec.model_validate(r.content["python_mode"]) for r in rows[1::2]]  # type: ignore[index,call-overload]
        stored_text = [r.content for r in rows]
    stages["journal_json_mode"] = identities(from_json)
    stages["journal_python_mode"] = identities(from_python)

    record = plan_record()
    records = [record, record.model_copy(deep=True), PlanRecord.model_validate_json(record.model_dump_json())]
    enum_specs = [enum_tool(), enum_tool().model_copy(deep=True)]
    tools = [*reloaded, enum_tool()]
    others = {
        "plan_record": sorted({hashlib.sha256(canonical_json_bytes(r)).hexdigest() for r in records}),
        "enum_schema": sorted({tool_schema_sha256([spec]) for spec in enum_specs}),
        "rendered_request": hashlib.sha256(rendered_request(tools)).hexdigest(),
    }
    orders = {
        "scopes": list(original[2].required_scopes),
        "plan_record": list(record.declared),
        "enum": list(built(*ENUM)),
    }
    return {"stages": stages, "stored": stored_text, "others": others, "orders": orders, "sets": set_behaviour()}


def main() -> None:
    json.dump(probe(), sys.stdout)


if __name__ == "__main__":
    main()
