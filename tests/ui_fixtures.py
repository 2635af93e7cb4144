"""The real window, offscreen, on a real core thread, journal and loopback provider."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from PySide6.QtWidgets import QApplication

from desktop.app import CairnApp
from desktop.loopback import LoopbackProvider
from desktop.secrets import SecretStore
from desktop.services import Services
from desktop.settings import Account, SettingsStore
from host.journal import Journal
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from ui.app import Shell
from ui.core import CoreThread
from ui.main_window import MainWindow
from ui.window_state import WindowState


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
    services = Services(paths, secrets=secrets or SecretStore(keyring))
    journal = services.open_journal()
    core = CoreThread()
    app = CairnApp(services, on_event=core.emit_event, titles=titles)
    core.start()
    snapshot = core.submit(app.snapshot).result(timeout=10)
    core.submit(app.start).result(timeout=10)
    # No local server probing unless a test asks for it: the machine's own ports are not ours.
    shell = Shell(qt, app, core, snapshot, local_ports={})
    window = shell.open_window(state)
    try:
        yield Running(shell, window, journal, app, keyring)
    finally:
        for open_window in list(shell.windows):
            open_window.close()
        shell.shut_down()
        services.close()
