"""The window's side of each chat's route: the route bar and the status bar show the route
of the chat on screen (or, before a chat begins, the route used last), and a route picked
in the route bar becomes that chat's own."""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QObject, Signal

from desktop.app import ChatRouteView, ContextFill
from ui.bridge.core_client import CoreClient
from ui.chat_panel.chat_status import ChatStatus
from ui.chat_panel.route_bar import RouteBar
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.status_line import StatusLine
from ui.chat_panel.welcome import Welcome
from ui.message_list.display_message import MODEL_TITLES
from ui.widgets.banners import Notice

__all__ = ["RouteController"]

LOOKED_AT_SECONDS = 60.0  # the Model box opened: its list is asked again when older than this


class RouteController(QObject):
    """Shows routes and passes on a route picked; ``has_account`` says, at each refresh,
    whether there is an account to chat with at all (else the window shows its start page)."""

    has_account = Signal(bool)

    def __init__(
        self,
        core: CoreClient,
        shown: ShownChat,
        bar: RouteBar,
        *,
        line: StatusLine,
        status: ChatStatus,
        welcome: Welcome,
        notice: Notice,
    ) -> None:
        super().__init__(bar)
        self.core, self.shown, self.bar = core, shown, bar
        self.line, self.status, self.welcome, self.notice = line, status, welcome, notice
        self.view: ChatRouteView | None = None  # the route of the chat on screen, once loaded
        bar.account_chosen.connect(lambda account_id: self.chosen(account_id, None))
        bar.model_chosen.connect(self.chosen)
        bar.models.opened.connect(lambda: self.ask_models(max_age=LOOKED_AT_SECONDS))

    def refresh(self) -> None:
        """The route bar and the status bar's route, from the snapshot and the chat's route."""
        snapshot = self.core.snapshot
        MODEL_TITLES.update(snapshot.model_titles)
        view = self.view if self.shown.session_id is not None else None
        if not self.bar.show_snapshot(snapshot, (view.account_id, view.model) if view else None):
            self.has_account.emit(False)
            self.line.set_route("No account yet")
            return
        self.has_account.emit(True)
        self.ask_models()
        route, problem = (view.route, view.problem) if view else (snapshot.route, snapshot.route_problem)
        assistant = view.assistant if view else None
        self.bar.show_assistant(assistant)
        self.welcome.show_model(snapshot.model_title(route.actual.model) if route is not None else "", assistant)
        if route is None:
            self.line.set_route(problem or "No route")
            return
        account = snapshot.account(route.account_id)
        where = account.account.name if account is not None else route.actual.provider
        self.line.set_route(f"{where} · {snapshot.model_title(route.actual.model)}")  # the rest is the inspector's

    def ask_models(self, max_age: float | None = None) -> None:
        """Have the core ask the shown account's endpoint which models it serves, in the
        background, when its list is old (``max_age`` seconds; the list opened: sooner); a
        changed list comes back as a snapshot."""
        account_id = self.bar.accounts.currentData()
        if isinstance(account_id, str):
            ages = {} if max_age is None else {"max_age": max_age}
            self.core.run_on_core(lambda app: app.models.refresh_served(account_id, **ages))

    def show(self, session_id: str, view: ChatRouteView) -> None:
        """The chat's route, as the core resolved it; a notice when it had to fall back."""
        if not self.shown.showing(session_id):
            return
        self.view = view
        self.refresh()
        if view.notice:
            self.notice.show_text(view.notice)

    def forget(self) -> None:
        """No chat on screen: the route bar shows the route used last."""
        self.view = None
        self.refresh()

    def reload(self, session_id: str) -> None:
        """Resolve the chat's route again (its account may be gone), and its context's fill."""

        def resolved(result: tuple[ChatRouteView, ContextFill | None]) -> None:
            self.show(session_id, result[0])
            self.status.fill_shower(session_id)(result[1])

        self.core.run_on_core(lambda app: (app.options.route(session_id), app.chats.context_fill(session_id)), resolved)

    def chosen(self, account_id: str, model: str | None) -> None:
        """A route picked in the route bar: the chat's own from now on (and the one new chats
        start on); before a chat exists, only the latter."""
        session_id = self.shown.session_id
        if session_id is None:
            self.core.run_on_core(lambda app: app.accounts.choose(account_id, model))
            return
        self.notice.hide()
        self.core.run_on_core(
            lambda app: app.options.set_route(session_id, account_id, model), partial(self.show, session_id)
        )
