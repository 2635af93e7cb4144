"""Asking the endpoint the account form describes: Load models (what it lists, one chosen) and
Test connection (its models, then a one-token chat, so a wrong model name or a key without
chat rights shows here and not in the first message). An answer that comes back after the
form changed is dropped (``ResultLine``)."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QComboBox, QLineEdit

from desktop.app import BUILTIN_PROVIDER, Account, AppSnapshot, ServerReport, problem_text
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.account_options import AccountOptions
from ui.settings_dialog.account_questions import choose_model
from ui.settings_dialog.result_line import ResultLine

__all__ = ["AccountChecks"]


class CheckedForm(Protocol):
    """What the checks need of the account form."""

    key: QLineEdit
    model: QComboBox
    options: AccountOptions
    result_shows: ResultLine

    @property
    def snapshot(self) -> AppSnapshot: ...

    def checked_account(self, *, stand_in_model: str | None = None) -> Account | None: ...

    def fill_models(self, models: list[str], select: str) -> None: ...


class AccountChecks:
    def __init__(self, core: CoreClient, form: CheckedForm) -> None:
        self.core, self.form = core, form

    def load_models(self) -> None:
        form = self.form
        account = form.checked_account(stand_in_model="none-chosen-yet")  # the endpoint is what matters here
        if account is None:
            return
        key = form.key.text().strip() or None

        def loaded(models: list[str]) -> None:
            if not models:
                said = "The endpoint answered but lists no models; type the model's id yourself."
                form.result_shows.answer(asked, said, "problem")
                return
            if asked != form.result_shows.asked:
                return  # the form changed meanwhile: its model box is the person's now
            preset = form.snapshot.transport.preset(account.provider)
            current = form.model.currentText().strip()
            chosen = choose_model(models, current, preset.default_model if preset is not None else None)
            form.fill_models(models, chosen)
            count = f"{len(models)} model{'' if len(models) == 1 else 's'}"
            form.result_shows.answer(
                asked, f"The endpoint lists {count}; {chosen} is chosen. Pick another in the list."
            )

        asked = form.result_shows.working("Asking the endpoint for its models…")
        self.core.run_on_core(
            lambda app: app.models.list_models(account, key),
            loaded,
            lambda e: form.result_shows.answer(asked, problem_text(e), "problem"),
        )

    def test(self) -> None:
        form = self.form
        account = form.checked_account()
        if account is None:
            return
        key = form.key.text().strip() or None

        def answered(result: tuple[list[str], ServerReport]) -> None:
            models, template = result
            has = "lists" if account.default_model in models else "answers, but does not list"
            text = f"Connected: the endpoint {has} {account.default_model} ({len(models)} models)"
            text += " and answered a one-token chat." if account.provider != BUILTIN_PROVIDER else "."
            advice = "" if account.instructions_in_first_message else template.advice
            said = " ".join(part for part in (text, advice, template.context_advice) if part)
            if asked == form.result_shows.asked:
                form.options.hint.setText(advice)
            form.result_shows.answer(asked, said, "ok")

        asked = form.result_shows.working("Testing the connection…")
        self.core.run_on_core(
            lambda app: app.models.test_connection(account, key),
            answered,
            lambda e: form.result_shows.answer(asked, problem_text(e), "problem"),
        )
