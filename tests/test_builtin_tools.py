"""The built-in tools as a chat gets them: their specs, their arguments, and what each file
tool does on a real folder."""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from host.tools import ToolCatalog
from host.tools.builtin import BUILTIN_NAMES, NO_WORKSPACE, builtin_specs, builtin_tools
from host.tools.limits import DEFAULT_LIMITS
from tests.tool_fixtures import call


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def run():\n    return 1\n\n\ndef stop():\n    return 1\n")
    return root


# -- specs ---------------------------------------------------------------------------------------------


def test_the_tools_are_declared_alike_with_or_without_a_workspace(tmp_path: Path) -> None:
    http = httpx.AsyncClient()
    without, with_one = ToolCatalog(builtin_tools(None, http=http)), ToolCatalog(builtin_tools(tmp_path, http=http))
    assert without.identity() == with_one.identity()
    assert without.specs == builtin_specs()
    assert tuple(t.name for t in without) == BUILTIN_NAMES


@pytest.mark.parametrize("spec", builtin_specs(), ids=lambda s: s.name)
def test_every_spec_is_builtin_core_and_strict(spec: Any) -> None:
    assert spec.source == "builtin"
    assert spec.deferred is False
    schema = spec.parameters
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) <= set(schema["properties"])
    for name, prop in schema["properties"].items():
        assert prop.get("type") in ("string", "integer", "boolean"), name
        assert prop.get("description"), name
    assert len(spec.description) > 80


def test_scopes_and_read_only_say_what_each_tool_touches() -> None:
    by_name = {spec.name: spec for spec in builtin_specs()}
    assert {n: (s.required_scopes, s.read_only) for n, s in by_name.items()} == {
        "list_folder": ({"workspace.read"}, True),
        "read_file": ({"workspace.read"}, True),
        "search_text": ({"workspace.read"}, True),
        "write_file": ({"workspace.write"}, False),
        "edit_file": ({"workspace.write"}, False),
        "fetch_url": ({"network.fetch"}, False),
    }
    assert by_name["read_file"].parameters["properties"]["limit"]["maximum"] == 2000
    assert builtin_specs(replace(DEFAULT_LIMITS, read_lines=50))[3].parameters["properties"]["limit"]["maximum"] == 50


# -- no workspace, bad arguments, nothing raises -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("list_folder", {}),
        ("read_file", {"path": "a.txt"}),
        ("search_text", {"pattern": "x"}),
        ("write_file", {"path": "a.txt", "content": "x"}),
        ("edit_file", {"path": "a.txt", "old_text": "x", "new_text": "y"}),
    ],
)
def test_without_a_workspace_the_file_tools_say_how_to_choose_one(name: str, arguments: dict[str, Any]) -> None:
    answer = call(None, name, **arguments)
    assert answer.is_error
    assert answer.text == NO_WORKSPACE
    assert "Settings → Skills → Workspace" in answer.text
    assert "cairn chat --workspace DIR" in answer.text


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("read_file", {}, "read_file needs the argument 'path'."),
        ("read_file", {"path": 3}, "read_file's argument 'path' must be text."),
        ("read_file", {"path": "notes.txt", "offset": 0}, "'offset' is 0; it must be from 1 up."),
        ("read_file", {"path": "notes.txt", "limit": 5000}, "'limit' is 5000; it must be from 1 to 2000."),
        ("read_file", {"path": "notes.txt", "limit": True}, "'limit' must be a whole number."),
        (
            "read_file",
            {"path": "notes.txt", "lines": 3},
            "read_file has no argument 'lines'; it takes limit, offset, path.",
        ),
        ("search_text", {"pattern": "x", "regex": "yes"}, "'regex' must be true or false."),
        ("write_file", {"path": "a.txt"}, "write_file needs the argument 'content'."),
        ("fetch_url", {"url": 5}, "fetch_url's argument 'url' must be text."),
    ],
)
def test_wrong_arguments_are_named(folder: Path, name: str, arguments: dict[str, Any], says: str) -> None:
    answer = call(folder, name, **arguments)
    assert answer.is_error
    assert says in answer.text


def test_a_whole_number_written_as_a_float_is_taken(folder: Path) -> None:
    assert call(folder, "read_file", path="notes.txt", offset=2.0).text.startswith("     2\tbeta")


