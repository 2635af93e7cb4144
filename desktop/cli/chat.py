"""`cairn chat`: one turn in the terminal, on the same runtime and context engine as the window."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TextIO

from desktop.app import (
    CairnApp,
    NothingToRetry,
    SessionEvent,
    TurnOutcome,
    TurnRoute,
    UsageTotals,
    cost_text,
    decode_input,
    message_problem,
    turn_usage_text,
)
from desktop.cli.common import CommandError, account_for, api_key_for, printable, run_stoppable, session_account
from desktop.turn.events import (
    CompactionHeld,
    ReasoningDelta,
    RequestStarted,
    Retrying,
    RuntimeEvent,
    TextDelta,
    TurnCancelled,
    TurnFailed,
    Waiting,
)
from host.content import MessageContent

__all__ = ["run_chat", "turn_printer"]


def run_chat(args: argparse.Namespace, app: CairnApp, printer: _Printer) -> int:
    """One turn of ``cairn chat``; ``app`` was opened with the terminal's approver, and its
    events go to ``printer``."""
    again = "retry" if args.retry else "continue" if args.continue_reply else None
    if args.retry and args.continue_reply:
        raise CommandError("Give --retry or --continue, not both.")
    if again is not None and not args.session:
        raise CommandError(f"Say which session to {again} with --session.")
    text = "" if again is not None else _checked_message(args.message)
    account = account_for(app, args.account or session_account(app, args.session))
    route = app.accounts.resolve(account, args.model)
    via = TurnRoute(account, args.model, api_key_for(app, account, route))
    left_out = app.preferences.skills().invalid
    if left_out:
        many = f"{len(left_out)} skills were" if len(left_out) > 1 else "1 skill was"
        print(f"cairn: {many} left out; `cairn skills` says why.", file=sys.stderr)
    if args.session:
        if not app.chats.exists(args.session):
            raise CommandError(f"There is no session {args.session}; `cairn sessions` lists them.")
        session_id = args.session
    else:
        # Only now, when everything the turn needs is in hand: a failure above leaves no empty session.
        session_id = app.chats.new(title=text.splitlines()[0][:60]).id
    if args.mode is not None:
        app.options.set_mode(session_id, "read_only" if args.mode == "read-only" else args.mode)
    try:
        outcome = run_stoppable(_turn(app, session_id=session_id, text=text, again=again, via=via))
    except KeyboardInterrupt:
        if not printer.stopped_shown:
            print("\n[stopped]", file=sys.stderr)
        return 130
    totals, _last = app.chats.usage(session_id)
    if not outcome.ok:
        print(f"[the conversation is saved; retry with: cairn chat --session {session_id} --retry]", file=sys.stderr)
        return 1
    print(file=sys.stdout)
    last = outcome.assistant_rows[-1].body() if outcome.assistant_rows else None
    if isinstance(last, MessageContent) and last.finish_reason == "length":
        print(
            f"[cut off at the length limit; continue with: cairn chat --session {session_id} --continue]",
            file=sys.stderr,
        )
    print(_summary(outcome, totals, session_id), file=sys.stderr)
    return 0


def turn_printer() -> tuple[_Printer, Callable[[object], None]]:
    """What shows a turn on the terminal, and the app's event listener that feeds it."""
    printer = _Printer(sys.stdout, sys.stderr)

    def on_event(item: object) -> None:
        if isinstance(item, SessionEvent):
            printer(item.event)

    return printer, on_event


async def _turn(app: CairnApp, *, session_id: str, text: str, again: str | None, via: TurnRoute) -> TurnOutcome:
    """Send ``text``, or ask again: ``again`` is ``"retry"`` after a failure, ``"continue"``
    after a reply cut off at the length limit."""
    async with app.running():
        try:
            if again == "retry":
                return await app.turns.retry(session_id, via=via)
            if again == "continue":
                return await app.turns.continue_reply(session_id, via=via)
        except NothingToRetry as exc:
            raise CommandError(str(exc)) from None
        return await app.turns.send(session_id, text, via=via)


def _checked_message(words: list[str]) -> str:
    text = _message(words)
    if not text:
        raise CommandError("There is no message to send: give it as an argument or on stdin.")
    problem, _ = message_problem(text, where="message")
    if problem is not None:
        raise CommandError(problem)
    return text


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


class _Printer:
    """Shows a turn's events on the terminal. Everything the provider or the model wrote is
    shown with its control characters escaped, piped or not: an escape sequence could
    otherwise retitle or clear the terminal or write to the clipboard. It never raises: a
    closed or full stdout (``| head``, ``> /dev/full``) only stops the showing, and the turn
    goes on to save its reply."""

    def __init__(self, out: TextIO | None, err: TextIO | None) -> None:
        self.out, self.err = out, err
        self.stopped_shown = False
        self.failed_servers: set[str] = set()  # said once each, not on every request

    def _write(self, stream: TextIO | None, text: str) -> None:
        if stream is None:
            return
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):
            if stream is self.out:
                self.out = None
            else:
                self.err = None

    def __call__(self, event: RuntimeEvent) -> None:
        if isinstance(event, TextDelta):
            self._write(self.out, _shown(event.text))
        elif isinstance(event, ReasoningDelta):
            dim = self.err is not None and _isatty(self.err)
            text = _shown(event.text)
            self._write(self.err, f"\x1b[2m{text}\x1b[0m" if dim else text)
        elif isinstance(event, Retrying):
            self._write(self.err, f"\n[retrying in {event.delay:.1f} s: {printable(event.reason)}]\n")
        elif isinstance(event, Waiting):
            self._write(self.err, f"[the model is reading the prompt… {event.elapsed:.0f} s]\n")
        elif isinstance(event, TurnFailed | CompactionHeld):
            self._write(self.err, f"\ncairn: {printable(event.message)}\n")
        elif isinstance(event, RequestStarted):
            self._say_failed_servers(event.servers)
        elif isinstance(event, TurnCancelled):
            kept = "what arrived is kept" if event.partial_row is not None else "nothing had arrived yet"
            self._write(self.err, f"\n[stopped; {kept}]\n")
            self.stopped_shown = True

    def _say_failed_servers(self, lines: tuple[str, ...]) -> None:
        """A server that failed is named on stderr once, with why: the model only sees its
        tools missing, and the person would otherwise have no word of it."""
        for line in lines:
            name, _, state = line.partition(": ")
            if state.startswith("failed") and name not in self.failed_servers:
                self.failed_servers.add(name)
                self._write(self.err, f"cairn: the MCP server {printable(line)}\n")


def _shown(text: str) -> str:
    return printable(text.replace("\r\n", "\n"), keep_newlines=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _summary(outcome: TurnOutcome, totals: UsageTotals, session_id: str) -> str:
    return f"[{turn_usage_text(outcome)} · session {session_id} total {cost_text(totals.cost_usd, totals.unreported)}]"
