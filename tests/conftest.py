"""Every test runs against a temporary CAIRN_HOME, with Qt offscreen.

The user folders platformdirs would pick (HOME and the XDG folders) also point into a
throwaway folder for the whole run, so even a bug that ignores CAIRN_HOME cannot touch a
person's real files.
"""

from __future__ import annotations

import atexit
import os
import shutil
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
