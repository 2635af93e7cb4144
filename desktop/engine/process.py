"""One start of `llama-server`, owned by Cairn like an MCP server.

Each start gets a free loopback port and a fresh random key, so no other program on the
computer can use it. On Linux the server is told to die with the thread that started it
(``PR_SET_PDEATHSIG``); and it is in the record of Cairn's children (``host.children``) while
it runs, so a server left behind by a Cairn that was killed is ended at the next start, and
never a stranger's process that happens to reuse the pid, nor the server of a Cairn that
still runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import secrets
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from host.children import ChildRecord
from host.errors import CairnError

__all__ = ["EngineProcess", "EngineStartError", "Launch", "free_port"]

READY_TIMEOUT = 180.0  # a large model read from a slow disk takes a while
STOP_GRACE = 5.0
_VARIANT = re.compile(r"libggml-cpu-([a-z0-9_.]+)\.so")


class EngineStartError(CairnError):
    """The engine did not start; the message says why, from the engine's own words."""


@dataclass(frozen=True)
class Launch:
    """Everything a start needs; ``arguments`` leave out the port and key, added per start."""

    server: Path
    arguments: tuple[str, ...]
    log: Path
    children: ChildRecord  # where the server's process is recorded while it runs
    workdir: Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class EngineProcess:
    """A running server: its endpoint, its key and its process."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.port = free_port()
        self.key = secrets.token_urlsafe(24)
        self.url = f"http://127.0.0.1:{self.port}"
        self.variant: str | None = None  # the CPU library the server loaded, once seen
        self._child: asyncio.subprocess.Process | None = None
        self.started_at = 0.0

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child else None

    @property
    def returncode(self) -> int | None:
        return self._child.returncode if self._child else None

    async def start(self, http: httpx.AsyncClient) -> None:
        """Start the server and wait until it has loaded the model; ``EngineStartError`` else."""
        self.launch.log.parent.mkdir(parents=True, exist_ok=True)
        self.launch.workdir.mkdir(parents=True, exist_ok=True)
        arguments = [*self.launch.arguments, "--host", "127.0.0.1", "--port", str(self.port)]
        env = {**os.environ, "LLAMA_API_KEY": self.key}  # never on the command line, where ps shows it
        with self.launch.log.open("wb") as log:
            self._child = await asyncio.create_subprocess_exec(
                str(self.launch.server),
                *arguments,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.launch.workdir,  # an empty folder: the engine also looks for CPU libraries here
                env=env,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
                # Its own session: a Ctrl-C in Cairn's terminal is Cairn's to handle, and Cairn then
                # saves the chat before it stops the engine (the engine would otherwise stop first).
                start_new_session=True,
            )
        self.started_at = time.monotonic()
        self._record()
        await self._wait_ready(http)

    def _record(self) -> None:
        assert self._child is not None
        self.launch.children.started(self._child.pid, f"the built-in engine ({self.launch.server})")

    async def _wait_ready(self, http: httpx.AsyncClient) -> None:
        assert self._child is not None
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            self._see_variant()
            if self._child.returncode is not None:
                self.launch.children.ended(self._child.pid)
                raise EngineStartError(self.exit_reason())
            with contextlib.suppress(httpx.HTTPError):
                answer = await http.get(f"{self.url}/health", timeout=2.0)
                if answer.status_code == 200:
                    return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._child.wait(), 0.1)
        await self.stop()
        raise EngineStartError(
            f"Cairn's engine did not finish loading the model within {READY_TIMEOUT:.0f} seconds. Its log is "
            f"{self.launch.log}."
        )

    def _see_variant(self) -> None:
        if self.variant or self.pid is None:
            return
        with contextlib.suppress(OSError):
            found = _VARIANT.search(Path(f"/proc/{self.pid}/maps").read_text(encoding="ascii", errors="replace"))
            self.variant = found.group(1) if found else None

    def exit_reason(self) -> str:
        """Why the server ended, in words, with the last thing it said."""
        code = self.returncode
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                how = f"was stopped by {signal.Signals(-code).name}"
        else:
            how = f"exited with status {code}"
        said = self.last_words()
        return f"Cairn's engine {how}" + (f": {said}" if said else ".") + f" Its log is {self.launch.log}."

    def last_words(self) -> str:
        """The last error line of the server's log, else its last line."""
        try:
            lines = self.launch.log.read_text(encoding="utf-8", errors="replace").splitlines()[-40:]
        except OSError:
            return ""
        errors = [ln for ln in lines if " E " in ln or "error" in ln.lower()]
        chosen = (errors or lines or [""])[-1]
        return re.sub(r"^\d+\.\d+\.\d+\.\d+ [A-Z] ", "", chosen).strip()[:300]

    def memory(self) -> int | None:
        """The server's resident memory in bytes (Linux), ``None`` where unknown."""
        if self.pid is None or self.returncode is not None:
            return None
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text(encoding="ascii").splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError):
            return None
        return None

    async def wait(self) -> int:
        """The server's exit status, once it has exited (its record then goes)."""
        assert self._child is not None
        code = await self._child.wait()
        self.launch.children.ended(self._child.pid)
        return code

    async def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period; its record goes with it."""
        child = self._child
        if child is not None and child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.terminate()
            try:
                await asyncio.wait_for(child.wait(), STOP_GRACE)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    child.kill()
                await child.wait()
        if child is not None:
            self.launch.children.ended(child.pid)
