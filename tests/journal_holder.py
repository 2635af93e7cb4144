"""Hold a journal open until told to stop, like another running Cairn would.

Usage: python -m tests.journal_holder JOURNAL_PATH
Prints "ready" once the journal is open, then waits for a line on stdin.
"""

import sys
from pathlib import Path

from host.journal import Journal

with Journal.open(Path(sys.argv[1])):
    print("ready", flush=True)
    sys.stdin.readline()
