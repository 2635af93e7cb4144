"""NAME / value rows for an MCP server's environment variables or HTTP headers.

A secret kept (in the keychain, the secrets file or memory) is never brought back into the
window: its row shows the name and an empty value whose placeholder says it is kept, and the
value is kept unless a new one is typed. A value that looks like a secret is masked as it is
typed. The table is as tall as its rows,
from a few to about ten; past that it scrolls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import looks_secret

__all__ = ["KEPT", "ValueRows"]

KEPT = "•••• kept as a secret"
_ENV_NAME = re.compile(r"[^=\s\x00]+")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token
FEWEST_ROWS, MOST_ROWS = 3, 10  # the rows the table shows without scrolling


class ValueRows(QWidget):
    """Rows of a name and a value; ``values()`` gives them, a kept secret as ``None``."""

    def __init__(self, what: str, *, headers: bool = False) -> None:
        super().__init__()
        self.what = what  # "environment variable" or "header", for the messages
        self._headers = headers
        self._kept: dict[QLineEdit, str] = {}  # value field -> the name whose secret it keeps
        self.table = QTableWidget(0, 3)
        self.table.setAccessibleName(f"{what.capitalize()}s")
        self.table.setHorizontalHeaderLabels(["Name", "Value", ""])
        self.table.verticalHeader().hide()
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Fixed)
        self.table.setColumnWidth(2, 28)
        self._fit()
        self.add = QPushButton(f"Add {'header' if headers else 'variable'}")
        self.add.setAccessibleName(f"Add {what}")
        self.add.clicked.connect(lambda: self.add_row().setFocus())
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.add)
        layout.addLayout(row)

    def load(self, plain: Mapping[str, str], kept: Iterable[str] = ()) -> None:
        """Show ``plain`` values as they are and the ``kept`` names with their value masked."""
        for _name, value_field in self.rows():
            value_field.clear()  # a removed cell lives until Qt deletes it later; no value lives in it
        self.table.setRowCount(0)
        self._kept.clear()
        for name, value in plain.items():
            self.add_row(name, value)
        for name in kept:
            self.add_row(name, kept=True)
        self._fit()

    def add_row(self, name: str = "", value: str = "", *, kept: bool = False) -> QLineEdit:
        """Add a row; returns its name field."""
        row = self.table.rowCount()
        self.table.insertRow(row)
        name_field, value_field = QLineEdit(name), QLineEdit(value)
        name_field.setAccessibleName(f"{self.what} name")
        value_field.setAccessibleName(f"{self.what} value")
        name_field.setPlaceholderText("Authorization" if self._headers else "NAME")
        if kept:
            self._kept[value_field] = name
            value_field.setPlaceholderText(KEPT)
            value_field.setToolTip(
                "The value is kept with your secrets, not in the settings. Type a new one to replace it."
            )
        remove = QToolButton()
        remove.setText("✕")
        remove.setAccessibleName(f"Remove {self.what}")
        remove.setAutoRaise(True)
        remove.clicked.connect(lambda: self._remove(name_field))

        def mask() -> None:
            secret = value_field in self._kept or looks_secret(name_field.text(), value_field.text())
            value_field.setEchoMode(QLineEdit.EchoMode.Password if secret else QLineEdit.EchoMode.Normal)

        name_field.textChanged.connect(mask)
        value_field.textChanged.connect(mask)
        mask()
        self.table.setCellWidget(row, 0, name_field)
        self.table.setCellWidget(row, 1, value_field)
        self.table.setCellWidget(row, 2, remove)
        self._fit()
        return name_field

    def _remove(self, name_field: QLineEdit) -> None:
        for row in range(self.table.rowCount()):
            if self.table.cellWidget(row, 0) is name_field:
                value_field = self.table.cellWidget(row, 1)
                assert isinstance(value_field, QLineEdit)
                value_field.clear()
                self._kept.pop(value_field, None)
                self.table.removeRow(row)
                self._fit()
                return

    def _fit(self) -> None:
        """Grow with the rows (from FEWEST_ROWS to MOST_ROWS); beyond that the table scrolls."""
        table = self.table
        shown = max(FEWEST_ROWS, min(table.rowCount(), MOST_ROWS))
        rows = sum(table.rowHeight(r) for r in range(min(table.rowCount(), shown)))
        rows += (shown - min(table.rowCount(), shown)) * table.verticalHeader().defaultSectionSize()
        table.setFixedHeight(table.horizontalHeader().sizeHint().height() + rows + 2 * table.frameWidth())

    def rows(self) -> list[tuple[QLineEdit, QLineEdit]]:
        return [
            (self.table.cellWidget(r, 0), self.table.cellWidget(r, 1))  # type: ignore[misc]
            for r in range(self.table.rowCount())
        ]

    def values(self) -> dict[str, str | None]:
        """The rows as name to value; ``None`` keeps the secret already kept. ``ValueError``
        says what is wrong in words. Rows left blank are ignored."""
        values: dict[str, str | None] = {}
        pattern = _HEADER_NAME if self._headers else _ENV_NAME
        a = f"{'an' if self.what[0] in 'aeiou' else 'a'} {self.what}"
        for name_field, value_field in self.rows():
            name, value = name_field.text().strip(), value_field.text()
            if not name:
                if value:
                    raise ValueError(f"{a.capitalize()} has a value but no name; give it a name or remove the row.")
                continue
            if pattern.fullmatch(name) is None:
                rule = "no spaces and no :" if self._headers else "no spaces and no ="
                raise ValueError(f"{name!r} cannot be {a} name ({rule}).")
            if name in values:
                raise ValueError(f"The {self.what} {name} is given twice; keep one row.")
            keeps = self._kept.get(value_field) == name and not value
            values[name] = None if keeps else value
        return values
