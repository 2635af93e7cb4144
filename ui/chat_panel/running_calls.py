"""Tool calls running now, shown on their card: for how long, and how far where the tool says.

The core tells when a call starts (``ToolStarted``) and what its tool reports
(``ToolProgressed``, already checked and spaced out); the card is the call's line under its
reply, or its approval's card once allowed. Every chat's running calls are kept, so a chat
opened again mid-call shows its clock going on; the clock ticks once a second while the chat
on screen has a call running, and stops with the last one.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, QTimer

from desktop.app import SessionEvent
from desktop.turn.events import ToolProgressed, ToolResultCommitted, ToolStarted, TurnCancelled, TurnFailed
from host.content import MessageContent, ToolResultPart
from ui.chat_panel.shown_chat import ShownChat
from ui.message_list.chat_view import ChatView
from ui.message_list.tool_cards import CallRun

__all__ = ["TICK_MS", "RunningCalls"]

TICK_MS = 1_000


class RunningCalls(QObject):
    def __init__(self, view: ChatView, shown: ShownChat, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view, self.shown = view, shown
        self.runs: dict[str, dict[str, CallRun]] = {}  # a chat -> its calls running, by call id
        self._tick = QTimer(self, interval=TICK_MS)
        self._tick.timeout.connect(self.show)

    def on_core_event(self, item: object) -> None:
        if not isinstance(item, SessionEvent):
            return
        event, session_id = item.event, item.session_id
        if not isinstance(event, ToolStarted | ToolProgressed | ToolResultCommitted | TurnFailed | TurnCancelled):
            return
        runs = self.runs.setdefault(session_id, {})
        if isinstance(event, ToolStarted):
            runs[event.call_id] = CallRun(event.at)
        elif isinstance(event, ToolProgressed):
            if event.call_id in runs:
                runs[event.call_id] = replace(runs[event.call_id], progress=event.progress)
        elif isinstance(event, ToolResultCommitted):
            body = event.row.body()
            for part in body.parts if isinstance(body, MessageContent) else []:
                if isinstance(part, ToolResultPart):
                    runs.pop(part.call_id, None)
        else:  # the turn ended: whatever ran in it is over
            runs.clear()
        if not runs:
            del self.runs[session_id]
        if self.shown.showing(session_id):
            self.show()

    def show(self) -> None:
        """Put each running call of the chat on screen on its card; tick while any runs."""
        runs = self.runs.get(self.shown.session_id or "", {})
        model = self.view.model_rows()
        for call_id, run in runs.items():
            row = model.row_of(f"approval:{call_id}")
            if row is None:
                row = next(
                    (r for r in range(len(model.messages) - 1, -1, -1)
                     if any(c.call_id == call_id for c in model.messages[r].tool_calls)),
                    None,
                )  # fmt: skip
            if row is None:
                continue
            message = model.messages[row].into or model.messages[row]  # a continuation's calls are its reply's
            message.runs[call_id] = run
            message.touch()
            shown_at = model.row_of(message.key)
            if shown_at is not None:
                model.changed(shown_at)
        for message in model.messages:  # calls that ended: their clock goes
            for call_id in [c for c in message.runs if c not in runs]:
                del message.runs[call_id]
                message.touch()
        if self.runs and not self._tick.isActive():  # any chat's: opened, it shows its clocks at once
            self._tick.start()
        elif not self.runs:
            self._tick.stop()
