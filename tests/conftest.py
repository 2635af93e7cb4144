"""Every test runs against a temporary CAIRN_HOME, with Qt offscreen.

The user folders platformdirs would pick (HOME and the XDG folders) also point into a
throwaway folder for the whole run, so even a bug that ignores CAIRN_HOME cannot touch a
person's real files.
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["QT_QPA_PLATFORM"] = "offscreen"

_SANDBOX = Path(tempfile.mkdtemp(prefix="cairn-tests-"))
atexit.register(shutil.rmtree, _SANDBOX, ignore_errors=True)
for _name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "APPDATA"):
    os.environ[_name] = str(_SANDBOX / _name.lower())
os.environ.pop("CAIRN_HOME", None)
os.environ.pop("CAIRN_API_KEY", None)
# No test, nor any process a test starts, may reach the person's real keychain.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

from host.journal import Journal  # noqa: E402 - after the environment is fenced in
from host.paths import CairnPaths  # noqa: E402
from host.transcript import TranscriptWriter  # noqa: E402


@pytest.fixture(autouse=True)
def process_state() -> Iterator[None]:
    """After each test, undo what a running Cairn does to its whole process, as its exit would:
    the heap it froze (ui/heap.py), the collector's thresholds, the interpreter's switch
    interval (ui/app.py), and its windows.

    A closed window is only hidden, and its widgets' signal connections hold it through C++,
    where the collector cannot see; frozen objects are never collected at all. Left alone,
    every window a test opened stayed alive for the rest of the run, and each later test that
    touched the application walked all of them: the last UI tests ran ten times slower than
    on their own."""
    threshold, switch = gc.get_threshold(), sys.getswitchinterval()
    yield
    widgets = sys.modules.get("PySide6.QtWidgets")
    qt = widgets.QApplication.instance() if widgets else None
    if qt is not None:
        from PySide6.QtCore import QEvent

        for widget in qt.topLevelWidgets():
            widget.deleteLater()
        qt.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    sys.setswitchinterval(switch)
    gc.set_threshold(*threshold)
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()


@pytest.fixture(autouse=True)
def cairn_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CairnPaths:
    home = tmp_path / "cairn-home"
    monkeypatch.setenv("CAIRN_HOME", str(home))
    return CairnPaths.from_env()


@pytest.fixture
def journal(cairn_paths: CairnPaths) -> Iterator[Journal]:
    with Journal.open(cairn_paths.journal) as opened:
        yield opened


@pytest.fixture
def writer(journal: Journal) -> TranscriptWriter:
    return TranscriptWriter(journal)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than there are cores. Several tests mostly wait (on a child
    they kill, a paced stream, a server's start), and a spare worker keeps the cores busy
    meanwhile: on 2 cores the suite took 7 min 59 s with 2 workers, 7 min 19 s with 3."""
    del config
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked slow first (otherwise in file order): one of them handed out near the end
    would keep a worker busy long after the others had finished."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
