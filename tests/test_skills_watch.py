"""With the folder watch (Linux's inotify), a scan looks at no skill at all when nothing
changed, and at exactly the ones the watch names when something did; whatever the watch
cannot vouch for (a link, a hard-linked SKILL.md, a queue that overflowed, a skills folder
swapped under its path) is still seen, by its stamps. Real folders in a temp folder."""

import contextlib
import os
from pathlib import Path

import pytest

from host import dir_watch
from host.skills import SkillStore
from tests.cache_scenario import remove_skill, write_skill

SKILLS = 200

pytestmark = pytest.mark.skipif(dir_watch.feed() is None, reason="no folder watch on this system (Linux only)")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for i in range(SKILLS):
        write_skill(root, f"skill-{i:03d}", f"Does task number {i}.")
    return root


def scanned(root: Path) -> SkillStore:
    store = SkillStore([("user", root)])
    assert len(store.scan().skills) == SKILLS
    return store


def looks(store: SkillStore) -> int:
    """How many entries the next scan looks at (by two ``stat`` calls each)."""
    before = store.work.looked
    store.scan()
    return store.work.looked - before


def rewrite(skill_file: Path, old: str, new: str) -> None:
    """Rewrite in place, the same size, its times put back: only a watch can tell."""
    before = skill_file.stat()
    text = skill_file.read_text().replace(old, new)
    assert len(text) == before.st_size
    skill_file.write_text(text)
    os.utime(skill_file, ns=(before.st_atime_ns, before.st_mtime_ns))


def open_inotify_instances() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
    return count


def test_a_scan_with_nothing_changed_looks_at_no_skill(root: Path) -> None:
    store = scanned(root)
    assert [looks(store) for _ in range(5)] == [0] * 5
    unwatched = SkillStore([("user", root)], watch=False)
    unwatched.scan()
    assert looks(unwatched) == SKILLS  # without the watch, every skill every time


def test_a_change_is_seen_by_looking_at_that_skill_alone(root: Path) -> None:
    store = scanned(root)
    rewrite(root / "skill-042" / "SKILL.md", "Does task number 42.", "Does work number 42.")
    assert looks(store) == 1
    assert store.scan().get("skill-042").description == "Does work number 42."
    # An editor's save: a new file renamed over the old one.
    fresh = root / "skill-043" / ".SKILL.md.swp"
    fresh.write_text((root / "skill-043" / "SKILL.md").read_text().replace("task", "chore"))
    os.replace(fresh, root / "skill-043" / "SKILL.md")
    assert store.scan().get("skill-043").description == "Does chore number 43."
    assert looks(store) == 0


def test_skills_that_come_go_and_come_back_are_seen_and_watched_again(root: Path) -> None:
    store = scanned(root)
    remove_skill(root, "skill-007")
    assert store.scan().get("skill-007") is None
    write_skill(root, "skill-007", "Is back.")
    assert store.scan().get("skill-007").description == "Is back."
    rewrite(root / "skill-007" / "SKILL.md", "Is back.", "Is home.")
    assert store.scan().get("skill-007").description == "Is home."  # the new folder is watched
    (root / "skill-008").rename(root / "skill-800")
    catalog = store.scan()
    assert catalog.get("skill-008") is None
    assert "differs from its folder name" in {i.path.name: i.reason for i in catalog.invalid}["skill-800"]
    assert looks(store) == 0


def test_what_the_watch_cannot_vouch_for_is_looked_at_every_time(root: Path, tmp_path: Path) -> None:
    # A SKILL.md that is a link to a file elsewhere in the skills folder, and one with a hard
    # link outside it: written through the other name, no event names the skill.
    docs = root / "shared-docs"
    docs.mkdir()
    (docs / "linked.md").write_text("---\nname: linked\ndescription: Is linked.\n---\n")
    (root / "linked").mkdir()
    os.symlink(docs / "linked.md", root / "linked" / "SKILL.md")
    os.link(root / "skill-001" / "SKILL.md", tmp_path / "other-name.md")
    store = SkillStore([("user", root)])
    assert store.scan().get("linked").description == "Is linked."
    assert looks(store) == 2  # those two, every time, and no other
    rewrite(docs / "linked.md", "Is linked.", "Is joined.")
    rewrite(tmp_path / "other-name.md", "Does task number 1.", "Does work number 1.")
    catalog = store.scan()
    assert catalog.get("linked").description == "Is joined."
    assert catalog.get("skill-001").description == "Does work number 1."