def test_an_unexpected_failure_is_an_error_output_and_logged(
    folder: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from host.tools import workspace

    def broken(*_: object) -> str:
        raise ZeroDivisionError

    monkeypatch.setattr(workspace, "list_folder", broken)
    answer = call(folder, "list_folder")
    assert answer.is_error
    assert "list_folder failed unexpectedly (ZeroDivisionError)" in answer.text
    assert "list_folder failed unexpectedly" in caplog.text


def test_cancellation_still_cancels(folder: Path) -> None:
    async def go() -> None:
        tool = {t.name: t for t in builtin_tools(folder, http=httpx.AsyncClient())}["read_file"]
        task = asyncio.ensure_future(tool.run({"path": "notes.txt"}))
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())


# -- list_folder ---------------------------------------------------------------------------------------


def test_list_folder_shows_types_and_sizes_by_name(folder: Path) -> None:
    (folder / "big.bin").write_bytes(b"\0" * 2048)
    (folder / "empty").mkdir()
    listing = call(folder, "list_folder").text
    assert listing.splitlines() == [
        "The folder . has 4 entries, by name:",
        "[file]   big.bin (2.0 KB)",
        "[folder] empty/",
        "[file]   notes.txt (17 bytes)",
        "[folder] src/",
    ]
    assert call(folder, "list_folder", path="empty").text == "The folder empty is empty."
    assert (
        call(folder, "list_folder", path="src").text
        == "The folder src has 1 entry, by name:\n[file]   app.py (51 bytes)"
    )


def test_list_folder_is_capped_and_says_so(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i:02}").write_text("")
    few = call(tmp_path, "list_folder", limits=replace(DEFAULT_LIMITS, list_entries=10)).text
    lines = few.splitlines()
    assert lines[0] == "The folder . has 30 entries, by name:"
    assert lines[1] == "[file]   f00 (0 bytes)"
    assert lines[10] == "[file]   f09 (0 bytes)"
    assert lines[11].startswith("[Only the first 10 of 30 entries are shown.")
    many = call(tmp_path, "list_folder", limits=replace(DEFAULT_LIMITS, list_entries=10, list_scan=20)).text
    assert "has more than 20 entries" in many


def test_list_folder_of_a_file_or_nothing_says_so(folder: Path) -> None:
    assert "'notes.txt' is not a folder." in call(folder, "list_folder", path="notes.txt").text
    assert "There is no 'nope' in the workspace" in call(folder, "list_folder", path="nope").text


# -- read_file -----------------------------------------------------------------------------------------


def test_read_file_numbers_lines_and_pages(folder: Path) -> None:
    assert call(folder, "read_file", path="notes.txt").text == "     1\talpha\n     2\tbeta\n     3\tgamma"
    page = call(folder, "read_file", path="notes.txt", offset=2, limit=1).text
    assert page == (
        "     2\tbeta\n[Lines 2 to 2 of notes.txt are shown (the 1 line asked for); the file goes on. "
        "To read on, call read_file with offset=3.]"
    )
    past = call(folder, "read_file", path="notes.txt", offset=9)
    assert past.is_error
    assert past.text == "notes.txt has 3 lines, so there is no line 9; give a smaller offset."


def test_read_file_cuts_long_lines_and_cleans_line_ends(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_bytes(b"\xef\xbb\xbfwin\r\n" + b"z" * 5000 + b"\nlast")
    lines = call(tmp_path, "read_file", path="long.txt").text.splitlines()
    assert lines[0] == "     1\twin"
    assert lines[1] == "     2\t" + "z" * 2000 + " … [line cut at 2,000 characters]"
    assert lines[2] == "     3\tlast"


def test_read_file_refuses_binary_and_names_empty_and_non_utf8(tmp_path: Path) -> None:
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "latin.txt").write_bytes("café\n".encode("latin-1"))
    binary = call(tmp_path, "read_file", path="img.png")
    assert binary.is_error
    assert binary.text.startswith("img.png is a binary file (11 bytes), and read_file shows only text files")
    assert call(tmp_path, "read_file", path="empty.txt").text == "empty.txt is empty."
    assert call(tmp_path, "read_file", path="latin.txt").text == "     1\tcaf\ufffd"
    (tmp_path / "sub").mkdir()
    assert call(tmp_path, "read_file", path="sub").text.startswith("'sub' is a folder, not a file; list_folder")
    assert call(tmp_path, "read_file", path=".").text.startswith("'.' is the workspace folder, not a file;")


