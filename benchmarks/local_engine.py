"""Time to first token and prompt tokens re-read on the built-in engine: a chat, a restart, a cold start.

    .venv/bin/python -m benchmarks.local_engine [--turns 30]

All real, on this CPU: the engine `make engine` built, the default model, Cairn's own path
(CairnApp, turns.send, the built-in route, its transport, the slot keeper), a temporary home,
one event loop, a fresh Root and CairnApp each phase. The chat: about 1,500 tokens of
instructions, short user turns, replies of at most 16 tokens, temperature 0.

1. Cairn: the chat through ``turns.send`` on a started engine with nothing cached, timed from
   the send to the first TextDelta. ``rewrite`` is emulated (the bench's runner replays only on
   a loopback provider of its own, unstreamed): each request is built as ``desktop.bench.runner.
   _replay`` builds it (every section folded from Cairn's rows rendered at the top, then Cairn's
   own turns and replies, projected for the built-in route) with the chat's parameters,
   streamed, and the custom instructions' first line changed before turns 4, 7, 10, ...
   (ENGINE-NOTES' experiment; Cairn's chat has no edit); sent straight to a fresh start of the
   same engine, a connection each, without the slot keeper, timed to the first streamed text.
2. Quit (``app.close()`` saves the slot's chat, stops the engine), reopen, start the engine, send
   the next message: with the saved state, then one turn later with the states deleted.
3. A new chat's first message on a fresh engine (its start included), resident memory, the
   saved states' disk use, the build time from build.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import shlex
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from unittest.mock import patch

import httpx

from desktop.app.cairn import CairnApp
from desktop.app.turns import SessionEvent
from desktop.bench.chat import WORDS, filler
from desktop.context.messages import Context, Message, SystemUpdatePart, message_from_row
from desktop.context.projection import project
from desktop.context.sections import INSTRUCTIONS, section_order
from desktop.context.system_state import SystemState
from desktop.engine.build_spec import installed_build
from desktop.engine.engine import Endpoint, ReadFigures
from desktop.engine.machine import physical_cores
from desktop.engine.states import SavedStates
from desktop.engine.transport import read_figures
from desktop.provider.usage import Usage
from desktop.root import Root
from desktop.session.chat_settings import RequestParameters
from desktop.settings.routes import ResolvedRoute
from desktop.settings.secrets import SecretStore
from desktop.settings.store import SettingsStore
from desktop.turn.events import RequestStarted, Retrying, TextDelta
from host.folds import fold_sections
from host.paths import CairnPaths
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter
from tests.fake_keyring import MemoryKeyring

SEED = "local-engine:20261130"
RULES = 46  # with Cairn's own instructions and a turn, a first prompt of about 1,500 tokens
MAX_OUTPUT = 16
CHANGE_EVERY = 3  # the rewrite host's instructions change before turns 4, 7, 10, ...
PARAMETERS = RequestParameters(temperature=0.0, max_output=MAX_OUTPUT)
REOPENED = {"with": "restart with states", "without": "restart without", "cold": "cold start"}


def instructions(edition: int) -> str:
    """The custom instructions; ``edition`` is in their first line, the one the edits change."""
    rng = random.Random(SEED)
    rules = [
        f"Rule {n}: when the {rng.choice(WORDS)} or the {rng.choice(WORDS)} comes up, answer plainly, in short "
        f"sentences, and say which {rng.choice(WORDS)} you mean."
        for n in range(1, RULES + 1)
    ]
    return "\n".join([f"Edition {edition} of these rules; keep to every one of them.", *rules])


@dataclass(frozen=True)
class Turn:
    ttft: float  # seconds to the first text
    usage: Usage
    read: ReadFigures | None  # the engine's own timings of the request
    requests: int = 1
    retries: int = 0


@dataclass
class Probe:
    """What a chat's turn reported since ``reset``: the first text, the requests, the retries."""

    first: float | None = None
    retries: int = 0
    bodies: list[bytes] = field(default_factory=list)

    def reset(self) -> None:
        self.first, self.retries, self.bodies = None, 0, []

    def see(self, event: object) -> None:
        inner = event.event if isinstance(event, SessionEvent) else None
        if isinstance(inner, TextDelta) and inner.text and self.first is None:
            self.first = time.perf_counter()
        self.bodies += [inner.body_bytes] if isinstance(inner, RequestStarted) else []
        self.retries += isinstance(inner, Retrying)


