"""Skills by the thousand: what 10, 100 and 1,000 skills cost a chat's requests.

    .venv/bin/python -m benchmarks.skills_scale [--counts 10 100 1000] [--repeat 200] [--chats 5]

For each count, a temporary skills folder holds that many skills (a ``SKILL.md`` of about
1.5 KB each, a description of about 120 characters), and Cairn's real runtime chats with the
loopback provider over real HTTP, with the skills budget at its default. Prints:

- the first request of a new chat: its body in bytes, and how many skills it lists;
- the scan before every request with nothing changed on disk: CPU time, median and p95 of
  ``--repeat`` scans (the context engine's, as a request makes it, with the folder watch
  where the system has one), and the median without the watch (each skill looked at by its
  stamps, as on a system without one or for skills on a network drive);
- a new chat's first turn: CPU time of the thread that runs it (preparing the request and
  committing its sections, sending it, streaming and committing the reply; the loopback
  provider runs on a thread of its own and is not counted), for the first chat of a fresh
  Cairn (its skills scanned for the first time) and the median of ``--chats`` new chats after it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SystemState
from desktop.loopback import LoopbackProvider
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.routes import resolve_route
from desktop.settings.store import Account
from desktop.turn.runtime import ChatRuntime
from host.journal import Journal
from host.paths import CairnPaths
from host.skills import SkillStore
from host.transcript import TranscriptWriter

VERBS = ("draft", "review", "plan", "check", "summarise", "translate", "format", "audit", "index", "test")
THINGS = ("release-notes", "invoices", "trail-maps", "recipes", "contracts", "photos", "budgets", "logs")
STEPS = "".join(f"{n}. Read the request, then do step {n} with care and say what was done.\n" for n in range(1, 21))


@dataclass(frozen=True)
class Figures:
    skills: int
    request_bytes: int
    listed: int
    scans_ms: list[float]
    unwatched_ms: list[float]
    first_turn_ms: float
    later_turns_ms: list[float]


def write_skills(folder: Path, count: int) -> None:
    for n in range(count):
        verb, thing = VERBS[n % len(VERBS)], THINGS[n // len(VERBS) % len(THINGS)]
        name = f"{verb}-{thing}-{n}"
        what = thing.replace("-", " ")
        description = f"How to {verb} {what} the way this team does it, with the steps, the checks and a template."
        (folder / name).mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{STEPS}"
        (folder / name / "SKILL.md").write_text(text, encoding="utf-8")


def milliseconds_of(started: float) -> float:
    return (time.thread_time() - started) * 1000


def timed_scans(scan: Callable[[], object], repeat: int) -> list[float]:
    """CPU milliseconds of each of ``repeat`` calls of ``scan``."""
    times = []
    for _ in range(repeat):
        started = time.thread_time()
        scan()
        times.append(milliseconds_of(started))
    return times


async def measure(count: int, home: Path, provider: LoopbackProvider, repeat: int, chats: int) -> Figures:
    paths = CairnPaths.under(home)
    write_skills(paths.skills_dir, count)
    account = Account(name="Bench", provider="custom", base_url=provider.base_url, default_model="loopback-chat")
    route = resolve_route(account, None, load_transport_catalog(), load_models_dev(paths.cache_dir))
    state = SystemState(environment="The person uses Linux.", skill_roots=(("user", paths.skills_dir),))
    engine = ContextEngine()
    turns, sizes, listed = [], [], 0
    with Journal.open(paths.journal) as journal:
        async with httpx.AsyncClient(timeout=60) as http:
            client = OpenAICompatClient(http, route.actual.base_url, api_key=None)
            runtime = ChatRuntime(journal, route, client, engine=engine, system=lambda: state)
            for _ in range(chats + 1):
                session = journal.create_session().id
                seen = len(provider.requests)
                started = time.thread_time()
                outcome = await runtime.send(session, "Plan a walk along the ridge for Saturday.")
                turns.append(milliseconds_of(started))
                if not outcome.ok:
                    raise SystemExit(f"the turn failed: {outcome.error}")
                sizes.append(len(provider.requests[seen].body_bytes))
                sections = TranscriptWriter(journal).effective_state(session)
                listed = sum(1 for name in sections if name.startswith("skill:"))
    scans = timed_scans(lambda: engine.skills(state), repeat)
    unwatched = SkillStore(list(state.skill_roots), watch=False)
    unwatched.scan()
    stamps_only = timed_scans(unwatched.scan, repeat)
    return Figures(count, sizes[0], listed, scans, stamps_only, turns[0], turns[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=200, help="scans timed for each count")
    parser.add_argument("--chats", type=int, default=5, help="new chats timed after the first")
    args = parser.parse_args()
    results = []
    with LoopbackProvider() as provider:
        for count in args.counts:
            with tempfile.TemporaryDirectory() as folder:
                results.append(asyncio.run(measure(count, Path(folder), provider, args.repeat, args.chats)))
    budget = getattr(SystemState(), "skills_listed", "all")  # "all": a Cairn from before the budget
    print(f"skills at scale: the budget lists {budget} skills; CPU times of this thread")
    print(f"{'skills':>6}  {'1st request':>11} {'listed':>6}  {'scan median':>11} {'p95':>8} {'no watch':>9}  "
          f"{'1st chat':>9} {'new chat':>9}")  # fmt: skip
    for f in results:
        scans = sorted(f.scans_ms)
        p95 = scans[min(len(scans) - 1, round(0.95 * (len(scans) - 1)))]
        print(
            f"{f.skills:>6,}  {f.request_bytes:>9,} B {f.listed:>6}  {statistics.median(scans):>8.2f} ms "
            f"{p95:>5.2f} ms {statistics.median(f.unwatched_ms):>6.2f} ms  "
            f"{f.first_turn_ms:>6.1f} ms {statistics.median(f.later_turns_ms):>6.1f} ms"
        )


if __name__ == "__main__":
    main()
