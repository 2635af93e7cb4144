"""Compute Cairn's identity hashes in a fresh interpreter and print them as JSON.

Run by tests/test_identity_seeds.py under PYTHONHASHSEED 0 to 99. Every spec passes
through a deep copy, a JSON round trip and a journal write and read; each stage's
identities are printed, and all of them, in every process, must agree.
"""

import json
import sys
import tempfile
from pathlib import Path

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


def main() -> None:
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
    json.dump({"stages": stages, "stored": stored_text}, sys.stdout)


if __name__ == "__main__":
    main()
