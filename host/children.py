"""The processes Cairn starts (MCP servers over stdio, the built-in engine), recorded while
they run, so that those a killed Cairn left behind are ended at its next start.

On Linux a child is also told to die with Cairn (``PR_SET_PDEATHSIG``: ``host.mcp.stdio``,
``desktop.engine.process``), but the kernel only sends it a SIGTERM: a server that ignores it,
or one whose own children (``npx`` starts ``node``) never hear of it, lives on. So each child has a small record, one
JSON file named by its pid in ``folder``: its pid and start time (``/proc/<pid>/stat`` field
22, clock ticks since boot), what it is, and the same two of the Cairn that started it. A
clean stop removes the record. ``end_leftovers``, run when Cairn starts, ends each recorded
child whose Cairn is gone and which is still the very process recorded (same start time, so
a pid the system has since given to another program is never touched): SIGTERM to its process
group, SIGKILL after a grace. A child of a Cairn that still runs (a window, while a command
starts) is left alone. Where there is no ``/proc`` (not Linux) nothing is recorded or ended.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from host.files import atomic_write_text

__all__ = ["ChildRecord", "Leftover", "start_time"]

log = logging.getLogger(__name__)

GRACE = 3.0  # seconds a leftover has to exit after SIGTERM


def start_time(pid: int) -> str | None:
    """When the process ``pid`` started, in clock ticks since boot; ``None`` when it does not
    run (or has exited and waits to be reaped), or where there is no ``/proc``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


@dataclass(frozen=True)
class Leftover:
    """A child an earlier Cairn left running, ended."""

    pid: int
    what: str


class ChildRecord:
    """The record of the children this Cairn runs, kept in ``folder``."""

    def __init__(self, folder: Path, *, grace: float = GRACE) -> None:
        self.folder = folder
        self._grace = grace

    def started(self, pid: int, what: str) -> None:
        """Record the child ``pid`` (``what``: "the MCP server time", say), just spawned."""
        started, owner = start_time(pid), start_time(os.getpid())
        if started is None or owner is None:
            return  # no /proc, or it has already exited
        entry = {"pid": pid, "start_time": started, "what": what, "owner_pid": os.getpid(), "owner_start_time": owner}
        try:
            atomic_write_text(self._file(pid), json.dumps(entry))
        except OSError as exc:  # a full disk: the child runs unrecorded, ended by PR_SET_PDEATHSIG alone
            log.warning("could not record %s (pid %d): %s", what, pid, exc.strerror)

    def ended(self, pid: int) -> None:
        """The child ``pid`` was stopped (or exited): forget it."""
        with contextlib.suppress(OSError):
            self._file(pid).unlink(missing_ok=True)

    def end_leftovers(self) -> list[Leftover]:
        """End the recorded children of Cairns that are gone, when they are still the processes
        recorded, and clear their records; each one ended is logged. Blocks up to the grace per
        child that ignores SIGTERM, so run it off the event loop."""
        if start_time(os.getpid()) is None:
            return []  # no /proc: nothing was recorded
        ended: list[Leftover] = []
        for file in sorted(self.folder.glob("*.json")):
            entry = _read(file)
            if entry is not None and start_time(entry.owner_pid) == entry.owner_start_time:
                continue  # its Cairn still runs, and stops it itself
            with contextlib.suppress(OSError):
                file.unlink()
            if entry is not None and start_time(entry.pid) == entry.start_time:
                self._end(entry.pid, entry.start_time)
                log.warning("ended %s (pid %d), left running by a Cairn that did not stop it", entry.what, entry.pid)
                ended.append(Leftover(entry.pid, entry.what))
        return ended

    def _end(self, pid: int, started: str) -> None:
        """SIGTERM, then SIGKILL after the grace, to the process and, when it leads its own
        group (a server is started in a session of its own), everything in that group."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if start_time(pid) != started:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(pid) == pid:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)
            deadline = time.monotonic() + self._grace
            while start_time(pid) == started and time.monotonic() < deadline:
                time.sleep(0.05)

    def _file(self, pid: int) -> Path:
        return self.folder / f"{pid}.json"


@dataclass(frozen=True)
class _Entry:
    pid: int
    start_time: str
    what: str
    owner_pid: int
    owner_start_time: str


def _read(file: Path) -> _Entry | None:
    """A record as written, ``None`` when it cannot be read (then it is only cleared)."""
    try:
        saved = json.loads(file.read_text(encoding="utf-8"))
        return _Entry(
            int(saved["pid"]),
            str(saved["start_time"]),
            str(saved["what"]),
            int(saved["owner_pid"]),
            str(saved["owner_start_time"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
