"""Accessibility, checked the way a screen reader meets Cairn: by walking Qt's accessibility
tree (QAccessible) of the real window and Settings in process, and by following the focus
chain that Tab walks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider, Reply
from host.paths import CairnPaths
from tests.ui_fixtures import WAIT, add_loopback_account, idle, running_cairn, type_and_send
from ui.settings_dialog.dialog import SettingsDialog

Role = QAccessible.Role
# What a person operates: each must say what it is for.
CONTROLS = {
    Role.PushButton,
    Role.CheckBox,
    Role.RadioButton,
    Role.ComboBox,
    Role.EditableText,
    Role.SpinBox,
    Role.List,
    Role.Table,
    Role.Tree,
    Role.PageTab,
    Role.Slider,
}


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def walk(interface: QAccessibleInterface | None, depth: int = 0) -> Iterator[QAccessibleInterface]:
    """Every visible node under ``interface``, as the accessibility tree gives them."""
    if interface is None or not interface.isValid() or depth > 40:
        return
    if interface.state().invisible:
        return
    yield interface
    for number in range(interface.childCount()):
        yield from walk(interface.child(number), depth + 1)


def unnamed(root: QWidget) -> list[str]:
    """The controls under ``root`` that a screen reader could not name."""
    missing = []
    for node in walk(QAccessible.queryAccessibleInterface(root)):
        if node.role() in CONTROLS and not node.text(QAccessible.Text.Name).strip():
            widget = node.object()
            missing.append(f"{node.role().name} {type(widget).__name__} {getattr(widget, 'objectName', str)()}")
    return missing


def controls(root: QWidget) -> int:
    return sum(1 for node in walk(QAccessible.queryAccessibleInterface(root)) if node.role() in CONTROLS)


def focus_chain(window: QWidget) -> list[QWidget]:
    """The visible widgets Tab reaches, in order, starting from the window."""
    chain: list[QWidget] = []
    widget = window.nextInFocusChain()
    while widget is not window and len(chain) < 500:
        takes_tab = widget.focusPolicy() & widget.focusPolicy().TabFocus
        if widget.isVisible() and widget.isEnabled() and takes_tab and widget.focusProxy() is None:
            chain.append(widget)
        widget = widget.nextInFocusChain()
    return chain


def test_every_control_of_the_window_has_a_name(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="Named."))
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.inspector.show()
        assert w.welcome.isVisible()
        assert controls(w) >= 8  # the tree is really walked: the welcome, the sidebar, the route bar, ...
        assert unnamed(w) == []
        type_and_send(qtbot, w, "hello")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
        assert unnamed(w) == []
        # A message reads as who said it and what.
        index = w.chat.model().index(0, 0)
        assert w.chat.model().data(index, 0x0B) == "You: hello"  # Qt.AccessibleTextRole


def test_every_control_of_every_settings_tab_has_a_name(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.open_settings(None)
        qtbot.waitUntil(lambda: isinstance(w.settings_dialog, SettingsDialog), timeout=WAIT)
        dialog = w.settings_dialog
        assert isinstance(dialog, SettingsDialog)
        qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
        problems = {}
        for number in range(dialog.tabs.count()):
            dialog.tabs.setCurrentIndex(number)
            QApplication.processEvents()
            assert controls(dialog) >= 3
            missing = unnamed(dialog)
            if missing:
                problems[dialog.tabs.tabText(number)] = missing
        assert problems == {}
        dialog.reject()


def test_tab_walks_the_window_in_reading_order(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="In order."))
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.resize(1100, 760)
        type_and_send(qtbot, w, "hello")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
        names = [widget.accessibleName() for widget in focus_chain(w)]
        expected = ["New chat", "Search chats", "Chats", "Account", "Model", "Permission mode", "Conversation"]
        expected += ["Message", "Send"]
        assert [n for n in names if n in expected] == expected, names


def test_the_first_start_page_names_its_controls(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        qtbot.waitUntil(w.start_page.isVisible, timeout=WAIT)
        assert controls(w.start_page) >= 4  # a button for each provider and one for any endpoint
        assert unnamed(w) == []
