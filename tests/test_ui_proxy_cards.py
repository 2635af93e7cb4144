"""The cards and the inspector under the proxy declaration policy: a ``use_tool`` call is shown
as the call it stands for, and its result says which tool it ran as, with the pin."""

from __future__ import annotations

from desktop.turn.events import ToolResultCommitted
from host.content import MessageContent, ToolIdentity, ToolResultPart
from host.rows import TranscriptRow
from ui.message_list.tool_cards import Palette, ShownCall, call_line_html, tool_card_html
from ui.window.context_inspector import _call_lines

PIN = "3f" * 32


def test_a_use_tool_call_is_shown_as_the_call_it_stands_for() -> None:
    palette = Palette.of(dark=False)
    call = ShownCall("c1", "use_tool", {"name": "lab__weather", "arguments": {"city": "Oslo"}})
    shown = call_line_html(call, palette, running=True)
    assert "<b>Weather</b>" in shown
    assert "lab · through use_tool · running…" in shown
    card = tool_card_html(call, ToolResultPart(call_id="c1", content="sunny"), expanded=False, palette=palette)
    assert "&quot;city&quot;: &quot;Oslo&quot;" in card  # its arguments, once
    assert card.count("Oslo") == 1
    assert "&quot;arguments&quot;" not in card  # not the envelope
    # A malformed one is shown as the model made it.
    malformed = call_line_html(ShownCall("c2", "use_tool", {"name": 7}), palette, running=False)
    assert "<b>Use a tool</b>" in malformed


def test_its_result_and_the_inspector_name_the_tool_and_its_pin() -> None:
    palette = Palette.of(dark=False)
    call = ShownCall("c1", "use_tool", {"name": "lab__weather", "arguments": {"city": "Oslo"}})
    ran = ToolResultPart(call_id="c1", content="sunny", decision="allow", reason="it only reads", elapsed_ms=2.0,
                         resolved=ToolIdentity(source="mcp:lab", tool="lab__weather", pin=PIN))  # fmt: skip
    card = tool_card_html(call, ran, expanded=True, palette=palette)
    assert f"ran as lab__weather, pin {PIN[:8]}" in card
    assert "It only reads" in card
    assert "2.0 ms" in card
    refused = ToolResultPart(call_id="c1", content="not active", is_error=True,
                             resolved=ToolIdentity(source="mcp:lab", tool="lab__weather", pin=PIN))  # fmt: skip
    shown = tool_card_html(call, refused, expanded=True, palette=palette)
    assert "for lab__weather" in shown
    assert "pin" not in shown
    assert "failed" in shown
    part = ToolResultPart(call_id="c1", content="sunny", decision="allow", reason="it only reads",
                          resolved=ToolIdentity(source="mcp:lab", tool="lab__weather", pin=PIN))  # fmt: skip
    row = TranscriptRow(id="r1", session_id="s", seq=3, role="tool", hidden=False, created_at="2026-12-02T00:00:00Z",
                        content=MessageContent(parts=[part]).model_dump())  # fmt: skip
    (line,) = _call_lines(ToolResultCommitted(row), {"c1": "use_tool"})
    assert line == f"use_tool → lab__weather (pin {PIN[:12]}): allow (it only reads)"
