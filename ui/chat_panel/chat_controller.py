"""The chat on screen, as the person drives it: sending (a chat not begun yet is created
first), editing a message, stopping, answering a waiting card from the keyboard, and the
buttons under each message (copy, retry, regenerate, continue, branch, edit, versions), and
a long reply's reader."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QStatusBar

from desktop.app import PAGE, Attachment, CairnApp, SessionRecord, too_many
from ui.bridge.core_client import CoreClient
from ui.chat_panel.approval_cards import ApprovalCards
from ui.chat_panel.composer import Composer, message_problem
from ui.chat_panel.long_reply_reader import LongReplyReader, save_reply_as
from ui.chat_panel.message_edit import MessageEdit
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.turn_controller import TurnController, TurnKind
from ui.chat_panel.version_switcher import VersionSwitcher
from ui.message_list.chat_view import ChatView
from ui.message_list.continued import join
from ui.message_list.display_message import DisplayMessage
from ui.message_list.message_model import MessageModel
from ui.widgets.banners import Notice

__all__ = ["ChatController"]


class ChatController(QObject):
    """``chat_made`` carries a chat made here (a branch) for the chat list to show."""

    chat_made = Signal(object)  # SessionRecord
    account_settings = Signal()  # a failed request's "Open account settings"

    def __init__(
        self,
        core: CoreClient,
        shown: ShownChat,
        view: ChatView,
        composer: Composer,
        *,
        notice: Notice,
        bar: QStatusBar,
        edit: MessageEdit,
        turns: TurnController,
        versions: VersionSwitcher,
        approvals: ApprovalCards,
    ) -> None:
        super().__init__(view)
        self.core, self.shown, self.view, self.composer, self.notice, self.bar = (
            core,
            shown,
            view,
            composer,
            notice,
            bar,
        )
        self.edit, self.turns, self.versions, self.approvals = edit, turns, versions, approvals

    # -- intent --------------------------------------------------------------------------

    def send(self, text: str) -> None:
        problem, kept = message_problem(text)
        if problem is not None:
            self.composer.set_text(kept)
            self.notice.show_text(problem)
            return
        attachments = self.composer.attachments()
        if (crowded := too_many(len(attachments))) is not None:
            self.notice.show_text(crowded)
            return
        session_id = self.shown.session_id
        if session_id is None:
            mode, self.shown.pending_mode = self.shown.pending_mode, None

            def create(app: CairnApp) -> SessionRecord:
                record = app.chats.new()
                if mode is not None:
                    app.options.set_mode(record.id, mode)
                return record

            def created(record: SessionRecord) -> None:
                self.shown.take(record.id)
                self.view.model_rows().reset([])
                self.send(text)

            self.core.run_on_core(create, created)
            return
        self.notice.hide()
        editing = self.edit.row_in(session_id)
        self.edit.end(keep_text=True)
        if editing is not None:
            self.start_turn(session_id, "edit", text, row_id=editing)
        else:
            self.start_turn(session_id, "send", text, attachments=attachments)

    def start_turn(
        self,
        session_id: str,
        kind: TurnKind,
        text: str = "",
        *,
        row_id: str | None = None,
        attachments: tuple[Attachment, ...] = (),
    ) -> None:
        """A turn of ``kind``; an edit or a regeneration makes a new version, so the chat's
        branch is shown afresh, with its switcher, once it is over."""
        versioned = kind in ("edit", "regenerate")
        if versioned and self.shown.showing(session_id):
            self.versions.set_aside(row_id if kind == "edit" else None)
        after = (lambda: self.versions.reload(session_id)) if versioned else None
        self.turns.start(session_id, kind, text, row_id=row_id, attachments=attachments, after=after)

    def stop(self) -> None:
        """Esc or Stop: deny the call waiting on a card, else stop the reply."""
        session_id = self.shown.session_id
        waiting = self.approvals.pending()
        if waiting is not None:
            self.approvals.answer(waiting, "deny")
        elif session_id is not None and session_id in self.turns.busy:
            self.turns.cancel(session_id)

    def approve_pending(self) -> None:
        """Enter in an empty composer: allow the waiting call once."""
        waiting = self.approvals.pending()
        if waiting is not None:
            self.approvals.answer(waiting, "once")

    def copy_last_answer(self) -> None:
        """Copy the chat's last answer; where the newest rows were released, it is read back."""
        model = self.view.model_rows()
        answer = model.last_of("assistant")
        session_id = self.shown.session_id
        if answer is not None or not model.newest_released or session_id is None:
            if answer is not None:
                QGuiApplication.clipboard().setText(answer.text)
            return

        def read(app: CairnApp) -> list[DisplayMessage]:
            page = app.chats.page(session_id, limit=PAGE)
            messages = [m for m in (DisplayMessage.from_row(r) for r in page.rows) if m is not None]
            join(messages)  # a reply continued after a cut-off: copied whole
            return messages

        def got(messages: list[DisplayMessage]) -> None:
            last = MessageModel.last_in(messages, "assistant")
            if last is not None and self.shown.showing(session_id):
                QGuiApplication.clipboard().setText(last.text)

        self.core.run_on_core(read, got)

    def on_message_action(self, key: str, action: str) -> None:
        model = self.view.model_rows()
        row = model.row_of(key)
        session_id = self.shown.session_id
        if row is None or session_id is None:
            return
        message = model.messages[row]
        busy = session_id in self.turns.busy
        if self._on_shown(message, row, action):
            return
        if action.startswith("approve/") and message.approval is not None:
            self.approvals.answer(message.approval.call_id, action.split("/", 1)[1])  # type: ignore[arg-type]
            self.composer.take_focus()
        elif action in ("retry", "regenerate") and not busy:
            self.start_turn(session_id, "retry" if action == "retry" else "regenerate")
        elif action == "account-settings":
            self.account_settings.emit()
        elif action == "choose-workspace":
            self.choose_workspace()
        elif action == "continue" and not busy:
            self.start_turn(session_id, "continue")
        elif action == "branch":
            self.branch(session_id, message.last_key)  # a joined reply: with all its parts
        elif action == "edit" and not busy:
            self.edit.begin(message.text, message.key, last=model.last_of("user") is message)
        elif action in ("version-prev", "version-next"):
            self.versions.switch(session_id, message.key, -1 if action == "version-prev" else 1)

    def _on_shown(self, message: DisplayMessage, row: int, action: str) -> bool:
        """An action on what the message shows (copy it, open a part); whether it was one."""
        model = self.view.model_rows()
        if action == "copy":
            QGuiApplication.clipboard().setText(message.text)
        elif action in ("open-whole", "save-as"):
            self.long_reply(message.text, action)
        elif action.startswith("copy-code/"):
            blocks = self.view.message_delegate.code_blocks(message)
            number = int(action.split("/", 1)[1])
            if number < len(blocks):
                QGuiApplication.clipboard().setText(blocks[number])
        elif action in {"toggle-reasoning", "toggle-summary", "toggle-result"}:
            # What opens or closes grows or shrinks below its top, which stays where it is.
            anchor = (message.key, self.view.visualRect(model.index(row, 0)).top())
            if action == "toggle-reasoning":
                message.reasoning_open = not message.reasoning_open
            else:
                message.expanded = not message.expanded
            message.touch()
            model.changed(row)
            self.view.keep_anchor(anchor)
        else:
            return False
        return True

    def choose_workspace(self) -> None:
        """A file tool found no workspace: the person picks the folder here, and the model can
        use it from the next message (asking again is theirs to do)."""
        chosen = QFileDialog.getExistingDirectory(self.view, "Choose a workspace folder")
        self.composer.take_focus()
        if not chosen:
            return
        folder = Path(chosen)
        self.core.run_on_core(
            lambda app: app.preferences.set_workspace(folder),
            lambda _catalog: self.bar.showMessage(
                f"The workspace is {folder}. Ask again and the model can use it.", 8000
            ),
            self.notice.show_error,
        )

    def long_reply(self, text: str, action: str) -> None:
        """A reply too long for the chat: opened whole in its reader, or saved."""

        def save(path: Path, shown: str) -> None:
            self.core.run_on_core(
                lambda app: app.chats.save_reply(path, shown),
                lambda _none: self.bar.showMessage(f"Saved the reply to {path}.", 5000),
                lambda error: self.notice.show_text(f"The reply could not be saved to {path}: {error}"),
            )

        if action == "save-as":
            save_reply_as(self.view, text, save)
        else:
            reader = LongReplyReader(text, "The whole reply", save, self.view.window())
            reader.setModal(False)
            reader.show()
        self.composer.take_focus()

    def branch(self, session_id: str, row_id: str) -> None:
        """A new chat from this answer, opened; the chat it came from stays as it is."""

        def made(record: SessionRecord) -> None:
            self.chat_made.emit(record)
            self.bar.showMessage(f"Branched into “{record.title}”.", 5000)

        self.core.run_on_core(lambda app: app.chats.branch(session_id, row_id), made)
