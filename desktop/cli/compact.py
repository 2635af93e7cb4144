"""`cairn compact --session ID [--focus TEXT]`: summarise a chat's earlier messages now, on the
same runtime as the window's Compact action. Nothing is deleted: the checkpoint is one more row."""

from __future__ import annotations

import argparse
import sys

from desktop.app import CairnApp, CompactionFailed, NothingToCompact, TurnRoute, focus_problem
from desktop.cli.common import CommandError, account_for, api_key_for, printable, run_stoppable, session_account
from desktop.turn.events import Retrying, RuntimeEvent, Waiting
from host.content import Checkpoint

__all__ = ["add_compact_command", "compact_progress", "run_compact"]


def add_compact_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compact = commands.add_parser("compact", help="summarise a chat's earlier messages to free its context")
    compact.add_argument("--session", required=True, help="the session id (`cairn sessions` lists them)")
    compact.add_argument("--focus", help="what the summary should keep especially")
    compact.add_argument("--account", help="account name or id (default: the chat's own, else the default)")
    compact.add_argument("--model", help="model id (default: the account's default model)")


def run_compact(args: argparse.Namespace, app: CairnApp) -> int:
    """``app`` was opened with ``compact_progress`` as its event listener."""
    focus = (args.focus or "").strip() or None
    problem = focus_problem(focus) if focus is not None else None
    if problem is not None:
        raise CommandError(problem)
    if not app.chats.exists(args.session):
        raise CommandError(f"There is no session {args.session}; `cairn sessions` lists them.")
    account = account_for(app, args.account or session_account(app, args.session))
    route = app.accounts.resolve(account, args.model)
    via = TurnRoute(account, args.model, api_key_for(app, account, route))

    async def compact() -> Checkpoint:
        async with app.running():
            return await app.turns.compact_now(args.session, focus, via=via)

    try:
        checkpoint = run_stoppable(compact())
    except KeyboardInterrupt:
        print("\n[stopped; nothing was changed]", file=sys.stderr)
        return 130
    except NothingToCompact as exc:
        print(f"cairn: nothing was compacted. {printable(str(exc))}", file=sys.stderr)
        return 1
    except CompactionFailed as exc:
        print(f"cairn: the chat was not compacted, and nothing was changed. {printable(str(exc))}", file=sys.stderr)
        return 1
    print(
        f"Earlier messages were summarised: about {checkpoint.tokens_before:,} tokens before, "
        f"{checkpoint.tokens_after:,} after. The next message continues from the summary."
    )
    return 0


def compact_progress(item: object) -> None:
    """The app's event listener for ``cairn compact``: the waits and retries, on stderr."""
    event = getattr(item, "event", None)
    if event is not None:
        _progress(event)


def _progress(event: RuntimeEvent) -> None:
    if isinstance(event, Retrying):
        print(f"[retrying in {event.delay:.1f} s: {printable(event.reason)}]", file=sys.stderr)
    elif isinstance(event, Waiting):
        print(f"[the model is reading the prompt… {event.elapsed:.0f} s]", file=sys.stderr)
