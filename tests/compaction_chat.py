"""A long chat on a small context, for the compaction tests, the kill test and the benchmark,
and the runtime and journal reads those tests use around it.

    python -m tests.compaction_chat --home H --base-url U --session S --turns 0:200 [--limit 8000]

Each turn's message is a few sentences long, so the chat outgrows an 8,000-token context many
times over. (CAIRN_HOME is not read: ``--home`` is the Cairn home.)
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import httpx

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SystemState
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.routes import ResolvedRoute, resolve_route
from desktop.settings.store import Account
from desktop.turn.events import RuntimeEvent
from desktop.turn.runtime import ChatRuntime
from host.content import Checkpoint
from host.journal import Journal
from host.paths import CairnPaths
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter

MODEL = "loopback-chat"
LIMIT = 8_000

T = TypeVar("T")


def message(turn: int) -> str:
    return (
        f"Turn {turn}. Tell me about cairn number {turn}: who built it, how tall it stands, which trail it marks "
        f"and what the walkers who pass it on day {turn} should know about the weather up there."
    )


def account(base_url: str, limit: int = LIMIT) -> Account:
    return Account(id="account-compaction", name="Loopback", provider="custom", base_url=base_url,
                   default_model=MODEL, context_limit=limit)  # fmt: skip


def route(base_url: str, home: Path, limit: int = LIMIT, catalog: Path | None = None) -> ResolvedRoute:
    paths = CairnPaths.under(home)
    transport = load_transport_catalog(catalog) if catalog else load_transport_catalog()
    return resolve_route(account(base_url, limit), None, transport, load_models_dev(paths.cache_dir))


def state(home: Path) -> SystemState:
    paths = CairnPaths.under(home)
    return SystemState(environment="The person uses Linux.", skill_roots=(("user", paths.skills_dir),))


def new_session(home: Path) -> str:
    with Journal.open(CairnPaths.under(home).journal) as journal:
        return journal.create_session().id


def journal_rows(home: Path, session: str) -> list[TranscriptRow]:
    """The chat's rows in model order, read from its journal as a restarted Cairn would."""
    with Journal.open(CairnPaths.under(home).journal) as journal:
        return TranscriptWriter(journal).model_order(session)


def checkpoints(home: Path, session: str) -> list[Checkpoint]:
    return [m for r in journal_rows(home, session) if isinstance(m := r.meta(), Checkpoint)]


@asynccontextmanager
async def open_runtime(
    home: Path,
    base_url: str,
    *,
    limit: int = LIMIT,
    on_event: Callable[[RuntimeEvent], None] | None = None,
    engine: ContextEngine | None = None,
    catalog: Path | None = None,
) -> AsyncIterator[ChatRuntime]:
    """A runtime on the journal under ``home``, routed to the loopback provider at ``base_url``."""
    paths = CairnPaths.under(home)
    the_route = route(base_url, home, limit, catalog)
    with Journal.open(paths.journal) as journal:
        async with httpx.AsyncClient(timeout=30) as http:
            client = OpenAICompatClient(http, the_route.actual.base_url, api_key=None)
            yield ChatRuntime(journal, the_route, client, engine=engine or ContextEngine(),
                              system=lambda: state(home), on_event=on_event)  # fmt: skip


async def with_runtime(home: Path, base_url: str, run: Callable[[ChatRuntime], Awaitable[T]]) -> T:
    """``run`` on a fresh runtime (a Cairn started for it) and what it returned."""
    async with open_runtime(home, base_url) as runtime:
        return await run(runtime)


async def drive(
    home: Path,
    base_url: str,
    session_id: str,
    turns: range,
    *,
    limit: int = LIMIT,
    on_event: Callable[[RuntimeEvent], None] | None = None,
    engine: ContextEngine | None = None,
    catalog: Path | None = None,
    text: Callable[[int], str] = message,
) -> None:
    async with open_runtime(home, base_url, limit=limit, on_event=on_event, engine=engine, catalog=catalog) as runtime:
        for turn in turns:
            outcome = await runtime.send(session_id, text(turn))
            if not outcome.ok:
                raise SystemExit(f"turn {turn} failed: {outcome.error}")
            print(f"turn {turn}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--session", required=True)
    parser.add_argument("--turns", required=True, help="START:STOP")
    parser.add_argument("--limit", type=int, default=LIMIT)
    args = parser.parse_args()
    start, stop = (int(x) for x in args.turns.split(":"))
    asyncio.run(drive(args.home, args.base_url, args.session, range(start, stop), limit=args.limit))


if __name__ == "__main__":
    main()
