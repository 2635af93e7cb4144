"""`cairn --version` shows the version pyproject.toml names, the only place it is written."""

import subprocess
import sys
import tomllib
from pathlib import Path

from desktop.version import cairn_version

REPO = Path(__file__).resolve().parents[1]


def project_version() -> str:
    with (REPO / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def test_cairn_version_prints_the_pyproject_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "desktop", "--version"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"cairn {project_version()}"


def test_the_version_comes_from_the_installed_metadata() -> None:
    assert cairn_version() == project_version()
