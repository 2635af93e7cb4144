"""SIGKILL a Cairn in the middle of compacting: while the summary streams, between the
checkpoint and the next request, during that request. Nothing acknowledged is lost, a
checkpoint is whole (with its one usage row) or absent, and the chat goes on from there."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop.loopback import LoopbackProvider
from host.content import Checkpoint
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.recorded_requests import is_summary_request

REPO = Path(__file__).resolve().parents[1]
ROUNDS = 4
# A small context, so that each round reaches a compaction after a few turns.
LIMIT = 4_000


def start(home: Path, base_url: str, session: str, turns: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "tests.compaction_chat", "--home", str(home), "--base-url", base_url,
            "--session", session, "--turns", turns, "--limit", str(LIMIT)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def check(home: Path, session: str, acknowledged: int) -> int:
    """The journal's invariants after a kill; returns how many user turns it holds."""
    with Journal.open(CairnPaths.under(home).journal) as journal:
        rows = TranscriptWriter(journal).rows(session)
        usage = UsageLedger(journal).requests(session)
    users = [r for r in rows if r.role == "user"]
    assert len(users) >= acknowledged, "an acknowledged turn was lost"
    made = {r.id for r in rows if isinstance(r.meta(), Checkpoint)}
    compaction_usage = [u.row_id for u in usage if u.kind == "compaction"]
    assert sorted(compaction_usage) == sorted(made), "a checkpoint without its usage, or usage without it"
    return len(users)


@pytest.mark.slow
def test_a_kill_during_compaction_loses_nothing_and_the_chat_goes_on(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    home = tmp_path / "home"
    with Journal.open(CairnPaths.under(home).journal) as journal:
        session = journal.create_session().id
    with LoopbackProvider(context_window=LIMIT, chunk_delay=0.02) as provider:
        turn = 0
        for round_ in range(ROUNDS):
            seen = len(provider.requests)
            writer = start(home, provider.base_url, session, f"{turn}:400")
            acknowledged = 0
            try:
                # Wait for a summary request, then kill at a random moment around it.
                deadline = time.monotonic() + 120
                while not any(is_summary_request(r) for r in provider.requests[seen:]):
                    assert writer.poll() is None, writer.stderr.read() if writer.stderr else ""
                    assert time.monotonic() < deadline, "no compaction happened"
                    time.sleep(0.01)
                time.sleep(rng.uniform(0.0, 0.6))
                writer.send_signal(signal.SIGKILL)
                out, _ = writer.communicate(timeout=10)
            finally:
                if writer.poll() is None:
                    writer.kill()
            acknowledged = len([line for line in out.splitlines() if line.startswith("turn ")])
            users = check(home, session, turn + acknowledged)
            turn = users  # the next message is the next turn; a half-sent one stays as it is
            del round_
        # And the chat goes on: a few more turns, which must all succeed.
        finish = start(home, provider.base_url, session, f"{turn}:{turn + 5}")
        out, err = finish.communicate(timeout=120)
        assert finish.returncode == 0, err
        requests = provider.requests
    check(home, session, turn + 5)
    first = requests[0].body["messages"][0]
    assert all(r.body["messages"][0] == first for r in requests if r.status == 200)
    assert [r.status for r in requests if r.status != 200] == []
