"""Attaching an MCP server's resource in the real window, offscreen: the composer's "Attach from
an MCP server…" opens the picker, which starts the lazy server (a real process, our
resources_server.py) and lists its resources by server; typing filters them; the chosen one is
read on the core and waits as a chip; one too large or not text nor an image is refused in
words in the picker; the message takes the resources to the loopback provider like files."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import server_setting
from desktop.settings.secrets import SecretStore
from desktop.settings.store import SettingsStore
from host.content import FilePart, ImagePart
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers import RESOURCES_SERVER
from tests.ui_fixtures import add_loopback_account, idle, running_cairn, type_and_send
from ui.chat_panel.resource_picker import ResourcePicker
from ui.window.main_window import MainWindow

WAIT = 30_000  # a server process starting Python and the SDK, on a loaded machine


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def add_server(paths: CairnPaths, mode: str = "normal") -> None:
    store = SettingsStore(paths.config_dir / "settings.json")
    fields = {"name": "shelf", "command": sys.executable, "args": [str(RESOURCES_SERVER), mode], "start_timeout": 20}
    store.save(store.load().with_server(server_setting(SecretStore(MemoryKeyring()), fields)))


def opened(qtbot: QtBot, window: MainWindow) -> ResourcePicker:
    qtbot.mouseClick(window.composer.attach_resource, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.panel.resources.picker is not None, timeout=WAIT)
    picker = window.panel.resources.picker
    assert picker is not None
    qtbot.waitUntil(lambda: len(shown(picker)) == 6, timeout=WAIT)  # the server started, then listed
    return picker


def rows(picker: ResourcePicker) -> list[QTreeWidgetItem]:
    servers = [picker.tree.topLevelItem(n) for n in range(picker.tree.topLevelItemCount())]
    return [s.child(n) for s in servers if s is not None for n in range(s.childCount()) if s.child(n) is not None]


def shown(picker: ResourcePicker) -> list[str]:
    """The resources the picker shows (not the templates, which cannot be chosen)."""
    return [r.text(0) for r in rows(picker) if not r.isHidden() and r.flags() & Qt.ItemFlag.ItemIsSelectable]


def choose(qtbot: QtBot, picker: ResourcePicker, words: str) -> None:
    """Type ``words`` into the filter and press Enter: the first resource left is attached."""
    picker.filter.clear()
    QTest.keyClicks(picker.filter, words)
    QTest.keyClick(picker.filter, Qt.Key.Key_Return)


def test_a_resource_chosen_in_the_picker_goes_with_the_message_like_a_file(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    add_server(cairn_paths)
    with running_cairn(cairn_paths) as run:
        w = run.window
        picker = opened(qtbot, w)
        assert shown(picker) == ["notes.md", "broken.txt", "big.txt", "secret.txt", "photo.png", "bytes.bin"]
        server = picker.tree.topLevelItem(0)
        assert server is not None
        assert server.text(0) == "shelf"
        photo = next(r for r in rows(picker) if r.text(0) == "photo.png")
        assert [photo.text(n) for n in (1, 2)] == ["lab://photo", "image/png"]
        assert photo.text(3).endswith(" B")  # its size, as the server gave it
        assert "A day's notes" in [r.text(0) for r in rows(picker)]  # a template is shown, not chosen

        QTest.keyClicks(picker.filter, "markdown")  # by its type
        assert shown(picker) == ["notes.md"]
        choose(qtbot, picker, "notes")
        qtbot.waitUntil(lambda: [a.name for a in w.composer.attachments()] == ["notes.md"], timeout=WAIT)
        assert w.panel.resources.picker is None  # attached: the picker closed
        assert w.composer.chips.isVisible()

        picker = opened(qtbot, w)
        choose(qtbot, picker, "big")
        qtbot.waitUntil(lambda: "too large to attach as text" in picker.state.text(), timeout=WAIT)
        assert picker.state.text().startswith("“big.txt” is 293.0 KB, too large to attach as text. Images (PNG")
        choose(qtbot, picker, "bytes")
        qtbot.waitUntil(lambda: "neither a PNG" in picker.state.text(), timeout=WAIT)
        choose(qtbot, picker, "broken")
        qtbot.waitUntil(lambda: "refused the read of 'lab://broken'" in picker.state.text(), timeout=WAIT)
        assert picker.state.text().startswith("“broken.txt” from shelf is not attached.")
        assert [a.name for a in w.composer.attachments()] == ["notes.md"]  # nothing refused was attached
        choose(qtbot, picker, "photo")
        qtbot.waitUntil(lambda: len(w.composer.attachments()) == 2, timeout=WAIT)
        notes, image = w.composer.attachments()
        assert isinstance(notes, FilePart)
        assert isinstance(image, ImagePart)
        assert (image.name, image.media_type, image.width, image.height) == ("photo.png", "image/png", 4, 3)

        type_and_send(qtbot, w, "What do the notes say?")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2, timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert w.composer.attachments() == ()
        [request] = provider.requests
        blocks = request.body["messages"][-1]["content"]
        text = "Attached file: notes.md\n```\n# Notes\n\nThe teal flask is empty.\n\n```"
        assert {"type": "text", "text": text} in blocks
        assert [b["type"] for b in blocks] == ["text", "image_url", "text"]  # the photo went as an image
        mine = w.chat.model_rows().messages[0]
        assert [a.name for a in mine.attachments] == ["notes.md", "photo.png"]


def test_the_open_picker_follows_a_changed_list(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    add_server(cairn_paths, "grows")  # a second after it is first listed, it adds grown.txt and says so
    with running_cairn(cairn_paths) as run:
        w = run.window
        picker = opened(qtbot, w)
        qtbot.waitUntil(lambda: "grown.txt" in shown(picker), timeout=WAIT)
        assert picker.state.text().startswith("7 resources.")
        choose(qtbot, picker, "grown")
        qtbot.waitUntil(lambda: [a.name for a in w.composer.attachments()] == ["grown.txt"], timeout=WAIT)


def test_the_picker_says_when_no_server_is_set_up(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        qtbot.mouseClick(w.composer.attach_resource, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: w.panel.resources.picker is not None, timeout=WAIT)
        picker = w.panel.resources.picker
        assert picker is not None
        words = "No MCP server is set up or enabled; add one in Settings (MCP servers)."
        qtbot.waitUntil(lambda: picker.state.text() == words, timeout=WAIT)
        assert not picker.attach.isEnabled()
        QTest.keyClick(picker.filter, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: w.panel.resources.picker is None, timeout=WAIT)
