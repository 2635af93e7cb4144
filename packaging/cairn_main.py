"""The frozen bundle's entry script: the same ``main`` as the ``cairn`` command.

With no subcommand it opens the window; with one (``cairn chat``, ``cairn --version``) it runs
headless. One bundle serves both.
"""

import sys

from desktop.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