def test_a_linked_skill_folder_is_looked_at_every_time(root: Path) -> None:
    write_skill(root / ".versions", "kept", "First version.")
    os.symlink(root / ".versions" / "kept", root / "kept")
    store = SkillStore([("user", root)])
    assert store.scan().get("kept").description == "First version."
    assert looks(store) == 1  # the link; '.versions' (not a skill) is watched, its subfolders are not
    rewrite(root / ".versions" / "kept" / "SKILL.md", "First version.", "Later version.")
    assert store.scan().get("kept").description == "Later version."


def test_a_skills_folder_reached_through_a_link_is_watched(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "skills"
    for i in range(SKILLS):
        write_skill(real, f"skill-{i:03d}", f"Does task number {i}.")
    os.symlink(real, tmp_path / "skills")
    store = scanned(tmp_path / "skills")
    assert looks(store) == 0
    rewrite(real / "skill-005" / "SKILL.md", "Does task number 5.", "Does work number 5.")
    assert store.scan().get("skill-005").description == "Does work number 5."


def test_a_skills_folder_swapped_under_its_path_is_looked_at_afresh(root: Path, tmp_path: Path) -> None:
    store = scanned(root)
    root.parent.rename(tmp_path.parent / f"{tmp_path.name}-moved")  # the watch follows the old folder away
    moved = tmp_path.parent / f"{tmp_path.name}-moved" / "skills"
    try:
        for i in range(SKILLS):
            write_skill(root, f"skill-{i:03d}", f"Does new task {i}.")
        assert store.scan().get("skill-100").description == "Does new task 100."
        assert looks(store) == 0
    finally:
        moved.parent.rename(tmp_path.parent / f"{tmp_path.name}-done")


def test_a_change_lost_when_the_queue_overflowed_is_still_seen(root: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"the kernel queues {limit:,} events; overflowing it would take too long")
    store = scanned(root)
    noise = [root / "skill-000" / "a.txt", root / "skill-000" / "b.txt"]
    for n in range(limit + 100):  # at least one event each, two at most
        noise[n % 2].write_text(str(n))  # alternating files: the kernel cannot merge the events
    rewrite(root / "skill-150" / "SKILL.md", "Does task number 150.", "Does work number 150.")  # its event is lost
    assert store.scan().get("skill-150").description == "Does work number 150."
    assert looks(store) == 0


def test_every_store_shares_one_watch(tmp_path: Path) -> None:
    before = open_inotify_instances()  # Qt's own file watchers may hold some in this process
    stores = []
    for n in range(200):  # more than the 128 inotify instances a user has by default
        write_skill(tmp_path / f"root-{n}", "only", f"Store {n}.")
        stores.append(SkillStore([("user", tmp_path / f"root-{n}")]))
        stores[-1].scan()
    assert open_inotify_instances() - before <= 1  # the shared one, if no store had opened it yet
    rewrite(tmp_path / "root-150" / "only" / "SKILL.md", "Store 150.", "Store 15.0")
    assert [s.scan().get("only").description for s in stores[149:152]] == ["Store 149.", "Store 15.0", "Store 151."]


def test_past_the_kernel_s_limit_of_watches_skills_are_looked_at_by_their_stamps(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As when fs.inotify.max_user_watches is reached: the kernel refuses (ENOSPC) every watch past it.
    store = SkillStore([("user", root)])
    feed = store._feed
    assert feed is not None
    allowed = {os.fspath(root), *(os.fspath(root / f"skill-{i:03d}") for i in range(0, SKILLS, 2))}
    real_watch = feed.watch

    def watch_within_the_limit(path: str, *, follow: bool = False) -> bool:
        return path in allowed and real_watch(path, follow=follow)

    monkeypatch.setattr(feed, "watch", watch_within_the_limit)
    assert len(store.scan().skills) == SKILLS
    assert looks(store) == SKILLS // 2  # the unwatched half, every time
    rewrite(root / "skill-101" / "SKILL.md", "Does task number 101.", "Does work number 101.")  # unwatched
    rewrite(root / "skill-100" / "SKILL.md", "Does task number 100.", "Does work number 100.")  # watched
    catalog = store.scan()
    assert catalog.get("skill-101").description == "Does work number 101."
    assert catalog.get("skill-100").description == "Does work number 100."
