"""What a part of the window is given to reach the core: the work it hands over, typed.

``run_on_core`` runs work on the core's loop and calls back on the GUI thread with its result,
whose type flows from the work to the callback. The work is handed the front door
(``CairnApp``) as it runs, on the core: no part of the window holds the app, so none can call
it on the GUI thread. What the GUI thread may read of the core is ``snapshot``, the
``AppSnapshot`` the core published last.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar, overload

from desktop.app import AppSnapshot, CairnApp
from ui.bridge.core_thread import CoreThread, Failed

__all__ = ["CoreClient", "Published"]

T = TypeVar("T")


class Published:
    """The snapshot the core published last; the shell keeps it current for every window."""

    def __init__(self, snapshot: AppSnapshot) -> None:
        self.snapshot = snapshot


class CoreClient:
    """Runs work on the core for one part of the window; an error without a handler of its
    own goes to ``on_error`` (the window's notice)."""

    def __init__(self, thread: CoreThread, app: CairnApp, published: Published, on_error: Failed) -> None:
        self._thread, self._app, self._published, self._on_error = thread, app, published, on_error

    @property
    def snapshot(self) -> AppSnapshot:
        return self._published.snapshot

    def with_errors(self, on_error: Failed) -> CoreClient:
        """The same core, with errors going to ``on_error`` unless a call says otherwise."""
        return CoreClient(self._thread, self._app, self._published, on_error)

    @overload
    def run_on_core(
        self,
        work: Callable[[CairnApp], Awaitable[T]],
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
    ) -> None: ...

    @overload
    def run_on_core(
        self,
        work: Callable[[CairnApp], T],
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
    ) -> None: ...

    def run_on_core(
        self,
        work: Callable[[CairnApp], Awaitable[T] | T],
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
    ) -> None:
        """Run ``work(app)`` on the core (a coroutine function or a plain one); then, on the GUI
        thread, ``on_done(result)`` or ``on_error(error)``."""
        app = self._app
        self._thread.submit(lambda: work(app), on_done, on_error or self._on_error)
