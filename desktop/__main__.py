"""The ``cairn`` command: the composition root.

Without a subcommand it opens the window, the one place outside ``ui/`` that reaches Qt,
and only inside ``main``. Subcommands run headless and never load Qt.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from desktop.cli import add_commands, run_command
from desktop.logs import configure_logging
from desktop.version import cairn_version
from host.paths import CairnPaths

log = logging.getLogger("cairn")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cairn", description="Cairn, a desktop chat host.")
    parser.add_argument("--version", action="version", version=f"cairn {cairn_version()}")
    add_commands(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(argv)

    paths = CairnPaths.from_env()
    log_file = configure_logging(paths.log_dir)
    if args.command is not None:
        try:
            return run_command(args, paths)
        except BrokenPipeError:
            # The reader went away (``| head``): nothing more to show, and nothing is lost.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except OSError as exc:
            print(f"cairn: the command stopped: {exc.strerror or exc}.", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
        except Exception as exc:
            # A last resort: every expected failure is handled with its own message inside.
            log.exception("cairn %s failed", args.command)
            where = f"; the details are in {log_file}" if log_file else ""
            print(
                f"cairn: an unexpected error stopped the command ({type(exc).__name__}: {exc}){where}.", file=sys.stderr
            )
            return 70

    from ui.window.shell import run  # the composition root is the one place allowed to reach Qt

    return run(paths)


if __name__ == "__main__":
    sys.exit(main())
