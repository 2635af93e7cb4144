"""Approvals on the command line: a terminal is asked, a pipe never waits, --approve answers."""

from __future__ import annotations

import asyncio
import io
import os

from desktop.cli.approve import TerminalApprover
from host.content import ToolCallPart
from host.permissions import ToolRequest
from host.tools import Tool, ToolCatalog, ToolOutput, ToolSpec

SPEC = ToolSpec(name="write_file", description="Write.", required_scopes={"workspace.write"})


async def _noop(_arguments: object) -> ToolOutput:
    return ToolOutput("")


REQUEST = ToolRequest(
    "s",
    ToolCallPart(call_id="c1", name="write_file", arguments={"path": "a.txt", "content": "\x1b[2Jhi"}),
    ToolCatalog([Tool(SPEC, _noop)]),
)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_terminal_calls_are_denied_unless_approve_says_otherwise() -> None:
    err = io.StringIO()
    denied = asyncio.run(TerminalApprover(preset=None, stdin=io.StringIO("o\n"), stderr=err).ask(REQUEST, "it writes"))
    assert denied.choice == "deny"
    assert "use --approve once|chat" in err.getvalue()
    assert "\x1b" not in err.getvalue()  # arguments are shown escaped
    for preset in ("once", "chat"):
        assert asyncio.run(TerminalApprover(preset=preset, stderr=io.StringIO()).ask(REQUEST, "x")).choice == preset


def test_a_terminal_is_asked_and_a_closed_one_denies_at_once() -> None:
    for answer, choice in (("o\n", "once"), ("c\n", "chat"), ("always\n", "always"), ("n\n", "never"), ("\n", "deny")):
        approver = TerminalApprover(preset=None, stdin=Tty(answer), stderr=Tty())
        assert asyncio.run(approver.ask(REQUEST, "it writes")).choice == choice
    read, write = os.pipe()
    os.close(write)  # the other end is gone: reading gives EOF, never a wait
    with os.fdopen(read) as closed:
        stdin = Tty()
        stdin.readline = closed.readline  # type: ignore[method-assign]
        approval = asyncio.run(TerminalApprover(preset=None, stdin=stdin, stderr=Tty()).ask(REQUEST, "x"))
    assert approval.choice == "deny"
    assert "closed" in approval.reason()
