"""What opening a long chat with versions costs: the versions of its messages and the page shown.

    .venv/bin/python -m benchmarks.versions_speed [--messages 5000] [--repeat 30]

A journal in a temporary folder holds one chat of ``--messages`` user and assistant rows in
which every tenth answer was regenerated (a supersede marker and a second answer) and every
fiftieth question edited. Each repetition does what opening the chat does on the core thread:
read the version entries and derive the switchers (``CairnApp.versions``), and read the newest
page of 200 rows (``display_page``). Prints the median and worst of each.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from host.journal import Journal
from host.transcript import TranscriptWriter
from host.versions import Versions

SENTENCE = "Cairns are human-made piles of stones that mark trails, summits and memorials. "


def answer(text: str) -> dict[str, object]:
    return {"parts": [{"kind": "text", "text": text}], "model": "deepseek/deepseek-flash", "status": "complete"}


def fill(writer: TranscriptWriter, session_id: str, messages: int) -> int:
    """The chat; returns how many messages have other versions."""
    varied = 0
    for n in range(messages // 2):
        user = writer.append_user(session_id, {"parts": [{"kind": "text", "text": f"{n}: " + SENTENCE * 3}]})
        first = writer.append_assistant(session_id, answer(f"{n}: " + SENTENCE * 6))
        if n % 10 == 9:  # regenerated
            writer.append_supersede(session_id, [first.id])
            writer.append_assistant(session_id, answer(f"{n} again: " + SENTENCE * 6))
            varied += 1
        if n % 50 == 49:  # the question edited, and answered again
            later = [r.id for r in writer.rows(session_id) if r.seq >= user.seq and r.role != "system"]
            writer.append_supersede(session_id, later)
            writer.append_user(session_id, {"parts": [{"kind": "text", "text": f"{n} edited: " + SENTENCE}]})
            writer.append_assistant(session_id, answer(f"{n} edited answer: " + SENTENCE * 6))
            varied += 1
    return varied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    stages: dict[str, list[float]] = {"versions": [], "page of 200": []}
    with tempfile.TemporaryDirectory() as folder, Journal.open(Path(folder) / "j.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session()
        varied = fill(writer, session.id, args.messages)
        shown = 0
        for _ in range(args.repeat + 3):
            t0 = time.perf_counter()
            switchers = Versions.of(writer.version_entries(session.id)).shown()
            t1 = time.perf_counter()
            writer.display_page(session.id, limit=200)
            t2 = time.perf_counter()
            stages["versions"].append((t1 - t0) * 1000)
            stages["page of 200"].append((t2 - t1) * 1000)
            shown = len(switchers)
        rows = len(writer.rows(session.id))
    print(f"a chat of {rows:,} rows, {varied} messages with another version ({shown} on the branch shown)")
    for name, times in stages.items():
        kept = times[3:]  # the first reads warm SQLite's cache
        print(f"{name:>12}: median {statistics.median(kept):.2f} ms, worst {max(kept):.2f} ms")


if __name__ == "__main__":
    main()
