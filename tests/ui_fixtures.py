"""The real window, offscreen, on a real core thread, journal and loopback provider."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit

from desktop.app.cairn import CairnApp
from desktop.loopback import LoopbackProvider
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SettingsStore
from host.journal import Journal
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from ui.bridge.core_thread import CoreThread
from ui.window.chat_list import ChatList
from ui.window.main_window import MainWindow
from ui.window.shell import Shell
from ui.window.window_state import WindowState


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