async def send(app: CairnApp, probe: Probe, session: str, text: str) -> Turn:
    """One turn through the front door, timed from the send to the first TextDelta."""
    engine = app.root.local_engine
    answers = engine.answers
    probe.reset()
    started = time.perf_counter()
    outcome = await app.turns.send(session, text)
    if not outcome.ok or probe.first is None:
        raise RuntimeError(f"A turn on the built-in engine failed: {outcome.error or 'no text arrived'}.")
    read = engine.status().read if engine.answers > answers else None
    return Turn(probe.first - started, outcome.usage, read, len(probe.bodies), probe.retries)


def rewrite_bodies(rows: list[TranscriptRow], route: ResolvedRoute) -> list[bytes]:
    """The ``rewrite`` host's request for each reply in ``rows``, built as the bench's ``_replay`` does."""
    bodies: list[bytes] = []
    for index, row in enumerate(rows):
        if row.role != "assistant" or row.hidden:
            continue
        before = rows[:index]
        state = fold_sections(before)
        state[INSTRUCTIONS] = SystemState(custom_instructions=instructions(len(bodies) // CHANGE_EVERY)).instructions()
        top = Message(role="system", parts=[SystemUpdatePart(section=k, content=state[k])
                                            for k in sorted(state, key=section_order)])  # fmt: skip
        rest = [m for m in (message_from_row(r) for r in before if r.role != "system") if m is not None]
        bodies.append(project(Context(messages=[top, *rest]), route, parameters=PARAMETERS).body_bytes)
    return bodies


async def stream_direct(http: httpx.AsyncClient, live: Endpoint, body: bytes) -> Turn:
    """``body`` streamed straight to the engine, timed from the request to the first text."""
    first, usage, timings = math.nan, Usage(), b""
    headers = {"authorization": f"Bearer {live.key}", "content-type": "application/json"}
    started = time.perf_counter()
    async with http.stream("POST", f"{live.url}/v1/chat/completions", content=body, headers=headers) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            data = line.removeprefix("data:").strip()
            event = json.loads(data) if data.startswith("{") else {}
            if math.isnan(first) and any((c.get("delta") or {}).get("content") for c in event.get("choices") or []):
                first = time.perf_counter()
            usage = Usage.from_payload(event["usage"]) if event.get("usage") else usage
            timings = data.encode() if "timings" in event else timings
    return Turn(first - started, usage, read_figures(timings))


class Bench:
    """The phases, in order, on one Cairn home; each opens a fresh Root and CairnApp."""

    def __init__(self, paths: CairnPaths, turns: int) -> None:
        self.paths, self.turns = paths, turns
        self.texts = [filler(random.Random(f"{SEED}:{n}"), n) for n in range(1, turns + 3)]
        self.roots: list[Root] = []
        self.session = ""
        self.cairn: list[Turn] = []
        self.rewrite: list[Turn] = []
        self.cairn_bodies: list[bytes] = []
        self.identical = 0  # rewrite requests equal to Cairn's, byte for byte, before the first edit
        self.starts: list[str] = []  # each start of the engine before a phase: launch to ready, seconds
        self.memory: dict[str, int | None] = {}
        self.closing = (0.0, 0, 0)  # app.close() after the chat: seconds, states saved, bytes on disk
        self.after: dict[str, tuple[Turn, str]] = {}  # REOPENED's messages: the turn, the slot keeper's finding
        self.folder = Path()  # the engine's state folder, root.slots.states.folder
        self.engine, self.note, self.interrupted = "", "", False

    @asynccontextmanager
    async def opened(self, probe: Probe, phase: str) -> AsyncIterator[CairnApp]:
        """A fresh Root and CairnApp; closing notes the engine's memory, saves the slot's chat, stops the engine."""
        root = Root(self.paths, secrets=SecretStore(MemoryKeyring()))
        self.roots.append(root)
        app = CairnApp(root, on_event=probe.see, titles=False)
        try:
            app.accounts.choose(app.local.ensure_account().id, None)
            await app.start()
            yield app
        finally:
            process = root.local_engine.process
            self.memory[phase] = process.memory() if process is not None else None
            try:
                await app.close()
            finally:
                await root.slots.close()  # a no-op after app.close(): the engine never outlives a phase
                root.close()

    async def start_engine(self, app: CairnApp) -> Endpoint:
        account, engine = app.local.ensure_account(), app.root.local_engine
        started = time.perf_counter()
        live = await engine.endpoint(account.default_model)
        self.starts.append(f"{time.perf_counter() - started:.2f}")
        if engine.model is not None and engine.process is not None:
            plan, variant = engine.model.plan(), engine.process.variant
            self.engine = f"{engine.model.title}; context {plan.context:,}, {plan.threads} threads, CPU code {variant}"
        self.note = self.note or engine.status().note
        return live

    def new_chat(self, app: CairnApp) -> str:
        session = app.chats.new().id
        app.options.set_settings(
            session, system_prompt=None, temperature=0.0, max_output=MAX_OUTPUT, reasoning_effort=None
        )
        return session

    async def run(self) -> None:
        # Ctrl-C cancels the phase in hand, whose close still stops the engine. (A terminal's Ctrl-C
        # reaches the engine too, so the turn in flight may fail first; that is the interruption too.)
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self.interrupt, asyncio.current_task())
        store = SettingsStore(self.paths.config_dir / "settings.json")
        store.save(store.load().model_copy(update={"custom_instructions": instructions(0), "auto_titles": "off"}))
        await self.cairn_chat()
        await self.rewrite_chat()
        await self.reopened(self.texts[self.turns], "with")
        await self.reopened(self.texts[self.turns + 1], "without")
        await self.reopened(self.texts[0], "cold")

    async def cairn_chat(self) -> None:
        probe = Probe()
        async with self.opened(probe, "Cairn's chat") as app:
            await self.start_engine(app)
            self.session = self.new_chat(app)
            for number, text in enumerate(self.texts[: self.turns], 1):
                self.cairn.append(await send(app, probe, self.session, text))
                self.cairn_bodies.append(probe.bodies[-1])
                say(f"Cairn, turn {number}: {self.cairn[-1].ttft:.2f} s")
            slots, saves, closing = app.root.slots, app.root.slots.saves, time.perf_counter()
        self.closing = (time.perf_counter() - closing, slots.saves - saves, slots.states.disk_use())

    async def rewrite_chat(self) -> None:
        async with self.opened(Probe(), "rewrite's chat") as app:
            account = app.local.ensure_account()
            rows = TranscriptWriter(app.root.open_journal()).model_order(self.session)
            bodies = rewrite_bodies(rows, app.root.route(account))
            self.identical = sum(a == b for a, b in zip(bodies[:CHANGE_EVERY], self.cairn_bodies, strict=False))
            live = await self.start_engine(app)
            # A connection a request: the engine can drop a kept-alive connection that is reused at once.
            async with httpx.AsyncClient(timeout=600.0, limits=httpx.Limits(max_keepalive_connections=0)) as http:
                for number, body in enumerate(bodies, 1):
                    self.rewrite.append(await stream_direct(http, live, body))
                    say(f"rewrite, turn {number}: {self.rewrite[-1].ttft:.2f} s")

    async def reopened(self, text: str, case: str) -> None:
        """The chat's next message on a fresh engine ``with`` or ``without`` the saved states, or a new chat's first."""
        probe = Probe()
        async with self.opened(probe, REOPENED[case]) as app:
            self.folder = app.root.slots.states.folder
            for path in self.folder.glob("*") if case == "without" else []:
                path.unlink()
            if case != "cold":
                await self.start_engine(app)
            session = self.new_chat(app) if case == "cold" else self.session
            self.after[case] = (await send(app, probe, session, text), app.root.slots.last)
            say(f"{REOPENED[case]}: {self.after[case][0].ttft:.2f} s")

    def interrupt(self, task: asyncio.Task[None]) -> None:
        self.interrupted = True
        task.cancel()

    def end_leftovers(self) -> None:
        """Kill an engine a phase left running (a close cut short), by its own pid."""
        for process in (root.local_engine.process for root in self.roots):
            with suppress(OSError):
                if process and process.pid and b"llama-server" in Path(f"/proc/{process.pid}/cmdline").read_bytes():
                    os.kill(process.pid, signal.SIGKILL)


def say(text: str) -> None:
    print(f"[{text}]", file=sys.stderr, flush=True)


def machine() -> str:
    info = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace").splitlines()
    model = next((line.partition(":")[2].strip() for line in info if line.startswith("model name")), "unknown CPU")
    return f"{model}; {os.cpu_count()} logical CPUs, {physical_cores()} physical cores"


def cells(turn: Turn) -> str:
    return f"{turn.ttft:>10.2f}{turn.usage.uncached_tokens:>10,}{turn.usage.cached_tokens:>10,}  "


def check(text: str, failures: list[str]) -> None:
    print(f"   {text}: {'NO, ' + '; '.join(failures[:5]) if failures else 'yes'}")


def overall(chat: list[Turn]) -> Turn:  # the median time to first token, the tokens summed
    return Turn(statistics.median(t.ttft for t in chat), sum((t.usage for t in chat), Usage()), None)


def report_chat(bench: Bench) -> None:
    cairn, rewrite, turns = bench.cairn, bench.rewrite, bench.turns
    print(f"\n1. A {turns}-turn chat: time to first token, and prompt tokens the engine re-read and reused")
    print(f"   {'':6}{'Cairn (append-only)':^30}  {'rewrite (emulated)':^30}".rstrip())
    print((f"   {'turn':>6}" + f"{'TTFT s':>10}{'re-read':>10}{'reused':>10}  " * 2).rstrip())
    for n in sorted({n for n in (1, 10, 30, turns) if n <= turns}):
        print(f"   {n:>6}{cells(cairn[n - 1])}{cells(rewrite[n - 1])}".rstrip())
    print(f"   {'all':>6}{cells(overall(cairn))}{cells(overall(rewrite))}(the median TTFT, the tokens summed)")
    ratio = overall(rewrite).usage.uncached_tokens / max(1, overall(cairn).usage.uncached_tokens)
    slow = max(range(turns), key=lambda i: rewrite[i].ttft)
    print(f"   rewrite re-read {ratio:.1f} x Cairn's tokens; its slowest: turn {slow + 1}, {rewrite[slow].ttft:.2f} s")
    print(f"   rewrite, emulated: bench _replay's requests, the instructions' first line changed every {CHANGE_EVERY} "
          f"turns, straight to\n   a fresh engine; before the first change, {bench.identical} of "
          f"{min(CHANGE_EVERY, turns)} equal Cairn's requests byte for byte")  # fmt: skip
    last, limit = cairn[-1].ttft, 1.5 * cairn[0].ttft
    check(f"goal: Cairn's TTFT at turn {turns} within 1.5 x turn 1's: {last:.2f} s against {limit:.2f} s",
          [] if last <= limit else ["slower"])  # fmt: skip
    # A turn's own tokens: what its prompt adds to the previous prompt (the last reply, the new message).
    pairs = [(t.usage.uncached_tokens, t.usage.prompt_tokens - p.usage.prompt_tokens) for p, t in pairwise(cairn)]
    over = [f"turn {n}: {read} vs {own}" for n, (read, own) in enumerate(pairs, 2) if read > own]
    check(f"goal: Cairn re-read no more than each turn's own new tokens (its prompt less the last), turns 2-{turns}",
          over)  # fmt: skip
    both = [("Cairn", n, t) for n, t in enumerate(cairn, 1)] + [("rewrite", n, t) for n, t in enumerate(rewrite, 1)]
    check("check: usage (uncached, cached) = timings (prompt_n, cache_n) on every request", [
        f"{name} {n}" for name, n, t in both
        if not t.read or (t.read.read, t.read.reused) != (t.usage.uncached_tokens, t.usage.cached_tokens)
    ])  # fmt: skip
    check("check: one request and no retry on each of Cairn's turns", [
        f"turn {n}: {t.requests} requests, {t.retries} retries" for n, t in enumerate(cairn, 1)
        if t.requests != 1 or t.retries
    ])  # fmt: skip


def report_restart(bench: Bench) -> None:
    warm = statistics.median(t.ttft for t in bench.cairn[1:]) if len(bench.cairn) > 1 else math.nan
    seconds, saves, disk = bench.closing
    print("\n2. The next message after quitting: a fresh Root and CairnApp on the same home, the engine started first")
    print(f"   app.close() after the chat took {seconds:.2f} s and saved {saves} state ({disk / 1e6:,.1f} MB on disk)")
    print(f"   {'':32}{'TTFT s':>10}{'re-read':>10}{'reused':>10}  the slot keeper")
    for key, label in (("with", "with the saved state"), ("without", "without (the turn after)")):
        turn, found = bench.after[key]
        print(f"   {label:32}{cells(turn)}{found}")
    ttft, limit = bench.after["with"][0].ttft, 1.5 * warm
    check(f"goal: with the saved state within 1.5 x a warm turn (Cairn's median, turns 2-{bench.turns}: "
          f"{warm:.2f} s): {ttft:.2f} s against {limit:.2f} s", [] if ttft <= limit else ["slower"])  # fmt: skip


def report_engine(bench: Bench) -> None:
    build, cold = installed_build(), bench.after["cold"][0]
    print("\n3. The engine")
    print(f"   cold start, a new chat's first message on a fresh engine: {cold.ttft:.2f} s from the send to the first "
          f"token\n   ({cold.usage.uncached_tokens:,} prompt tokens read)")  # fmt: skip
    note = f"\n   (the first, on a new home: {bench.note})" if bench.note else ""
    print(f"   engine start, launch to ready, before phases 1, 2 and each restart: {', '.join(bench.starts)} s{note}")
    print("   resident memory at the end of each phase, MiB: " + ", ".join(
        f"{phase} {value / 2**20:,.0f}" for phase, value in bench.memory.items() if value))  # fmt: skip
    states = SavedStates(bench.folder, budget=0)
    print(f"   saved states on disk at the end: {len(states.states())}, {states.disk_use() / 1e6:,.1f} MB")
    compiled = build.manifest.get("compile_seconds") if build is not None else None
    print(f"   build {build.label if build else '(none)'}: compile_seconds {compiled} (its build.json)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, choices=range(1, 51), metavar="1-50", help="default 30")
    args = parser.parse_args()
    print(f"command: {shlex.join(sys.orig_argv)}")
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f} at the start")
    if installed_build() is None:
        print("The built-in engine is not built: run `make engine` first.", file=sys.stderr)
        return 1
    try:
        with tempfile.TemporaryDirectory(prefix="cairn-local-engine-") as folder, patch.dict(os.environ):
            os.environ["CAIRN_HOME"] = str(Path(folder) / "home")
            bench = Bench(CairnPaths.from_env(), args.turns)
            try:
                asyncio.run(bench.run())
            except BaseException:
                if not bench.interrupted:
                    raise
                raise KeyboardInterrupt from None
            finally:
                bench.end_leftovers()
            print(f"engine: {bench.engine}; load average {os.getloadavg()[0]:.2f} at the end")
            report_chat(bench)
            report_restart(bench)
            report_engine(bench)
    except KeyboardInterrupt:
        print("interrupted: the engine is stopped and the temporary home removed", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
