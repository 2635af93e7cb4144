"""The built-in engine as a service: one model loaded at a time, started on first use.

``endpoint(model)`` is the one way in: it returns the running server's URL and key for that
model, starting the engine (or swapping the model) first. The port and key change with each
start and never leave this room and the built-in route's transport: no route, epoch, prefix
hash or keychain entry ever holds them (architecture §9).

A server that dies is restarted once, at once, with the reason kept for the status bar; a
second death within a minute leaves it stopped until the next request. A CPU library that
dies with an illegal instruction (a variant the processor claims but the machine does not
allow, as AMX in some virtual machines) is left out from then on and the next one down used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from desktop.engine.build_spec import EngineBuild
from desktop.engine.library import LibraryError, ModelEntry, ModelLibrary
from desktop.engine.machine import LoadPlan, available_memory
from desktop.engine.process import EngineProcess, EngineStartError, Launch
from desktop.engine.states import EngineFacts
from host.children import ChildRecord
from host.errors import CairnError

__all__ = ["Endpoint", "Engine", "EngineError", "EngineStatus", "ReadFigures"]

log = logging.getLogger(__name__)

CACHE_TYPE = "f16"  # the server's default KV cache type; Cairn does not change it
STABLE_AFTER = 60.0  # seconds: a server that ran this long has earned another restart
NOT_BUILT = (
    "Cairn's built-in engine is not built on this computer. Run `make engine` in Cairn's folder (it needs a C++ "
    "compiler and CMake: on Debian or Ubuntu, sudo apt install build-essential cmake ninja-build)."
)


class EngineError(CairnError):
    """The engine cannot serve this request; the message says why and what to do."""


@dataclass(frozen=True)
class Endpoint:
    url: str
    key: str


@dataclass(frozen=True)
class EngineStatus:
    """What the status bar shows of the engine."""

    state: str  # "stopped", "loading", "ready"
    model: str | None = None
    memory: int | None = None
    note: str = ""  # the last crash or fallback, in words
    read: ReadFigures | None = None  # what the last request cost the engine
    answers: int = 0  # requests answered since Cairn started: a new figure comes with a new count

    def words(self) -> str:
        if self.state == "loading":
            return f"Loading {self.model}…"
        if self.state == "ready":
            used = f" · {self.memory / 2**20:,.0f} MiB" if self.memory else ""
            return f"Engine: {self.model}{used}"
        return self.note or "Engine: not running"


@dataclass(frozen=True)
class ReadFigures:
    """The engine's own counters for one request: prompt tokens reused from its cache, and
    those it read, in how long (llama.cpp's ``timings``: cache_n, prompt_n, prompt_ms)."""

    reused: int
    read: int
    seconds: float

    def words(self) -> str:
        return f"reused {self.reused:,} tokens, read {self.read:,} in {self.seconds:.1f} s"


class Engine:
    """The engine for one Cairn home. ``state_dir`` holds its working folder; ``slots`` its saved states."""

    def __init__(
        self,
        build: EngineBuild | None,
        library: ModelLibrary,
        *,
        state_dir: Path,
        log_dir: Path,
        http: Callable[[], httpx.AsyncClient],
        on_change: Callable[[EngineStatus], None] | None = None,
        available: Callable[[], int | None] = available_memory,
        children: ChildRecord | None = None,
    ) -> None:
        """``children``: where the server's process is recorded while it runs (the root's
        record; one of its own in ``state_dir`` without one)."""
        self.build, self.library = build, library
        self.children = children or ChildRecord(state_dir / "children")
        self.state_dir, self.log_dir = state_dir, log_dir
        self.slots = state_dir / "slots"
        self._http = http
        self._available = available  # memory free now; a seam for tests of the refusal
        self._on_change = on_change or (lambda status: None)
        self._lock = asyncio.Lock()
        self._process: EngineProcess | None = None
        self._model: ModelEntry | None = None
        self._plan: LoadPlan | None = None
        self._watch: asyncio.Task[None] | None = None
        self._loading: str | None = None
        self._note = ""
        self._crashes: list[float] = []
        self._read: ReadFigures | None = None
        self.answers = 0
        self.restarts = 0
        self.starts = 0

    # -- facts ---------------------------------------------------------------------------------

    @property
    def model(self) -> ModelEntry | None:
        return self._model if self.running else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def process(self) -> EngineProcess | None:
        return self._process

    def current(self) -> Endpoint | None:
        """The running server's endpoint, without starting anything."""
        if not self.running or self._process is None:
            return None
        return Endpoint(self._process.url, self._process.key)

    def facts(self) -> EngineFacts | None:
        """What the running server's cache depends on besides the prompt (a saved state's key)."""
        if not self.running or self._model is None or self._plan is None or self.build is None:
            return None
        return EngineFacts(
            model=self._model.sha256,
            build=self.build.label,
            context=self._plan.context,
            cache_type=CACHE_TYPE,
            attention="swa-full" if self._model.sliding_window else "full",
        )

    def status(self) -> EngineStatus:
        if self._loading:
            return EngineStatus("loading", self._loading, note=self._note)
        if self.running and self._model is not None and self._process is not None:
            memory = self._process.memory()
            return EngineStatus("ready", self._model.title, memory, self._note, self._read, self.answers)
        return EngineStatus("stopped", note=self._note)

    def answered(self, read: ReadFigures | None) -> None:
        """A request ended; ``read`` is what the engine said it cost. Tells the watchers (the
        engine's memory grows with what it has cached)."""
        self._read = read or self._read
        self.answers += 1 if read else 0
        self._changed()

    def plan(self, entry: ModelEntry) -> LoadPlan:
        """How ``entry`` would start now, with the memory free at this moment."""
        return entry.plan(self._available())

    # -- lifecycle -------------------------------------------------------------------------------

    def end_leftovers(self) -> None:
        """End what an earlier Cairn of this home left running (it was killed, say), its engine
        above all, before a start needs the memory; each is logged (``host.children``)."""
        self.children.end_leftovers()

    async def endpoint(self, sha256: str) -> Endpoint:
        """The running server for the model ``sha256``, started or swapped in first."""
        async with self._lock:
            if self.running and self._model is not None and self._model.sha256 == sha256:
                assert self._process is not None
                return Endpoint(self._process.url, self._process.key)
            entry = self.library.find(sha256)
            if entry is None:
                raise EngineError(
                    f"The built-in engine has no model {sha256!r} in its library (a model the chat used was removed, "
                    "or the name was typed). Choose one of its models in the route bar, or add a GGUF file in "
                    "Settings → Models."
                )
            try:
                entry = self.library.verify(entry)
            except LibraryError as exc:
                raise EngineError(str(exc)) from exc
            await self._stop_locked()
            await self._start_locked(entry)
            assert self._process is not None
            return Endpoint(self._process.url, self._process.key)

    async def _start_locked(self, entry: ModelEntry) -> None:
        if self.build is None:
            raise EngineError(NOT_BUILT)
        plan = self.plan(entry)
        if not plan.fits:
            raise EngineError(plan.refusal(entry.title))
        self.end_leftovers()
        self._loading = entry.title
        self._changed()
        try:
            for _ in range(3):  # a CPU library that dies is left out, and the next one tried
                process = EngineProcess(self._launch(entry, plan))
                try:
                    await process.start(self._http())
                    break
                except EngineStartError as exc:
                    if not self._left_out(process):
                        raise EngineError(str(exc)) from exc
            else:
                raise EngineError(f"Cairn's engine could not start on this processor. Its log is {process.launch.log}.")
        finally:
            self._loading = None
        self._process, self._model, self._plan = process, entry, plan
        self.starts += 1
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit(process))
        self._changed()

    def _left_out(self, process: EngineProcess) -> bool:
        """After an illegal instruction, leave the CPU library it ran out; whether one was."""
        if process.returncode != -signal.SIGILL or not process.variant:
            return False
        excluded = self._excluded() | {process.variant}
        self._save_excluded(excluded)
        self._note = (
            f"The engine's {process.variant} CPU code does not run on this machine; Cairn uses the next one down."
        )
        log.warning("CPU variant %s died with SIGILL; left out from now on", process.variant)
        return True

    def _launch(self, entry: ModelEntry, plan: LoadPlan) -> Launch:
        assert self.build is not None
        self.slots.mkdir(parents=True, exist_ok=True)
        arguments = [
            "--model", str(entry.file),
            "--ctx-size", str(plan.context),
            "--threads", str(plan.threads),
            "--batch-size", str(plan.batch),
            "--parallel", "1",  # one slot: one chat at a time, whose state is saved and restored
            "--slot-save-path", str(self.slots),
            # No second cache of old prompts in memory (up to 8 GiB by default): the slot
            # keeper keeps them on disk, and the memory figure stays the one the plan made.
            "--cache-ram", "0",
            "--no-webui",
            "--jinja",
        ]  # fmt: skip
        if entry.sliding_window:
            # Sliding-window attention would drop what a cached prefix needs; keep the full cache.
            arguments.append("--swa-full")
        template = entry.chat_template_file()
        if template is not None:
            arguments += ["--chat-template-file", str(template)]
        return Launch(
            server=self._server(),
            arguments=tuple(arguments),
            log=self.log_dir / "engine.log",
            children=self.children,
            workdir=self.state_dir / "run",
        )

    def _server(self) -> Path:
        """The server to run: the build's own, or a copy that leaves out the CPU libraries that
        died here (the engine picks its CPU library from the folder the server is in)."""
        assert self.build is not None
        excluded = self._excluded()
        if not excluded:
            return self.build.server
        folder = self.state_dir / f"bin-{self.build.key}-{'-'.join(sorted(excluded))}"
        if not (folder / self.build.server.name).exists():
            staging = folder.with_name(folder.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            shutil.copytree(
                self.build.folder,
                staging,
                symlinks=True,
                ignore=lambda _dir, names: [n for n in names if any(f"cpu-{v}." in n for v in excluded)],
            )
            os.replace(staging, folder)
        return folder / self.build.server.name

    def _excluded(self) -> frozenset[str]:
        try:
            return frozenset(json.loads((self.state_dir / "cpu-excluded.json").read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return frozenset()

    def _save_excluded(self, excluded: frozenset[str]) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        (self.state_dir / "cpu-excluded.json").write_text(json.dumps(sorted(excluded)), encoding="utf-8")

    async def _watch_exit(self, process: EngineProcess) -> None:
        """Restart a server that died on its own, once; say why it died."""
        await process.wait()
        if self._process is not process:
            return  # stopped on purpose
        reason = process.exit_reason()
        log.warning("%s", reason)
        now = time.monotonic()
        self._crashes = [t for t in self._crashes if now - t < STABLE_AFTER] + [now]
        entry = self._model
        self._process = None
        if entry is None or len(self._crashes) > 1:
            self._note = f"{reason} It stopped again soon after a restart, so Cairn will start it on the next message."
            self._changed()
            return
        self._note = f"{reason} Cairn restarted it."
        async with self._lock:
            if self._process is None:
                try:
                    await self._start_locked(entry)
                    self.restarts += 1
                except CairnError as exc:
                    self._note = f"{reason} Restarting it failed: {exc}"
        self._changed()

    async def unload(self) -> None:
        """Stop the engine and free its memory; the next message starts it again. A stop on
        purpose clears the last crash's note: there is nothing left to explain."""
        async with self._lock:
            await self._stop_locked()
        self._note = ""
        self._changed()

    async def _stop_locked(self) -> None:
        process, self._process = self._process, None
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
        if process is not None:
            await process.stop()

    async def stop(self) -> None:
        await self.unload()

    def _changed(self) -> None:
        with contextlib.suppress(Exception):
            self._on_change(self.status())
