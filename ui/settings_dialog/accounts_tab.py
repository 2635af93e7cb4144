"""The Accounts tab of Settings: accounts, their models and options, their keys; the route and
transport flags in an "Advanced" area.

Choosing a provider fills in its name and model (a name the person typed is kept). A key typed
where there is no keychain stays in the form until the person has said where it goes, and an
account is removed only after a question that says what happens to its key and chats."""

from __future__ import annotations

from pydantic import ValidationError
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.app import (
    BUILTIN_PROVIDER,
    Account,
    AppSnapshot,
    RouteError,
    printable,
    problem_text,
    resolve_route,
)
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.account_checks import AccountChecks
from ui.settings_dialog.account_options import AccountOptions
from ui.settings_dialog.account_saving import AccountSaving
from ui.settings_dialog.notes import quiet_note, with_note
from ui.settings_dialog.preset_help import PresetHelp
from ui.settings_dialog.result_line import ResultLine
from ui.settings_dialog.route_details import RouteDetails
from ui.settings_dialog.unsaved import UnsavedGuard
from ui.widgets.wheel import scroll_past

__all__ = ["AccountsTab"]

CUSTOM = "custom"


class AccountsTab(QWidget):
    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        self.editing: Account | None = None
        self.guard = UnsavedGuard(self, self._describe)  # changes since it showed an account (or a new one)
        self._loading = False  # an account is being shown: its provider's defaults stay out of it
        self.saving = AccountSaving(core, self, self)
        layout = QHBoxLayout(self)
        layout.addLayout(self._build_list(), 1)
        right = QVBoxLayout()  # the form scrolls; its buttons and what they found stay in view under it
        right.addWidget(self._scrolling(self._build_form()), 1)
        right.addLayout(self.buttons_row)
        right.addWidget(self.result)
        layout.addLayout(right, 3)
        self.result_shows = ResultLine(self.result)
        for changed in (
            self.name.textChanged, self.base_url.textChanged, self.key.textChanged, self.headers.textChanged,
            self.model.currentTextChanged, self.provider.currentIndexChanged, self.options.changed,
        ):  # fmt: skip
            changed.connect(self._form_changed)
        for box in self.findChildren(QAbstractSpinBox) + self.findChildren(QComboBox):
            scroll_past(box)
        self.provider.currentIndexChanged.connect(self._provider_changed)
        for signal in (self.base_url.textChanged, self.model.currentTextChanged, self.headers.textChanged):
            signal.connect(self._show_flags)
        self.options.instructions_first.toggled.connect(self._show_flags)
        self.options.context.valueChanged.connect(self._show_flags)
        self.checks = AccountChecks(core, self)
        self.load_models.clicked.connect(self.checks.load_models)
        self.test.clicked.connect(self.checks.test)
        self.save.clicked.connect(self.saving.save)
        self.refill()

    def _build_list(self) -> QVBoxLayout:
        self.list = QListWidget()
        self.list.setAccessibleName("Accounts")
        self.list.currentRowChanged.connect(self._chosen)
        add, remove = QPushButton("Add"), QPushButton("Remove")
        add.setAccessibleName("Add account")
        remove.setAccessibleName("Remove account")
        add.clicked.connect(lambda: self.guard.leave(lambda: self.new_account("deepseek")))
        remove.clicked.connect(self.saving.ask_remove)
        self.remove = remove
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
        self.provider.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.provider.setMinimumContentsLength(16)  # a narrow form shrinks it rather than run off its edge
        for preset in self.snapshot.transport.providers:
            self.provider.addItem(preset.name, preset.id)
        self.provider.addItem("Other OpenAI-compatible endpoint", CUSTOM)
        self.preset_help = PresetHelp()  # its key link and note
        self.base_url = QLineEdit()
        self.base_url.setToolTip(
            "Leave it empty to use the provider's own address; fill it in for a relay or a server on another port."
        )
        self.model = QComboBox()
        self.model.setEditable(True)
        # A model id can be 64 characters (the built-in engine's are SHA-256s): the box keeps its
        # column's width and scrolls its text, rather than push the form past the dialog's edge.
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model.setMinimumContentsLength(16)
        if (model_field := self.model.lineEdit()) is not None:
            model_field.setAccessibleName("Model")  # what a screen reader meets when typing in it
            model_field.setPlaceholderText("A model id; Load models asks the endpoint")
        self.load_models = QPushButton("Load models")
        self.load_models.setToolTip("Ask the endpoint which models it has, and choose from them.")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.keychain_note = quiet_note(
            "There is no system keychain here. When you save, Cairn asks whether to keep the key in memory "
            "until it closes, or in a file only you can read (Settings > Keys)."
        )
        self.headers = QPlainTextEdit()
        self.headers.setPlaceholderText("Extra headers, one per line: Name: value")
        self.headers.setFixedHeight(60)
        self.test = QPushButton("Test connection")
        self.save = QPushButton("Save account")
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        self.result.setAccessibleName("Account status")
        self.model_note = quiet_note("")
        for widget, name in (
            (self.name, "Account name"), (self.provider, "Provider"), (self.base_url, "Base URL"),
            (self.model, "Model"), (self.load_models, "Load models"), (self.key, "API key"),
            (self.keychain_note, "No keychain"), (self.model_note, "About this model"), (self.headers, "Extra headers"),
            (self.test, "Test connection"), (self.save, "Save account"),
        ):  # fmt: skip
            widget.setAccessibleName(name)
        for widget, tip in (
            (self.name, "What this account is called in Cairn's lists; any name you like."),
            (self.provider, "Who runs the model. Choosing one fills in its usual address and model."),
            (self.model, "The model replies come from. Load models lists what the endpoint offers."),
            (self.key, "The key the provider gave you. Cairn keeps it where Settings > Keys says."),
            (self.headers, "Only if your provider or relay asks for extra HTTP headers. Keys go in API key."),
        ):
            widget.setToolTip(tip)
        self._say_if_no_keychain()
        return self._lay_out_form()

    def _lay_out_form(self) -> QVBoxLayout:
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        form.addRow("Name", self.name)
        form.addRow("Provider", with_note(self.provider, self.preset_help))
        form.addRow("Base URL", self.base_url)
        model_row = QWidget()
        row = QHBoxLayout(model_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.model, 1)
        row.addWidget(self.load_models)
        form.addRow("Model", with_note(model_row, self.model_note))
        form.addRow("API key", with_note(self.key, self.keychain_note))
        form.addRow("Extra headers", self.headers)
        self.options = AccountOptions()
        self.buttons_row = actions = QHBoxLayout()
        actions.addWidget(self.test)
        actions.addStretch(1)
        actions.addWidget(self.save)

        self.details = RouteDetails()

        column = QVBoxLayout()
        column.addLayout(form)
        column.addWidget(self.options)
        column.addWidget(self.details)
        column.addStretch(1)
        return column

    def _scrolling(self, column: QVBoxLayout) -> QScrollArea:
        """The form in a scroll area: opening Advanced scrolls it rather than growing the dialog."""
        inner = QWidget()
        inner.setLayout(column)
        column.setContentsMargins(0, 0, 6, 0)
        self.form_scroll = QScrollArea()
        self.form_scroll.setWidgetResizable(True)
        self.form_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.form_scroll.setWidget(inner)
        self.form_scroll.viewport().setAutoFillBackground(False)
        inner.setAutoFillBackground(False)
        self.details.toggle.toggled.connect(self._show_details)
        return self.form_scroll

    def _show_details(self, expanded: bool) -> None:
        if expanded:  # once the area has its size, bring it into view
            QTimer.singleShot(0, lambda: self.form_scroll.ensureWidgetVisible(self.details.body))

    @property
    def flags(self) -> QLabel:
        """The route and its transport flags, in the Advanced area."""
        return self.details.flags

    @property
    def snapshot(self) -> AppSnapshot:
        return self.core.snapshot

    def _say_if_no_keychain(self) -> None:
        problem = self.snapshot.keychain_problem
        self.keychain_note.setVisible(problem is not None)
        if problem:
            self.keychain_note.setToolTip(problem)
            self.key.setToolTip("There is no system keychain here: when you save, Cairn asks where the key goes.")

    # -- the list ------------------------------------------------------------------------

    def refill(self, select: str | None = None) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        accounts = [view.account for view in self.snapshot.accounts]
        for account in accounts:
            item = QListWidgetItem(printable(account.name))
            item.setData(Qt.ItemDataRole.UserRole, account.id)
            self.list.addItem(item)
        index = next((i for i, a in enumerate(accounts) if a.id == select), 0 if accounts else -1)
        self.list.setCurrentRow(index)  # Cairn's own choice, not the person's: shown below, unasked
        self.list.blockSignals(False)
        if index >= 0:
            self._pick(index)
        else:
            self.new_account("deepseek")

    def _pick(self, row: int) -> None:
        views = self.snapshot.accounts
        if not 0 <= row < len(views):
            return
        account = views[row].account
        self.editing = account
        self._loading = True
        try:
            self.name.setText(account.name)
            self.provider.setCurrentIndex(max(self.provider.findData(account.provider), 0))
            self.base_url.setText(account.base_url or "")
            self.fill_models(self._catalog_models(account.provider), account.default_model)
        finally:
            self._loading = False
        self.key.clear()
        self.key.setPlaceholderText("Saved" if views[row].has_key else "Not saved")
        self.headers.setPlainText("\n".join(f"{k}: {v}" for k, v in account.headers.items()))
        self.options.load(account)
        self.result_shows.changed()
        self.remove.setEnabled(True)
        self._show_flags()
        self.guard.touched = False  # as saved: nothing changed yet

    def new_account(self, preset: str) -> None:
        self.editing = None
        self.list.blockSignals(True)
        self.list.setCurrentRow(-1)
        self.list.blockSignals(False)
        self._loading = True
        self.provider.setCurrentIndex(max(self.provider.findData(preset), 0))
        self._loading = False
        self.name.clear()
        self.base_url.clear()
        self.key.clear()
        no_keychain = self.snapshot.keychain_problem is not None
        kept = "Kept in your secrets file" if self.snapshot.secrets.place == "file" else "Kept in the system keychain"
        self.key.setPlaceholderText("Your API key (see below)" if no_keychain else kept)
        self.headers.clear()
        self.options.load(None)
        self.result_shows.changed()
        self.remove.setEnabled(False)
        self._apply_preset()
        self.name.setFocus()
        self.guard.touched = False

    def _provider_changed(self) -> None:
        preset = self.snapshot.transport.preset(self.provider.currentData())
        self.base_url.setPlaceholderText(preset.base_url if preset else "https://host.example/v1")
        self.preset_help.show_preset(preset)
        if not self._loading:
            self._apply_preset()

    def _apply_preset(self) -> None:
        """The chosen provider's name and model in place of the last provider's. A name the
        person typed stays; the model is the provider's, as another provider's id means nothing
        there."""
        provider = self.provider.currentData()
        preset = self.snapshot.transport.preset(provider)
        name = self.name.text().strip()
        if not name or name in {p.name for p in self.snapshot.transport.providers}:
            self.name.setText(preset.name if preset is not None else "")
        models = self._catalog_models(provider)
        default = preset.default_model if preset is not None and preset.default_model else None
        self.fill_models(models, default or (models[0] if models else ""))

    def _catalog_models(self, provider: str) -> list[str]:
        return list(self.snapshot.catalog_models.get(provider, ()))

    def fill_models(self, models: list[str], select: str) -> None:
        """Offer ``models`` in the model box, with ``select`` chosen (typed, if not among them)."""
        self.model.blockSignals(True)
        self.model.clear()
        self.model.addItems(list(dict.fromkeys(models)))
        index = self.model.findText(select)
        if index >= 0:
            self.model.setCurrentIndex(index)
        self.model.setCurrentText(select)
        self.model.blockSignals(False)
        self._show_flags()

    # -- the form ------------------------------------------------------------------------

    def form_account(self, *, stand_in_model: str | None = None) -> Account:
        """The account the form describes; raises ``ValidationError`` or ``ValueError``.
        ``stand_in_model`` is used when no model is typed (to ask an endpoint for its models)."""
        headers = {}
        for line in self.headers.toPlainText().splitlines():
            if line.strip():
                name, sep, value = line.partition(":")
                if not sep:
                    raise ValueError(f"The header line {line.strip()!r} should look like Name: value.")
                headers[name.strip()] = value.strip()
        fields = {
            "name": self.name.text().strip(),
            "provider": self.provider.currentData(),
            "base_url": self.base_url.text().strip() or None,
            "default_model": self.model.currentText().strip() or stand_in_model or "",
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
            self.details.show_problem(problem_text(exc))
            self.model_note.clear()
            return
        self.details.show_route(route)
        if route.context_limit:
            where = "as set under Options" if route.context_source == "account" else "says Cairn's model catalog"
            self.model_note.setText(f"This model reads up to {route.context_limit:,} tokens of a chat ({where}).")
        elif account.provider == BUILTIN_PROVIDER:  # the engine sizes it by the model and the machine
            self.model_note.setText("The built-in engine sets how much of a chat this model reads (Settings → Models).")
        else:
            self.model_note.setText(
                "Cairn does not know how much of a chat this model can read; set its context size under Options."
            )

    def checked_account(self, *, stand_in_model: str | None = None) -> Account | None:
        """The form's account, or ``None`` after saying what is wrong with it."""
        try:
            return self.form_account(stand_in_model=stand_in_model)
        except (ValidationError, ValueError) as exc:
            self.result_shows.show(problem_text(exc), "problem")
            return None

    def _form_changed(self) -> None:
        if not self._loading:
            self.guard.touched = True
            self.result_shows.changed()

    def _describe(self) -> str:
        name = printable(self.name.text().strip())
        return f"the account “{name}”" if name else "the new account"

    def _chosen(self, row: int) -> None:
        """An account picked in the list; changes to the one in the form are not lost unasked."""
        editing = self.editing.id if self.editing is not None else None
        back = next((i for i, v in enumerate(self.snapshot.accounts) if v.account.id == editing), -1)

        def stay() -> None:
            self.list.blockSignals(True)
            self.list.setCurrentRow(back)
            self.list.blockSignals(False)

        self.guard.leave(lambda: self._pick(row), stay=stay)
