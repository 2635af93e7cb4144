"""The skill store: discovering skills in the Agent Skills format, and the body-loading bridge.

A skill is a folder holding ``SKILL.md``, whose YAML front matter gives ``name`` (1 to 64
characters of a-z, 0-9 and '-', equal to the folder's name) and ``description`` (at most
1,024 characters). Skills are looked for in the user's skills folder and in a workspace's
``.agents/skills``. An invalid skill is reported with its reason and left out; nothing is
ever read from outside a skills folder.

Skill folders come from cloned repositories, so every file is hostile until read
(``host.skill_file`` reads one), and nothing is ever read from outside a skills folder.
Anything at all that goes wrong with one skill makes that skill invalid with a reason; a scan
never stops because of one skill.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Literal

from host import dir_watch
from host.errors import CairnError
from host.skill_file import SKILL_FILE, Parsed, Stamp, parse_file, stamp_of
from host.text import printable

__all__ = [
    "SKILL_FILE",
    "InvalidSkill",
    "ScanWork",
    "Skill",
    "SkillCatalog",
    "SkillError",
    "SkillStore",
    "Source",
    "Stamp",
    "stamp_of",
]

MAX_DESCRIPTION = 1024
NAMED_IN_ERRORS = 20  # the most skills an error names; past that, it points to tool_search
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

Source = Literal["user", "workspace"]


class SkillError(CairnError):
    """A skill body cannot be loaded; the message says why (it goes back to the model)."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    source: Source


@dataclass(frozen=True)
class InvalidSkill:
    path: Path
    reason: str


@dataclass(frozen=True)
class SkillCatalog:
    """The valid skills by name, and what was left out with why."""

    skills: tuple[Skill, ...] = ()
    invalid: tuple[InvalidSkill, ...] = ()

    def get(self, name: str) -> Skill | None:
        return self._by_name.get(name)

    @cached_property
    def _by_name(self) -> dict[str, Skill]:
        return {s.name: s for s in self.skills}


@dataclass
class ScanWork:
    """What the store's scans have cost so far: skills folders listed, entries looked at by
    their stamps (two ``stat`` calls each), skill folders checked in full (resolved and
    vetted), and ``SKILL.md`` files read and parsed."""

    listed: int = 0
    looked: int = 0
    checked: int = 0
    read: int = 0


@dataclass(frozen=True)
class _Entry:
    """One entry of a skills folder, with its paths worked out once per listing."""

    folder: Path
    folder_path: str
    file_path: str


@dataclass(frozen=True)
class _Listing:
    stamp: Stamp
    entries: tuple[_Entry, ...]
    watched: bool  # the folder watch names its entries when they change


@dataclass(frozen=True)
class _Checked:
    """One folder as its last full check found it, under the stamps it had then."""

    stamps: tuple[Stamp, Stamp | None]  # the folder's, its SKILL.md's
    skill: Skill | None
    problem: str | None
    watched: bool  # the folder watch names it whenever what makes it a skill changes
    real: tuple[str, ...] = ()  # for a link: where the root, it and its SKILL.md really are


_DEVICE = 3  # a stamp's device


