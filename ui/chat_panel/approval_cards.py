"""Approval cards in the window: a tool call waiting on a person, answered with a click, Enter
(allow once) or Esc (deny).

Cards come from the core's ``ApprovalRequested`` events while a turn waits, and from the
journal when a chat opens with a call parked before a restart; answering either goes to the
core, which resumes the turn. While a card waits, the composer is free: a new message answers
the card with "denied: superseded by a new message" and goes out.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from desktop.app import Choice, ParkedCall, SessionEvent
from desktop.turn.events import ApprovalAnswered, ApprovalRequested
from ui.bridge.core_client import CoreClient
from ui.chat_panel.composer import Composer
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.turn_controller import TurnController
from ui.message_list.chat_view import ChatView
from ui.message_list.display_message import DisplayMessage
from ui.message_list.tool_cards import ApprovalView
from ui.widgets.banners import Notice

__all__ = ["ApprovalCards"]

ANSWERS: dict[str, str] = {
    "once": "Allowed once",
    "chat": "Allowed in this chat",
    "always": "Always allowed",
    "never": "Never allowed",
    "deny": "Denied",
}


class ApprovalCards(QObject):
    """The cards of the calls waiting on a person in each chat of the window, as the core's
    events and the chats' parked calls say; ``waiting`` is all the window knows of them."""

    def __init__(
        self,
        core: CoreClient,
        shown: ShownChat,
        view: ChatView,
        composer: Composer,
        *,
        turns: TurnController,
        notice: Notice,
    ) -> None:
        super().__init__(view)
        self.core, self.shown, self.view, self.composer = core, shown, view, composer
        self.turns, self.notice = turns, notice
        self.waiting: dict[str, list[str]] = {}  # session id to the call ids waiting, in order

    @staticmethod
    def key(call_id: str) -> str:
        return f"approval:{call_id}"

    def pending(self) -> str | None:
        """The first call waiting in the chat on screen."""
        calls = self.waiting.get(self.shown.session_id or "", [])
        return calls[0] if calls else None

    # -- the core's events -----------------------------------------------------------------

    def on_core_event(self, item: object) -> None:
        if not isinstance(item, SessionEvent):
            return
        event, session_id = item.event, item.session_id
        current = self.shown.showing(session_id)
        if isinstance(event, ApprovalRequested):
            view = ApprovalView(
                event.call.call_id, event.tool.name, event.tool.source, dict(event.call.arguments), event.reason
            )
            self._show(session_id, view, current)
        elif isinstance(event, ApprovalAnswered):
            calls = self.waiting.get(session_id, [])
            if event.call_id in calls:
                calls.remove(event.call_id)
            model = self.view.model_rows()
            row = model.row_of(self.key(event.call_id)) if current else None
            if row is not None:
                message = model.messages[row]
                if message.approval is not None:
                    state = "approved" if event.choice in ("once", "chat", "always") else "denied"
                    message.approval.state, message.approval.answer = state, ANSWERS.get(event.choice, event.reason)
                    message.touch()
                    model.changed(row)
            if current and session_id in self.turns.busy and not calls:
                self.composer.set_busy(True)

    def show_parked(self, session_id: str, parked: list[ParkedCall]) -> None:
        """Cards for calls parked before this run (a chat just opened)."""
        for call in parked:
            target = call.approval.target
            arguments = dict(call.call.arguments)
            inner = arguments.get("arguments")
            if call.call.name == "use_tool" and isinstance(inner, dict):
                arguments = dict(inner)  # the call it stands for, as the live card showed it
            view = ApprovalView(call.call.call_id, target.tool, target.source, arguments, call.approval.reason)
            self._show(session_id, view, self.shown.showing(session_id))

    def _show(self, session_id: str, view: ApprovalView, current: bool) -> None:
        calls = self.waiting.setdefault(session_id, [])
        if view.call_id not in calls:
            calls.append(view.call_id)
        if current:
            self.view.model_rows().replace(
                self.key(view.call_id), DisplayMessage(key=self.key(view.call_id), kind="approval", approval=view)
            )
            self.view.follow()
            self.composer.set_busy(False)  # free to answer, or to write something else instead

    # -- answers ---------------------------------------------------------------------------

    def answer(self, call_id: str, choice: Choice) -> None:
        session_id = self.shown.session_id
        if session_id is None or call_id not in self.waiting.get(session_id, []):
            return
        self.turns.busy.add(session_id)
        self.composer.set_busy(True)

        def done(_outcome: object) -> None:
            # The core tells of the answer (ApprovalAnswered) before this callback comes, so
            # the call no longer waits here once the answer is in.
            if call_id not in self.waiting.get(session_id, []):
                self.turns.turn_over(session_id)

        def failed(error: BaseException) -> None:
            self.turns.turn_over(session_id)
            self.notice.show_error(error)

        self.core.run_on_core(lambda app: app.turns.answer_approval(session_id, call_id, choice), done, failed)
