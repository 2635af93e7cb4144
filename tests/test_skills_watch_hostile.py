"""Hostile changes on disk between scans: after any of them, a long-lived store's scan equals a
fresh store's (one that reads everything from scratch). Real folders in a temp folder."""

import contextlib
import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host import dir_watch
from host.skills import SkillCatalog, SkillStore
from tests.cache_scenario import write_skill

WATCHED = dir_watch.feed() is not None


@pytest.fixture(params=[True, False], ids=["watched", "stamps-only"])
def watch(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def fresh(roots: list) -> SkillCatalog:
    return SkillStore(roots, watch=False).scan()


def test_a_linked_skill_whose_target_moves_out_of_the_skills_folder_is_refused(tmp_path: Path, watch: bool) -> None:
    root, outside = tmp_path / "skills", tmp_path / "outside"
    outside.mkdir()
    write_skill(root / ".versions", "kept", "Kept.")
    os.symlink(os.path.join(".versions", "kept"), root / "kept")
    store = SkillStore([("user", root)], watch=watch)
    assert store.scan().get("kept") is not None
    # The same folder and SKILL.md (every stamp unchanged), now reached outside the skills folder.
    (root / ".versions").rename(outside / ".versions")
    os.symlink(outside / ".versions", root / ".versions")
    catalog = store.scan()
    assert catalog.get("kept") is None
    assert "outside the skills folder" in {i.path.name: i.reason for i in catalog.invalid}["kept"]
    assert catalog == fresh([("user", root)])


def test_a_skills_folder_link_retargeted_does_not_keep_a_skill_now_outside_it(tmp_path: Path, watch: bool) -> None:
    data = tmp_path / "data"
    write_skill(data / "skills" / ".versions", "kept", "Kept.")
    for folder in ("skills", "other"):
        (data / folder).mkdir(exist_ok=True)
        os.symlink(data / "skills" / ".versions" / "kept", data / folder / "kept")
    os.symlink(data / "skills", tmp_path / "root")
    roots = [("user", tmp_path / "root")]
    store = SkillStore(roots, watch=watch)
    assert store.scan().get("kept") is not None
    os.unlink(tmp_path / "root")
    os.symlink(data / "other", tmp_path / "root")  # its 'kept' links to the same folder, outside it
    assert store.scan().get("kept") is None
    assert store.scan() == fresh(roots)


@pytest.mark.skipif(not WATCHED, reason="no folder watch on this system (Linux only)")
def test_a_skills_folder_moved_away_and_back_while_another_store_read_the_watch(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "alpha", "Alpha.")
    (root / "notes").write_text("a loose file")
    store = SkillStore([("user", root)])
    other = SkillStore([("user", tmp_path / "elsewhere")])
    store.scan()
    root.rename(tmp_path / "away")
    other.scan()  # reads the move: the watch on the skills folder is dropped
    (tmp_path / "away" / "notes").unlink()  # unnamed by any watch from now on
    write_skill(tmp_path / "away", "notes", "Notes.")
    (tmp_path / "away").rename(root)
    assert store.scan().get("notes") is not None
    assert store.scan() == fresh([("user", root)])


# -- random sequences of changes -----------------------------------------------------------

NAMES = ["a", "b", "a", "b", "c", "Bad name\n é"]


def _text(name: str, words: str) -> str:
    return f"---\nname: {name}\ndescription: {words}\n---\nbody\n"


def _put(path: Path, text: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.stat(path).st_mode):
            return  # never open a FIFO
    path.write_text(text)


def _clear(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


class World:
    """Two skills folders and a folder outside both, changed in the ways editors, git and
    people change them."""

    def __init__(self, base: Path) -> None:
        self.base, self.made = base, 0
        self.folders = [base / "u" / "skills", base / "w" / ".agents" / "skills", base / "outside"]
        for folder in self.folders:
            folder.mkdir(parents=True)
        self.roots = [("user", self.folders[0]), ("workspace", self.folders[1])]

    def spare(self) -> Path:
        self.made += 1
        return self.base / f"spare-{self.made}"

    def apply(self, op: str, i: int, j: int, k: int) -> None:
        root, other = self.folders[i % 3], self.folders[(i + 1) % 3]
        with contextlib.suppress(OSError):
            self._in_skill(op, root / NAMES[j], k)
            self._in_root(op, root, other, NAMES[j], NAMES[k])
            self._of_root(op, root, other, k)

    def _in_skill(self, op: str, skill: Path, k: int) -> None:
        name, file = skill.name, skill / "SKILL.md"
        if op == "write":
            skill.mkdir(exist_ok=True)
            _put(file, _text(name if k % 3 else "other", f"Writes {k}."))
        elif op == "rewrite-same-size" and stat.S_ISREG(os.stat(file).st_mode):
            before, text = file.stat(), file.read_text()
            _put(file, text.replace("Writes", "Wrotes") if "Writes" in text else text.replace("Wrotes", "Writes"))
            os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
        elif op == "editor-save":
            (skill / ".swp").write_text(_text(name, f"Saved {k}."))
            os.replace(skill / ".swp", file)
        elif op == "hard-link-and-write":
            os.link(file, self.base / "hard")
            _put(self.base / "hard", _text(name, f"Hard {k}."))
            os.unlink(self.base / "hard")
        elif op == "loose-file":
            _put(skill, "loose")
        elif op == "odd-skill-file":
            skill.mkdir(exist_ok=True)
            (os.mkfifo if k % 2 else os.mkdir)(file)

    def _in_root(self, op: str, root: Path, other: Path, name: str, name2: str) -> None:
        skill = root / name
        if op == "remove":
            _clear(skill)
        elif op == "rename":
            os.rename(skill, root / name2)
        elif op == "move-into":
            os.rename(skill, root / name2 / name)
        elif op == "move-across":
            os.rename(skill, other / name2)
        elif op == "link-folder":
            os.symlink(other / name2 if name2 < name else os.path.relpath(other / name2, root), skill)
        elif op == "link-file":
            skill.mkdir(exist_ok=True)
            os.symlink(other / name2 / "SKILL.md" if name2 != name else "SKILL.md", skill / "SKILL.md")

    def _of_root(self, op: str, root: Path, other: Path, k: int) -> None:
        if op == "remove-root":
            _clear(root)
        elif op == "make-root":
            root.mkdir(parents=True)
        elif op == "root-to-link":
            spare = self.spare()
            root.rename(spare)
            os.symlink(spare if k % 2 else other, root)
        elif op == "root-from-link":
            target = Path(os.readlink(root))
            os.unlink(root)
            target.rename(root) if target.name.startswith("spare") else root.mkdir()
        elif op == "root-away-and-back":
            root.rename(self.base / "away")
            (self.base / "away").rename(root)
        elif op == "checkout":
            for entry in list(root.iterdir()):
                _clear(entry)
            spare = self.spare()
            for n in NAMES[: 1 + k % 3]:
                write_skill(spare, n, f"Checked out {k}.")
            for entry in spare.iterdir():
                entry.rename(root / entry.name)


OPS = [
    "write", "write", "write", "rewrite-same-size", "editor-save", "hard-link-and-write", "remove", "rename",
    "move-into", "move-across", "loose-file", "odd-skill-file", "link-folder", "link-file", "remove-root",
    "make-root", "make-root", "root-to-link", "root-from-link", "root-away-and-back", "checkout",
]  # fmt: skip
STEP = st.tuples(st.sampled_from(OPS), st.integers(0, 2), st.integers(0, 5), st.integers(0, 5), st.booleans())


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(steps=st.lists(STEP, max_size=30))
def test_after_any_changes_a_scan_equals_a_fresh_store_s(tmp_path_factory: pytest.TempPathFactory, steps) -> None:
    world = World(tmp_path_factory.mktemp("world"))
    store = SkillStore(world.roots)
    store.scan()
    for n, (op, i, j, k, scan) in enumerate(steps):
        world.apply(op, i, j, k)
        if scan or n == len(steps) - 1:
            assert store.scan() == fresh(world.roots), (n, op)


def test_a_hard_link_made_after_the_scan_and_written_through_is_seen(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "alpha", "First words.")
    store = SkillStore([("user", root)])
    store.scan()
    os.link(root / "alpha" / "SKILL.md", tmp_path / "other-name.md")  # its ATTRIB reaches no folder's watch
    store.scan()
    (tmp_path / "other-name.md").write_text("---\nname: alpha\ndescription: Later words.\n---\n")
    assert store.scan().get("alpha").description == "Later words."
    assert store.scan() == fresh([("user", root)])
