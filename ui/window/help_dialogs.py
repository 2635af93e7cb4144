"""The Help menu's dialogs: the keyboard shortcuts, and where Cairn keeps its data (its keys
too: the keychain, the secrets file, or only this run's memory, as the core last said).

The shortcuts are read from the window's own actions each time the dialog opens, so the
list can never drift from what the keys do; only the composer's keys, which are not actions,
are written here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.app import CairnPaths, SecretsView

__all__ = [
    "COMPOSER_KEYS",
    "DataFolders",
    "Shortcut",
    "Shortcuts",
    "add_help_actions",
    "data_places",
    "keys_place",
    "shortcuts_of",
]

# The composer's own keys (ui/chat_panel/composer.py): they are key handling, not actions.
COMPOSER_KEYS = (
    ("Send the message", "Enter"),
    ("Start a new line", "Shift+Enter"),
    ("Stop the reply, or deny a waiting tool call", "Esc"),
    ("Allow a waiting tool call once (with nothing written)", "Enter"),
)


@dataclass(frozen=True)
class Shortcut:
    group: str  # the menu the action is in, without its mnemonic
    action: str
    keys: str  # every key of the action, as this platform writes them


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def shortcuts_of(window: QMainWindow) -> list[Shortcut]:
    """Every action of ``window`` that has keys, under the menu it is in ("Other" for none),
    in menu order; then the composer's keys."""
    found: list[Shortcut] = []
    seen: set[QAction] = set()

    def note(group: str, action: QAction) -> None:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts() if not k.isEmpty()]
        if keys and action not in seen:
            seen.add(action)
            found.append(Shortcut(group, _plain(action.text()), ", ".join(keys)))

    for entry in window.menuBar().actions():
        menu = entry.menu()
        if isinstance(menu, QMenu):
            for action in menu.actions():
                note(_plain(entry.text()), action)
    for action in [*window.actions(), *window.findChildren(QAction)]:
        note("Other", action)
    return found + [Shortcut("While writing", text, keys) for text, keys in COMPOSER_KEYS]


class Shortcuts(QDialog):
    """Help > Keyboard shortcuts: every shortcut of the window, by menu."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setAccessibleName("Keyboard shortcuts")
        self.tree = QTreeWidget()
        self.tree.setAccessibleName("Shortcuts")
        self.tree.setHeaderLabels(["Action", "Keys"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        groups: dict[str, QTreeWidgetItem] = {}
        for shortcut in shortcuts_of(window):
            if shortcut.group not in groups:
                heading = QTreeWidgetItem(self.tree, [shortcut.group])
                heading.setFirstColumnSpanned(True)
                font = heading.font(0)
                font.setBold(True)
                heading.setFont(0, font)
                heading.setFlags(Qt.ItemFlag.ItemIsEnabled)
                heading.setExpanded(True)
                groups[shortcut.group] = heading
            QTreeWidgetItem(groups[shortcut.group], [shortcut.action, shortcut.keys])
        self.tree.expandAll()
        self.tree.setIndentation(12)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        layout.addWidget(buttons)
        self.resize(480, 640)

    def listed(self) -> list[tuple[str, str, str]]:
        """(group, action, keys) of every row, as shown."""
        rows = []
        for g in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(g)
            children = [group.child(r) for r in range(group.childCount())] if group is not None else []
            rows += [(group.text(0), c.text(0), c.text(1)) for c in children if group is not None and c is not None]
        return rows


def data_places(paths: CairnPaths, secrets: SecretsView) -> list[tuple[str, str, Path | None]]:
    """What Cairn keeps where: (name, what it is, folder; ``None`` for no folder of Cairn's)."""
    return [
        ("Chats", f"Every chat and its usage, in the journal {paths.journal.name}", paths.data_dir),
        ("Settings", "Accounts and options (never a key)", paths.config_dir),
        keys_place(secrets),
        ("Skills", "Your own skills, one folder each", paths.skills_dir),
        ("Logs", "What Cairn did, to report a problem (no messages, no keys)", paths.log_dir),
    ]


def keys_place(secrets: SecretsView) -> tuple[str, str, Path | None]:
    """Where API keys and other secrets are, as a row of ``data_places``."""
    if secrets.place == "file" and secrets.file is not None:
        what = f"API keys and other secrets, in {secrets.file.name}, which only you can read"
        return "Keys", what, secrets.file.parent
    if secrets.place == "keychain":
        return "Keys", "API keys and other secrets, in the system keychain (not in a folder of Cairn's)", None
    return "Keys", "API keys and other secrets: only in memory until Cairn closes (no system keychain)", None


class DataFolders(QDialog):
    """Help > Where your data lives: each of Cairn's folders, with a button to open it."""

    def __init__(self, parent: QWidget, paths: CairnPaths, secrets: SecretsView) -> None:
        super().__init__(parent)
        self.setWindowTitle("Where your data lives")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setAccessibleName("Where your data lives")
        # A seam: tests see which folder would open instead of starting a file manager.
        self.open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl
        self.buttons: dict[str, QPushButton] = {}
        grid = QGridLayout()
        self.texts: dict[str, QLabel] = {}
        for row, (name, what, folder) in enumerate(data_places(paths, secrets)):
            title = QLabel(name)
            bold = title.font()
            bold.setBold(True)
            title.setFont(bold)
            where = QLabel(what if folder is None else f"{what}\n{folder}")
            where.setTextFormat(Qt.TextFormat.PlainText)
            where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(title, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(where, row, 1)
            self.texts[name] = where
            if folder is None:
                continue
            button = QPushButton("Open")
            button.setAccessibleName(f"Open the {name.lower()} folder")
            if not folder.is_dir():
                button.setEnabled(False)
                button.setToolTip("Cairn has not made this folder yet.")
            button.clicked.connect(lambda _checked=False, f=folder: self.open_folder(f))
            grid.addWidget(button, row, 2, Qt.AlignmentFlag.AlignTop)
            self.buttons[name] = button
        grid.setColumnStretch(1, 1)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.hide()
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addWidget(self.problem)
        layout.addWidget(close)
        self.setMinimumWidth(560)

    def open_folder(self, folder: Path) -> None:
        if not self.open_url(QUrl.fromLocalFile(str(folder))):
            self.problem.setText(f"Cairn could not open {folder}; open it from your file manager instead.")
            self.problem.show()


def add_help_actions(
    window: QMainWindow, menu: QMenu, paths: CairnPaths, secrets: Callable[[], SecretsView]
) -> tuple[QAction, QAction]:
    """Keyboard shortcuts (Ctrl+/) and Where your data lives (``secrets``: where keys are now),
    in ``menu``."""
    keys = QAction("Keyboard shortcuts", window)
    keys.setShortcut(QKeySequence("Ctrl+/"))
    keys.triggered.connect(lambda: Shortcuts(window).open())
    window.addAction(keys)
    data = QAction("Where your data lives", window)
    data.triggered.connect(lambda: DataFolders(window, paths, secrets()).open())
    menu.addAction(keys)
    menu.addAction(data)
    return keys, data
