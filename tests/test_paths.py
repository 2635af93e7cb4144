from pathlib import Path

import pytest

from host.paths import CairnPaths


def test_cairn_home_holds_every_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "portable"))
    paths = CairnPaths.from_env()
    for folder in (paths.data_dir, paths.config_dir, paths.cache_dir, paths.log_dir):
        assert folder.is_relative_to(tmp_path / "portable")
    assert paths.journal == tmp_path / "portable" / "data" / "journal.sqlite3"


def test_without_cairn_home_the_platform_folders_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAIRN_HOME")
    paths = CairnPaths.from_env()
    # conftest points HOME and the XDG folders into a throwaway sandbox.
    assert "cairn-tests-" in str(paths.data_dir)
    assert paths.data_dir.name == "Cairn"


def test_tests_never_see_real_user_folders(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    assert cairn_paths.data_dir.is_relative_to(tmp_path)
