"""`cairn chat`: one turn in the terminal, on the same runtime and context engine as the window."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from collections.abc import Callable
from typing import TextIO

from desktop.cli.approve import TerminalApprover
from desktop.cli.common import CommandError, printable
from desktop.events import ReasoningDelta, Retrying, RuntimeEvent, TextDelta, TurnCancelled, TurnFailed, Waiting
from desktop.message_text import CONTINUE, decode_input, message_problem
from desktop.routes import ResolvedRoute
from desktop.runtime import NothingToRetry, TurnOutcome
from desktop.secrets import KEY_ENV
from desktop.services import Services
from desktop.settings import Account, Settings
from desktop.system_state import SystemState
from desktop.usage_text import cost_text, turn_usage_text
from host.content import MessageContent, Mode, PermissionMode
from host.journal import Journal
from host.permissions import Permissions
from host.transcript import TranscriptWriter
from host.usage import UsageLedger, UsageTotals

__all__ = ["run_chat"]


def run_chat(args: argparse.Namespace, services: Services) -> int:
    if args.retry and not args.session:
        raise CommandError("Say which session to retry with --session.")
    text = "" if args.retry else _checked_message(args.message)
    settings = services.load_settings()
    account = _account(args.account, settings)
    route = services.route(account, args.model)
    api_key = _api_key(account, route, services)
    journal = services.open_journal()
    state = services.system_state(settings, args.workspace)
    for invalid in services.engine.skills(state).invalid:
        print(printable(f"cairn: skill {invalid.path} left out: {invalid.reason}"), file=sys.stderr)
    if args.session:
        if journal.session(args.session) is None:
            raise CommandError(f"There is no session {args.session}; `cairn sessions` lists them.")
        session_id = args.session
    else:
        # Only now, when everything the turn needs is in hand: a failure above leaves no empty session.
        session_id = journal.create_session(title=text.splitlines()[0][:60]).id
    if args.mode is not None:
        _keep_mode(journal, session_id, "read_only" if args.mode == "read-only" else args.mode, settings)
    services.approver = TerminalApprover(preset=args.approve)
    try:
        outcome = asyncio.run(
            _turn(services, route, api_key, state, session_id=session_id, text=text or None, account=account)
        )
    except KeyboardInterrupt:
        print("\n[stopped]", file=sys.stderr)  # the printer has said whether anything was kept
        return 130
    totals = UsageLedger(journal).totals(session_id)
    if not outcome.ok:
        print(f"[the conversation is saved; retry with: cairn chat --session {session_id} --retry]", file=sys.stderr)
        return 1
    print(file=sys.stdout)
    last = outcome.assistant_rows[-1].body() if outcome.assistant_rows else None
    if isinstance(last, MessageContent) and last.finish_reason == "length":
        print(
            f"[cut off at the length limit; continue with: cairn chat --session {session_id} {CONTINUE!r}]",
            file=sys.stderr,
        )
    print(_summary(outcome, totals, session_id), file=sys.stderr)
    return 0


async def _turn(
    services: Services,
    route: ResolvedRoute,
    api_key: str | None,
    state: SystemState,
    *,
    session_id: str,
    text: str | None,
    account: Account,
) -> TurnOutcome:
    async with services.running():
        runtime = services.runtime(
            route, api_key, lambda: state, _printer(sys.stdout, sys.stderr), first_token=account.first_token_timeout
        )
        if text is None:
            try:
                return await runtime.retry(session_id)
            except NothingToRetry as exc:
                raise CommandError(str(exc)) from None
        return await runtime.send(session_id, text)


def _checked_message(words: list[str]) -> str:
    text = _message(words)
    if not text:
        raise CommandError("There is no message to send: give it as an argument or on stdin.")
    problem, _ = message_problem(text)
    if problem is not None:
        raise CommandError(problem.replace(" in the composer", "").replace("It is still in the composer: s", "S"))
    return text


def _account(key: str | None, settings: Settings) -> Account:
    key = key or settings.default_account
    account = settings.account(key) if key else None
    if account is None:
        raise CommandError(
            f"There is no account {key!r}; add one with `cairn accounts add NAME --provider PRESET`."
            if key
            else "There is no account yet; add one with `cairn accounts add NAME --provider PRESET`."
        )
    return account


def _keep_mode(journal: Journal, session_id: str, mode: Mode, settings: Settings) -> None:
    """The session's permission mode from now on (a row, only when it changes)."""
    writer = TranscriptWriter(journal)
    if Permissions.of_chat(writer.model_order(session_id), default_mode=settings.default_mode).mode != mode:
        writer.append_meta(session_id, PermissionMode(mode=mode))


def _message(words: list[str]) -> str:
    """The message from the arguments, or from stdin; ``CommandError`` if it is not text."""
    if words:
        text = " ".join(words)
        # Arguments that are not UTF-8 reach Python as lone surrogates (surrogateescape).
        if any("\udc80" <= ch <= "\udcff" for ch in text):
            raise CommandError("The message in the arguments is not UTF-8 text; send text, or pipe it on stdin.")
        return text.strip()
    try:
        return decode_input(sys.stdin.buffer.read(), "stdin").strip()
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _printer(out: TextIO, err: TextIO) -> Callable[[RuntimeEvent], None]:
    # On a terminal the model's text is shown with its control characters escaped; piped,
    # it is passed on exactly.
    shown_out = (lambda t: printable(t, keep_newlines=True)) if out.isatty() else (lambda t: t)
    shown_err = (lambda t: printable(t, keep_newlines=True)) if err.isatty() else (lambda t: t)

    def show(event: RuntimeEvent) -> None:
        if isinstance(event, TextDelta):
            out.write(shown_out(event.text))
            out.flush()
        elif isinstance(event, ReasoningDelta):
            err.write(f"\x1b[2m{shown_err(event.text)}\x1b[0m" if err.isatty() else event.text)
            err.flush()
        elif isinstance(event, Retrying):
            err.write(f"\n[retrying in {event.delay:.1f} s: {event.reason}]\n")
        elif isinstance(event, Waiting):
            err.write(f"[the model is reading the prompt… {event.elapsed:.0f} s]\n")
            err.flush()
        elif isinstance(event, TurnFailed):
            err.write(f"\ncairn: {event.message}\n")
        elif isinstance(event, TurnCancelled):
            kept = "what arrived is kept" if event.partial_row is not None else "nothing had arrived yet"
            err.write(f"\n[stopped; {kept}]\n")

    return show


def _summary(outcome: TurnOutcome, totals: UsageTotals, session_id: str) -> str:
    return f"[{turn_usage_text(outcome)} · session {session_id} total {cost_text(totals.cost_usd, totals.unreported)}]"


def _api_key(account: Account, route: ResolvedRoute, services: Services) -> str | None:
    key = services.api_key(account)
    if key:
        return key
    preset = services.transport.preset(account.provider)
    if preset is not None and not preset.key_required:
        return None
    problem = services.secrets.keychain_problem()
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
