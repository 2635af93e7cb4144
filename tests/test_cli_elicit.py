"""A server's request for input on the command line: declined unless stdin and stdout are a
terminal (a pipe never waits, in `cairn chat` run as a person would against our SDK server
and the loopback provider); at a terminal, asked field by field until each answer fits."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from desktop.cli.elicit import TerminalElicitor
from desktop.loopback import LoopbackProvider
from host.paths import CairnPaths
from host.tools.forms import parse_form
from host.tools.questions import Question
from tests.cli_fixtures import KEY, cairn
from tests.mcp_servers import asking_server

QUESTION = Question(
    "travel\x1b[2J",
    "Who is travelling?",
    parse_form({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 8},
            "window": {"type": "boolean", "title": "A window seat", "default": False},
            "meal": {"type": "string", "title": "Meal", "enum": ["none", "vegetarian", "vegan"], "default": "none"},
        },
        "required": ["name", "seats"],
    }),
)  # fmt: skip


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_terminal_the_request_is_declined_and_nothing_is_read() -> None:
    for stdin, stdout in ((io.StringIO("a\nGrace\n"), Tty()), (Tty("a\nGrace\n"), io.StringIO())):
        err = io.StringIO()
        answer = asyncio.run(TerminalElicitor(stdin=stdin, stdout=stdout, stderr=err).ask("s", "q", QUESTION))
        assert (answer.action, dict(answer.content)) == ("decline", {})
        assert "declined travel" in err.getvalue()
        assert "nobody was at a terminal" in err.getvalue()
        assert "\x1b" not in err.getvalue()  # the server's name is shown escaped
        assert stdin.tell() == 0


def test_at_a_terminal_each_field_is_asked_until_it_fits() -> None:
    typed = "a\n\nGrace\n11\n2\ny\n3\n"  # answer; no name, then one; 11 seats, then 2; window; vegan
    err = io.StringIO()
    elicitor = TerminalElicitor(stdin=Tty(typed), stdout=Tty(), stderr=err)
    answer = asyncio.run(elicitor.ask("s", "q", QUESTION))
    assert answer.action == "accept"
    assert dict(answer.content) == {"name": "Grace", "seats": 2, "window": True, "meal": "vegan"}
    said = err.getvalue()
    assert "asks: Who is travelling?" in said
    assert "Fill this in." in said
    assert "Write a whole number from 1 to 8." in said
    assert "3. vegan" in said


def test_at_a_terminal_the_person_may_decline_or_cancel() -> None:
    for typed, action in (("d\n", "decline"), ("\n", "cancel"), ("", "cancel"), ("a\nGrace\n", "cancel")):
        elicitor = TerminalElicitor(stdin=Tty(typed), stdout=Tty(), stderr=io.StringIO())
        assert asyncio.run(elicitor.ask("s", "q", QUESTION)).action == action


def test_cairn_chat_in_a_pipe_declines_a_servers_request_for_input(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    config = asking_server()
    servers = {config.name: {"command": config.command, "args": list(config.args)}}
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    assert cairn("mcp", "import", str(source), "--yes").returncode == 0
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        found = cairn("chat", "--approve", "once", '[[call tool_search {"query": "select:asking__book"}]]')
        assert found.returncode == 0, found.stderr
        session_id = found.stderr.split("session ")[1].split()[0]
        booked = cairn("chat", "--session", session_id, "--approve", "once", "[[call asking__book {}]]")
        assert booked.returncode == 0, booked.stderr
        assert "[declined asking's request for input: nobody was at a terminal to answer it]" in booked.stderr
        tool_messages = [m for m in provider.requests[-1].body["messages"] if m["role"] == "tool"]
        assert tool_messages[-1]["content"] == "not booked: decline"
