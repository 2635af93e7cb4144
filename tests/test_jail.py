"""The workspace jail: no path, link, race or special file gets a built-in tool outside the
workspace, and the bar is zero: no read returns outside content, no write lands outside.

Most tests run twice: with descriptor-relative opening (what Linux and macOS use) and with
the path-checking fallback (what Windows uses), forced here on this OS.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from host.tools import handles, jail
from host.tools.jail import Jail, JailError
from tests.jail_fixtures import INSIDE, SECRET, plant, snapshot


@pytest.fixture(params=["dir_fd", "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "fallback":
        monkeypatch.setattr(jail, "DIR_FD_SUPPORTED", False)
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return plant(tmp_path)[0]


@pytest.fixture
def outside(ws: Path) -> Path:
    return ws.parent / "outside"


# -- paths as text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        (".", ()),
        ("a/b.txt", ("a", "b.txt")),
        ("./a//b/./c", ("a", "b", "c")),
        ("a/../b", ("b",)),
        ("a\\b", ("a", "b")),
        ("a/b/../../c", ("c",)),
    ],
)
def test_relative_paths_stay_below_the_workspace(ws: Path, path: str, parts: tuple[str, ...]) -> None:
    assert Jail(ws).parts(path) == parts


def test_absolute_paths_inside_the_workspace_are_accepted_as_given_or_resolved(tmp_path: Path, ws: Path) -> None:
    (tmp_path / "alias").symlink_to(ws, target_is_directory=True)  # the person chose the workspace through a link
    chosen = Jail(tmp_path / "alias")
    assert chosen.parts(str(tmp_path / "alias" / "sub" / "note.txt")) == ("sub", "note.txt")
    assert chosen.parts(str(ws / "sub")) == ("sub",)
    assert chosen.parts(str(ws)) == ()
    assert chosen.parts(f"{ws}/sub/../inside.txt") == ("inside.txt",)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("..", "climbs out"),
        ("../outside/secret.txt", "climbs out"),
        ("sub/../../outside", "climbs out"),
        ("..\\outside\\secret.txt", "climbs out"),
        ("C:\\Windows\\win.ini", "Windows drive"),
        ("C:/Windows/win.ini", "Windows drive"),
        ("c:secret.txt", "Windows drive"),
        ("\\\\server\\share\\secret.txt", "UNC"),
        ("//server/share/secret.txt", "UNC"),
        ("\\\\?\\C:\\secret.txt", "UNC"),
        ("inside.txt\0.png", "NUL"),
        ("", "empty"),
    ],
)
def test_paths_that_leave_the_workspace_as_text_are_refused(ws: Path, mode: str, path: str, reason: str) -> None:
    with pytest.raises(JailError, match=reason):
        Jail(ws).parts(path)


def test_absolute_paths_outside_and_a_sibling_with_the_same_prefix_are_refused(ws: Path, outside: Path) -> None:
    checked = Jail(ws)
    for path in (str(outside / "secret.txt"), f"{ws}2/secret.txt", "/etc/passwd", f"{ws}/../outside", "/"):
        with pytest.raises(JailError, match="outside the workspace"):
            checked.parts(path)


def test_the_fallback_refuses_names_windows_treats_specially(ws: Path) -> None:
    fallback = Jail(ws, use_dir_fd=False)
    for path in ("CON", "sub/nul.txt", "inside.txt:stream", "trailing.", "trailing ", "a<b", "COM1.log"):
        with pytest.raises(JailError, match="Windows treats specially"):
            fallback.parts(path)
    assert fallback.parts("console.txt") == ("console.txt",)


# -- every escape, at the jail, counted --------------------------------------------------------------

ESCAPES = [
    "../outside/secret.txt",
    "link_file",
    "link_dir/secret.txt",
    "link_inside",
    "zero",
    "dev/zero",
    "fifo",
    "C:\\outside\\secret.txt",
    "\\\\server\\share\\secret.txt",
    "inside.txt\0",
    "sub/../../outside/secret.txt",
]


def test_no_escape_opens_or_writes_anything_outside(tmp_path: Path, ws: Path, outside: Path, mode: str) -> None:
    checked = Jail(ws)
    paths = [*ESCAPES, str(outside / "secret.txt"), f"{ws}2/secret.txt"]
    before = snapshot(tmp_path / "outside"), snapshot(tmp_path / "ws2")
    executions = 0
    for path in paths:
        for attempt in ("open_file", "folder", "replace", "replace_below"):
            try:
                if attempt == "open_file":
                    checked.open_file(checked.parts(path)).close()
                elif attempt == "folder":
                    checked.folder(checked.parts(path)).close()
                elif attempt == "replace":
                    checked.replace(checked.parts(path), b"written")
                else:
                    checked.replace((*checked.parts(path), "new.txt"), b"written")
                executions += 1
            except JailError:
                pass
    assert executions == 0
    assert (snapshot(tmp_path / "outside"), snapshot(tmp_path / "ws2")) == before


# -- the race: a folder swapped for a link to outside, over and over ----------------------------------


class Swapper:
    """Keeps turning ``ws/d`` into a real folder, nothing, a link to outside, nothing, ..."""

    def __init__(self, ws: Path, outside: Path) -> None:
        self.ws, self.outside = ws, outside
        self.stop = threading.Event()
        self.swaps = 0
        (ws / "real").mkdir()
        (ws / "real" / "secret.txt").write_text(INSIDE)
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        d, real, temp = self.ws / "d", self.ws / "real", self.ws / "link-temp"
        steps = (
            lambda: os.rename(real, d),
            lambda: os.rename(d, real),
            lambda: os.symlink(self.outside, temp),
            lambda: os.rename(temp, d),
            lambda: os.unlink(d),
        )
        while not self.stop.is_set():
            for step in steps:
                try:
                    step()
                except OSError:
                    self.clear()
            self.swaps += 1

    def clear(self) -> None:
        """Undo what a write made while ``d`` was missing (a real folder ``d``: write_file makes
        missing folders), so the cycle can go on."""
        d, real, temp = self.ws / "d", self.ws / "real", self.ws / "link-temp"
        for path in (d, temp):
            if path.is_symlink():
                path.unlink()
        if d.is_dir():
            os.rename(d, real if not real.exists() else self.ws / f"made-{self.swaps}-{time.monotonic_ns()}")

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


def race(ws: Path, outside: Path, rounds: int) -> tuple[int, int, int, int]:
    """At least ``rounds`` reads and writes through ``d`` while it is being swapped, going on
    (up to ten times as many) until one read got through to the inside file: how many reads
    returned outside content, how many inside content, how many rounds and swaps ran."""
    checked = Jail(ws, use_dir_fd=True)
    leaked = inside = done = 0
    with Swapper(ws, outside) as swapper:
        while done < rounds or (inside == 0 and done < rounds * 10):
            with contextlib.suppress(JailError):
                with checked.open_file(("d", "secret.txt")) as opened:
                    text = opened.read(100).decode()
                leaked += text == SECRET
                inside += text == INSIDE
            with contextlib.suppress(JailError):
                checked.replace(("d", f"new-{done}.txt"), b"written")
            done += 1
    return leaked, inside, done, swapper.swaps


def written_outside(outside: Path) -> list[str]:
    return sorted(p.name for p in outside.iterdir() if p.name != "secret.txt")


@pytest.mark.skipif(not jail.DIR_FD_SUPPORTED, reason="the race-free walk needs dir_fd")
def test_a_folder_swapped_for_a_link_never_leads_a_read_or_a_write_outside(ws: Path, outside: Path) -> None:
    started = time.monotonic()
    leaked, inside, rounds, swaps = race(ws, outside, rounds=2000)
    took = time.monotonic() - started
    assert leaked == 0
    assert written_outside(outside) == []
    assert (outside / "secret.txt").read_text() == SECRET
    assert inside > 0, "the race never let a read through; the test would prove nothing"
    assert swaps > 100
    print(f"race: {rounds} reads + {rounds} writes in {took:.2f} s against {swaps} swaps; {inside} reads inside")


@pytest.mark.skipif(not jail.DIR_FD_SUPPORTED, reason="the race-free walk needs dir_fd")
def test_the_race_test_catches_a_jail_that_follows_links(
    ws: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above can fail: without O_NOFOLLOW the same loop reads and writes outside."""
    monkeypatch.setattr(handles, "_NOFOLLOW", 0)
    leaked, _, _, _ = race(ws, outside, rounds=2000)
    assert leaked > 0
    assert written_outside(outside) != []


