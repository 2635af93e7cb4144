"""The real window, offscreen, on a real core thread, journal and loopback provider, and what a
person does in it: type and send, wait till it is idle, open the settings and fill in an account."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from desktop.app.cairn import CairnApp
from desktop.loopback import LoopbackProvider
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SettingsStore
from host.journal import Journal
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from ui.bridge.core_thread import CoreThread
from ui.message_list.display_message import DisplayMessage
from ui.settings_dialog.dialog import SettingsDialog
from ui.window.chat_list import ChatList
from ui.window.main_window import MainWindow
from ui.window.shell import Shell
from ui.window.window_state import WindowState

WAIT = 10_000  # ms a step in the window may take before a test gives up on it
SECRET = "sk-ui-secret-5e1d"  # an API key the settings tests type into the account form


@dataclass
class Running:
    shell: Shell
    window: MainWindow
    journal: Journal
    app: CairnApp
    keyring: MemoryKeyring


def add_loopback_account(
    paths: CairnPaths, provider: LoopbackProvider, name: str = "Loop", model: str = "loopback-chat"
) -> Account:
    account = Account(name=name, provider="custom", base_url=provider.base_url, default_model=model)
    SettingsStore(paths.config_dir / "settings.json").add_account(account)
    return account


@contextmanager
def running_cairn(
    paths: CairnPaths, state: WindowState | None = None, secrets: SecretStore | None = None, *, titles: bool = False
) -> Iterator[Running]:
    """Cairn's window on ``paths``. Model-made titles only when a test asks (``titles``): they
    are an extra request, which would take a reply scripted for the chat."""
    qt = QApplication.instance()
    assert isinstance(qt, QApplication)
    keyring = MemoryKeyring()
    services = Root(paths, secrets=secrets or SecretStore(keyring))
    journal = services.open_journal()
    core = CoreThread()
    app = CairnApp(services, on_event=core.emit_event, titles=titles)
    core.start()
    snapshot = core.submit(app.snapshot).result(timeout=10)
    core.submit(app.start).result(timeout=10)
    # No local server probing unless a test asks for it: the machine's own ports are not ours.
    shell = Shell(qt, app, core, snapshot, paths, local_ports={})
    window = shell.open_window(state)
    try:
        yield Running(shell, window, journal, app, keyring)
    finally:
        for open_window in list(shell.windows):
            open_window.close()
        shell.shut_down()
        services.close()
        # Each holds the other through a signal connection, which the collector cannot see;
        # conftest's process_state deletes the windows.
        shell.deleteLater()
        core.deleteLater()


def rename_in_place(chats: ChatList, session_id: str, title: str) -> None:
    """Rename a chat as a person does in the list: its editor opened, the title typed, Enter."""
    index = chats.index_of(session_id)
    assert index.isValid(), f"{session_id} is not listed"
    chats.edit(index)
    editors = [e for e in chats.viewport().findChildren(QLineEdit) if e.isVisible()]
    assert len(editors) == 1, "the list opened no editor"
    editors[0].selectAll()
    QTest.keyClicks(editors[0], title)
    QTest.keyClick(editors[0], Qt.Key.Key_Return)
    QApplication.processEvents()  # the delegate commits what was typed on the next turn of the loop


def kinds(window: MainWindow) -> list[tuple[str, str]]:
    return [(m.kind, m.status) for m in window.chat.model_rows().messages]


def idle(window: MainWindow) -> bool:
    return not window.turns.busy and window.composer.button.text() == "Send"


def type_and_send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.composer.editor.setFocus()
    window.composer.set_text(text)
    QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)


def click_button(window: MainWindow, message: DisplayMessage, name: str) -> None:
    """A real click on the button ``name`` under a message, where the view painted it."""
    row = window.chat.model_rows().row_of(message.key)
    assert row is not None
    index = window.chat.model().index(row, 0)
    window.chat.scrollTo(index)
    document, _ = window.chat.message_delegate.document(message)
    geometry = window.chat.message_delegate.geometry(message, window.chat.visualRect(index), document)
    rect = next(rect for action, rect in geometry.buttons if action.name == name)
    QTest.mouseMove(window.chat.viewport(), geometry.box.center().toPoint())
    QTest.mouseClick(window.chat.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())


def answered(qtbot: QtBot, window: MainWindow, text: str) -> None:
    """Send ``text`` and wait until its reply is in and the window is free again."""
    count = len(window.chat.model_rows().messages)
    window.composer.set_text(text)
    QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(window.chat.model_rows().messages) >= count + 2 and not window.turns.busy, timeout=WAIT)


def open_settings(qtbot: QtBot, window: MainWindow) -> SettingsDialog:
    """Settings opened by its shortcut, Ctrl+Comma, as a person opens it."""
    window.activateWindow()  # shortcuts act on the active window
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    window.settings_dialog = None
    QTest.keyClick(window, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: getattr(window, "settings_dialog", None) is not None, timeout=WAIT)
    return window.settings_dialog


def fill(
    dialog: SettingsDialog, *, provider: str, name: str, base_url: str = "", model: str = "", key: str = ""
) -> None:
    """A new account of ``provider`` in the Accounts tab, its fields filled in but not saved."""
    tab = dialog.accounts
    tab.new_account(provider)
    tab.name.setText(name)
    tab.base_url.setText(base_url)
    if model:
        tab.model.setCurrentText(model)
    tab.key.setText(key)