class SkillStore:
    """Scans skill folders on demand, again only where something changed.

    Each skills folder is looked at by its stamp at every scan, and listed again only when
    that changed (a folder's mtime changes when entries come or go). Its entries are looked at
    again only where the folder watch (``host.dir_watch``) names them; so on Linux, with
    nothing changed, a scan costs one ``stat`` a skills folder and one read of the watch. An
    entry the watch cannot answer for (a link, a ``SKILL.md`` with other hard links, a folder
    on another or a network file system; every entry where there is no watch) is looked at by
    its stamps at every scan: unchanged, it keeps its last check, so it is never resolved or
    read again. ``work`` counts what scans cost.
    """

    def __init__(self, roots: list[tuple[Source, Path]], *, watch: bool = True) -> None:
        self.roots = roots
        self.work = ScanWork()
        self._parsed: dict[Path, Parsed] = {}
        self._listings: dict[Path, _Listing] = {}
        self._checked: dict[tuple[Source, str], _Checked] = {}
        self._catalog: SkillCatalog | None = None
        self._feed = dir_watch.feed() if watch else None
        self._unwatched = 0  # entries the last scan had to look at by their stamps

    @staticmethod
    def workspace_root(workspace: Path) -> Path:
        return workspace / ".agents" / "skills"

    def scan(self) -> SkillCatalog:
        changes = self._feed.changes() if self._feed is not None else None  # None: anything may have
        listings = [(source, root, *self._listing(root, changes)) for source, root in self.roots]
        relisted = any(fresh for *_, fresh, _ in listings)
        if self._catalog is not None and changes == set() and not self._unwatched and not relisted:
            return self._catalog
        changed = self._catalog is None or relisted
        results: list[tuple[Path, Skill | None, str | None]] = []
        visited: set[tuple[Source, str]] = set()
        unwatched = 0
        for source, root, listing, _, trusted in listings:
            if isinstance(listing, str):
                results.append((root, None, listing))
                continue
            for entry in listing.entries:
                key = (source, entry.folder_path)
                visited.add(key)
                known = self._checked.get(key)
                found = known
                if known is None or not known.watched or not trusted or _named(entry, changes):
                    found = self._folder(source, root, entry, known, listing.stamp[_DEVICE])
                changed |= found is not known
                if found is None:
                    continue
                self._checked[key] = found
                unwatched += not (found.watched and listing.watched)
                if found.skill is not None or found.problem is not None:  # else a loose file
                    results.append((entry.folder, found.skill, found.problem))
        self._unwatched = unwatched
        if not changed and self._catalog is not None:
            return self._catalog
        for key in self._checked.keys() - visited:
            del self._checked[key]
        self._catalog = _catalog(results)
        return self._catalog

    def _listing(self, root: Path, changes: set[str] | None) -> tuple[_Listing | str, bool, bool]:
        """The listing of ``root`` (no entries if it is not a folder) or why it cannot be read;
        whether it was listed afresh; and whether its entries that the watch has not named
        are known to be unchanged (its watch held since they were last looked at)."""
        path = os.fspath(root)
        known = self._listings.get(root)
        stamp = stamp_of(root)
        if known is not None and known.stamp == stamp and not (known.watched and changes and path in changes):
            return known, False, known.watched and changes is not None
        self._listings.pop(root, None)
        watched = self._feed is not None and self._feed.watch(path, follow=True)
        stamp = stamp_of(root)  # after the watch, before listing: nothing changing after it goes unnoticed
        try:
            if stamp is None or not root.is_dir():
                return _Listing(stamp or (), (), False), known is not None, False
            self.work.listed += 1
            folders = sorted(root.iterdir())
        except OSError as exc:
            return f"the skills folder cannot be read ({exc.strerror})", True, False
        entries = tuple(_Entry(f, os.fspath(f), os.fspath(f / SKILL_FILE)) for f in folders)
        listing = self._listings[root] = _Listing(stamp, entries, watched)
        # Entries are trusted only if this is the same folder, watched since they were looked at:
        # an event on the folder itself may be its watch's end (moved, or its watch dropped when
        # another store read its move), after which its entries came and went unnamed.
        same = known is not None and known.watched and known.stamp[1 : _DEVICE + 1] == stamp[1 : _DEVICE + 1]
        return listing, True, same and watched and changes is not None and path not in changes

    def _folder(
        self, source: Source, root: Path, entry: _Entry, known: _Checked | None, device: int
    ) -> _Checked | None:
        """``entry`` as its last check found it if neither it nor its ``SKILL.md`` changed since,
        else checked afresh (neither skill nor problem: not a skill folder at all); ``None`` if
        it is gone."""
        watched = self._watch(entry, device)  # first: a change after the look below is named
        self.work.looked += 1
        # The folder's own stamp, not its target's: a folder swapped for a link always changes it.
        stamps = stamp_of(entry.folder_path, follow=False), stamp_of(entry.file_path)
        folder_stamp = stamps[0]
        if folder_stamp is None:
            return None  # gone since the listing; the folder's stamp changed, so the next scan lists again
        # Where a link leads can change with every stamp the same; an entry that is not a link
        # cannot become one without changing its folder's stamp (or its SKILL.md's).
        real = _real(root, entry) if known is None or known.real or known.stamps != stamps else ()
        if known is not None and known.stamps == stamps and known.real == real:
            return known if known.watched == watched else replace(known, watched=watched)
        self.work.checked += 1
        skill, problem = self._safe_check(source, root, entry.folder)
        return _Checked((folder_stamp, stamps[1]), skill, problem, watched, real)

    def _watch(self, entry: _Entry, device: int) -> bool:
        """Watch ``entry``; whether the watch will name it whenever what makes it a skill (or
        not one) changes."""
        if self._feed is None:
            return False
        try:
            folder = os.lstat(entry.folder_path)
        except OSError:
            return False
        if stat.S_ISREG(folder.st_mode):
            return True  # a loose file: only its coming and going matter, and the root's watch names both
        if not stat.S_ISDIR(folder.st_mode) or folder.st_dev != device or not self._feed.watch(entry.folder_path):
            return False  # a link (its target can change unnamed), a mount, or no watch to be had
        try:
            skill_file = os.lstat(entry.file_path)
        except FileNotFoundError:
            return True  # its coming is named
        except OSError:
            return False
        if not stat.S_ISREG(skill_file.st_mode) or skill_file.st_nlink != 1:
            return False  # a link or a hard link: writes through its other names go unnamed
        # The file itself too: a hard link made later (its ATTRIB reaches no folder's watch),
        # and every write through it, are named.
        return self._feed.watch_file(entry.file_path)

    def load_body(self, name: str, catalog: SkillCatalog) -> str:
        """The bridge: the body of skill ``name``, if it is in ``catalog`` and safely readable."""
        skill = catalog.get(name)
        if skill is None:
            if len(catalog.skills) > NAMED_IN_ERRORS:
                raise SkillError(f"There is no skill named {name!r}. Find skills with tool_search and 'skill:'.")
            known = ", ".join(s.name for s in catalog.skills) or "none"
            raise SkillError(f"There is no skill named {name!r}. Available skills: {known}.")
        root = next((r for s, r in self.roots if s == skill.source), None)
        if root is None:
            raise SkillError(f"The skill {name!r} is no longer available.")
        _, problem = self._safe_check(skill.source, root, skill.folder)
        if problem is not None:
            raise SkillError(f"The skill {name!r} cannot be loaded: {problem}.")
        return self._parsed[(skill.folder / SKILL_FILE).resolve()].body

    # -- checking one folder ---------------------------------------------------------------

    def _safe_check(self, source: Source, root: Path, folder: Path) -> tuple[Skill | None, str | None]:
        """``_check``, with anything a hostile folder can raise turned into its reason; ``(None,
        None)`` for an entry that is not a skill folder at all (a loose file)."""
        try:
            if not folder.is_dir() and not folder.is_symlink():
                return None, None
            return self._check(source, root, folder)
        except Exception as exc:  # noqa: BLE001 - one hostile folder never stops the scan
            return None, f"it could not be read ({type(exc).__name__})"

    def _check(self, source: Source, root: Path, folder: Path) -> tuple[Skill | None, str | None]:
        folder_name = folder.name
        if not _NAME.fullmatch(folder_name) or len(folder_name) > 64:
            return None, (
                f"the folder name {folder_name!r} is not a valid skill name (1 to 64 characters of a-z, 0-9 and '-')"
            )
        real_root = root.resolve()
        skill_file = folder / SKILL_FILE
        try:
            real_file = skill_file.resolve(strict=True)
        except (OSError, RuntimeError):
            return None, f"there is no readable {SKILL_FILE}"
        if not real_file.is_relative_to(real_root) or not folder.resolve().is_relative_to(real_root):
            return None, "it links outside the skills folder, so it is refused"
        parsed = self._parse(real_file)
        if parsed.problem is not None:
            return None, parsed.problem
        front = parsed.front or {}
        name, description = front.get("name"), front.get("description")
        if not isinstance(name, str) or not isinstance(description, str) or not description.strip():
            return None, "the front matter needs a text 'name' and a non-empty 'description'"
        if name != folder_name:
            return None, f"its name {name!r} differs from its folder name {folder_name!r}"
        if len(description) > MAX_DESCRIPTION:
            return None, f"its description has {len(description)} characters; at most {MAX_DESCRIPTION} are allowed"
        # Escaped, not dropped: the description reaches the model and the screen as plain text.
        return Skill(name, printable(" ".join(description.split())), folder, source), None

    def _parse(self, path: Path) -> Parsed:
        stamp = stamp_of(path)
        if stamp is None:
            return Parsed((), None, "", f"{SKILL_FILE} cannot be read (it is gone)")
        cached = self._parsed.get(path)
        if cached is not None and cached.stamp == stamp:
            return cached
        self.work.read += 1
        parsed = parse_file(path, stamp)
        self._parsed[path] = parsed
        return parsed


