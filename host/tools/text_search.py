"""search_text's work: matching lines under a workspace folder, within the limits.

Files are visited in name order, depth first, through the jail (links are not followed);
``.git``, ``.hg`` and ``.svn`` are skipped, and so is every binary file. Plain text is matched
anywhere in a line. A regex (checked by ``host.tools.pattern`` first) sees a line in
overlapping windows of ``search_line_chars`` characters, so its cost per call stays bounded;
a match longer than half a window can be missed in a longer line. The search stops at the
first limit it meets and says which.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import re
import threading
import time
from dataclasses import dataclass, field

from host.tools.catalog import ToolError
from host.tools.handles import Folder, JailError, kind_of, show
from host.tools.jail import Jail
from host.tools.limits import ToolLimits
from host.tools.pattern import compile_matcher
from host.tools.textfile import looks_binary, size_text

__all__ = ["SKIPPED_FOLDERS", "search_text"]

SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn"})
_BRACES = re.compile(r"\{([^{}]*)\}")
_CHECK_EVERY = 512  # lines between looks at the clock and the cancel flag


class _Stop(Exception):
    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


@dataclass
class _Tally:
    results: list[str] = field(default_factory=list)
    files: int = 0
    matched_files: int = 0
    binary: int = 0
    unreadable: int = 0
    bytes_read: int = 0
    cut_files: list[str] = field(default_factory=list)
    windowed_lines: int = 0


class _Search:
    def __init__(
        self,
        matcher: re.Pattern[str],
        *,
        regex: bool,
        globs: list[str] | None,
        limits: ToolLimits,
        cancel: threading.Event,
    ) -> None:
        self.matcher = matcher
        self.regex = regex
        self.globs = globs
        self.limits = limits
        self.cancel = cancel
        self.deadline = time.monotonic() + limits.search_seconds
        self.tally = _Tally()

    def wanted(self, parts: tuple[str, ...]) -> bool:
        if self.globs is None:
            return True
        return any(
            _glob_matches(glob.removeprefix("./").split("/"), parts)
            if "/" in glob
            else fnmatch.fnmatch(parts[-1], glob)
            for glob in self.globs
        )

    def check_time(self) -> None:
        if self.cancel.is_set():
            raise _Stop("The search was cancelled.")
        if time.monotonic() > self.deadline:
            raise _Stop(f"Stopped after {self.limits.search_seconds:g} seconds, the time one search may take")

    def file(self, folder: Folder, name: str) -> None:
        parts = (*folder.parts, name)
        if not self.wanted(parts):
            return
        limits, tally = self.limits, self.tally
        self.check_time()
        if tally.files >= limits.search_files:
            raise _Stop(f"Stopped after {limits.search_files:,} files, the most one search reads")
        left = limits.search_bytes - tally.bytes_read
        if left <= 0:
            raise _Stop(f"Stopped after reading {size_text(limits.search_bytes)}, the most one search reads")
        try:
            with folder.open_file(name) as opened:
                data = opened.read(min(limits.search_file_bytes, left))
                cut = opened.size > len(data)
        except (JailError, OSError):
            tally.unreadable += 1
            return
        tally.files += 1
        tally.bytes_read += len(data)
        if looks_binary(data[: limits.binary_sniff]):
            tally.binary += 1
            return
        if cut:
            tally.cut_files.append(show(parts))
        text = data.decode("utf-8", errors="replace")
        if not self.regex and self.matcher.search(text) is None:
            return  # plain text is linear to look for: skip the line loop when it is absent
        self.lines(show(parts), text.split("\n"))

    def lines(self, where: str, lines: list[str]) -> None:
        found = False
        for number, line in enumerate(lines, start=1):
            if number % _CHECK_EVERY == 0:
                self.check_time()
            match = self.match(line.removesuffix("\r"), where, number)
            if match is None:
                continue
            found = True
            self.tally.results.append(f"{where}:{number}: {match}")
            if len(self.tally.results) >= self.limits.search_results:
                self.tally.matched_files += 1
                raise _Stop(f"Stopped at {self.limits.search_results} matching lines, the most one search returns")
        if found:
            self.tally.matched_files += 1

    def match(self, line: str, where: str, number: int) -> str | None:
        """The excerpt of ``line`` to show if it matches, else None."""
        width = self.limits.search_line_chars
        if not self.regex:
            hit = self.matcher.search(line)
            return None if hit is None else _excerpt(line, hit.start(), width)
        if len(line) > width:
            self.tally.windowed_lines += 1
        for start in range(0, max(len(line) - width // 2, 1), max(width // 2, 1)):
            began = time.perf_counter()
            hit = self.matcher.search(line, start, start + width)
            took = time.perf_counter() - began
            if took > self.limits.regex_slow_seconds:
                raise ToolError(
                    f"The regex took {took:.1f} seconds on one line ({where}:{number}), so the search stopped; "
                    "simplify it (narrower parts such as [^ ]* instead of .*), or search for a plain part of it."
                )
            if hit is not None:
                return _excerpt(line, hit.start(), width)
        return None


def search_text(
    jail: Jail,
    pattern: str,
    *,
    regex: bool,
    ignore_case: bool,
    path: str,
    glob: str | None,
    limits: ToolLimits,
    cancel: threading.Event,
) -> str:
    matcher = compile_matcher(pattern, regex=regex, ignore_case=ignore_case)
    parts = jail.parts(path)
    search = _Search(matcher, regex=regex, globs=_expand_braces(glob) if glob else None, limits=limits, cancel=cancel)
    stopped: str | None = None
    try:
        if parts and _is_file(jail, parts):
            search.globs = None  # a file named outright is searched whatever the glob says
            with jail.folder(parts[:-1]) as parent:
                parent.open_file(parts[-1]).close()  # a link, FIFO or device named outright: say why
                search.file(parent, parts[-1])
        else:
            walk = jail.walk(parts, skip=SKIPPED_FOLDERS, max_depth=limits.search_depth)
            with contextlib.closing(walk):
                for folder, name in walk:
                    search.file(folder, name)
    except _Stop as stop:
        stopped = stop.note
    return _report(search.tally, pattern, show(parts), stopped, limits)


def _is_file(jail: Jail, parts: tuple[str, ...]) -> bool:
    with jail.folder(parts[:-1]) as parent:
        try:
            return kind_of(parent.lstat(parts[-1])) != "folder"
        except OSError:
            return False  # the walk names the problem


def _report(tally: _Tally, pattern: str, where: str, stopped: str | None, limits: ToolLimits) -> str:
    searched = f"{tally.files:,} file{'s' if tally.files != 1 else ''} searched under {where}"
    if tally.results:
        head = (
            f"{len(tally.results)} matching line{'s' if len(tally.results) != 1 else ''} in "
            f"{tally.matched_files} file{'s' if tally.matched_files != 1 else ''} ({searched}):"
        )
    else:
        head = f"No line matches {pattern!r} ({searched})."
    notes: list[str] = []
    if stopped:
        notes.append(f"[{stopped}; narrow it with path or glob, or a more precise pattern.]")
    if tally.cut_files:
        listed = ", ".join(tally.cut_files[:5]) + (", …" if len(tally.cut_files) > 5 else "")
        notes.append(
            f"[Only the first {size_text(limits.search_file_bytes)} of {len(tally.cut_files)} large "
            f"file{'s' if len(tally.cut_files) != 1 else ''} {'was' if len(tally.cut_files) == 1 else 'were'} "
            f"searched: {listed}.]"
        )
    if tally.binary:
        notes.append(f"[{tally.binary:,} binary file{'s were' if tally.binary != 1 else ' was'} skipped.]")
    if tally.unreadable:
        notes.append(f"[{tally.unreadable:,} file{'s' if tally.unreadable != 1 else ''} could not be opened.]")
    if tally.windowed_lines:
        notes.append(
            f"[{tally.windowed_lines:,} line{'s are' if tally.windowed_lines != 1 else ' is'} longer than "
            f"{limits.search_line_chars} characters; the regex saw {'them' if tally.windowed_lines != 1 else 'it'} "
            "in overlapping pieces of that length.]"
        )
    return "\n".join([head, *tally.results, *notes])


def _excerpt(line: str, at: int, width: int) -> str:
    if len(line) <= width:
        return line.strip()
    start = max(0, at - width // 3)
    piece = line[start : start + width]
    return f"{'…' if start else ''}{piece.strip()}{'…' if start + width < len(line) else ''}"


def _glob_matches(pattern: list[str], parts: tuple[str, ...]) -> bool:
    """Whether a path's components match a glob's, where a ``**`` component stands for any
    number of folders (none included)."""

    @functools.cache
    def at(i: int, j: int) -> bool:
        if i == len(pattern):
            return j == len(parts)
        if pattern[i] == "**":
            return at(i + 1, j) or (j < len(parts) and at(i, j + 1))
        return j < len(parts) and fnmatch.fnmatch(parts[j], pattern[i]) and at(i + 1, j + 1)

    return at(0, 0)


def _expand_braces(glob: str) -> list[str]:
    """``*.{py,pyi}`` as ``*.py`` and ``*.pyi``, as shells do (one level, at most 64 globs)."""
    found = _BRACES.search(glob)
    if found is None:
        return [glob]
    head, tail = glob[: found.start()], glob[found.end() :]
    return [g for choice in found.group(1).split(",") for g in _expand_braces(head + choice + tail)][:64]
