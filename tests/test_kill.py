"""SIGKILL a writing Cairn at random points; the journal must keep every acknowledged row.

The writer commits an assistant row and its usage row in one transaction; some kills are
aimed between the two. After every kill the journal must hold each assistant row with
exactly one usage row, or neither.
"""

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO

import pytest

from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.kill_writer import expected_content, expected_usage

REPO = Path(__file__).resolve().parents[1]
KILLS = 60


def read_until_between(lines: IO[str], skip: int, acknowledged: set[str]) -> str:
    """Read the writer's lines (noting acks) until the ``skip``-th "between" line after
    this one; return that line's row id."""
    for line in lines:
        word, row_id = line.split()
        if word == "ack":
            acknowledged.add(row_id)
        elif skip == 0:
            return row_id
        else:
            skip -= 1
    raise AssertionError("the writer stopped before it wrote a reply")


def check_journal(path: Path, session_id: str, acknowledged: set[str], round_: int) -> set[str]:
    """Check everything a kill must not break; return the stored row ids."""
    with Journal.open(path) as journal:
        rows = TranscriptWriter(journal).rows(session_id)
        usage = UsageLedger(journal).requests(session_id)
    stored = {row.id for row in rows}
    missing = acknowledged - stored
    assert not missing, f"round {round_}: acknowledged rows lost: {sorted(missing)[:5]}"
    assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
    for row in rows:
        assert row.content == expected_content(row.id), f"round {round_}: partial row {row.id}"
    replies = {row.id for row in rows if row.role == "assistant"}
    per_row = Counter(u.row_id for u in usage)
    assert set(per_row) == replies, f"round {round_}: a reply without its usage, or usage without its reply"
    assert set(per_row.values()) <= {1}, f"round {round_}: a reply with more than one usage row"
    for u in usage:
        assert u.row_id is not None
        assert u.model_dump(include=set(expected_usage(u.row_id))) == expected_usage(u.row_id)
    return stored


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_every_acknowledged_row_survives_sigkill(cairn_paths: CairnPaths) -> None:
    rng = random.Random(20261130)
    with Journal.open(cairn_paths.journal) as journal:
        session_id = journal.create_session("kill test").id

    acknowledged: set[str] = set()
    killed_between = 0  # kills that landed between an assistant row and its usage row
    for round_ in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.kill_writer", str(cairn_paths.journal), session_id],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        between: str | None = None
        if round_ % 10 == 9:
            # Sometimes kill while the child is still starting and opening the journal.
            time.sleep(rng.uniform(0.0, 0.3))
        elif round_ % 3 == 1:
            # Kill right after an assistant row, before its usage row.
            assert child.stdout.readline().strip() == "ready"
            between = read_until_between(child.stdout, rng.randint(0, 6), acknowledged)
        else:
            assert child.stdout.readline().strip() == "ready"
            for _ in range(rng.randint(1, 25)):
                line = child.stdout.readline()
                if line.startswith("ack "):
                    acknowledged.add(line.split()[1])
            time.sleep(rng.uniform(0.0, 0.004))
        os.kill(child.pid, signal.SIGKILL)
        rest = child.stdout.read()  # acks printed before the kill landed
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL, f"round {round_}: the writer failed before it was killed"
        acknowledged.update(line.split()[1] for line in rest.splitlines() if line.startswith("ack "))

        stored = check_journal(cairn_paths.journal, session_id, acknowledged, round_)
        if between is not None and between not in stored:
            killed_between += 1

    assert len(acknowledged) > KILLS
    assert killed_between > 0, "no kill landed between a reply and its usage; the test did not test that"
