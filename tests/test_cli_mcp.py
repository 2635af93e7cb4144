"""`cairn mcp`, run as a person would: import Claude Desktop's servers (shown first, saved on
--yes), list them, test one against a real server process, enable, disable, remove."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from desktop.cli import add_commands, run_command
from desktop.cli.chat import _Printer
from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import secret_id
from desktop.settings.secrets import SecretStore
from desktop.turn.events import RequestStarted
from host.paths import CairnPaths
from tests.cli_fixtures import KEY, REPO, cairn
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers import BAD_SERVER, TOOLS_SERVER


def claude_file(tmp_path: Path, servers: dict) -> Path:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


LAB = {"command": sys.executable, "args": [str(TOOLS_SERVER)], "env": {"LAB_COLOUR": "teal"}}
CRASH = {"command": sys.executable, "args": [str(BAD_SERVER), "exit"]}


def settings_of(paths: CairnPaths) -> dict:
    return json.loads((paths.config_dir / "settings.json").read_text())


def test_import_shows_the_plan_and_saves_only_when_told(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    source = claude_file(tmp_path, {"lab": LAB, "crash": CRASH, "old": {"type": "sse", "url": "https://x/sse"}})
    shown = cairn("mcp", "import", str(source))  # no terminal, no --yes
    assert shown.returncode == 2
    assert "+ lab: " in shown.stdout
    assert "- 'old': it uses the older SSE transport" in shown.stdout
    assert "Nothing was saved: run it again with --yes" in shown.stderr
    assert not (cairn_paths.config_dir / "settings.json").exists()

    done = cairn("mcp", "import", str(source), "--yes")
    assert done.returncode == 0, done.stderr
    assert "Saved 2 servers." in done.stdout
    assert [s["name"] for s in settings_of(cairn_paths)["mcp_servers"]] == ["lab", "crash"]
    again = cairn("mcp", "import", str(source), "--yes")  # nothing doubles
    assert "'lab': a server of that name is already set up in Cairn" in again.stdout
    assert len(settings_of(cairn_paths)["mcp_servers"]) == 2


def test_list_test_enable_disable_remove(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    assert cairn("mcp", "import", str(claude_file(tmp_path, {"lab": LAB, "crash": CRASH})), "--yes").returncode == 0
    listed = cairn("mcp", "list")
    assert listed.stdout.splitlines()[:2] == [f"lab: {sys.executable} {TOOLS_SERVER}", "  not started yet"]
    tested = cairn("mcp", "test", "lab")
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.splitlines()[0] == "lab: ready, 12 tools"
    assert "  lab__shout: Say it louder." in tested.stdout
    # A test that went well is remembered: the first chat with the server need not wait for it.
    assert cairn("mcp", "list").stdout.splitlines()[1] == "  started fine last time, 12 tools"
    crashed = cairn("mcp", "test", "crash")
    assert crashed.returncode == 1
    assert crashed.stdout.startswith("crash: failed: the server exited with code 3")
    assert "What it wrote on stderr" in crashed.stderr
    assert "  RuntimeError: cannot open the database" in crashed.stderr.splitlines()  # lines, not a literal \\n
    assert "\\n" not in crashed.stderr
    assert cairn("mcp", "disable", "lab").stdout == "lab: disabled.\n"
    assert "[disabled]" in cairn("mcp", "list").stdout
    assert cairn("mcp", "test", "lab").returncode == 0  # a disabled server can still be tried
    assert cairn("mcp", "enable", "lab").returncode == 0
    assert cairn("mcp", "remove", "crash").stdout == "crash: removed.\n"
    assert [s["name"] for s in settings_of(cairn_paths)["mcp_servers"]] == ["lab"]
    missing = cairn("mcp", "test", "nope")
    assert missing.returncode == 2
    assert "No MCP server is named 'nope'" in missing.stderr


def test_without_a_keychain_an_import_saves_what_it_can_and_the_secrets_file_takes_the_rest(
    cairn_paths: CairnPaths, tmp_path: Path
) -> None:
    source = claude_file(
        tmp_path, {"lab": LAB, "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_secret123456789"}}}
    )
    partly = cairn("mcp", "import", str(source), "--yes")  # this machine has no keychain
    assert partly.returncode == 1
    assert "Saved 1 server." in partly.stdout
    assert "GITHUB_TOKEN of the MCP server 'gh' looks like a secret, and there is no system keychain" in partly.stderr
    assert "`cairn secrets file on` keeps secrets in a file only you can read; then import again." in partly.stderr
    assert "ghp_secret123456789" not in partly.stdout + partly.stderr
    assert [s["name"] for s in settings_of(cairn_paths)["mcp_servers"]] == ["lab"]

    assert cairn("secrets", "file", "on", "--yes").returncode == 0
    again = cairn("mcp", "import", str(source), "--yes")
    assert again.returncode == 0, again.stderr
    assert "Saved 1 server." in again.stdout
    secrets_file = cairn_paths.config_dir / "secrets.json"
    kept = json.loads(secrets_file.read_text())["secrets"]
    assert kept == {secret_id("gh", "env", "GITHUB_TOKEN"): "ghp_secret123456789"}
    assert "ghp_" not in (cairn_paths.config_dir / "settings.json").read_text()
    assert "gh: gh-mcp [secrets: GITHUB_TOKEN]" in cairn("mcp", "list").stdout


def test_a_secret_goes_to_the_keychain_where_there_is_one(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    source = claude_file(tmp_path, {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_secret123456789"}}})
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"))
    keyring = MemoryKeyring()
    code = run_command(parser.parse_args(["mcp", "import", str(source), "--yes"]), cairn_paths, SecretStore(keyring))
    assert code == 0
    assert keyring.entries[("Cairn", secret_id("gh", "env", "GITHUB_TOKEN"))] == "ghp_secret123456789"
    assert "ghp_" not in (cairn_paths.config_dir / "settings.json").read_text()
    assert not (cairn_paths.config_dir / "secrets.json").exists()


def test_a_broken_file_is_reported(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done = cairn("mcp", "import", str(bad), "--yes")
    assert done.returncode == 2
    assert "is not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_chat_names_each_failed_server_on_stderr_once(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        assert cairn("mcp", "import", str(claude_file(tmp_path, {"lab": LAB, "crash": CRASH})), "--yes").returncode == 0
        done = cairn("chat", "hello")
        again = cairn("chat", "hello again")
        listed = cairn("mcp", "list")
    for chat in (done, again):
        assert chat.returncode == 0, chat.stderr
        said = [line for line in chat.stderr.splitlines() if "MCP server" in line]
        assert len(said) == 1, chat.stderr
        assert re.fullmatch(
            r"cairn: the MCP server crash: failed: the server exited with code 3 "
            r"\(Cairn tries it again after \d\d:\d\d\)",
            said[0],
        ), said
        assert "Traceback" not in chat.stderr
    # The failure is remembered: the second chat did not pay for a start that fails again.
    logged = (cairn_paths.log_dir / "cairn.log").read_text(encoding="utf-8")
    assert logged.count("MCP server crash: failed") == 1, logged
    assert "MCP server crash: starting" in logged
    # `cairn mcp list` says how each server did when it last ran, without starting it.
    assert re.search(r"^lab: .*\n  started fine last time, \d+ tools$", listed.stdout, re.M), listed.stdout
    assert re.search(r"^crash: .*\n  failed at \d\d:\d\d: the server exited with code 3$", listed.stdout, re.M)


def test_the_terminal_is_told_of_a_failed_server_once_not_on_every_request() -> None:
    err = io.StringIO()
    printer = _Printer(None, err)
    for _ in range(3):
        printer(RequestStarted("s", "r", b"", (), servers=("lab: ready, 12 tools", "crash: failed: it exited")))
    assert err.getvalue() == "cairn: the MCP server crash: failed: it exited\n"


# `cairn chat`, reporting on stderr whether the MCP SDK was imported.
SDK_USED = (
    "import sys; from desktop.__main__ import main; code = main(sys.argv[1:]); "
    "print('SDK imported' if 'mcp' in sys.modules else 'no SDK', file=sys.stderr); sys.exit(code)"
)


def test_a_chat_pays_nothing_for_servers_whose_tools_it_knows_until_a_call_needs_one(
    cairn_paths: CairnPaths, tmp_path: Path
) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        assert cairn("mcp", "import", str(claude_file(tmp_path, {"lab": LAB})), "--yes").returncode == 0

        def chat(text: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-c", SDK_USED, "chat", "--approve", "once", text], cwd=REPO,
                env={**os.environ, "CAIRN_API_KEY": KEY}, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip

        first = chat("hello")  # Cairn has never seen the server's tools: this turn starts it
        saved = settings_of(cairn_paths)
        saved["mcp_servers"][0]["start_at_launch"] = True  # "when Cairn starts" is the window's
        (cairn_paths.config_dir / "settings.json").write_text(json.dumps(saved), encoding="utf-8")
        later = chat("hello again")  # known now: nothing starts, not even the SDK
        read = chat('[[call read_resource {"server": "lab", "uri": "lab://notes"}]]')  # a call needs it
    assert first.returncode == later.returncode == read.returncode == 0, first.stderr + later.stderr + read.stderr
    assert first.stderr.splitlines()[-1] == "SDK imported"
    assert later.stderr.splitlines()[-1] == "no SDK"
    assert read.stderr.splitlines()[-1] == "SDK imported"
    tool_messages = [m["content"] for r in provider.requests for m in r.body["messages"] if m["role"] == "tool"]
    assert tool_messages[-1] == "[lab://notes (text/plain)]\nNotebook: the teal flask is empty."
