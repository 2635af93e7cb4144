"""The ``cairn`` command: the composition root.

Without a subcommand it opens the window, the one place outside ``ui/`` that reaches Qt,
and only inside ``main``. Subcommands run headless and never load Qt.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from desktop.logs import configure_logging
from host.errors import JournalError
from host.journal import Journal
from host.paths import CairnPaths

log = logging.getLogger("cairn")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cairn", description="Cairn, a desktop chat host.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("sessions", help="list the journal's sessions, newest first")
    args = parser.parse_args(argv)

    paths = CairnPaths.from_env()
    configure_logging(paths.log_dir)

    if args.command == "sessions":
        return list_sessions(paths)

    from ui.app import run  # the composition root is the one place allowed to reach Qt

    return run(paths)


def list_sessions(paths: CairnPaths) -> int:
    try:
        with Journal.open(paths.journal) as journal:
            sessions = journal.sessions()
    except JournalError as exc:
        print(f"cairn: {exc}", file=sys.stderr)
        return 2
    if not sessions:
        print("No sessions yet.")
    for record in sessions:
        print(f"{record.id}  {record.updated_at[:19].replace('T', ' ')}  {record.title or '(untitled)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
