"""The skill store: discovery in the Agent Skills format, every bad input reported and skipped,
and the body-loading bridge that never reads outside a skills folder."""

import os
import re
from pathlib import Path

import pytest

from host.skill_file import MAX_SKILL_BYTES
from host.skills import SkillError, SkillStore
from tests.cache_scenario import write_skill


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    user, workspace = tmp_path / "user-skills", tmp_path / "project"
    user.mkdir()
    SkillStore.workspace_root(workspace).mkdir(parents=True)
    return user, workspace


def store(roots: tuple[Path, Path]) -> SkillStore:
    user, workspace = roots
    return SkillStore([("user", user), ("workspace", SkillStore.workspace_root(workspace))])


def reasons(store_: SkillStore) -> dict[str, str]:
    return {i.path.name: i.reason for i in store_.scan().invalid}


def test_skills_are_found_in_both_folders_sorted_by_name(roots) -> None:
    user, workspace = roots
    write_skill(user, "notes", "Keep notes.", body="# Notes\n\nWrite everything down.")
    write_skill(SkillStore.workspace_root(workspace), "house-style", "Write in the house style.")
    catalog = store(roots).scan()
    assert [(s.name, s.source) for s in catalog.skills] == [("house-style", "workspace"), ("notes", "user")]
    assert catalog.invalid == ()
    assert store(roots).load_body("notes", catalog) == "# Notes\n\nWrite everything down.\n"


def test_extra_front_matter_fields_and_crlf_are_fine(roots) -> None:
    user, _ = roots
    (user / "crlf").mkdir()
    (user / "crlf" / "SKILL.md").write_bytes(
        b"---\r\nname: crlf\r\ndescription: >\r\n  Folded text\r\n  over lines.\r\nlicense: MIT\r\n---\r\nBody\r\n"
    )
    catalog = store(roots).scan()
    assert [(s.name, s.description) for s in catalog.skills] == [("crlf", "Folded text over lines.")]


def test_broken_yaml_and_missing_fields_are_reported(roots) -> None:
    user, _ = roots
    for name, text in {
        "broken": "---\nname: broken\ndescription: [unclosed\n---\n",
        "no-description": "---\nname: no-description\n---\nbody",
        "no-front-matter": "# Just a heading\n",
        "unclosed": "---\nname: unclosed\ndescription: x\n",
        "a-list": "---\n- one\n- two\n---\n",
    }.items():
        (user / name).mkdir()
        (user / name / "SKILL.md").write_text(text)
    (user / "empty-folder").mkdir()
    found = reasons(store(roots))
    assert "not valid YAML" in found["broken"]
    assert "needs a text 'name' and a non-empty 'description'" in found["no-description"]
    assert "does not start with YAML front matter" in found["no-front-matter"]
    assert "never closed" in found["unclosed"]
    assert "not a mapping" in found["a-list"]
    assert "no readable SKILL.md" in found["empty-folder"]
    assert store(roots).scan().skills == ()


@pytest.mark.parametrize(
    ("folder", "name", "why"),
    [
        ("Notes", "Notes", "not a valid skill name"),
        ("notes", "../notes", "differs from its folder name"),
        ("notes", "a/b", "differs from its folder name"),
        ("x" * 65, "x" * 65, "not a valid skill name"),
        ("double--dash", "double--dash", "not a valid skill name"),
        ("dotted..", "dotted..", "not a valid skill name"),
    ],
)
def test_invalid_names_are_reported(roots, folder: str, name: str, why: str) -> None:
    user, _ = roots
    (user / folder).mkdir()
    (user / folder / "SKILL.md").write_text(f'---\nname: "{name}"\ndescription: d\n---\n')
    assert why in reasons(store(roots))[folder]


def test_a_long_description_is_reported(roots) -> None:
    user, _ = roots
    write_skill(user, "wordy", "w" * 1025)
    assert "1025 characters; at most 1024" in reasons(store(roots))["wordy"]


def test_a_10_mb_body_is_refused(roots) -> None:
    user, _ = roots
    write_skill(user, "huge", "Big.", body="x" * 10_000_000)
    assert "10.0 MB; the limit is 1 MB" in reasons(store(roots))["huge"]
    assert MAX_SKILL_BYTES == 1_000_000


def test_a_file_that_is_not_utf8_is_reported(roots) -> None:
    user, _ = roots
    (user / "latin").mkdir()
    (user / "latin" / "SKILL.md").write_bytes("---\nname: latin\ndescription: café\n---\n".encode("latin-1"))
    assert "not UTF-8" in reasons(store(roots))["latin"]


def test_symlinks_out_of_the_skills_folder_are_refused(roots, tmp_path: Path) -> None:
    user, _ = roots
    outside = tmp_path / "outside"
    write_skill(outside, "escape", "Reads what it should not.")
    os.symlink(outside / "escape", user / "escape")
    (user / "sneaky").mkdir()
    os.symlink(outside / "escape" / "SKILL.md", user / "sneaky" / "SKILL.md")
    found = reasons(store(roots))
    assert "links outside the skills folder" in found["escape"]
    assert "links outside the skills folder" in found["sneaky"]
    assert store(roots).scan().skills == ()


