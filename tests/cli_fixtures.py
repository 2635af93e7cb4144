"""The `cairn` command run as a person runs it, for the command-line tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The key the CLI tests' loopback providers ask for; every command gets it as CAIRN_API_KEY.
KEY = "sk-cli-test"


def cairn(*args: str, stdin: str = "", key: str | None = KEY) -> subprocess.CompletedProcess[str]:
    """``cairn ARGS`` in a fresh interpreter on this checkout, with the test's environment (its
    CAIRN_HOME), ``stdin`` as its input and ``key`` as CAIRN_API_KEY unless it is None."""
    env = {**os.environ}
    if key:
        env["CAIRN_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        cwd=REPO, env=env, input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
