"""A server's request for input on the command line: declined unless stdin and stdout are a
terminal (a pipe never waits); at a terminal, asked field by field until each answer fits."""

from __future__ import annotations

import asyncio
import io

from desktop.cli.elicit import TerminalElicitor
from host.tools.forms import parse_form
from host.tools.questions import Question

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
