"""Search at a lifetime of history: CPU time per page of results, the index's size, and recall.

    .venv/bin/python -m benchmarks.lifetime_journal /tmp/cairn-lifetime     # the project's generator
    .venv/bin/python -m benchmarks.search_scale /tmp/cairn-lifetime lifetime
    .venv/bin/python -m benchmarks.lifetime_varied /tmp/cairn-varied        # the second generator
    .venv/bin/python -m benchmarks.search_scale /tmp/cairn-varied varied

The journal is opened as Cairn opens it (an older one is migrated, with its backup); the
search index is then built and merged as the running app does in the background, timed, unless
``--as-is``. Each query's first page (``Journal.search_page``, 50 chats) is timed in CPU time
(``time.process_time``), every query once. The recall case is its own small journal: one chat
of 25,000 messages that all hold a word and 100 older chats that hold it once; every page is
read until none is left.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import lifetime_journal, lifetime_varied
from host.journal import Journal
from host.search_index import segments

__all__ = ["main"]


def _figures(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return f"p50 {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms"


def _timed(journal: Journal, queries: list[str]) -> tuple[list[float], int, list[int]]:
    times, early, found = [], 0, []
    for query in queries:
        began = time.process_time()
        page = journal.search_page(query)
        times.append((time.process_time() - began) * 1000)
        early += page.stopped_early
        found.append(len(page.found))
    return times, early, found


def _queries(kind: str, journal: Journal) -> dict[str, list[str]]:
    if kind == "varied":
        return lifetime_varied.search_queries(lifetime_varied.vocabulary(random.Random(lifetime_varied.SEED)))
    with journal.read() as conn:
        rows = conn.execute("SELECT count(*) FROM transcript_rows").fetchone()[0]
    words = lifetime_journal.vocabulary(
        random.Random(lifetime_journal.SEED), min(lifetime_journal.VOCABULARY, max(200, rows // 10))
    )
    one_two = lifetime_journal.queries(words, 50)
    rng = random.Random(lifetime_journal.SEED + 2)
    picked = rng.sample(words[:100], 8) + rng.sample(words[1000:5000], 8) + rng.sample(words[20000:], 8)
    return {
        "one and two words (the Zipf law of the text)": one_two,
        "one- and two-letter prefixes of the commonest words": lifetime_journal.common_prefixes(words),
        "3- and 4-letter prefixes (common, middling, rare words)": sorted(
            {w[:n] for w in picked for n in (3, 4) if len(w) > n}
        ),
    }


def _settle(journal: Journal) -> None:
    began, steps = time.process_time(), 0
    while not journal.build_search_index():
        steps += 1
    while not journal.tidy_search_index(most=1):
        steps += 1
    print(f"index built and merged: {steps} steps, {time.process_time() - began:.1f} s of CPU")


def _sizes(journal: Journal) -> None:
    with journal.read() as conn:
        data = conn.execute("SELECT coalesce(sum(length(block)), 0) FROM message_index_data").fetchone()[0]
        count = segments(conn)
        page = conn.execute("PRAGMA page_size").fetchone()[0] * conn.execute("PRAGMA page_count").fetchone()[0]
    print(f"journal {page / 1e6:,.0f} MB; search index {data / 1e6:,.0f} MB in {count} segment(s)")


def recall() -> None:
    """The issue's case: 25,000 messages of one chat hold the word, and 100 older chats once."""
    with tempfile.TemporaryDirectory() as folder, Journal.open(Path(folder) / "journal.sqlite3") as journal:
        with journal.write("recall case") as conn:
            for n in range(101):
                texts = [f"granite block {k}" for k in range(25_000)] if n == 100 else ["talk of granite"]
                chat = f"chat-{n:03d}"
                stamp = f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000000Z"
                conn.execute(
                    "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                    (chat, f"Chat {n}", stamp, stamp),
                )
                conn.executemany(
                    "INSERT INTO transcript_rows (id, session_id, seq, role, hidden, content, created_at) "
                    "VALUES (?, ?, ?, 'user', 0, ?, ?)",
                    [
                        (f"{chat}-{k}", chat, k + 1, f'{{"parts":[{{"kind":"text","text":"{t}"}}]}}', stamp)
                        for k, t in enumerate(texts)
                    ],
                )
        pages, times, after = 0, [], None
        found: list[str] = []
        while True:
            began = time.process_time()
            page = journal.search_page("granite", after=after)
            times.append((time.process_time() - began) * 1000)
            pages += 1
            found += [r.id for r, _ in page.found]
            if page.after is None:
                break
            after = page.after
        each = ", ".join(f"{t:.1f}" for t in times)
        print(f"recall: {len(set(found))} of 101 chats in {pages} pages ({each} ms of CPU)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("home", type=Path, help="a CAIRN_HOME folder made by one of the generators")
    parser.add_argument("kind", choices=("lifetime", "varied"), help="which generator made it")
    parser.add_argument("--as-is", action="store_true", help="search the index as it is, unmerged")
    args = parser.parse_args()
    path = lifetime_journal.lifetime_at(args.home)
    with Journal.open(path) as journal:
        if not args.as_is:
            _settle(journal)
        _sizes(journal)
        for name, queries in _queries(args.kind, journal).items():
            times, early, found = _timed(journal, queries)
            spread = f"chats found {min(found)} to {max(found)}"
            print(f"{name} ({len(queries)}): {_figures(times)}; {early} stopped early; {spread}")
    recall()


if __name__ == "__main__":
    main()
