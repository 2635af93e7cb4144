"""The ``cairn`` command: the composition root.

Without a subcommand it opens the window, the one place outside ``ui/`` that reaches Qt,
and only inside ``main``. Subcommands run headless and never load Qt.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from desktop.cli import add_commands, run_command
from desktop.logs import configure_logging
from host.paths import CairnPaths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cairn", description="Cairn, a desktop chat host.")
    add_commands(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(argv)

    paths = CairnPaths.from_env()
    configure_logging(paths.log_dir)
    if args.command is not None:
        return run_command(args, paths)

    from ui.app import run  # the composition root is the one place allowed to reach Qt

    return run(paths)


if __name__ == "__main__":
    sys.exit(main())
