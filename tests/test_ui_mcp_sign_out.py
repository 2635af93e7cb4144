"""Sign out in Settings' MCP tab, in the real window offscreen, against the loopback
authorisation server: the server's tokens are forgotten and the running server stops using
them (it waits for a sign-in again). The browser is played by httpx at the opener seam."""

from __future__ import annotations

import threading

import httpx
from PySide6.QtCore import Qt, QUrl
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.settings.secrets import SERVICE
from host.paths import CairnPaths
from tests.mcp_servers.oauth_server import SignInServer
from tests.ui_fixtures import open_settings, running_cairn

WAIT = 30_000


def browser(url: QUrl) -> bool:  # the person's browser, at the seam
    threading.Thread(target=lambda: httpx.get(url.toString(), follow_redirects=True, timeout=10), daemon=True).start()
    return True


def test_sign_out_forgets_the_tokens_and_the_server_waits_for_a_sign_in(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with SignInServer() as remote, running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.mcp)
        tab = dialog.mcp
        tab.signing.opener = browser
        QTest.mouseClick(tab.new, Qt.MouseButton.LeftButton)
        form = tab.form
        form.name.setText("tracker")
        form.transport.setCurrentIndex(form.transport.findData("http"))
        form.url.setText(remote.url)
        form.signs_in.setChecked(True)
        form.start.setCurrentIndex(form.start.findData(True))
        QTest.mouseClick(tab.save, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(tab.signing.button.isVisible, timeout=WAIT)
        assert tab.signing.out.isVisible()
        QTest.mouseClick(tab.signing.button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "ready" in tab.state.text(), timeout=WAIT)
        tokens = (SERVICE, "mcp:tracker:oauth:tokens")
        assert tokens in run.keyring.entries

        QTest.mouseClick(tab.signing.out, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "Signed out of tracker" in tab.message.text(), timeout=WAIT)
        qtbot.waitUntil(lambda: "waiting for you to sign in" in tab.state.text(), timeout=WAIT)
        assert tokens not in run.keyring.entries
        dialog.reject()
