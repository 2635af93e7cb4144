"""Saving and removing the account in the account form, with the questions asked first.

Where no keychain can hold a key, the key typed stays in the form until the person has said
where it goes (memory for this run, nowhere, or back to the form): it is never thrown away to
make room for the question. Removing an account waits for a "Remove" that was read."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QLineEdit, QWidget

from desktop.app import Account, KeychainUnavailable, printable, problem_text
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.account_questions import KeychainQuestion, RemoveQuestion
from ui.settings_dialog.keys_questions import FileChoice
from ui.settings_dialog.result_line import ResultLine, Tone

__all__ = ["AccountForm", "AccountSaving"]


class AccountForm(Protocol):
    """What saving needs of the account form: the account it describes, its key field, where
    it says how things went, and the account list to fill again."""

    key: QLineEdit
    result_shows: ResultLine
    editing: Account | None

    def checked_account(self) -> Account | None: ...

    def refill(self, select: str | None = None) -> None: ...


class AccountSaving:
    """The Save and Remove buttons of the account ``form``; its questions open over ``parent``.
    ``question`` and ``confirmation`` are the boxes open now, if any."""

    def __init__(self, core: CoreClient, parent: QWidget, form: AccountForm) -> None:
        self.core, self.parent, self.tab = core, parent, form
        self.question: KeychainQuestion | None = None
        self.confirmation: RemoveQuestion | None = None
        self.file_choice = FileChoice(core, parent, self.say)

    def say(self, text: str, tone: Tone = "ok") -> None:
        self.tab.result_shows.show(text, tone)

    def save(self) -> None:
        tab = self.tab
        account = tab.checked_account()
        if account is None:
            return
        key = tab.key.text().strip() or None
        problem = self.core.snapshot.keychain_problem
        if key and problem is not None:  # ask first: nothing is saved, and the key stays typed
            self._ask_keychain(account, key, problem, saved=False)
            return
        self._store(account, key)

    def _store(self, account: Account, key: str | None, *, memory_only: bool = False) -> None:
        tab = self.tab
        name = printable(account.name)

        def saved(_result: object) -> None:
            tab.refill(select=account.id)
            kept = " Its key is kept in memory until Cairn closes." if key and memory_only else ""
            self.say(f"Saved {name}.{kept}")

        def failed(error: BaseException) -> None:
            if isinstance(error, KeychainUnavailable) and key:
                # The account itself was saved; its key waits in the form for the person to say where it goes.
                tab.refill(select=account.id)
                tab.key.setText(key)
                self.say(f"Saved {name}, but not its key yet: {error.problem}", "problem")
                self._ask_keychain(account, key, error.problem, saved=True)
                return
            self.say(problem_text(error), "problem")

        self.core.run_on_core(lambda app: app.accounts.save(account, key, memory_only=memory_only), saved, failed)

    def _ask_keychain(self, account: Account, key: str, problem: str, *, saved: bool) -> None:
        box = KeychainQuestion(self.parent, account.name, problem, saved=saved)
        name = printable(account.name)

        def answered(_result: int) -> None:
            self.question = None
            clicked = box.clickedButton()
            if clicked is box.keep:
                self._store(account, key, memory_only=True)
            elif clicked is box.file:  # asked first, with the file's path; then the key goes there
                self.file_choice.use(then=lambda: self._store(account, key))
            elif clicked is box.without and not saved:
                self._store(account, None)
            elif clicked is box.without:
                self.tab.key.clear()
                self.say(f"Saved {name} without a key.")
            else:
                either = "" if saved else " Nothing else was saved either."
                self.say(f"The key for {name} is not saved; it is still in the form.{either}", "quiet")
            box.deleteLater()

        box.finished.connect(answered)
        self.question = box
        box.open()

    def ask_remove(self) -> None:
        account = self.tab.editing
        if account is None:
            return
        view = self.core.snapshot.account(account.id)
        box = RemoveQuestion(self.parent, account.name, has_key=view is not None and view.has_key)

        def answered(_result: int) -> None:
            self.confirmation = None
            if box.clickedButton() is box.remove:
                self._remove(account)
            box.deleteLater()

        box.finished.connect(answered)
        self.confirmation = box
        box.open()

    def _remove(self, account: Account) -> None:
        tab = self.tab

        def removed(_result: object) -> None:
            tab.refill()
            self.say(f"Removed {printable(account.name)}.")

        self.core.run_on_core(
            lambda app: app.accounts.remove(account.id), removed, lambda e: self.say(problem_text(e), "problem")
        )

    def close_questions(self) -> None:
        """Close a question still open (Settings is closing): nothing it would have done happens."""
        for box in (self.question, self.confirmation, self.file_choice.question):
            if box is not None:
                box.reject()
