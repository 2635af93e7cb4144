"""MCP servers in a chat, through the composition root: real server processes written with the
SDK, the loopback provider, the journal. Secrets stay in the keychain and out of everything
shown or stored; a server's changed tool list starts a new epoch; a server that fails or dies
mid-call costs only its own tools, and the chat goes on."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import McpSettingsError, SecretsNotKept, secret_id, server_setting
from desktop.settings.secrets import SecretStore
from desktop.turn.events import RequestStarted, ToolProgressed, ToolResultCommitted, ToolStarted
from host.paths import CairnPaths
from tests.fake_keyring import BrokenKeyring, MemoryKeyring
from tests.mcp_cairn import TOKEN, Cairn, call, lab, search
from tests.mcp_servers import BAD_SERVER, TOOLS_SERVER


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def cairn(cairn_paths: CairnPaths, provider: LoopbackProvider):
    keyring = MemoryKeyring()
    made = Cairn(cairn_paths, provider, keyring)
    made.keyring = keyring  # type: ignore[attr-defined]
    yield made
    made.services.close()


def test_a_server_is_saved_with_its_secret_in_the_keychain_and_its_tools_reach_the_chat(cairn: Cairn) -> None:
    async def add(cairn: Cairn) -> None:
        await cairn.mcp.put(lab(cairn.services.secrets))

    errors = cairn.run(add, search("select:lab__shout,lab__secret"), call("lab__shout", '{"text": "hi"}'),
                       call("lab__secret"))  # fmt: skip
    assert errors == [None, None, None]
    saved = json.loads((cairn.paths.config_dir / "settings.json").read_text())
    (entry,) = saved["mcp_servers"]
    assert entry["env"] == {"LAB_COLOUR": "teal"}
    assert entry["secret_env"] == ["CAIRN_TEST_TOKEN"]
    assert TOKEN not in json.dumps(saved)
    assert cairn.keyring.entries[("Cairn", secret_id("lab", "env", "CAIRN_TEST_TOKEN"))] == TOKEN  # type: ignore[attr-defined]
    shout, secret = cairn.results()[1:]
    assert shout.content == "HI"
    # The server said the token; Cairn kept it out of the result, the journal and the window.
    assert TOKEN not in secret.content
    assert "token=" in secret.content
    journal_bytes = cairn.paths.journal.read_bytes()
    assert TOKEN.encode() not in journal_bytes
    assert all(TOKEN not in json.dumps(r.body) for r in cairn.provider.requests)
    assert all(TOKEN not in line for line in cairn.services.mcp.status_lines())
    started = [e for e in cairn.events if isinstance(e, RequestStarted)]
    assert started[-1].servers == ("lab: ready, 12 tools",)


def test_a_changed_tool_list_starts_a_new_epoch_and_voids_the_activation(cairn: Cairn) -> None:
    async def add(cairn: Cairn) -> None:
        await cairn.mcp.put(lab(cairn.services.secrets))

    async def relisted(cairn: Cairn) -> None:  # the server's notification arrives on its own time
        async with asyncio.timeout(10):
            while (
                (view := cairn.services.mcp.view("lab")) is None or view.status is None or view.status.tool_count != 13
            ):
                await asyncio.sleep(0.02)

    cairn.run(add, search("select:lab__grow,lab__shout"), call("lab__grow"), relisted,
              call("lab__shout", '{"text": "a"}'), search("select:lab__grown"), call("lab__grown"))  # fmt: skip
    assert [p.reason for p in cairn.plans()] == ["first_request", "catalog_changed"]
    results = cairn.results()
    assert results[1].content == "grown"
    assert results[2].content == "lab__shout is not activated in this chat; find it with the tool search first."
    assert results[-1].content == "new"


def test_a_server_that_fails_or_dies_costs_only_its_own_tools(cairn: Cairn, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="desktop.tools.mcp_hub")

    async def add(cairn: Cairn) -> None:
        await cairn.mcp.put(lab(cairn.services.secrets))
        crash = {"name": "crash", "command": sys.executable, "args": [str(BAD_SERVER), "exit"], "start_timeout": 10}
        await cairn.mcp.put(server_setting(cairn.services.secrets, crash))

    errors = cairn.run(add, search("select:lab__die"), call("lab__die"), "still there?")
    assert errors == [None, None, None]
    died = cairn.results()[-1]
    assert died.is_error
    assert "The MCP server 'lab' stopped during the call" in died.content
    started = [e for e in cairn.events if isinstance(e, RequestStarted)]
    lines = dict(line.split(": ", 1) for line in started[-1].servers)
    assert lines["crash"].startswith("failed: the server exited with code 3")
    assert lines["lab"].startswith("failed: the server exited with code 7")
    assert cairn.provider.requests[-1].body["messages"][-1]["content"] == "still there?"
    logged = [record.getMessage() for record in caplog.records if record.name == "desktop.tools.mcp_hub"]
    assert "MCP server crash: starting" in logged  # cairn.log: each start, failure and stop
    assert "MCP server lab: ready, 12 tools" in logged
    assert any(line.startswith("MCP server crash: failed: the server exited with code 3") for line in logged)
    assert any(line.startswith("MCP server lab: failed: the server exited with code 7") for line in logged)
    assert logged.count("MCP server crash: starting") == 1  # one line per change, not per status update


def test_a_disabled_server_never_starts_and_a_removed_one_leaves_nothing(cairn: Cairn) -> None:
    async def add_disabled(cairn: Cairn) -> None:
        server = lab(cairn.services.secrets)
        await cairn.mcp.put(server.model_copy(update={"enabled": False}))

    cairn.run(add_disabled, "hello")
    assert cairn.services.mcp.status_lines() == ("lab: disabled",)
    declared = [t["function"]["name"] for t in cairn.provider.requests[-1].body["tools"]]
    assert "tool_search" in declared  # a core tool, there with or without servers
    assert not any(spec["name"].startswith("lab__") for spec in cairn.plans()[-1].specs)  # it never started

    async def remove(cairn: Cairn) -> None:
        await cairn.mcp.remove("lab")

    cairn.run(remove)
    assert cairn.services.mcp.status_lines() == ()
    assert json.loads((cairn.paths.config_dir / "settings.json").read_text())["mcp_servers"] == []
    assert not any(k[1].startswith("mcp:lab:") for k in cairn.keyring.entries)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "", "command": "x"}, "cannot be saved without a name"),
        ({"name": "bad.name", "command": "x"}, "a name holds only letters, digits and -"),
        ({"name": "web", "transport": "http", "url": "ftp://example.com"}, "needs an http(s) url"),
        ({"name": "nothing"}, "needs a command"),
        ({"name": "x" * 40, "command": "x"}, "cannot be saved"),
    ],
)
def test_a_server_that_cannot_run_is_refused_with_the_reason_and_no_secret_is_stored(
    fields: dict[str, Any], message: str
) -> None:
    keyring = MemoryKeyring()
    with pytest.raises(McpSettingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        server_setting(SecretStore(keyring), fields, env={"API_KEY": "sk-secret-value-123"})
    assert keyring.entries == {}


def test_without_a_keychain_a_secret_is_refused_not_written_unless_kept_for_this_run(tmp_path: Path) -> None:
    secrets = SecretStore(BrokenKeyring())
    with pytest.raises(SecretsNotKept, match="GITHUB_TOKEN of the MCP server 'gh' looks like a secret, and the system"):
        server_setting(secrets, {"name": "gh", "command": "gh-mcp"}, env={"GITHUB_TOKEN": "ghp_x"})
    kept = server_setting(secrets, {"name": "gh", "command": "gh-mcp"}, env={"GITHUB_TOKEN": "ghp_x"}, memory_only=True)
    assert kept.secret_env == ["GITHUB_TOKEN"]
    assert kept.config(secrets)[0].env == {"GITHUB_TOKEN": "ghp_x"}
    with pytest.raises(ValueError, match=r"is missing \(without a keychain it was kept for one run only\)"):
        kept.config(SecretStore(BrokenKeyring()))  # the next run


def test_an_edit_keeps_the_secrets_not_given_again_and_forgets_the_dropped_ones() -> None:
    keyring = MemoryKeyring()
    secrets = SecretStore(keyring)
    first = server_setting(secrets, {"name": "gh", "command": "gh-mcp"},
                           env={"GITHUB_TOKEN": "ghp_one", "OTHER_SECRET": "s3"})  # fmt: skip
    edited = server_setting(secrets, {"name": "gh", "command": "gh-mcp", "args": ["--v2"]},
                            env={"GITHUB_TOKEN": None}, kept=first)  # fmt: skip
    assert edited.secret_env == ["GITHUB_TOKEN"]
    assert secrets.get(secret_id("gh", "env", "GITHUB_TOKEN")) == "ghp_one"
    assert secrets.get(secret_id("gh", "env", "OTHER_SECRET")) is None
    with pytest.raises(McpSettingsError, match="give a value for NEW_TOKEN"):
        server_setting(secrets, {"name": "gh", "command": "gh-mcp"}, env={"NEW_TOKEN": None}, kept=edited)


def test_a_bad_entry_in_the_settings_file_costs_only_itself(cairn: Cairn) -> None:
    settings_path = cairn.paths.config_dir / "settings.json"
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    entries = [{"name": "ok", "command": sys.executable, "args": [str(TOOLS_SERVER)], "enabled": False},
               {"name": "no command"}, "not even an object", {"name": "ok", "command": "again"}]  # fmt: skip
    settings_path.write_text(json.dumps({"schema_version": 1, "mcp_servers": entries}))
    assert cairn.run(None, "hello") == [None]
    lines = cairn.services.mcp.status_lines()
    assert lines[0] == "ok: disabled"
    assert any("'no command' in the settings cannot be used" in line for line in lines)
    assert any("number 3 in the settings cannot be used" in line for line in lines)
    assert any("Two MCP servers in the settings are named 'ok'" in line for line in lines)
    assert json.loads(settings_path.read_text())["mcp_servers"] == entries  # kept as it was


def test_a_running_call_says_when_it_started_and_how_far_its_tool_got(cairn: Cairn) -> None:
    async def add(cairn: Cairn) -> None:
        await cairn.mcp.put(lab(cairn.services.secrets, "lab", "progress"))

    steps = call("lab__steps", '{"count": 2, "pause": 0.2}')
    assert cairn.run(add, search("select:lab__steps"), steps) == [None, None]
    started = {e.call_id: e.at for e in cairn.events if isinstance(e, ToolStarted)}
    progressed = [e for e in cairn.events if isinstance(e, ToolProgressed)]
    assert [(e.progress.done, e.progress.total, e.progress.message) for e in progressed] == [
        (1, 2, "step 1 of 2"),
        (2, 2, "step 2 of 2"),
    ]
    assert {e.call_id for e in progressed} <= set(started)  # progress of a call that started
    assert len(started) == 2  # the search and the steps, each when it began to run
    result = cairn.results()[-1]
    assert result.content == "2 steps done"
    order = [
        type(e).__name__ for e in cairn.events if isinstance(e, ToolStarted | ToolProgressed | ToolResultCommitted)
    ]
    assert order[-4:] == ["ToolStarted", "ToolProgressed", "ToolProgressed", "ToolResultCommitted"]
