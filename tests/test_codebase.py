"""The codebase's own shape, checked on every run (docs/architecture.md §2): no import circle
among Cairn's modules (imports under ``TYPE_CHECKING`` and inside functions count), no product
file over 400 lines and no function over 80, and every room says what it owns."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("host", "desktop", "ui")
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imported(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The Cairn modules ``path`` (module ``name``) imports, wherever in it the import stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    resolved = set()
    for target in targets:
        module = target
        while module and module not in known:
            module = module.rpartition(".")[0]
        if module and module != name:
            resolved.add(module)
    return resolved


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start, targets in graph.items():
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(targets)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_module_imports_itself_round_a_circle() -> None:
    known = modules()
    graph = {name: imported(path, name, known) for name, path in known.items()}
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_file_or_function_is_past_what_a_reader_can_hold() -> None:
    too_long = []
    for path in modules().values():
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        if len(text.splitlines()) > MAX_FILE_LINES:
            too_long.append(f"{where}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    assert too_long == []


def test_every_room_says_what_it_owns() -> None:
    silent = []
    for package in PACKAGES:
        for init in sorted((ROOT / package).rglob("__init__.py")):
            if ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) is None:
                silent.append(str(init.relative_to(ROOT)))
    assert silent == []
