"""SIGKILL a writing Cairn at random points; the journal must keep every acknowledged row."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.kill_writer import expected_content

REPO = Path(__file__).resolve().parents[1]
KILLS = 60


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_every_acknowledged_row_survives_sigkill(cairn_paths: CairnPaths) -> None:
    rng = random.Random(20261130)
    with Journal.open(cairn_paths.journal) as journal:
        session_id = journal.create_session("kill test").id

    acknowledged: set[str] = set()
    for round_ in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.kill_writer", str(cairn_paths.journal), session_id],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        if round_ % 10 == 9:
            # Sometimes kill while the child is still starting and opening the journal.
            time.sleep(rng.uniform(0.0, 0.3))
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
        acknowledged.update(line.split()[1] for line in rest.splitlines() if line.startswith("ack "))

        with Journal.open(cairn_paths.journal) as journal:
            rows = TranscriptWriter(journal).rows(session_id)
        stored = {row.id for row in rows}
        missing = acknowledged - stored
        assert not missing, f"round {round_}: acknowledged rows lost: {sorted(missing)[:5]}"
        assert [row.seq for row in rows] == list(range(1, len(rows) + 1))
        for row in rows:
            assert row.content == expected_content(row.id), f"round {round_}: partial row {row.id}"

    assert len(acknowledged) > KILLS