def test_two_skills_with_one_name_keep_the_first_and_report_the_second(roots) -> None:
    user, workspace = roots
    write_skill(user, "notes", "Mine.")
    write_skill(SkillStore.workspace_root(workspace), "notes", "The project's.")
    catalog = store(roots).scan()
    assert [(s.name, s.description) for s in catalog.skills] == [("notes", "Mine.")]
    assert "another skill is already named 'notes'" in catalog.invalid[0].reason


def test_the_bridge_loads_only_skills_in_the_current_catalog(roots, tmp_path: Path) -> None:
    user, _ = roots
    write_skill(user, "notes", "Keep notes.")
    skills = store(roots)
    catalog = skills.scan()
    with pytest.raises(SkillError, match=re.escape("no skill named 'secrets'. Available skills: notes")):
        skills.load_body("secrets", catalog)
    # Swapped for a link to somewhere else after the catalog was made: refused on load.
    (user / "notes" / "SKILL.md").unlink()
    write_skill(tmp_path / "elsewhere", "notes", "Gotcha.", body="private data")
    os.symlink(tmp_path / "elsewhere" / "notes" / "SKILL.md", user / "notes" / "SKILL.md")
    with pytest.raises(SkillError, match="links outside the skills folder"):
        skills.load_body("notes", catalog)


def test_scanning_again_reuses_parsed_files_until_they_change(roots) -> None:
    user, _ = roots
    write_skill(user, "notes", "First.")
    skills = store(roots)
    assert skills.scan().skills[0].description == "First."
    write_skill(user, "notes", "Second, longer description.")
    assert skills.scan().skills[0].description == "Second, longer description."


def scan_in_time(store_: SkillStore, seconds: float = 10.0):
    """Scan on a thread, so a scan that blocks fails the test instead of hanging the suite."""
    import threading

    result: list = []
    worker = threading.Thread(target=lambda: result.append(store_.scan()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert result, f"the scan did not finish within {seconds} s"
    return result[0]


def test_hostile_skill_folders_never_stop_or_hang_a_scan(roots) -> None:
    user, _ = roots
    write_skill(user, "good", "A skill that works.")
    # A YAML bomb: 2 KB nested a thousand levels deep (PyYAML raises RecursionError).
    (user / "deep").mkdir()
    (user / "deep" / "SKILL.md").write_text("---\nname: deep\ndescription: " + "[" * 1000 + "]" * 1000 + "\n---\n")
    # Aliases that would expand to a billion entries.
    laughs = "---\nname: laughs\ndescription: x\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    laughs += "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
    (user / "laughs").mkdir()
    (user / "laughs" / "SKILL.md").write_text(laughs + "---\nbody\n")
    # Front matter over the cap.
    (user / "huge-front").mkdir()
    (user / "huge-front" / "SKILL.md").write_text(
        "---\nname: huge-front\ndescription: x\npad: " + "y" * 20_000 + "\n---\n"
    )
    # A FIFO named SKILL.md: reading it would wait forever.
    (user / "fifo").mkdir()
    os.mkfifo(user / "fifo" / "SKILL.md")
    # A device, through a link that stays inside the folder.
    (user / "device").mkdir()
    os.symlink("/dev/zero", user / "device" / "SKILL.md")
    # A folder named SKILL.md, and a symlink loop.
    (user / "folder-file" / "SKILL.md").mkdir(parents=True)
    os.symlink("loop", user / "loop")
    catalog = scan_in_time(store(roots))
    assert [s.name for s in catalog.skills] == ["good", "laughs"]
    found = {i.path.name: i.reason for i in catalog.invalid}
    assert "nested too deeply" in found["deep"]
    assert "front matter is 20,037 characters; at most 16,384" in found["huge-front"]
    assert "not a regular file" in found["fifo"]
    assert "outside the skills folder" in found["device"]
    assert "not a regular file" in found["folder-file"] or "no readable" in found["folder-file"]
    assert "loop" in found
    # The bridge refuses the hostile ones too, and still serves the good one.
    with pytest.raises(SkillError):
        store(roots).load_body("fifo", catalog)
    assert store(roots).load_body("good", catalog).startswith("# good")


def test_a_fifo_appearing_after_the_scan_cannot_hang_load_skill(roots) -> None:
    user, _ = roots
    write_skill(user, "swapped", "Swapped later.")
    skills = store(roots)
    catalog = skills.scan()
    (user / "swapped" / "SKILL.md").unlink()
    os.mkfifo(user / "swapped" / "SKILL.md")
    with pytest.raises(SkillError, match="not a regular file"):
        skills.load_body("swapped", catalog)
