"""The route bar above the chat: the account and model the chat's next message goes to, and
its permission mode. It renders the core's snapshot and the chat's route, and asks the core to
change them. In a narrow window it also holds the button that shows the chats."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtWidgets import QComboBox, QCompleter, QHBoxLayout, QLabel, QMessageBox, QSizePolicy, QToolButton, QWidget

from desktop.app import BUILTIN_PROVIDER, AppSnapshot
from ui.widgets.icons import icon
from ui.widgets.mode_labels import MODE_LABELS
from ui.widgets.theme import tokens_of

__all__ = ["ModelBox", "RouteBar"]


class ModelBox(QComboBox):
    """The Model box: the account's models, or any typed (typing part of a name finds it in a
    long list); says when its list is opened, so the endpoint's list is asked again."""

    opened = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        if (finder := self.completer()) is not None:
            finder.setFilterMode(Qt.MatchFlag.MatchContains)
            finder.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        if (typed := self.lineEdit()) is not None:
            typed.setAccessibleName("Model")  # what a screen reader meets when typing in it
        self.setAccessibleName("Model")
        # As wide as a usual model name, whatever the endpoint lists (some list names of 60 characters).
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(12)

    def showPopup(self) -> None:
        self.opened.emit()
        super().showPopup()


class RouteBar(QWidget):
    account_chosen = Signal(str)  # account id
    model_chosen = Signal(str, str)  # account id, model
    mode_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chats_button = QToolButton()
        self.chats_button.setText("☰ Chats")
        self.chats_button.setAccessibleName("Show chats")
        self.chats_button.setToolTip("Show the list of chats")
        self.chats_button.setCheckable(True)
        self.chats_button.hide()  # only in a narrow window
        self.accounts = QComboBox()
        # As wide as the longest account name (see show_snapshot), counted in characters rather
        # than measured: a measured hint is cached by Qt and changes with each polish, so the
        # box would change width when the inspector opens. Spare room goes to the stretch.
        self.accounts.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.accounts.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.accounts.setAccessibleName("Account")
        self.models = ModelBox()
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
        row.addWidget(self.chats_button)
        self.assistant = QLabel()  # the assistant the chat was started from, when it was
        self.assistant.setObjectName("Chip")
        self.assistant.setAccessibleName("Assistant")
        self.assistant.hide()
        row.addWidget(self.assistant)
        self.route_caption = QLabel("Model:")
        row.addWidget(self.route_caption)
        row.addWidget(self.accounts)
        row.addWidget(self.models)
        row.addStretch(1)
        self.mode_caption = QLabel("Tools:")
        row.addWidget(self.mode_caption)
        row.addWidget(self.mode)
        self.settings_button = QToolButton()  # the chat's own settings (ui.chat_panel.chat_settings_dialog)
        self.settings_button.setAccessibleName("Chat settings")
        self.settings_button.setIconSize(QSize(18, 18))
        self.settings_button.setToolTip("This chat's settings: system prompt, temperature, longest reply")
        row.addWidget(self.settings_button)
        self._tint()
        self._whole = False
        self._account_id: str | None = None
        self._model_shown: str | None = None  # the model the chat's route has now
        self._provider = ""
        self.accounts.activated.connect(lambda i: self.account_chosen.emit(self.accounts.itemData(i)))
        self.models.activated.connect(self._model)
        self.mode.activated.connect(lambda i: self.mode_chosen.emit(self.mode.itemData(i)))

    def show_snapshot(self, snapshot: AppSnapshot, route: tuple[str | None, str | None] | None = None) -> bool:
        """Show the snapshot's accounts, with ``route`` (account id, model; the chat's own)
        chosen, else the route used last; ``False`` when there is no account yet."""
        account_id, model = route if route is not None else (snapshot.account_id, snapshot.model)
        accounts = [view.account for view in snapshot.accounts]
        self.accounts.clear()
        for account in accounts:
            self.accounts.addItem(account.name, account.id)
        longest = max((len(account.name) for account in accounts), default=0)
        self.accounts.setMinimumContentsLength(min(max(longest, 6), 24))  # a renamed account fits
        if not accounts:
            return False
        if snapshot.account(account_id) is None:
            account_id, model = accounts[0].id, None
        self._account_id = account_id
        self.accounts.setCurrentIndex(max(self.accounts.findData(account_id), 0))
        view = snapshot.account(account_id)
        if view is not None:
            account = view.account
            self.models.clear()
            self._model_shown = model or account.default_model
            for name in dict.fromkeys([self._model_shown, *snapshot.models_of(account)]):
                self.models.addItem(snapshot.model_title(name), name)  # a model id's readable name, where it has one
            self._provider = account.provider
            index = self.models.findData(self._model_shown)
            if index >= 0:
                self.models.setCurrentIndex(index)
            else:
                self.models.setCurrentText(self._model_shown)
            if (typed := self.models.lineEdit()) is not None:
                typed.setCursorPosition(0)  # a long name shows its start, not its end
        return True

    def show_assistant(self, name: str | None) -> None:
        """The assistant the chat on screen was started from (``None``: none)."""
        self.assistant.setText(name or "")
        self.assistant.setToolTip(f"This chat was started from the assistant “{name}”." if name else "")
        self.assistant.setVisible(bool(name))

    def keep_whole(self, whole: bool) -> None:
        """Never narrower than its size hint while ``whole`` (the inspector is open beside the
        chat: its room comes from elsewhere); otherwise a narrow window shrinks the boxes."""
        self._whole = whole
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        least = super().minimumSizeHint()
        return least.expandedTo(QSize(self.sizeHint().width(), 0)) if self._whole else least

    def _tint(self) -> None:
        tokens = tokens_of(self)
        self.settings_button.setIcon(icon("chat-settings", tokens.text))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: tint the icon again
            self._tint()
        super().changeEvent(event)

    def show_mode(self, mode: str) -> None:
        self.mode.setCurrentIndex(max(self.mode.findData(mode), 0))

    def _model(self, index: int) -> None:
        typed = self.models.currentText().strip()
        listed = self.models.itemData(index)
        model = listed if isinstance(listed, str) and self.models.itemText(index) == typed else typed
        if not (self._account_id and model):
            return
        if self._provider == BUILTIN_PROVIDER and model != self._model_shown and not self.confirm_switch(model):
            index = self.models.findData(self._model_shown)
            self.models.setCurrentIndex(max(index, 0))
            return
        self.model_chosen.emit(self._account_id, model)

    def confirm_switch(self, model: str) -> bool:
        """Before another model on the built-in engine: it loads instead of the first, and the
        chat's cache starts again (its next message is read whole)."""
        found = self.models.findData(model)
        name = self.models.itemText(found) if found >= 0 else model
        answer = QMessageBox.question(
            self,
            "Switch model",
            f"Switch this chat to {name}?\n\nThe built-in engine unloads the model it has and loads {name}. The "
            "chat's cache starts again: its next message is read whole, which takes longer on a long chat.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes
