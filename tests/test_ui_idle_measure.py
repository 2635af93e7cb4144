"""Measuring between frames: batches in order, a few milliseconds at a time, each said done
once; cancelled batches are said not completed, so whoever waits on them is never left waiting."""

from __future__ import annotations

import sys
import time

from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from host.paths import CairnPaths
from tests.ui_fixtures import running_cairn
from ui.message_list.display_message import DisplayMessage
from ui.message_list.idle_measure import SLICE_SECONDS, IdleMeasurer
from ui.window.shell import INTERPRETER_SWITCH_SECONDS


def messages(prefix: str, count: int) -> list[DisplayMessage]:
    return [DisplayMessage(key=f"{prefix}{n}", kind="assistant", text=f"{prefix} {n}") for n in range(count)]


def test_batches_are_measured_in_order_and_said_done_once(qtbot: QtBot) -> None:
    measured: list[str] = []
    done: list[tuple[str, bool, bool]] = []
    measurer = IdleMeasurer(lambda m: (measured.append(m.key), m.key == "b3")[1])
    measurer.measure(messages("a", 5), lambda completed, changed: done.append(("a", completed, changed)))
    measurer.measure(messages("b", 5), lambda completed, changed: done.append(("b", completed, changed)))
    assert measurer.busy()
    qtbot.waitUntil(lambda: len(done) == 2, timeout=5_000)
    assert measured == [f"a{n}" for n in range(5)] + [f"b{n}" for n in range(5)]
    assert done == [("a", True, False), ("b", True, True)]  # only b3 changed a laid-out height
    assert not measurer.busy()


def test_measuring_yields_to_the_event_loop_between_slices(qtbot: QtBot) -> None:
    """A slow batch never holds the loop much past one slice: a timer ticks in between."""
    ticks: list[float] = []
    gaps: list[float] = []

    def slow(_message: DisplayMessage) -> bool:
        time.sleep(0.001)
        return False

    measurer = IdleMeasurer(slow)
    beat = QTimer(interval=1)
    beat.timeout.connect(
        lambda: (gaps.append(time.perf_counter() - ticks[-1]) if ticks else None, ticks.append(time.perf_counter()))
    )
    finished: list[bool] = []
    beat.start()
    measurer.measure(messages("m", 100), lambda completed, _changed: finished.append(completed))
    qtbot.waitUntil(lambda: finished == [True], timeout=10_000)
    beat.stop()
    assert len(ticks) > 10
    assert max(gaps) < SLICE_SECONDS + 0.05  # one slice and a message, with room for a busy machine


def test_cancelled_batches_are_said_not_completed(qtbot: QtBot) -> None:
    done: list[tuple[bool, bool]] = []
    measurer = IdleMeasurer(lambda _m: True)
    measurer.measure(messages("a", 3), lambda completed, changed: done.append((completed, changed)))
    measurer.measure(messages("b", 3), lambda completed, changed: done.append((completed, changed)))
    measurer.cancel()
    assert done == [(False, False), (False, False)]
    qtbot.wait(20)
    assert done == [(False, False), (False, False)]  # nothing measured or said after the cancel


def test_the_heap_keeper_freezes_start_up_and_runs_full_collections_itself(qtbot: QtBot) -> None:
    import gc
    import weakref

    from ui.window.heap import NEVER, HeapKeeper

    threshold = gc.get_threshold()
    keeper = HeapKeeper()
    try:
        keeper.settle()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[2] == NEVER

        class Node:
            other: object = None

        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle, rubbish once the names go
        gone = weakref.ref(a)
        for _ in range(3):  # old enough to wait for a full collection
            gc.collect(1)
        del a, b
        keeper.collect()
        assert gone() is None
    finally:
        gc.set_threshold(*threshold)


def test_a_running_cairn_hands_the_interpreter_between_threads_every_millisecond(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    with running_cairn(cairn_paths):
        assert sys.getswitchinterval() == INTERPRETER_SWITCH_SECONDS
