"""The skill store scans again only what changed: a thousand unchanged skills are not listed,
resolved or read again before every request, and a skill changed on disk (rewritten in place
at the same size, or replaced by another file) is read again. Real files in a temp folder."""

import os
import pathlib
from pathlib import Path

import pytest

from host.skills import SkillStore
from tests.cache_scenario import write_skill

SKILLS = 1000


@pytest.fixture(params=[True, False], ids=["watched", "stamps-only"])
def watch(request: pytest.FixtureRequest) -> bool:
    """Each test runs with the folder watch and without it (where Cairn has none)."""
    return bool(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for i in range(SKILLS):
        write_skill(root, f"skill-{i:04d}", f"Does task number {i}.")
    return root


class Counted:
    """``SKILL.md`` opens and path resolves, counted where the operating system is asked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opens = self.resolves = 0
        real_open, real_resolve = os.open, pathlib.Path.resolve

        def counting_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.opens += os.fspath(path).endswith("SKILL.md")
            return real_open(path, *args, **kwargs)

        def counting_resolve(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.resolves += 1
            return real_resolve(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", counting_open)
        monkeypatch.setattr(pathlib.Path, "resolve", counting_resolve)


def test_a_scan_with_nothing_changed_opens_resolves_and_parses_nothing(root, watch, monkeypatch) -> None:
    store = SkillStore([("user", root)], watch=watch)
    first = store.scan()
    assert len(first.skills) == SKILLS
    assert (store.work.listed, store.work.checked, store.work.read) == (1, SKILLS, SKILLS)
    counted = Counted(monkeypatch)
    for _ in range(5):
        assert store.scan() == first
    assert (counted.opens, counted.resolves) == (0, 0)
    assert (store.work.listed, store.work.checked, store.work.read) == (1, SKILLS, SKILLS)


def test_a_skill_rewritten_at_the_same_size_is_read_again(root, watch, monkeypatch) -> None:
    store = SkillStore([("user", root)], watch=watch)
    store.scan()
    skill_file = root / "skill-0500" / "SKILL.md"
    before = skill_file.stat()
    text = skill_file.read_text().replace("Does task number 500.", "Does jobs number 500.")
    assert len(text) == before.st_size
    skill_file.write_text(text)
    os.utime(skill_file, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    counted = Counted(monkeypatch)
    catalog = store.scan()
    assert catalog.get("skill-0500").description == "Does jobs number 500."
    assert counted.opens == 1
    assert (store.work.listed, store.work.checked, store.work.read) == (1, SKILLS + 1, SKILLS + 1)


def test_a_skill_replaced_by_another_file_with_the_same_size_and_mtime_is_read_again(root, watch) -> None:
    store = SkillStore([("user", root)], watch=watch)
    store.scan()
    skill_file = root / "skill-0007" / "SKILL.md"
    before, folder = skill_file.stat(), skill_file.parent.stat()
    replacement = root / "skill-0007" / "new.tmp"
    replacement.write_text(skill_file.read_text().replace("Does task number 7.", "Does work number 7."))
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, skill_file)
    os.utime(skill_file.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))  # the folder looks untouched too
    after = skill_file.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ino != before.st_ino
    catalog = store.scan()
    assert catalog.get("skill-0007").description == "Does work number 7."
    assert store.work.read == SKILLS + 1


def test_a_skill_added_lists_the_folder_again_and_reads_only_the_new_one(root, watch) -> None:
    store = SkillStore([("user", root)], watch=watch)
    store.scan()
    write_skill(root, "aardvark", "Knows about aardvarks.")
    catalog = store.scan()
    assert catalog.skills[0].name == "aardvark"
    assert (store.work.listed, store.work.checked, store.work.read) == (2, SKILLS + 1, SKILLS + 1)
    (root / "aardvark" / "SKILL.md").unlink()
    (root / "aardvark").rmdir()
    assert store.scan().get("aardvark") is None
    assert store.work.read == SKILLS + 1


def test_a_cached_skill_turned_into_a_link_out_of_the_folder_is_refused(root, watch, tmp_path: Path) -> None:
    store = SkillStore([("user", root)], watch=watch)
    store.scan()
    write_skill(tmp_path / "elsewhere", "skill-0001", "Gotcha.", body="private data")
    (root / "skill-0001" / "SKILL.md").unlink()
    os.symlink(tmp_path / "elsewhere" / "skill-0001" / "SKILL.md", root / "skill-0001" / "SKILL.md")
    catalog = store.scan()
    assert catalog.get("skill-0001") is None
    assert "outside the skills folder" in {i.path.name: i.reason for i in catalog.invalid}["skill-0001"]
    # A whole skill folder swapped for a link out of the skills folder: refused too.
    (root / "skill-0002" / "SKILL.md").unlink()
    (root / "skill-0002").rmdir()
    os.symlink(tmp_path / "elsewhere" / "skill-0001", root / "skill-0002")
    assert store.scan().get("skill-0002") is None
