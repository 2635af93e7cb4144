"""A test module is run, never imported: importing one makes its tests a second module's too,
and runs its set-up wherever it is imported. What tests share lives in helper modules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def imported_names(source: str, module: str) -> Iterator[str]:
    """Every module ``source`` (the code of ``module``) may import, each name of a ``from`` import
    counted as a module too (``from tests import test_x`` imports ``tests.test_x``)."""
    package = module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def is_test_module(name: str) -> bool:
    """Whether ``name`` is a file pytest runs: a ``test_*.py`` or a ``conftest.py`` under tests/."""
    path = ROOT.joinpath(*name.split(".")).with_suffix(".py")
    return path.is_file() and TESTS in path.parents and (path.name.startswith("test_") or path.name == "conftest.py")


def imported_tests(path: Path) -> list[str]:
    return sorted({n for n in imported_names(path.read_text(), module_name(path)) if is_test_module(n)})


def test_no_file_in_tests_imports_a_test_module() -> None:
    offenders = {module_name(p): names for p in sorted(TESTS.rglob("*.py")) if (names := imported_tests(p))}
    assert not offenders, f"move what they share into a helper module (tests/__init__.py lists them): {offenders}"


@pytest.mark.parametrize(
    "line",
    [
        "import tests.test_ui_chat",
        "from tests.test_ui_chat import WAIT",
        "from tests import test_ui_chat",
        "from .test_ui_chat import WAIT",
        "from . import conftest",
        "def f():\n    from tests.test_cli import cairn",
    ],
)
def test_every_way_of_importing_a_test_module_is_seen(line: str) -> None:
    found = {n for n in imported_names(line, "tests.test_example") if is_test_module(n)}
    assert found, line


@pytest.mark.parametrize(
    "line", ["from tests.ui_fixtures import WAIT", "from tests import cache_scenario", "import tests", "import pytest"]
)
def test_helper_modules_may_be_imported(line: str) -> None:
    assert not {n for n in imported_names(line, "tests.test_example") if is_test_module(n)}
