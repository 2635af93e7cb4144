"""`cairn secrets`: where API keys and other secrets are kept, and the secrets file turned on or
off; and the line every other command says once where no keychain was found.

Without a keychain a command's keys last only that command, so the file is the way to keep
them: `cairn secrets file on` says what it means and asks first (or takes `--yes`), and
`cairn secrets file off` says where each secret goes (the keychain, or nowhere once the
command ends) before it asks.
"""

from __future__ import annotations

import argparse
import sys

from desktop.app import CairnApp, SecretFileError
from desktop.cli.common import CommandError, printable

__all__ = ["add_secrets_command", "run_secrets", "tell_once"]

ON_HINT = "`cairn secrets file on` keeps them in a file only you can read"


def add_secrets_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    secrets = commands.add_parser("secrets", help="where API keys and other secrets are kept; the secrets file")
    verbs = secrets.add_subparsers(dest="verb", metavar="VERB", required=True)
    verbs.add_parser("where", help="say where secrets are kept now")
    file = verbs.add_parser("file", help="keep secrets in a file only you can read (on), or stop (off)")
    file.add_argument("state", choices=("on", "off"))
    file.add_argument("--yes", action="store_true", help="go ahead without asking")


def run_secrets(args: argparse.Namespace, app: CairnApp) -> int:
    try:
        if args.verb == "where":
            return _where(app)
        return _file_on(args, app) if args.state == "on" else _file_off(args, app)
    except SecretFileError as exc:
        raise CommandError(str(exc)) from exc


def tell_once(app: CairnApp) -> None:
    """Say on stderr, the first time a command runs without a keychain, what that means; and at
    every command, that the chosen secrets file is refused."""
    notice = app.secrets.launch_notice("commands")
    if notice is None:
        return
    if notice.kind == "file_refused":
        print(f"cairn: {printable(notice.text)}", file=sys.stderr)
        return
    print(
        "cairn: No system keychain was found, so API keys and other secrets are not kept from one command to the "
        f"next; {ON_HINT} ({app.secrets.view().file}).",
        file=sys.stderr,
    )


def _where(app: CairnApp) -> int:
    view = app.secrets.view()
    print(printable(view.words()))
    if view.file_problem is not None:
        print(printable(view.file_problem), file=sys.stderr)
        return 1
    if view.place == "memory":
        print(f"{ON_HINT[0].upper()}{ON_HINT[1:]}: {view.file}.")
    return 0


def _file_on(args: argparse.Namespace, app: CairnApp) -> int:
    view = app.secrets.view()
    if view.place == "file":
        print(printable(view.words()))
        return 0
    print(
        f"Cairn will keep API keys, MCP servers' secrets and tokens in {view.file}, a file only your user "
        "account can read. It is not encrypted: anyone who can sign in as you, or read your backups, can read it."
    )
    if view.place == "keychain":
        print("This computer has a system keychain, which is safer; keys already there stay there.")
    if not _agreed(args, "Keep secrets in this file? [y/N] "):
        print("Nothing was changed.")
        return 0
    app.secrets.use_file()
    print(f"Secrets are kept in {view.file} from now on. `cairn secrets file off` stops it.")
    return 0


def _file_off(args: argparse.Namespace, app: CairnApp) -> int:
    if app.secrets.view().place != "file":
        print("Cairn is not keeping secrets in a file; nothing to do.")
        return 0
    leaving = app.secrets.leaving_file()
    print(printable(leaving.words()))
    if not _agreed(args, "Stop keeping secrets in the file? [y/N] "):
        print("Nothing was changed.")
        return 0
    app.secrets.leave_file()
    print("The secrets file is deleted.")
    return 0


def _agreed(args: argparse.Namespace, question: str) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        raise CommandError("Nothing was changed: run it again with --yes to go ahead.")
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False
