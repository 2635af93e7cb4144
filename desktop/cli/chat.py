"""`cairn chat`: one turn in the terminal, on the same runtime and context engine as the window."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from collections.abc import Callable
from typing import TextIO

import httpx

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.cli.common import CommandError
from desktop.context_engine import ContextEngine
from desktop.events import ReasoningDelta, Retrying, RuntimeEvent, TextDelta, TurnFailed
from desktop.provider.openai_compat import DEFAULT_TIMEOUT, OpenAICompatClient
from desktop.routes import ResolvedRoute, resolve_route
from desktop.runtime import ChatRuntime, NothingToRetry, TurnOutcome
from desktop.secrets import KEY_ENV, SecretStore
from desktop.settings import Account, SettingsStore
from desktop.system_state import SystemState
from host.journal import Journal
from host.paths import CairnPaths
from host.usage import UsageLedger

__all__ = ["run_chat"]


def run_chat(args: argparse.Namespace, paths: CairnPaths, secrets: SecretStore) -> int:
    if args.retry and not args.session:
        raise CommandError("Say which session to retry with --session.")
    text = ""
    if not args.retry:
        text = " ".join(args.message).strip() if args.message else sys.stdin.read().strip()
        if not text:
            raise CommandError("There is no message to send: give it as an argument or on stdin.")
    settings = SettingsStore(paths.config_dir / "settings.json").load()
    key = args.account or settings.default_account
    account = settings.account(key) if key else None
    if account is None:
        raise CommandError(
            f"There is no account {key!r}; add one with `cairn accounts add NAME --provider PRESET`."
            if key
            else "There is no account yet; add one with `cairn accounts add NAME --provider PRESET`."
        )
    route = resolve_route(account, args.model, load_transport_catalog(), load_models_dev(paths.cache_dir))
    api_key = _api_key(account, route, secrets)
    with Journal.open(paths.journal) as journal:
        if args.session:
            if journal.session(args.session) is None:
                raise CommandError(f"There is no session {args.session}; `cairn sessions` lists them.")
            session_id = args.session
        else:
            session_id = journal.create_session(title=text.splitlines()[0][:60]).id
        try:
            state = SystemState.for_app(paths, settings.custom_instructions, args.workspace)
            for invalid in state.catalog().invalid:
                print(f"cairn: skill {invalid.path} left out: {invalid.reason}", file=sys.stderr)
            outcome = asyncio.run(
                _turn(journal, route, ContextEngine(state), api_key, session_id=session_id, text=text or None)
            )
        except KeyboardInterrupt:
            print("\n[stopped; what arrived is kept]", file=sys.stderr)
            return 130
        totals = UsageLedger(journal).totals(session_id)
    if not outcome.ok:
        print(f"[the conversation is saved; retry with: cairn chat --session {session_id} --retry]", file=sys.stderr)
        return 1
    print(file=sys.stdout)
    print(_summary(outcome, totals.cost_usd, session_id), file=sys.stderr)
    return 0


async def _turn(
    journal: Journal,
    route: ResolvedRoute,
    engine: ContextEngine,
    api_key: str | None,
    *,
    session_id: str,
    text: str | None,
) -> TurnOutcome:
    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        client = OpenAICompatClient(http, route.actual.base_url, api_key=api_key, headers=route.headers)
        runtime = ChatRuntime(journal, route, client, engine=engine, on_event=_printer(sys.stdout, sys.stderr))
        if text is None:
            try:
                return await runtime.retry(session_id)
            except NothingToRetry as exc:
                raise CommandError(str(exc)) from None
        return await runtime.send(session_id, text)


def _printer(out: TextIO, err: TextIO) -> Callable[[RuntimeEvent], None]:
    def show(event: RuntimeEvent) -> None:
        if isinstance(event, TextDelta):
            out.write(event.text)
            out.flush()
        elif isinstance(event, ReasoningDelta):
            err.write(f"\x1b[2m{event.text}\x1b[0m" if err.isatty() else event.text)
            err.flush()
        elif isinstance(event, Retrying):
            err.write(f"\n[retrying in {event.delay:.1f} s: {event.reason}]\n")
        elif isinstance(event, TurnFailed):
            err.write(f"\ncairn: {event.message}\n")

    return show


def _summary(outcome: TurnOutcome, session_cost: float | None, session_id: str) -> str:
    u = outcome.usage
    share = f"{u.cached_tokens / u.prompt_tokens:.0%}" if u.prompt_tokens else "0%"
    cost = f"${outcome.cost_usd:.4f}" if outcome.cost_usd is not None else "cost unknown"
    total = f"${session_cost:.4f}" if session_cost is not None else "unknown"
    return (
        f"[{u.prompt_tokens:,} prompt tokens ({u.cached_tokens:,} cached, {share}) · {u.output_tokens:,} output · "
        f"{cost} · session {session_id} total {total}]"
    )


def _api_key(account: Account, route: ResolvedRoute, secrets: SecretStore) -> str | None:
    preset = load_transport_catalog().preset(account.provider)
    key = secrets.find(account.id, preset.key_env if preset else [])
    if key:
        return key
    if preset is not None and not preset.key_required:
        return None
    problem = secrets.keychain_problem()
    if sys.stdin.isatty():
        note = f"{problem} " if problem else ""
        print(
            f"{note}Enter the API key for {account.name} to use it for this run only (it is not saved).",
            file=sys.stderr,
        )
        return getpass.getpass("API key: ").strip() or None
    if route.actual.base_url.startswith(("http://127.", "http://localhost")):
        return None  # a local server usually needs no key
    raise CommandError(
        f"There is no API key for {account.name}. Run `cairn accounts edit {account.name!r} --set-key`, "
        f"or set {KEY_ENV} for this run."
    )