def _real(root: Path, entry: _Entry) -> tuple[str, ...]:
    """Where the root, ``entry`` and its ``SKILL.md`` really are, if the entry is or holds a link
    (then whether it links outside the skills folder can change while every stamp stays the
    same: a link on its way moved, or the root's path leading elsewhere); else nothing."""
    if not os.path.islink(entry.folder_path) and not os.path.islink(entry.file_path):
        return ()
    return tuple(os.path.realpath(path) for path in (root, entry.folder_path, entry.file_path))


def _named(entry: _Entry, changes: set[str] | None) -> bool:
    """Whether the watch named ``entry`` or its ``SKILL.md`` (with no watch, anything may have changed)."""
    return changes is None or entry.folder_path in changes or entry.file_path in changes


def _catalog(results: list[tuple[Path, Skill | None, str | None]]) -> SkillCatalog:
    """The catalog of one scan's results, in the roots' order: the first skill of a name wins."""
    skills: dict[str, Skill] = {}
    invalid: list[InvalidSkill] = []
    for path, skill, problem in results:
        if problem is not None:
            invalid.append(InvalidSkill(path, problem))
        elif skill is not None and skill.name in skills:
            first = skills[skill.name].folder
            invalid.append(InvalidSkill(path, f"another skill is already named {skill.name!r} ({first})"))
        elif skill is not None:
            skills[skill.name] = skill
    return SkillCatalog(tuple(sorted(skills.values(), key=lambda s: s.name)), tuple(invalid))
