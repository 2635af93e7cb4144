"""One card per tool call: with its reply while it runs, in its result's row once answered
(the arguments once, the decision once, a long result folded with "Show all"), whichever
order the rows arrive in."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from host.content import ToolResultPart
from ui.message_list.display_message import DisplayMessage, message_html
from ui.message_list.message_model import MessageModel
from ui.message_list.tool_cards import ApprovalView, ShownCall

CALL = ShownCall("c1", "notes__add_item", {"item": "buy stones"})


def reply() -> DisplayMessage:
    return DisplayMessage(key="a1", kind="assistant", seq=2, text="I'll note it.", tool_calls=[CALL])


def result(content: str = "added", **more: object) -> DisplayMessage:
    part = ToolResultPart(call_id="c1", content=content, decision="allow", reason="it only reads", **more)
    return DisplayMessage(key="t1", kind="tool", seq=3, tool_result=part)


def painted(message: DisplayMessage, *, last_answer: bool = False) -> str:
    return message_html(message, dark=False, last_user=False, last_answer=last_answer)[0]


def test_a_running_call_shows_with_its_reply_then_in_its_result(qtbot: QtBot) -> None:
    model = MessageModel()
    answer = reply()
    model.reset([answer])
    assert "<b>Add item</b> <span" in painted(answer, last_answer=True)
    assert "notes · running…" in painted(answer, last_answer=True)
    assert "no result" in painted(answer)  # an earlier reply's call that never got one
    version = answer.version
    model.replace("t1", result())
    assert answer.settled == {"c1"}
    assert answer.version > version  # shown again, without the call
    assert "Add item" not in painted(answer, last_answer=True)
    card = painted(model.messages[1])
    assert card.count("buy stones") == 1
    assert "It only reads" in card
    assert "added" in card


def test_an_older_page_links_the_calls_of_results_already_shown(qtbot: QtBot) -> None:
    model = MessageModel()
    model.reset([result()])
    assert model.messages[0].call is None
    assert "<b>Tool</b>" in painted(model.messages[0])  # its call is not in view yet
    model.prepend([reply()])
    assert model.messages[1].call == CALL
    assert model.messages[0].settled == {"c1"}
    assert "<b>Add item</b>" in painted(model.messages[1])


def test_a_result_takes_the_place_of_its_approval(qtbot: QtBot) -> None:
    model = MessageModel()
    waiting = ApprovalView("c1", CALL.name, "mcp:notes", CALL.arguments, "it changes something")
    model.reset([reply(), DisplayMessage(key="u2", kind="user", seq=9, text="later")])
    model.append(DisplayMessage(key="approval:c1", kind="approval", approval=waiting))
    assert model.messages[0].settled == {"c1"}  # the approval card shows the call
    shown = painted(model.messages[2])
    assert "Allow Add item</b>?" in shown
    assert "notes (MCP server) · it changes something" in shown
    assert 'href="cairn:approve/once"' in shown
    model.replace("t1", result())
    assert [m.key for m in model.messages] == ["a1", "u2", "t1"]


def test_a_long_result_is_folded_and_a_refusal_says_why_once(qtbot: QtBot) -> None:
    lines = "\n".join(f"line {n}" for n in range(200))
    folded = result(lines)
    card = painted(folded)
    assert "Show all 200 lines" in card
    assert "line 11" in card
    assert "line 12" not in card
    folded.expanded = True
    assert "line 199" in painted(folded)
    assert "Show less" in painted(folded)
    part = ToolResultPart(call_id="c1", content="denied: you never allow it", is_error=True, decision="deny",
                          reason="denied: you never allow it")  # fmt: skip
    refused = painted(DisplayMessage(key="t2", kind="tool", tool_result=part, call=CALL))
    assert refused.count("never allow it") == 1
    assert "failed" not in refused