@pytest.fixture
def lines_for_edit(tmp_path: Path) -> Path:
    root = tmp_path / "edit"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    return root


def test_an_edit_never_writes_over_a_file_changed_since_it_was_read(lines_for_edit: Path, mode: str) -> None:
    checked = Jail(lines_for_edit)
    with checked.open_file(("a.txt",)) as opened:
        stamp = opened.stamp
    time.sleep(0.01)
    (lines_for_edit / "a.txt").write_text("someone else\n")
    with pytest.raises(JailError, match="changed while it was being edited"):
        checked.replace(("a.txt",), b"mine\n", expect=stamp)
    assert (lines_for_edit / "a.txt").read_text() == "someone else\n"
    assert sorted(p.name for p in lines_for_edit.iterdir()) == ["a.txt"]  # no temp file left behind


@pytest.fixture
def walked(tmp_path: Path) -> Path:
    root = tmp_path / "walk"
    (root / "b" / "c").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("x")
    (root / "a.txt").write_text("x")
    (root / "b" / "c" / "d.txt").write_text("x")
    (root / "b" / "loop").symlink_to(root, target_is_directory=True)
    return root


def test_the_walk_is_in_name_order_skips_what_it_should_and_never_follows_links(walked: Path, mode: str) -> None:
    checked = Jail(walked)
    walk = checked.walk((), skip=frozenset({".git"}), max_depth=8)
    found = [handles.show((*folder.parts, name)) for folder, name in walk]
    assert found == ["a.txt", "b/c/d.txt"]
