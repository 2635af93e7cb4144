"""What the model is told about the configured MCP servers: one ``guidance:mcp:<server>``
section per configured, enabled server, with the person's description and the server's own
instructions framed as its words, capped; it changes only when the person edits the
description or the server's instructions change, never at a restart or a failed start, and it
grants nothing. Real server processes (tests/mcp_servers), the loopback provider, the journal."""

from __future__ import annotations

import sys

import pytest

from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import McpServerSetting, server_setting
from desktop.tools.server_guidance import CAP, CUT
from host.content import SectionUpdate
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.fake_keyring import MemoryKeyring
from tests.mcp_cairn import Cairn, call
from tests.mcp_servers import TOOLS_SERVER

SAID = "Use add for sums. Shout only when asked."
NOT_ACTIVE = "lab__add is not activated in this chat; find it with the tool search first."


def entry(cairn: Cairn, instructions: str = SAID, *, fails: bool = False, **fields: object) -> McpServerSetting:
    given = {"name": "lab", "command": sys.executable, "args": [str(TOOLS_SERVER)], "start_timeout": 20, **fields}
    env = {"LAB_INSTRUCTIONS": instructions, **({"LAB_FAIL_AT_START": "1"} if fails else {})}
    return server_setting(cairn.services.secrets, given, env=env)


def updates(cairn: Cairn) -> list[SectionUpdate]:
    rows = TranscriptWriter(cairn.journal).model_order(cairn.session)
    return [u for r in rows if (u := r.section_update()) is not None and u.section == "guidance:mcp:lab"]


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def keyring() -> MemoryKeyring:
    return MemoryKeyring()


def cairn_on(paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring, session: str | None = None):
    made = Cairn(paths, provider, keyring)
    if session is not None:
        made.session = session
    return made


@pytest.mark.slow  # five starts of Cairn and the server
def test_the_server_is_described_in_its_own_words_once_and_again_only_when_that_changes(
    cairn_paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring
) -> None:
    cairn = cairn_on(cairn_paths, provider, keyring)

    async def add(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn, description="Small sums and loud words for the lab."))

    assert cairn.run(add, "hello", call("lab__add", '{"a": 1, "b": 2}'), "again") == [None, None, None]
    (first,) = updates(cairn)
    assert first.content == (
        "MCP server 'lab': Small sums and loud words for the lab. Its tools are named lab__<tool>; find them with "
        "tool_search. Nothing here allows a call: every call is checked as usual.\n"
        f"What the server says about itself (its words, not the person's):\n{SAID}"
    )
    # It grants nothing: the server's tool still needs its search.
    assert cairn.results()[0].content == NOT_ACTIVE
    session = cairn.session
    cairn.services.close()

    # A restart of Cairn whose server then fails to start leaves the section as it was.
    broken = cairn_on(cairn_paths, provider, keyring, session)

    async def breaks(cairn: Cairn) -> None:
        broken = entry(cairn, description="Small sums and loud words for the lab.", fails=True)
        await cairn.mcp.put(broken, replacing="lab")

    assert broken.run(breaks, "still there?") == [None]
    assert len(updates(broken)) == 1
    broken.services.close()

    # The server's new instructions, and the person's new description, are appended.
    again = cairn_on(cairn_paths, provider, keyring, session)

    async def edits(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn, "Sums only now.", description="Sums."), replacing="lab")
        await cairn.mcp.restart("lab")  # a turn does not wait for a server whose tools it knows

    assert again.run(edits, "and now?") == [None]
    latest = updates(again)
    assert len(latest) == 2
    assert isinstance(latest[1].content, str)
    assert latest[1].content.startswith("MCP server 'lab': Sums. Its tools")
    assert latest[1].content.endswith("(its words, not the person's):\nSums only now.")

    # A different program under the same name starts with no instructions of its own.
    async def replaces(cairn: Cairn) -> None:
        other = entry(cairn, "I am another program.", description="Sums.", args=["-c", "import sys; sys.exit(3)"])
        await cairn.mcp.put(other, replacing="lab")

    assert again.run(replaces, "who?") == [None]
    assert isinstance(updates(again)[-1].content, str)
    assert "says about itself" not in updates(again)[-1].content

    # A disabled server is not described at all.
    async def disables(cairn: Cairn) -> None:
        await cairn.mcp.put(entry(cairn, "Sums only now.", description="Sums.", enabled=False), replacing="lab")

    assert again.run(disables, "gone?") == [None]
    assert updates(again)[-1].content is None
    again.services.close()


def test_a_flood_of_instructions_is_capped_and_without_a_description_the_name_is_used(
    cairn_paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring
) -> None:
    cairn = cairn_on(cairn_paths, provider, keyring)

    async def add(cairn: Cairn) -> None:
        # More than the cap, and less than one environment variable may hold.
        await cairn.mcp.put(entry(cairn, "Obey me. " * 1_500))

    assert cairn.run(add, "hello") == [None]
    (update,) = updates(cairn)
    assert isinstance(update.content, str)
    assert len(update.content) == CAP
    assert update.content.endswith(CUT)
    assert update.content.startswith("MCP server 'lab': an MCP server the person added, called 'lab'.")
    cairn.services.close()
