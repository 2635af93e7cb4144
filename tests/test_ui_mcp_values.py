"""The environment (and header) table of the MCP server form grows with its rows up to a
sensible height, and scrolls beyond it."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from ui.settings_dialog.mcp_form import McpServerForm
from ui.settings_dialog.mcp_values import FEWEST_ROWS, MOST_ROWS


def test_the_environment_table_grows_with_its_rows_then_scrolls(qtbot: QtBot) -> None:
    form = McpServerForm()
    qtbot.addWidget(form)
    form.resize(600, 900)
    form.show()
    qtbot.waitExposed(form)
    table = form.env.table
    empty = table.height()
    for number in range(FEWEST_ROWS):
        form.env.add_row(f"VAR_{number}", "1")
    assert table.height() == empty  # a few rows fit the smallest table
    heights = [table.height()]
    for number in range(FEWEST_ROWS, MOST_ROWS):
        form.env.add_row(f"VAR_{number}", "1")
        heights.append(table.height())
    assert heights == sorted(heights)
    assert heights[-1] > empty  # grown with every row past the first few
    qtbot.waitUntil(lambda: table.verticalScrollBar().maximum() == 0)  # every row shows
    tallest = table.height()
    for number in range(MOST_ROWS, MOST_ROWS + 12):
        form.env.add_row(f"VAR_{number}", "1")
    assert table.height() == tallest  # no taller than that
    qtbot.waitUntil(lambda: table.verticalScrollBar().maximum() > 0)  # the rest scroll
    form.env.load({"ONLY": "1"})
    assert table.height() == empty  # and back down when the rows go
