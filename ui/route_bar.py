"""The route bar above the chat: the account and model the next message goes to, and the
chat's permission mode. It renders the core's snapshot and asks the core to change things."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from desktop.snapshot import AppSnapshot

__all__ = ["MODE_LABELS", "RouteBar"]

MODE_LABELS = {
    "ask": "Ask before changes",
    "read_only": "Read only",
    "auto": "Run tools without asking",
}


class RouteBar(QWidget):
    account_chosen = Signal(str)  # account id
    model_chosen = Signal(str, str)  # account id, model
    mode_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.accounts = QComboBox()
        self.accounts.setAccessibleName("Account")
        self.models = QComboBox()
        self.models.setEditable(True)
        self.models.setAccessibleName("Model")
        self.models.setMinimumContentsLength(12)
        self.mode = QComboBox()
        self.mode.setAccessibleName("Permission mode")
        self.mode.setToolTip(
            "Ask before changes: tools that only read run, the rest ask you first.\n"
            "Read only: tools that could change something are refused.\n"
            "Run tools without asking: everything runs, still inside the workspace folder."
        )
        for mode, label in MODE_LABELS.items():
            self.mode.addItem(label, mode)
        for box in (self.accounts, self.models, self.mode):
            box.setMinimumWidth(96)  # as wide as their text when there is room; a narrow window shrinks them
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 6, 10, 0)
        row.addWidget(QLabel("Route:"))
        row.addWidget(self.accounts)
        row.addWidget(self.models)
        row.addStretch(1)
        row.addWidget(QLabel("Tools:"))
        row.addWidget(self.mode)
        self._account_id: str | None = None
        self.accounts.activated.connect(lambda i: self.account_chosen.emit(self.accounts.itemData(i)))
        self.models.activated.connect(self._model)
        self.mode.activated.connect(lambda i: self.mode_chosen.emit(self.mode.itemData(i)))

    def show_snapshot(self, snapshot: AppSnapshot) -> bool:
        """Show the snapshot's accounts and model; ``False`` when there is no account yet."""
        accounts = [view.account for view in snapshot.accounts]
        self.accounts.clear()
        for account in accounts:
            self.accounts.addItem(account.name, account.id)
        if not accounts:
            return False
        self._account_id = snapshot.account_id or accounts[0].id
        self.accounts.setCurrentIndex(max(self.accounts.findData(self._account_id), 0))
        view = snapshot.account(snapshot.account_id)
        if view is not None:
            account = view.account
            self.models.clear()
            for model in dict.fromkeys([account.default_model, *snapshot.catalog_models.get(account.provider, ())]):
                self.models.addItem(model)
            self.models.setCurrentText(snapshot.model or account.default_model)
        return True

    def show_mode(self, mode: str) -> None:
        self.mode.setCurrentIndex(max(self.mode.findData(mode), 0))

    def _model(self, _index: int) -> None:
        model = self.models.currentText().strip()
        if self._account_id and model:
            self.model_chosen.emit(self._account_id, model)
