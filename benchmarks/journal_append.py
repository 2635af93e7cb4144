"""Append latency of the journal: each figure is one acknowledged (committed) row.

    python benchmarks/journal_append.py [--rows 1000] [--dir FOLDER]

By default the journal lives in a temporary folder on the same disk as the system's temp
directory; pass --dir to measure another disk. Prints median, 99th percentile and worst.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from host.journal import Journal
from host.transcript import TranscriptWriter


def measure(folder: Path, rows: int) -> list[float]:
    message = {"parts": [{"kind": "text", "text": "A typical chat message of a few sentences. " * 8}]}
    with Journal.open(folder / "journal.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("benchmark")
        for _ in range(20):  # warm up the page cache and the WAL
            writer.append_user(session.id, message)
        latencies = []
        for _ in range(rows):
            start = time.perf_counter()
            writer.append_user(session.id, message)
            latencies.append(time.perf_counter() - start)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        latencies = sorted(measure(Path(folder), args.rows))
    ms = [x * 1000 for x in latencies]
    p99 = ms[min(len(ms) - 1, round(0.99 * len(ms)) - 1)]
    print(f"journal append, {len(ms)} acknowledged rows (WAL, synchronous=FULL):")
    print(f"  median {statistics.median(ms):.3f} ms   p99 {p99:.3f} ms   max {ms[-1]:.3f} ms")


if __name__ == "__main__":
    main()
