"""The skill store: discovering skills in the Agent Skills format, and the body-loading bridge.

A skill is a folder holding ``SKILL.md``, whose YAML front matter gives ``name`` (1 to 64
characters of a-z, 0-9 and '-', equal to the folder's name) and ``description`` (at most
1,024 characters). Skills are looked for in the user's skills folder and in a workspace's
``.agents/skills``. An invalid skill is reported with its reason and left out; nothing is
ever read from outside a skills folder.

Skill folders come from cloned repositories, so every file is hostile until read: only a
regular file is opened (never a FIFO or a device, and never by waiting on it), reads are
capped, the front matter is capped before YAML sees it, and anything at all that goes wrong
while reading one skill (a YAML bomb's RecursionError included) makes that skill invalid
with a reason. A scan never stops because of one skill.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

import yaml

from host.errors import CairnError
from host.text import printable

__all__ = [
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

MAX_SKILL_BYTES = 1_000_000
MAX_FRONT_MATTER = 16_384
MAX_DESCRIPTION = 1024
NAMED_IN_ERRORS = 20  # the most skills an error names; past that, it points to tool_search
SKILL_FILE = "SKILL.md"
_SIZE = 4  # a stamp's size
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


@dataclass(frozen=True)
class _Parsed:
    stamp: Stamp
    front: dict[str, object] | None
    body: str
    problem: str | None


# What says a path is unchanged: its kind, inode, device, size, mtime and ctime, following
# links (a link that leads nowhere is stamped as the link itself). A file rewritten in place
# changes its mtime and ctime; one replaced by another file changes its inode.
Stamp = tuple[int, ...]


def stamp_of(path: str | Path) -> Stamp | None:
    """``path``'s stamp, or ``None`` when nothing is there."""
    try:
        info, followed = os.stat(path), 1
    except (OSError, ValueError):
        try:
            info, followed = os.lstat(path), 0
        except (OSError, ValueError):
            return None
    return (followed, stat.S_IFMT(info.st_mode), info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns)  # fmt: skip


@dataclass
class ScanWork:
    """What the store's scans have cost so far: skills folders listed, skill folders checked
    in full (resolved and vetted), and ``SKILL.md`` files read and parsed."""

    listed: int = 0
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


@dataclass(frozen=True)
class _Checked:
    """One folder as its last full check found it, under the stamps it had then."""

    stamps: tuple[Stamp, Stamp | None]  # the folder's, its SKILL.md's
    skill: Skill | None
    problem: str | None


class SkillStore:
    """Scans skill folders on demand, again only where something changed.

    A skills folder whose stamp is unchanged is not listed again (a folder's mtime changes
    when entries come or go); a skill folder whose stamp and whose ``SKILL.md``'s stamp are
    unchanged keeps its last check. So a scan before every request costs two ``stat`` calls
    a skill when nothing changed, and never a re-resolve. ``work`` counts what scans cost.
    """

    def __init__(self, roots: list[tuple[Source, Path]]) -> None:
        self.roots = roots
        self.work = ScanWork()
        self._parsed: dict[Path, _Parsed] = {}
        self._listings: dict[Path, _Listing] = {}
        self._checked: dict[tuple[Source, str], _Checked] = {}
        self._catalog: SkillCatalog | None = None

    @staticmethod
    def workspace_root(workspace: Path) -> Path:
        return workspace / ".agents" / "skills"

    def scan(self) -> SkillCatalog:
        changed = self._catalog is None
        results: list[tuple[Path, Skill | None, str | None]] = []
        visited: set[tuple[Source, str]] = set()
        for source, root in self.roots:
            listing, relisted = self._listing(root)
            changed |= relisted
            if isinstance(listing, str):
                results.append((root, None, listing))
                continue
            for entry in listing:
                key = (source, entry.folder_path)
                visited.add(key)
                found = self._folder(source, root, entry)
                changed |= found is not self._checked.get(key)
                if found is None:
                    continue
                self._checked[key] = found
                if found.skill is not None or found.problem is not None:  # else a loose file
                    results.append((entry.folder, found.skill, found.problem))
        if not changed and self._catalog is not None:
            return self._catalog
        for key in self._checked.keys() - visited:
            del self._checked[key]
        self._catalog = _catalog(results)
        return self._catalog

    def _listing(self, root: Path) -> tuple[tuple[_Entry, ...] | str, bool]:
        """The entries of ``root`` (none if it is not a folder) or why it cannot be read, and
        whether it was listed afresh."""
        stamp = stamp_of(root)  # taken first: an entry added while listing makes the next scan list again
        known = self._listings.get(root)
        if known is not None and known.stamp == stamp:
            return known.entries, False
        self._listings.pop(root, None)
        try:
            if stamp is None or not root.is_dir():
                return (), known is not None
            self.work.listed += 1
            folders = sorted(root.iterdir())
        except OSError as exc:
            return f"the skills folder cannot be read ({exc.strerror})", True
        entries = tuple(_Entry(f, os.fspath(f), os.fspath(f / SKILL_FILE)) for f in folders)
        self._listings[root] = _Listing(stamp, entries)
        return entries, True

    def _folder(self, source: Source, root: Path, entry: _Entry) -> _Checked | None:
        """``entry`` as its last check found it if neither it nor its ``SKILL.md`` changed since,
        else checked afresh (neither skill nor problem: not a skill folder at all); ``None`` if
        it is gone."""
        stamps = stamp_of(entry.folder_path), stamp_of(entry.file_path)
        folder_stamp = stamps[0]
        if folder_stamp is None:
            return None  # gone since the listing; the folder's stamp changed, so the next scan lists again
        known = self._checked.get((source, entry.folder_path))
        if known is not None and known.stamps == stamps:
            return known
        self.work.checked += 1
        skill, problem = self._safe_check(source, root, entry.folder)
        return _Checked((folder_stamp, stamps[1]), skill, problem)

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

    def _parse(self, path: Path) -> _Parsed:
        stamp = stamp_of(path)
        if stamp is None:
            return _Parsed((), None, "", f"{SKILL_FILE} cannot be read (it is gone)")
        cached = self._parsed.get(path)
        if cached is not None and cached.stamp == stamp:
            return cached
        self.work.read += 1
        parsed = _parse_file(path, stamp)
        self._parsed[path] = parsed
        return parsed


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


