"""search_text through the built-in tool, on real folders."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from host.tools.limits import DEFAULT_LIMITS
from tests.tool_fixtures import call


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / ".git").mkdir()
    (root / "src" / "main.py").write_text("import os\n\ndef main():\n    return helper()  # TODO tidy\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 42\n# todo: more\n")
    (root / "src" / "pkg" / "types.pyi").write_text("def helper() -> int: ...\n")
    (root / "docs" / "guide.md").write_text("# Guide\n\nCall helper() to get 42.\n")
    (root / ".git" / "HEAD").write_text("helper in git\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0helper\0")
    (root / "crlf.txt").write_bytes(b"first\r\nhelper here\r\n")
    return root


def test_plain_text_finds_lines_as_path_line_text_in_path_order(repo: Path) -> None:
    found = call(repo, "search_text", pattern="helper")
    assert not found.is_error
    lines = found.text.splitlines()
    assert lines[0] == "5 matching lines in 5 files (6 files searched under .):"
    assert lines[1:] == [
        "crlf.txt:2: helper here",
        "docs/guide.md:3: Call helper() to get 42.",
        "src/main.py:4: return helper()  # TODO tidy",
        "src/pkg/types.pyi:1: def helper() -> int: ...",
        "src/pkg/util.py:1: def helper():",
        "[1 binary file was skipped.]",
    ]
    assert len(lines) == 7
    assert "[1 binary file was skipped.]" in found.text
    assert ".git" not in found.text


def test_case_regex_path_and_glob_narrow_the_search(repo: Path) -> None:
    assert "1 matching line" in call(repo, "search_text", pattern="TODO").text
    assert "2 matching lines" in call(repo, "search_text", pattern="todo", ignore_case=True).text
    regex = call(repo, "search_text", pattern=r"def \w+\(\):", regex=True).text
    assert "src/main.py:3: def main():" in regex
    assert "src/pkg/util.py:1: def helper():" in regex
    assert "types.pyi" not in regex
    in_pkg = call(repo, "search_text", pattern="helper", path="src/pkg").text
    assert in_pkg.startswith("2 matching lines in 2 files (2 files searched under src/pkg):")
    one_file = call(repo, "search_text", pattern="helper", path="src/pkg/util.py").text
    assert one_file.startswith("1 matching line in 1 file (1 file searched under src/pkg/util.py):")
    python = call(repo, "search_text", pattern="helper", glob="*.py").text
    assert "types.pyi" not in python
    assert "guide.md" not in python
    both = call(repo, "search_text", pattern="helper", glob="*.{py,pyi}").text
    assert "types.pyi" in both
    assert "src/main.py" in both
    by_path = call(repo, "search_text", pattern="helper", glob="src/**/*.py").text
    assert "src/pkg/util.py" in by_path
    assert "src/main.py" in by_path
    assert "guide.md" not in by_path
    assert "src/main.py" in call(repo, "search_text", pattern="helper", glob="**/main.py").text


def test_nothing_found_is_an_answer_not_an_error(repo: Path) -> None:
    none = call(repo, "search_text", pattern="no such words")
    assert not none.is_error
    assert none.text.startswith("No line matches 'no such words' (6 files searched under .).")


def test_bad_and_dangerous_regexes_are_clear_errors(repo: Path) -> None:
    bad = call(repo, "search_text", pattern="def (", regex=True)
    assert bad.is_error
    assert "is not valid" in bad.text
    slow = call(repo, "search_text", pattern="(a+)+$", regex=True)
    assert slow.is_error
    assert "exponential time" in slow.text


def test_the_result_cap_stops_and_says_how_to_narrow(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * 500)
    found = call(tmp_path, "search_text", pattern="hit")
    assert found.text.startswith("200 matching lines in 1 file")
    assert len([line for line in found.text.splitlines() if line.startswith("many.txt:")]) == 200
    assert "[Stopped at 200 matching lines, the most one search returns; narrow it with path or glob" in found.text


def test_file_byte_and_time_caps_are_marked(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i:02}.txt").write_text("x\n" * 1000 + "needle\n")
    few = call(tmp_path, "search_text", pattern="needle", limits=replace(DEFAULT_LIMITS, search_files=10))
    assert few.text.startswith("10 matching lines in 10 files (10 files searched")
    assert "[Stopped after 10 files, the most one search reads" in few.text
    little = call(tmp_path, "search_text", pattern="needle", limits=replace(DEFAULT_LIMITS, search_bytes=5000))
    assert "[Stopped after reading 5.0 KB, the most one search reads" in little.text
    cut = call(tmp_path, "search_text", pattern="needle", limits=replace(DEFAULT_LIMITS, search_file_bytes=100))
    assert cut.text.startswith("No line matches")
    assert "[Only the first 100 bytes of 30 large files were searched: f00.txt, f01.txt" in cut.text
    late = call(tmp_path, "search_text", pattern="needle", limits=replace(DEFAULT_LIMITS, search_seconds=0))
    assert "[Stopped after 0 seconds, the time one search may take" in late.text


def test_a_regex_sees_long_lines_in_windows_and_plain_text_sees_them_whole(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 5000 + "needle(1)" + "b" * 5000 + "\n")
    regex = call(tmp_path, "search_text", pattern=r"needle\(\d\)", regex=True).text
    assert "min.js:1: …" in regex
    assert "needle(1)" in regex
    assert "1 line is longer than 300 characters; the regex saw it in overlapping pieces" in regex
    plain = call(tmp_path, "search_text", pattern="needle(1)").text
    assert "min.js:1: …" in plain
    assert len(plain.splitlines()[1]) < 320  # the excerpt around the match, not 10,000 characters


def test_a_slow_regex_stops_the_search_instead_of_freezing_cairn(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(" " * 290 + "\n")
    limits = replace(DEFAULT_LIMITS, regex_slow_seconds=0.0001)
    slow = call(tmp_path, "search_text", pattern=r"\s*\s*x", regex=True, limits=limits)
    assert slow.is_error
    assert "The regex took" in slow.text
    assert "(a.txt:1)" in slow.text


def test_a_big_tree_is_searched_within_the_limits_quickly(tmp_path: Path) -> None:
    for folder in range(20):
        sub = tmp_path / f"d{folder:02}"
        sub.mkdir()
        for i in range(50):
            (sub / f"f{i:02}.py").write_text("def f():\n    pass\n" * 200)
    (tmp_path / "d10" / "f25.py").write_text("def needle_here():\n")
    started = time.monotonic()
    found = call(tmp_path, "search_text", pattern=r"def needle_\w+", regex=True)
    took = time.monotonic() - started
    assert found.text.startswith("1 matching line in 1 file (1,000 files searched under .):")
    assert took < 5
    print(f"search: 1,000 files, 3.6 MB, regex, in {took:.2f} s")
