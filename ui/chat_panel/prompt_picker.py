"""The MCP servers' prompts in the composer: ``/`` typed first lists them above the editor,
filtered by what follows; Up and Down choose, Enter or a click picks, Esc puts the list
away. A prompt with arguments asks for them in a small form (``prompt_form``). The prompt's
text then takes the place of the ``/…`` in the composer, for the person to read, edit and send:
nothing is sent by picking. With no prompts, ``/`` is just a character.

The prompts are asked of the core once per ``/`` (``app.mcp.prompts``) and the prompt itself
when picked (``app.mcp.get_prompt``), so a slow server never holds the window up.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from desktop.app import FilledPrompt, PromptChoices, ServerPrompt
from ui.bridge.core_client import CoreClient
from ui.chat_panel.composer import Composer
from ui.chat_panel.prompt_form import PromptForm
from ui.widgets.banners import Notice

__all__ = ["PromptList", "PromptPicker"]

_ROWS = 6  # shown at once; more scroll
_SHOWN = 160  # characters of a description in the list


class PromptList(QListWidget):
    """The prompts that match, each as ``/name  server`` over its description; then, greyed,
    what went wrong listing some."""

    def __init__(self) -> None:
        super().__init__()
        self.setAccessibleName("Prompts")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the editor keeps the keys
        self.setWordWrap(False)
        self.hide()

    def fill(self, prompts: list[ServerPrompt], problems: tuple[str, ...]) -> None:
        self.clear()
        for prompt in prompts:
            about = (prompt.description or prompt.title).replace("\n", " ")
            about = about if len(about) <= _SHOWN else about[: _SHOWN - 1] + "…"
            item = QListWidgetItem(f"/{prompt.name}   {prompt.server}" + (f"\n{about}" if about else ""))
            item.setData(Qt.ItemDataRole.UserRole, prompt)
            item.setToolTip(prompt.description)
            self.addItem(item)
        for problem in problems:
            item = QListWidgetItem(problem)
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addItem(item)
        self.setCurrentRow(0 if prompts else -1)
        rows = sum(self.sizeHintForRow(row) for row in range(min(self.count(), _ROWS)))
        self.setFixedHeight(rows + 2 * self.frameWidth() + 2)

    def prompt(self, row: int) -> ServerPrompt | None:
        item = self.item(row)
        found = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return found if isinstance(found, ServerPrompt) else None

    def step(self, by: int) -> None:
        """Move the choice by ``by`` rows, among the prompts only."""
        prompts = sum(1 for row in range(self.count()) if self.prompt(row) is not None)
        if prompts:
            self.setCurrentRow(max(0, min(prompts - 1, self.currentRow() + by)))


class PromptPicker(QObject):
    """Drives ``composer``'s ``/``: the list, the form, and the prompt's text in its place."""

    def __init__(self, core: CoreClient, composer: Composer, notice: Notice, parent: QWidget) -> None:
        super().__init__(parent)
        self.core, self.composer, self.notice = core, composer, notice
        self.list = PromptList()
        self.form: PromptForm | None = None
        self._choices: PromptChoices | None = None  # for the ``/`` being typed, once the core answered
        self.asking = False  # a listing on its way from the core
        self._dismissed = False  # Esc: no list until the ``/`` goes
        composer.add_above_editor(self.list)
        composer.editor.typed.connect(self._typed)
        composer.editor.textChanged.connect(self._refresh)
        composer.editor.intercept = self._key
        self.list.itemClicked.connect(lambda item: self._pick(self.list.prompt(self.list.row(item))))

    def _typed(self) -> None:
        if not _slashed(self.composer.text()):
            return
        if self._choices is None and not self.asking:
            self.asking = True
            self.core.run_on_core(lambda app: app.mcp.prompts(), self._listed, self._not_listed)

    def _listed(self, choices: PromptChoices) -> None:
        self.asking = False  # a listing on its way from the core
        if _slashed(self.composer.text()):  # else the person moved on meanwhile
            self._choices = choices
            self._refresh()

    def _not_listed(self, error: BaseException) -> None:
        self.asking = False  # a listing on its way from the core
        self.notice.show_error(error)

    def _refresh(self) -> None:
        """Show the prompts that match what follows the ``/``; forget them once it is gone."""
        text = self.composer.text()
        if not _slashed(text):
            self._choices, self._dismissed = None, False
            self.list.hide()
            return
        choices = self._choices
        if choices is None or self._dismissed:
            self.list.hide()
            return
        words = text[1:].casefold().split()
        matching = [p for p in choices.prompts if all(word in _searched(p) for word in words)]
        self.list.fill(matching, choices.problems if matching and not words else ())
        self.list.setVisible(bool(matching))

    def _key(self, event: QKeyEvent) -> bool:
        """The list's keys while it shows; every other key goes on to the editor."""
        if not self.list.isVisible():
            return False
        key = event.key()
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            self.list.step(-1 if key == Qt.Key.Key_Up else 1)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                return False
            self._pick(self.list.prompt(self.list.currentRow()))
        elif key == Qt.Key.Key_Escape:
            self._dismissed = True
            self.list.hide()
        else:
            return False
        return True

    def _pick(self, prompt: ServerPrompt | None) -> None:
        if prompt is None:
            return
        typed = self.composer.text()
        self._dismissed = True
        self.list.hide()
        if not prompt.arguments:
            self._fetch(prompt, {}, typed)
            return
        self.form = PromptForm(prompt, self.composer.window())
        self.form.filled.connect(lambda arguments: self._fetch(prompt, arguments, typed))
        self.form.finished.connect(lambda _result: self.composer.take_focus())
        self.form.finished.connect(self.form.deleteLater)
        self.form.open()

    def _fetch(self, prompt: ServerPrompt, arguments: Mapping[str, str], typed: str) -> None:
        server, name, given = prompt.server, prompt.name, dict(arguments)
        self.core.run_on_core(
            lambda app: app.mcp.get_prompt(server, name, given),
            lambda filled: self._insert(filled, typed),
            self.notice.show_error,
        )

    def _insert(self, filled: FilledPrompt, typed: str) -> None:
        """The prompt's text in place of the ``/…`` typed (what was written after it stays)."""
        current = self.composer.text()
        if current.startswith(typed):
            text = filled.text + current[len(typed) :]
        else:
            text = filled.text + (f"\n\n{current}" if current.strip() else "")
        self.composer.set_text(text)
        for image in filled.images:
            self.composer.attach_image.emit(image.data, image.name)
        self.composer.take_focus()


def _slashed(text: str) -> bool:
    """Whether ``text`` is a ``/`` and what filters the prompts: one line, not yet a message."""
    return text.startswith("/") and "\n" not in text and len(text) <= 200


def _searched(prompt: ServerPrompt) -> str:
    return f"{prompt.name} {prompt.title} {prompt.server}".casefold()
