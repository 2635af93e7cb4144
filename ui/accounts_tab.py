"""The Accounts tab of Settings: accounts, their routes and transport flags, their keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import ValidationError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.local_server import ServerReport
from desktop.routes import RouteError, resolve_route
from desktop.secrets import KeychainUnavailable
from desktop.settings import Account
from desktop.snapshot import AppSnapshot
from desktop.validation_text import problem_text
from ui.account_options import AccountOptions

if TYPE_CHECKING:
    from ui.main_window import MainWindow

__all__ = ["AccountsTab"]

CUSTOM = "custom"


class AccountsTab(QWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.window_ = window
        self.app = window.app
        self.editing: Account | None = None
        layout = QHBoxLayout(self)
        layout.addLayout(self._build_list(), 1)
        layout.addLayout(self._build_form(), 3)
        self.provider.currentIndexChanged.connect(self._provider_changed)
        for signal in (self.base_url.textChanged, self.model.currentTextChanged, self.headers.textChanged):
            signal.connect(self._show_flags)
        self.options.instructions_first.toggled.connect(self._show_flags)
        self.load_models.clicked.connect(self._load_models)
        self.test.clicked.connect(self._test)
        self.save.clicked.connect(self._save)
        self.refill()

    def _build_list(self) -> QVBoxLayout:
        self.list = QListWidget()
        self.list.setAccessibleName("Accounts")
        self.list.currentRowChanged.connect(self._pick)
        add, remove = QPushButton("Add"), QPushButton("Remove")
        add.setAccessibleName("Add account")
        remove.setAccessibleName("Remove account")
        add.clicked.connect(lambda: self.new_account("deepseek"))
        remove.clicked.connect(self._remove)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        left.addLayout(row)
        return left

    def _build_form(self) -> QVBoxLayout:
        self.name = QLineEdit()
        self.provider = QComboBox()
        for preset in self.snapshot.transport.providers:
            self.provider.addItem(preset.name, preset.id)
        self.provider.addItem("Other OpenAI-compatible endpoint", CUSTOM)
        self.base_url = QLineEdit()
        self.model = QComboBox()
        self.model.setEditable(True)
        self.load_models = QPushButton("Load models")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.memory_only = QCheckBox("No keychain here: keep the key in memory for this run only")
        self.headers = QPlainTextEdit()
        self.headers.setPlaceholderText("Extra headers, one per line: Name: value")
        self.headers.setFixedHeight(60)
        self.test = QPushButton("Test connection")
        self.save = QPushButton("Save account")
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setAccessibleName("Account status")
        for widget, name in (
            (self.name, "Account name"), (self.provider, "Provider"), (self.base_url, "Base URL"),
            (self.model, "Model"), (self.load_models, "Load models"), (self.key, "API key"),
            (self.memory_only, "Keep key in memory only"), (self.headers, "Extra headers"),
            (self.test, "Test connection"), (self.save, "Save account"),
        ):  # fmt: skip
            widget.setAccessibleName(name)
        self._offer_memory_only()

        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Provider", self.provider)
        form.addRow("Base URL", self.base_url)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.load_models)
        form.addRow("Model", model_row)
        form.addRow("API key", self.key)
        form.addRow("", self.memory_only)
        form.addRow("Headers", self.headers)
        self.options = AccountOptions()
        actions = QHBoxLayout()
        actions.addWidget(self.test)
        actions.addStretch(1)
        actions.addWidget(self.save)

        flags_box = self._build_flags()

        right = QVBoxLayout()
        right.addLayout(form)
        right.addWidget(self.options)
        right.addLayout(actions)
        right.addWidget(self.result)
        right.addWidget(flags_box)
        right.addStretch(1)
        return right

    def _build_flags(self) -> QGroupBox:
        self.flags = QLabel()
        self.flags.setWordWrap(True)
        self.flags.setTextFormat(Qt.TextFormat.RichText)
        self.flags.setAccessibleName("Transport flags")
        box = QGroupBox("Route identity and transport flags")
        QVBoxLayout(box).addWidget(self.flags)
        return box

    @property
    def snapshot(self) -> AppSnapshot:
        return self.window_.snapshot

    def _offer_memory_only(self) -> None:
        problem = self.snapshot.keychain_problem
        self.memory_only.setVisible(problem is not None)
        if problem:
            self.memory_only.setToolTip(problem)

    # -- the list ------------------------------------------------------------------------

    def refill(self, select: str | None = None) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        accounts = [view.account for view in self.snapshot.accounts]
        for account in accounts:
            item = QListWidgetItem(account.name)
            item.setData(Qt.ItemDataRole.UserRole, account.id)
            self.list.addItem(item)
        self.list.blockSignals(False)
        index = next((i for i, a in enumerate(accounts) if a.id == select), 0 if accounts else -1)
        if index >= 0:
            self.list.setCurrentRow(index)
            self._pick(index)
        else:
            self.new_account("deepseek")

    def _pick(self, row: int) -> None:
        views = self.snapshot.accounts
        if not 0 <= row < len(views):
            return
        account = views[row].account
        self.editing = account
        self.name.setText(account.name)
        self.provider.setCurrentIndex(max(self.provider.findData(account.provider), 0))
        self.base_url.setText(account.base_url or "")
        self._fill_models(account.provider)
        self.model.setCurrentText(account.default_model)
        self.key.clear()
        self.key.setPlaceholderText("Saved" if views[row].has_key else "Not saved")
        self.headers.setPlainText("\n".join(f"{k}: {v}" for k, v in account.headers.items()))
        self.options.load(account)
        self.result.clear()
        self._show_flags()

    def new_account(self, preset: str) -> None:
        self.editing = None
        self.list.clearSelection()
        self.provider.setCurrentIndex(max(self.provider.findData(preset), 0))
        self.name.setText(self.provider.currentText() if preset != CUSTOM else "")
        self.base_url.clear()
        self.key.clear()
        self.key.setPlaceholderText("Kept in the system keychain")
        self.headers.clear()
        self.options.load(None)
        self._provider_changed()
        self.name.setFocus()

    def _provider_changed(self) -> None:
        provider = self.provider.currentData()
        preset = self.snapshot.transport.preset(provider)
        self.base_url.setPlaceholderText(preset.base_url if preset else "https://host.example/v1")
        self._fill_models(provider)
        if preset is not None and preset.default_model and not self.model.currentText():
            self.model.setCurrentText(preset.default_model)
        self._show_flags()

    def _fill_models(self, provider: str, extra: list[str] | None = None) -> None:
        current = self.model.currentText()
        self.model.blockSignals(True)
        self.model.clear()
        for model in dict.fromkeys([*(extra or []), *self.snapshot.catalog_models.get(provider, ())]):
            self.model.addItem(model)
        self.model.setCurrentText(current)
        self.model.blockSignals(False)

    # -- the form ------------------------------------------------------------------------

    def form_account(self) -> Account:
        """The account the form describes; raises ``ValidationError`` or ``ValueError``."""
        headers = {}
        for line in self.headers.toPlainText().splitlines():
            if line.strip():
                name, sep, value = line.partition(":")
                if not sep:
                    raise ValueError(f"Header line {line!r} should look like Name: value.")
                headers[name.strip()] = value.strip()
        fields = {
            "name": self.name.text().strip(),
            "provider": self.provider.currentData(),
            "base_url": self.base_url.text().strip() or None,
            "default_model": self.model.currentText().strip(),
            "headers": headers,
            **self.options.values(),
        }
        if self.editing is not None:
            fields["id"] = self.editing.id
        return Account.model_validate(fields)

    def _show_flags(self) -> None:
        try:
            account = self.form_account()
            route = resolve_route(account, None, self.snapshot.transport, self.snapshot.models_dev)
        except (ValidationError, ValueError, RouteError) as exc:
            self.flags.setText(f"<i>{problem_text(exc)}</i>")
            return
        rows = "".join(
            f"<tr><td>{label}</td><td>{getattr(route.published, f)}</td><td>{getattr(route.actual, f)}</td></tr>"
            for label, f in (("Provider", "provider"), ("Model", "model"), ("API", "api"), ("Endpoint", "base_url"))
        )
        flags = "".join(
            f"<li>{'✔' if on else '✘'} {name.replace('_', ' ')}</li>" for name, on in route.flags.model_dump().items()
        )
        info = route.model_info
        limits = f"Context {info.limit.context:,} tokens. " if info and info.limit.context else ""
        self.flags.setText(
            f"<table cellspacing='6'><tr><th></th><th>Published</th><th>Actual</th></tr>{rows}</table>"
            f"<ul>{flags}</ul><p>{route.flags_reason}</p><p>{limits}</p>"
        )

    def _checked_account(self) -> Account | None:
        """The form's account, or ``None`` after saying what is wrong with it."""
        try:
            return self.form_account()
        except (ValidationError, ValueError) as exc:
            self.result.setText(problem_text(exc))
            return None

    def _ask_models(self, account: Account, waiting: str, then: Callable[[list[str]], None]) -> None:
        """Ask the endpoint for its models (the form's key, if typed), then ``then(models)``."""
        key = self.key.text().strip() or None
        self.result.setText(waiting)
        self.window_.run_on_core(
            lambda: self.app.list_models(account, key), then, lambda e: self.result.setText(problem_text(e))
        )

    def _load_models(self) -> None:
        account = self._checked_account()
        if account is None:
            return

        def loaded(models: list[str]) -> None:
            self._fill_models(account.provider, models)
            self.result.setText(f"The endpoint lists {len(models)} models.")

        self._ask_models(account, "Asking the endpoint for its models…", loaded)

    def _test(self) -> None:
        account = self._checked_account()
        if account is None:
            return
        key = self.key.text().strip() or None

        def answered(result: tuple[list[str], ServerReport]) -> None:
            models, template = result
            has = "lists" if account.default_model in models else "answers, but does not list"
            text = f"Connected: the endpoint {has} {account.default_model} ({len(models)} models)."
            advice = "" if account.instructions_in_first_message else template.advice
            self.result.setText(f"{text} {advice}".strip())
            self.options.hint.setText(advice)

        self.result.setText("Testing the connection…")
        self.window_.run_on_core(
            lambda: self.app.test_connection(account, key), answered, lambda e: self.result.setText(problem_text(e))
        )

    def _save(self) -> None:
        account = self._checked_account()
        if account is None:
            return
        key = self.key.text().strip() or None
        memory_only = self.memory_only.isVisible() and self.memory_only.isChecked()

        def saved(_result: object) -> None:
            self.refill(select=account.id)
            self.result.setText(f"Saved {account.name}.")

        def failed(error: BaseException) -> None:
            if isinstance(error, KeychainUnavailable):
                # The account itself was saved; only the key is waiting for a place to go.
                self.refill(select=account.id)
                self.memory_only.show()
            self.result.setText(problem_text(error))

        self.window_.run_on_core(lambda: self.app.save_account(account, key, memory_only=memory_only), saved, failed)

    def _remove(self) -> None:
        if self.editing is None:
            return
        account_id = self.editing.id

        self.window_.run_on_core(lambda: self.app.remove_account(account_id), lambda _r: self.refill())
