"""What a tool reports of its progress, before anyone sees it: checked, cut short, and spaced
out, with the last report always passed on."""

from __future__ import annotations

from host.tools.progress import EVERY, Progress, Reporter, reporter, reporting


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_figures_that_are_not_numbers_are_dropped_and_messages_made_printable() -> None:
    said: list[Progress] = []
    report = Reporter(said.append, clock=Clock())
    for done in ("3", None, True, float("nan"), float("inf"), [1]):
        report(done, 10, "x")
    assert said == []
    report(2, "ten", "line one\nline two\x07" + "y" * 500)
    (progress,) = said
    assert progress.total is None
    assert progress.fraction is None
    assert all(ch.isprintable() for ch in progress.message)
    assert len(progress.message) <= 160


def test_fractions_stay_between_nothing_and_all() -> None:
    assert Progress(5, 10).fraction == 0.5
    assert Progress(50, 10).fraction == 1.0
    assert Progress(-5, 10).fraction == 0.0
    assert Progress(5, 0).fraction is None
    assert Progress(5).fraction is None


def test_a_flood_is_spaced_out_and_its_last_report_arrives() -> None:
    said: list[Progress] = []
    clock = Clock()
    with reporting(Reporter(said.append, clock=clock)) as report:
        assert reporter() is report
        for n in range(1000):
            report(n, 2000)
            clock.now += EVERY / 100
    assert reporter() is None
    assert len(said) == 11  # the first, one each EVERY seconds, and the last, held until the end
    assert said[-1].done == 999
    said.clear()
    report = Reporter(said.append, clock=clock)
    report(1, 2)
    report(2, 2)  # done: never held back
    assert [p.done for p in said] == [1, 2]