def _too_big(size: int) -> str:
    return f"{SKILL_FILE} is {size / 1e6:.1f} MB; the limit is {MAX_SKILL_BYTES // 1_000_000} MB"


def _read_regular_file(path: Path) -> bytes:
    """The file's bytes, at most ``MAX_SKILL_BYTES + 1`` of them. Opened without following a
    link and without blocking, and refused unless it is a regular file, so a FIFO or a
    device named SKILL.md can never make Cairn wait. Raises ``OSError`` or ``ValueError``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{SKILL_FILE} is not a regular file (a pipe, a device or a folder?), so it is refused")
        chunks: list[bytes] = []
        left = MAX_SKILL_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 65536))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _parse_file(path: Path, stamp: Stamp) -> _Parsed:
    try:
        return _parse_checked(path, stamp)
    except Exception as exc:  # noqa: BLE001 - hostile input: one file only ever invalidates its own skill
        return _Parsed(stamp, None, "", f"{SKILL_FILE} could not be read ({type(exc).__name__})")


def _parse_checked(path: Path, stamp: Stamp) -> _Parsed:
    text = _read_text(path, stamp[_SIZE])
    if isinstance(text, _Problem):
        return _Parsed(stamp, None, "", text.reason)
    return _front_matter(text, stamp)


@dataclass(frozen=True)
class _Problem:
    reason: str


def _read_text(path: Path, size: int) -> str | _Problem:
    if size > MAX_SKILL_BYTES:
        return _Problem(_too_big(size))
    try:
        data = _read_regular_file(path)
    except OSError as exc:
        return _Problem(f"{SKILL_FILE} cannot be read ({exc.strerror})")
    except ValueError as exc:
        return _Problem(str(exc))
    if len(data) > MAX_SKILL_BYTES:
        return _Problem(_too_big(len(data)))
    try:
        return data.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return _Problem(f"{SKILL_FILE} is not UTF-8 text")


def _front_matter(text: str, stamp: Stamp) -> _Parsed:
    if not text.startswith("---\n"):
        return _Parsed(stamp, None, "", f"{SKILL_FILE} does not start with YAML front matter between '---' lines")
    end = text.find("\n---", 3)
    if end < 0:
        return _Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is never closed with '---'")
    if end - 4 > MAX_FRONT_MATTER:
        return _Parsed(
            stamp, None, "", f"{SKILL_FILE}'s front matter is {end - 4:,} characters; at most {MAX_FRONT_MATTER:,}"
        )
    try:
        front = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        return _Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is not valid YAML{line}")
    except RecursionError:
        return _Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is nested too deeply to read")
    if not isinstance(front, dict):
        return _Parsed(stamp, None, "", f"{SKILL_FILE}'s front matter is not a mapping of fields")
    after = text[end + 4 :]
    body = after.split("\n", 1)[1] if "\n" in after else ""
    return _Parsed(stamp, {str(k): v for k, v in front.items()}, body, None)
