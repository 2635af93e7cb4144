"""The core tools, as this wave shapes them once (README, "The core tools"): declared in every
chat that takes tools, whatever servers and skills it has, so that servers and skills coming
and going never change them; ``read_resource`` reads a server's resource through the gate;
``tool_search`` with ``skill:`` finds skills. Real MCP server processes, the loopback provider."""

from __future__ import annotations

import json

import pytest

from desktop.loopback import LoopbackProvider
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_cairn import Cairn, call, lab, search

# The shape is pinned: changing a core tool starts a new epoch in every existing chat.
CORE = [
    "edit_file", "fetch_url", "list_folder", "load_skill", "read_file", "read_resource", "search_text",
    "tool_search", "write_file",
]  # fmt: skip


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def cairn(cairn_paths: CairnPaths, provider: LoopbackProvider):
    made = Cairn(cairn_paths, provider, MemoryKeyring())
    yield made
    made.services.close()


def declared(cairn: Cairn) -> list[list[str]]:
    return [sorted(t["function"]["name"] for t in r.body.get("tools") or []) for r in cairn.provider.requests]


def read(server: str, uri: str) -> str:
    return call("read_resource", json.dumps({"server": server, "uri": uri}))


def test_the_core_tools_are_the_same_with_or_without_servers_and_skills(cairn: Cairn) -> None:
    assert cairn.run(None, "hello") == [None]

    async def add(cairn: Cairn) -> None:
        skill = cairn.paths.skills_dir / "field-notes"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: field-notes\ndescription: Keep field notes.\n---\n\nNotes.\n")
        await cairn.mcp.put(lab(cairn.services.secrets))

    assert cairn.run(add, "and now") == [None]
    assert declared(cairn) == [CORE, CORE]


def test_read_resource_reads_text_describes_binary_and_says_what_went_wrong(cairn: Cairn) -> None:
    async def add(cairn: Cairn) -> None:
        await cairn.mcp.put(lab(cairn.services.secrets))

    errors = cairn.run(add, read("lab", "lab://notes"), read("lab", "lab://photo"), read("lab", "lab://none"),
                       read("nobody", "lab://notes"))  # fmt: skip
    assert errors == [None] * 4
    text, binary, missing, nobody = cairn.results()
    assert text.content == "[lab://notes (text/plain)]\nNotebook: the teal flask is empty."
    assert text.decision == "allow"
    assert text.reason == "this chat runs tools automatically"
    assert binary.content == "[lab://photo (image/png): binary, 608 bytes; not shown to the model]"
    assert missing.is_error
    assert missing.content == "The MCP server 'lab' refused the read of 'lab://none': Unknown resource: lab://none"
    assert nobody.is_error
    assert nobody.content == "No MCP server is called 'nobody'; the servers are: lab."


def test_a_skill_search_finds_a_skill_and_activates_nothing(cairn: Cairn) -> None:
    async def add(cairn: Cairn) -> None:
        for name, what in (("field-notes", "Keep field notes of birds."), ("release", "Write release notes.")):
            skill = cairn.paths.skills_dir / name
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {what}\n---\n\n{what}\n")
        await cairn.mcp.put(lab(cairn.services.secrets))

    assert cairn.run(add, search("skill: notes about birds"), search("skill: the")) == [None, None]
    found, vague = cairn.results()
    assert found.content == (
        "Skills that match (read one with load_skill before you follow it):\n"
        "- field-notes: Keep field notes of birds.\n- release: Write release notes."
    )
    assert found.activated is None
    assert vague.is_error
    assert vague.content == "Say what the skill is for after 'skill:', such as 'skill: release notes'."
