"""The core thread: Cairn's asyncio loop in one worker thread, and the bridge to the GUI.

The GUI thread never waits on the core. It submits work (``submit``) and gets the result,
or the error, back as a queued Qt signal on its own thread. Runtime events arrive the same
way, through an ``Outbox`` that joins a streaming reply's many small pieces. If the loop
thread dies, ``crashed`` says so instead of leaving a frozen window.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
import traceback
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast, overload

from PySide6.QtCore import QObject, Signal, Slot

from ui.bridge.outbox import Outbox

__all__ = ["CoreThread", "Failed"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Failed = Callable[[BaseException], None]


class CoreThread(QObject):
    """Owns the loop thread. Create it on the GUI thread; ``stop`` it before quitting."""

    reported = Signal(object)  # anything the core reports (SessionEvent, ...)
    crashed = Signal(str)
    _finished = Signal(object, object)  # a settled future, and what to do with it on the GUI thread
    _waiting = Signal()  # events wait in the outbox

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="cairn-core", daemon=True)
        self._finished.connect(self._deliver)
        self._outbox = Outbox()
        self._waiting.connect(self._report)
        self.alive = True

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        except BaseException as exc:
            self.alive = False
            log.exception("the core thread stopped")
            self.crashed.emit(f"{type(exc).__name__}: {exc}".rstrip(": "))
            return
        self.alive = False

    # -- work ------------------------------------------------------------------------------

    @overload
    def submit(
        self,
        work: Callable[[], Awaitable[T]],
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
    ) -> concurrent.futures.Future[T]: ...

    @overload
    def submit(
        self,
        work: Callable[[], T],
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
    ) -> concurrent.futures.Future[T]: ...

    @overload
    def submit(
        self,
        work: Callable[[], Awaitable[T] | T],
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
    ) -> concurrent.futures.Future[T]: ...

    def submit(
        self,
        work: Callable[[], Awaitable[T] | T],
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
    ) -> concurrent.futures.Future[T]:
        """Run ``work`` on the core loop (a coroutine function or a plain function); call back on
        the GUI thread with its result or its exception."""

        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        if not self.alive or self.loop.is_closed():
            future.set_exception(RuntimeError("Cairn's core has stopped."))
            log.warning("work submitted after the core stopped was dropped")
            return future

        async def run() -> T:
            result = work()
            if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                return cast(T, await result)
            return cast(T, result)

        def settle(task: asyncio.Task[T]) -> None:
            if task.cancelled():
                future.set_exception(asyncio.CancelledError("the work was cancelled"))
            elif (error := task.exception()) is not None:
                future.set_exception(error)
            else:
                future.set_result(task.result())

        def begin() -> None:
            # The coroutine is made here, on the loop, so work that never starts (the core
            # stopped first) leaves no coroutine behind un-awaited.
            if future.set_running_or_notify_cancel():
                self.loop.create_task(run()).add_done_callback(settle)

        def deliver(settled: concurrent.futures.Future[T]) -> None:  # on the GUI thread
            error: BaseException | None = (
                asyncio.CancelledError("the work was cancelled") if settled.cancelled() else settled.exception()
            )
            if error is None:
                if on_done is not None:
                    on_done(settled.result())
            elif on_error is not None:
                on_error(error)
            else:
                log.error("core work failed: %s", "".join(traceback.format_exception(error)))

        # The callback is added before the work can start, so it always runs on the core thread
        # and its queued signal reaches the GUI after every event the work emitted (a snapshot,
        # say), never before.
        future.add_done_callback(lambda settled: self._finished.emit(settled, deliver))
        self.loop.call_soon_threadsafe(begin)
        return future

    def emit_event(self, event: object) -> None:
        """For the core side: hand an event to the GUI thread."""
        if self._outbox.put(event):
            self._waiting.emit()

    @Slot()
    def _report(self) -> None:
        for event in self._outbox.take():
            self.reported.emit(event)

    @Slot(object, object)
    def _deliver(self, settled: object, deliver: Callable[[object], None]) -> None:
        deliver(settled)

    def stop(self, last: Callable[[], Awaitable[None]] | None = None, timeout: float = 10.0) -> None:
        """Run ``last`` on the loop, cancel whatever else is still running and let it finish,
        then stop the loop and join the thread (as ``asyncio.run`` ends its loop)."""

        async def finish() -> None:
            if last is not None:
                await last()
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        if self.alive:
            try:
                asyncio.run_coroutine_threadsafe(finish(), self.loop).result(timeout)
            except Exception:
                log.exception("closing the core failed")
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        self.alive = False
        if not self._thread.is_alive():
            # A core that died leaves work it never started: close it rather than leave it dangling.
            for task in asyncio.all_tasks(self.loop):
                coroutine = task.get_coro()
                if inspect.iscoroutine(coroutine) and inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED:
                    coroutine.close()
            self.loop.close()