# -- write_file ----------------------------------------------------------------------------------------


def test_write_file_creates_with_folders_and_replaces_keeping_permissions(folder: Path) -> None:
    made = call(folder, "write_file", path="new/deep/file.txt", content="one\ntwo\n")
    assert made.text == "Created new/deep/file.txt (2 lines, 8 bytes)."
    assert (folder / "new" / "deep" / "file.txt").read_text() == "one\ntwo\n"
    os.chmod(folder / "notes.txt", 0o640)
    replaced = call(folder, "write_file", path=str(folder / "notes.txt"), content="new")
    assert replaced.text == "Replaced notes.txt (1 line, 3 bytes)."
    assert (folder / "notes.txt").read_text() == "new"
    assert stat.S_IMODE((folder / "notes.txt").stat().st_mode) == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["new", "notes.txt", "src"]  # no temp file left


def test_write_file_refuses_a_folder_and_too_much(folder: Path) -> None:
    assert "'src' is a folder; give a file name inside it." in call(folder, "write_file", path="src", content="x").text
    assert (
        "'.' is the workspace folder; give a file name inside it."
        in call(folder, "write_file", path=".", content="x").text
    )
    big = call(
        folder, "write_file", path="big.txt", content="x" * 2000, limits=replace(DEFAULT_LIMITS, write_bytes=1000)
    )
    assert big.is_error
    assert "The content is 2.0 KB; write_file writes at most 1.0 KB to one file." in big.text
    assert not (folder / "big.txt").exists()
    under_file = call(folder, "write_file", path="notes.txt/inner.txt", content="x")
    assert under_file.is_error
    assert "'notes.txt' is not a folder." in under_file.text


# -- edit_file -----------------------------------------------------------------------------------------


def test_edit_file_replaces_exactly_one_occurrence(folder: Path) -> None:
    done = call(
        folder,
        "edit_file",
        path="src/app.py",
        old_text="def stop():\n    return 1",
        new_text="def stop():\n    return 0",
    )
    assert done.text == "Edited src/app.py: replaced 2 lines at line 5 with 2 lines."
    assert (folder / "src" / "app.py").read_text() == "def run():\n    return 1\n\n\ndef stop():\n    return 0\n"


def test_edit_file_names_zero_and_several_matches(folder: Path) -> None:
    several = call(folder, "edit_file", path="src/app.py", old_text="return 1", new_text="return 2")
    assert several.is_error
    assert several.text == (
        "old_text occurs 2 times in src/app.py (at lines 2, 6); include more of the surrounding text "
        "so that it matches exactly one place."
    )
    overlapping = call(folder, "edit_file", path="notes.txt", old_text="a", new_text="A")
    assert "occurs 5 times in notes.txt (at lines 1, 2, 3)" in overlapping.text
    none = call(folder, "edit_file", path="src/app.py", old_text="return 3", new_text="x")
    assert none.is_error
    assert none.text.startswith("old_text was not found in src/app.py; read the file again")
    same = call(folder, "edit_file", path="notes.txt", old_text="beta", new_text="beta")
    assert "nothing to change" in same.text
    assert (folder / "src" / "app.py").read_text().count("return 1") == 2


def test_edit_file_keeps_windows_line_ends_and_refuses_what_it_would_damage(tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert not call(tmp_path, "edit_file", path="win.txt", old_text="one\ntwo", new_text="1\n2").is_error
    assert (tmp_path / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"
    (tmp_path / "latin.txt").write_bytes("café one\n".encode("latin-1"))
    latin = call(tmp_path, "edit_file", path="latin.txt", old_text="one", new_text="two")
    assert latin.is_error
    assert "is not UTF-8 text (a byte at offset 3 is not)" in latin.text
    assert (tmp_path / "latin.txt").read_bytes() == "café one\n".encode("latin-1")
    missing = call(tmp_path, "edit_file", path="nope.txt", old_text="a", new_text="b")
    assert "There is no 'nope.txt' in the workspace" in missing.text
    assert not (tmp_path / "nope.txt").exists()
