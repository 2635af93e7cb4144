"""The window's side of each chat's route: the route bar and the status bar show the route
of the chat on screen (or, before a chat begins, the route used last), and a route picked
in the route bar becomes that chat's own."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from ui.window.main_window import MainWindow

from desktop.app import ChatRouteView, ContextFill

__all__ = ["ChatRoutes"]


class ChatRoutes(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.view: ChatRouteView | None = None  # the route of the chat on screen, once loaded
        window.route_bar.account_chosen.connect(lambda account_id: self.chosen(account_id, None))
        window.route_bar.model_chosen.connect(self.chosen)

    def refresh(self) -> None:
        """The route bar and the status bar's route, from the snapshot and the chat's route."""
        w = self.w
        view = self.view if w.session_id is not None else None
        if not w.route_bar.show_snapshot(w.snapshot, (view.account_id, view.model) if view else None):
            w.pages.setCurrentWidget(w.start_page)
            w.start_page.probe(w)
            w.status_line.set_route("No account yet")
            return
        w.pages.setCurrentIndex(0)
        route, problem = (view.route, view.problem) if view else (w.snapshot.route, w.snapshot.route_problem)
        w.welcome.show_model(route.actual.model if route is not None else "")
        if route is None:
            w.status_line.set_route(problem or "No route")
            return
        granted = [name.replace("_", " ") for name, on in route.flags.model_dump().items() if on]
        flags = ", ".join(granted) if granted else "no transport flags"
        w.status_line.set_route(f"{route.actual.provider} · {route.actual.model}", flags)

    def show(self, session_id: str, view: ChatRouteView) -> None:
        """The chat's route, as the core resolved it; a notice when it had to fall back."""
        if session_id != self.w.session_id:
            return
        self.view = view
        self.refresh()
        if view.notice:
            self.w.show_notice(view.notice)

    def forget(self) -> None:
        """No chat on screen: the route bar shows the route used last."""
        self.view = None
        self.refresh()

    def reload(self, session_id: str) -> None:
        """Resolve the chat's route again (its account may be gone), and its context's fill."""
        w = self.w

        def resolved(result: tuple[ChatRouteView, ContextFill | None]) -> None:
            self.show(session_id, result[0])
            w.controller.fill_shower(session_id)(result[1])

        w.run_on_core(lambda: (w.app.options.route(session_id), w.app.chats.context_fill(session_id)), resolved)

    def chosen(self, account_id: str, model: str | None) -> None:
        """A route picked in the route bar: the chat's own from now on (and the one new chats
        start on); before a chat exists, only the latter."""
        w = self.w
        session_id = w.session_id
        if session_id is None:
            w.run_on_core(lambda: w.app.accounts.choose(account_id, model))
            return
        w.clear_notice()
        w.run_on_core(lambda: w.app.options.set_route(session_id, account_id, model), partial(self.show, session_id))
