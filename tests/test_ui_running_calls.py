"""A running tool call in the real window, offscreen: a real MCP server process that reports
progress (tools_server.py's ``progress`` mode), the loopback provider asking for the call, a
person allowing it on its card; the card then shows how long the call has run and how far its
tool says it got, and its result once it is over."""

from __future__ import annotations

import sys

import pytest
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import server_setting
from desktop.settings.secrets import SecretStore
from desktop.settings.store import SettingsStore
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers import TOOLS_SERVER
from tests.ui_fixtures import add_loopback_account, idle, running_cairn, type_and_send
from ui.message_list.display_message import DisplayMessage, message_html
from ui.window.main_window import MainWindow

WAIT = 30_000  # a server process starting Python and the SDK, on a loaded machine


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def card(window: MainWindow) -> tuple[DisplayMessage | None, str]:
    """The chat's last card (the call's approval, then its result) and its HTML, as painted."""
    model = window.chat.model_rows()
    message = next((m for m in reversed(model.messages) if m.approval is not None or m.tool_result is not None), None)
    if message is None:
        return None, ""
    return message, message_html(message, dark=False, last_user=False, last_answer=True)[0]


def test_an_allowed_call_shows_its_clock_and_progress_then_its_result(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    fields = {"name": "lab", "command": sys.executable, "args": [str(TOOLS_SERVER), "progress"], "start_timeout": 20}
    store.save(store.load().with_server(server_setting(SecretStore(MemoryKeyring()), fields)))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, '[[call tool_search {"query": "select:lab__steps"}]]')
        qtbot.waitUntil(lambda: idle(w) and len(w.chat.model_rows().messages) >= 4, timeout=WAIT)
        type_and_send(qtbot, w, '[[call lab__steps {"count": 3, "pause": 0.8}]]')
        qtbot.waitUntil(lambda: card(w)[0] is not None and card(w)[0].approval is not None, timeout=WAIT)
        approval = card(w)[0]
        assert approval is not None
        w.controller.on_message_action(approval.key, "approve/once")  # Allow once, as its button does
        qtbot.waitUntil(lambda: "step 1 of 3" in card(w)[1] or "step 2 of 3" in card(w)[1], timeout=WAIT)
        html = card(w)[1]
        assert "running… " in html
        assert "33%" in html or "67%" in html
        qtbot.waitUntil(lambda: "running… 1 s" in card(w)[1] or "running… 2 s" in card(w)[1], timeout=WAIT)
        qtbot.waitUntil(lambda: card(w)[0] is not None and card(w)[0].tool_result is not None, timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        message, html = card(w)
        assert message is not None
        assert message.tool_result is not None
        assert "3 steps done" in html
        assert "running" not in html
        assert all(not m.runs for m in w.chat.model_rows().messages)
        assert not w.panel.running.runs  # nothing left ticking
