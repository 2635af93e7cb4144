"""Cairn's headless commands: `chat`, `compact`, `sessions`, `accounts`, `skills`, `mcp`, `models`,
`secrets`, `bench`, `catalog refresh`.

None of them loads Qt. Each says once where no keychain was found (``secrets.tell_once``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from desktop.app import (
    MODELS_DEV_URL,
    CairnApp,
    CairnError,
    CairnPaths,
    SecretStore,
    open_cairn,
    printable,
    problem_text,
)
from desktop.bench.command import add_bench_command, run_bench
from desktop.cli.accounts import run_accounts
from desktop.cli.approve import TerminalApprover
from desktop.cli.chat import run_chat, turn_printer
from desktop.cli.compact import add_compact_command, compact_progress, run_compact
from desktop.cli.elicit import TerminalElicitor
from desktop.cli.mcp import add_mcp_commands, run_mcp
from desktop.cli.models import add_models_commands, run_models
from desktop.cli.secrets import add_secrets_command, run_secrets, tell_once

__all__ = ["add_commands", "run_command"]


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser("sessions", help="list the journal's sessions, newest first")

    chat = commands.add_parser("chat", help="send a message and stream the answer")
    chat.add_argument("message", nargs="*", help="the message; read from stdin when omitted")
    chat.add_argument("--account", help="account name or id (default: the session's own, else the default)")
    chat.add_argument("--model", help="model id (default: the account's default model)")
    chat.add_argument("--session", help="continue this session id (default: a new session)")
    chat.add_argument("--retry", action="store_true", help="ask again where the session's last turn failed")
    chat.add_argument("--continue", dest="continue_reply", action="store_true", help="go on with a cut-off reply")
    chat.add_argument("--workspace", type=Path, help="a workspace folder: its .agents/skills are offered too")
    chat.add_argument(
        "--mode",
        choices=("ask", "read-only", "auto"),
        help="tools: ask before changes (default), refuse changes, or run without asking; kept for the session",
    )
    chat.add_argument(
        "--approve",
        choices=("once", "chat"),
        help="without a terminal, allow tools that ask: for each call, or for the whole session",
    )

    add_compact_command(commands)

    skills = commands.add_parser("skills", help="list the skills found, and the ones left out with why")
    skills.add_argument("--workspace", type=Path, help="also look in this workspace's .agents/skills")

    accounts = commands.add_parser("accounts", help="list, add, edit or remove accounts")
    verbs = accounts.add_subparsers(dest="verb", metavar="VERB", required=True)
    verbs.add_parser("list", help="list accounts")
    for verb in ("add", "edit"):
        p = verbs.add_parser(verb, help=f"{verb} an account")
        p.add_argument("name")
        p.add_argument("--provider", help="a preset (deepseek, openai, openrouter, ollama, ...) or 'custom'")
        p.add_argument("--base-url", help="a custom OpenAI-compatible endpoint, such as https://host/v1")
        p.add_argument("--model", help="the default model")
        p.add_argument("--header", action="append", default=[], metavar="NAME=VALUE", help="an extra header")
        p.add_argument("--max-output", type=int, metavar="TOKENS", help="the longest reply to ask for (0: unset)")
        p.add_argument(
            "--context",
            type=int,
            metavar="TOKENS",
            help="the model's context, when the catalogs or the server do not know it, or know it wrong (0: unset)",
        )
        p.add_argument(
            "--first-token-timeout",
            type=float,
            metavar="SECONDS",
            help="how long to wait for a reply to start (0: unset)",
        )
        p.add_argument(
            "--instructions-in-first-message",
            action=argparse.BooleanOptionalAction,
            help="send Cairn's instructions in the first message (chat templates without a system role)",
        )
        p.add_argument("--tools", action=argparse.BooleanOptionalAction, help="offer tools to the model (default: on)")
        p.add_argument(
            "--tool-declarations",
            choices=("automatic", "proxy"),
            help="how tools a search finds reach the model: declared (automatic), or described in the chat and "
            "called through use_tool (proxy: the prompt is never re-read; models call declared tools more reliably)",
        )
        if verb == "edit":
            p.add_argument("--rename", help="a new name")
        p.add_argument("--set-key", action="store_true", help="ask for the API key and keep it (see `cairn secrets`)")
    remove = verbs.add_parser("remove", help="remove an account and its key")
    remove.add_argument("name")

    add_mcp_commands(commands)
    add_bench_command(commands)

    add_models_commands(commands)
    add_secrets_command(commands)

    catalog = commands.add_parser("catalog", help="the models.dev catalog")
    catalog_verbs = catalog.add_subparsers(dest="verb", metavar="VERB", required=True)
    refresh = catalog_verbs.add_parser("refresh", help="download a fresh models.dev catalog")
    refresh.add_argument("--url", default=MODELS_DEV_URL, help=argparse.SUPPRESS)


def run_command(args: argparse.Namespace, paths: CairnPaths, secrets: SecretStore | None = None) -> int:
    problem = paths.problem()
    if problem is not None:
        print(f"cairn: {problem}", file=sys.stderr)
        return 2
    try:
        return _dispatch(args, paths, secrets)
    except (CairnError, ValidationError) as exc:
        # The one place a command's expected failures are shown; anything else is a defect,
        # left to the last resort in desktop/__main__.py (which logs its traceback).
        print(f"cairn: {printable(problem_text(exc))}", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace, paths: CairnPaths, secrets: SecretStore | None) -> int:
    """Each command's own Cairn: ``chat`` with the terminal's approver and printer, ``compact``
    with its progress, every other one quiet. The journal opens only for a command that reads
    it, so account and server commands work while a window holds it."""

    @contextmanager
    def opened(**parts: Any) -> Iterator[CairnApp]:
        with open_cairn(paths, secrets=secrets, open_journal=False, **parts) as app:
            if args.command != "secrets":  # that one says it all itself
                tell_once(app)
            yield app

    if args.command == "chat":
        printer, on_event = turn_printer()
        approver = TerminalApprover(preset=args.approve)
        elicitor = TerminalElicitor()  # a server's request for input: asked at a terminal, else declined
        # One turn, then the process ends: a server starts only when a call needs it.
        with opened(
            on_event=on_event, approver=approver, elicitor=elicitor, workspace=args.workspace, servers_on_demand=True
        ) as app:
            return run_chat(args, app, printer)
    if args.command == "compact":
        with opened(on_event=compact_progress) as app:
            return run_compact(args, app)
    workspace = args.workspace if args.command == "skills" else None
    # A listing only reads: it goes on beside a window that holds the journal.
    with opened(workspace=workspace, beside_holder=args.command == "sessions") as app:
        commands: dict[str, Callable[[], int]] = {
            "sessions": lambda: _sessions(app),
            "accounts": lambda: run_accounts(args, app),
            "skills": lambda: _skills(app),
            "catalog": lambda: _refresh(args, app),
            "mcp": lambda: run_mcp(args, app),
            "models": lambda: run_models(args, app),
            "secrets": lambda: run_secrets(args, app),
            "bench": lambda: run_bench(args, app),
        }
        return commands[args.command]()


# -- sessions --------------------------------------------------------------------------------


def _sessions(app: CairnApp) -> int:
    """The chats, newest first; on a journal open read-only (a full disk, another Cairn holding
    it, a newer Cairn's journal), what exists, after one line on stderr saying why."""
    sessions = [record for record, _snippet in app.chats.search()]
    note = app.chats.read_only_reason()
    if note is not None:
        print(f"cairn: {printable(note)}", file=sys.stderr)
    if not sessions:
        print("No sessions yet.")
    for record in sessions:
        print(f"{record.id}  {record.updated_at[:19].replace('T', ' ')}  {record.title or '(untitled)'}")
    return 0


def _skills(app: CairnApp) -> int:
    catalog = app.preferences.skills()
    if not catalog.skills and not catalog.invalid:
        print(f"No skills yet. Put skill folders in {app.paths.skills_dir}.")
    for skill in catalog.skills:
        print(printable(f"{skill.name} ({skill.source}): {skill.description}"))
    for invalid in catalog.invalid:
        print(printable(f"left out {invalid.path}: {invalid.reason}"), file=sys.stderr)
    return 0


# -- catalog ---------------------------------------------------------------------------------


def _refresh(args: argparse.Namespace, app: CairnApp) -> int:
    async def fetch() -> tuple[bool, str]:
        async with app.running(servers=False):
            return await app.models.refresh_catalog(args.url)

    ok, message = asyncio.run(fetch())
    print(message, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1
