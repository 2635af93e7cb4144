"""The cards and the inspector under the proxy declaration policy: a ``use_tool`` call is shown
as the call it stands for, and its result says which tool it ran as, with the pin."""

from __future__ import annotations

from desktop.turn.events import ToolResultCommitted
from host.content import MessageContent, ToolIdentity, ToolResultPart
from host.rows import TranscriptRow
from ui.message_list.tool_cards import Palette, result_html, tool_call_html
from ui.window.context_inspector import _call_lines

PIN = "3f" * 32


def test_a_use_tool_call_is_shown_as_the_call_it_stands_for() -> None:
    palette = Palette.of(dark=False)
    shown = tool_call_html("use_tool", {"name": "lab__weather", "arguments": {"city": "Oslo"}}, palette)
    assert "Tool call</b> · lab__weather (through use_tool)" in shown
    assert "&quot;city&quot;: &quot;Oslo&quot;" in shown
    assert "&quot;arguments&quot;" not in shown  # not the envelope
    # A malformed one is shown as the model made it.
    assert "Tool call</b> · use_tool<" in tool_call_html("use_tool", {"name": 7}, palette)


def test_its_result_and_the_inspector_name_the_tool_and_its_pin() -> None:
    palette = Palette.of(dark=False)
    card = result_html("sunny", is_error=False, reason="it only reads", elapsed_ms=2.0, expanded=True,
                       palette=palette, resolved=("lab__weather", PIN))  # fmt: skip
    assert f"ran as lab__weather, pin {PIN[:8]}" in card
    refused = result_html("not active", is_error=True, reason=None, elapsed_ms=None, expanded=True,
                          palette=palette, resolved=("lab__weather", PIN))  # fmt: skip
    assert "for lab__weather" in refused
    assert "pin" not in refused
    part = ToolResultPart(call_id="c1", content="sunny", decision="allow", reason="it only reads",
                          resolved=ToolIdentity(source="mcp:lab", tool="lab__weather", pin=PIN))  # fmt: skip
    row = TranscriptRow(id="r1", session_id="s", seq=3, role="tool", hidden=False, created_at="2026-12-02T00:00:00Z",
                        content=MessageContent(parts=[part]).model_dump())  # fmt: skip
    (line,) = _call_lines(ToolResultCommitted(row), {"c1": "use_tool"})
    assert line == f"use_tool → lab__weather (pin {PIN[:12]}): allow (it only reads)"
