"""The chat panel put together: its widgets laid out (the route bar, the chat or an empty
chat's welcome, a server's request for input, the notice, the edit banner, the composer) and
the controllers that drive them, each given the widgets it uses, the chat shown and the core
client."""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit, QMainWindow, QStackedWidget, QVBoxLayout, QWidget

from ui.bridge.core_client import CoreClient
from ui.chat_panel.approval_cards import ApprovalCards
from ui.chat_panel.attachment_intake import AttachmentIntake
from ui.chat_panel.chat_controller import ChatController
from ui.chat_panel.chat_opener import ChatOpener
from ui.chat_panel.chat_pages import ChatPages
from ui.chat_panel.chat_status import ChatStatus
from ui.chat_panel.composer import Composer
from ui.chat_panel.elicitation_cards import ElicitationCards
from ui.chat_panel.engine_indicator import EngineIndicator
from ui.chat_panel.live_replies import LiveReplies
from ui.chat_panel.message_edit import MessageEdit
from ui.chat_panel.prompt_picker import PromptPicker
from ui.chat_panel.resource_intake import ResourceIntake
from ui.chat_panel.route_bar import RouteBar
from ui.chat_panel.route_controller import RouteController
from ui.chat_panel.running_calls import RunningCalls
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.status_line import StatusLine
from ui.chat_panel.turn_controller import TurnController
from ui.chat_panel.version_switcher import VersionSwitcher
from ui.chat_panel.welcome import Welcome, show_welcome_when_empty
from ui.message_list.chat_view import ChatView
from ui.widgets.banners import EditBanner, Notice

__all__ = ["ChatPanel"]


class ChatPanel(QWidget):
    """The chat on screen in ``window``, whose status bar it writes and onto which files may be
    dropped; ``search`` is the sidebar's, whose words a chat opened from its results shows."""

    def __init__(self, core: CoreClient, window: QMainWindow, *, search: QLineEdit) -> None:
        super().__init__()
        self.shown = ShownChat(self)
        self._lay_out()
        bar = window.statusBar()
        self.status_line = StatusLine(bar)
        self.engine = EngineIndicator()
        self.status_line.add_beside(self.engine)
        self.engine.unload_requested.connect(lambda: core.run_on_core(lambda app: app.local.unload()))
        shown, view, composer, notice = self.shown, self.chat, self.composer, self.notice
        self.edit = MessageEdit(composer, self.edit_banner, shown)
        self.status = ChatStatus(self.status_line, bar, shown)
        self.replies = LiveReplies(view, composer, notice, shown, status=self.status, parent=self)
        self.turns = TurnController(
            core, shown, composer, notice, status=self.status, replies=self.replies, window=window
        )
        self.pages = ChatPages(core, view, composer, shown, turns=self.turns, replies=self.replies)
        self.approvals = ApprovalCards(core, shown, view, composer, turns=self.turns, notice=notice)
        self.running = RunningCalls(view, shown, parent=self)
        self.questions = ElicitationCards(core, shown, notice)
        self.question_slot.addWidget(self.questions.area)
        self.versions = VersionSwitcher(
            core, shown, self.pages, view, approvals=self.approvals, turns=self.turns, edit=self.edit, notice=notice
        )
        self.routes = RouteController(
            core, shown, self.route_bar, line=self.status_line, status=self.status, welcome=self.welcome, notice=notice
        )
        self.controller = ChatController(
            core, shown, view, composer, notice=notice, bar=bar, edit=self.edit, turns=self.turns,
            versions=self.versions, approvals=self.approvals,
        )  # fmt: skip
        self.intake = AttachmentIntake(core, window, composer, view.message_delegate, notice)
        self.prompts = PromptPicker(core, composer, notice, parent=self)
        self.resources = ResourceIntake(core, composer)
        self.opener = ChatOpener(
            core, shown, self.pages, view, edit=self.edit, notice=notice, status=self.status, routes=self.routes,
            route_bar=self.route_bar, turns=self.turns, approvals=self.approvals, search=search,
        )  # fmt: skip
        self._connect()

    def _lay_out(self) -> None:
        self.route_bar = RouteBar()
        self.chat = ChatView()
        self.welcome = Welcome()
        self.notice = Notice()
        self.edit_banner = EditBanner()
        self.composer = Composer()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.route_bar)
        chat_stack = QStackedWidget()
        chat_stack.addWidget(self.chat)
        chat_stack.addWidget(self.welcome)
        show_welcome_when_empty(self.chat.model(), chat_stack, self.chat, self.welcome)
        column.addWidget(chat_stack, 1)
        self.question_slot = QVBoxLayout()  # a server's request for input, under the chat
        column.addLayout(self.question_slot)
        column.addWidget(self.notice)
        column.addWidget(self.edit_banner)
        column.addWidget(self.composer)

    def _connect(self) -> None:
        controller, composer = self.controller, self.composer
        composer.approve.connect(controller.approve_pending)
        composer.send.connect(controller.send)
        composer.stop.connect(controller.stop)
        self.edit_banner.cancel.clicked.connect(self.edit.end)
        self.chat.message_delegate.action.connect(controller.on_message_action)
        self.chat.wants_older.connect(self.pages.load_older)
        self.chat.wants_newer.connect(self.pages.load_newer)
        self.chat.wants_newest.connect(self.pages.show_newest)
        self.welcome.chosen.connect(self._example_chosen)

    def on_core_event(self, item: object) -> None:
        """Every event of the core, for the parts of the chat that follow them."""
        self.turns.on_core_event(item)
        self.engine.on_event(item)
        self.replies.on_core_event(item)
        self.approvals.on_core_event(item)
        self.running.on_core_event(item)
        self.questions.on_core_event(item)

    def _example_chosen(self, prompt: str) -> None:
        self.composer.set_text(prompt)
        self.composer.editor.setFocus()
