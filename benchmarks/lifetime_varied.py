"""A second lifetime journal, shaped unlike the first: 10,000 chats and 1,000,000 rows by default.

    .venv/bin/python -m benchmarks.lifetime_varied /tmp/cairn-varied      # a CAIRN_HOME folder

Where ``benchmarks.lifetime_journal`` writes short messages of one vocabulary in chats of
equal size one after another, this one has the shape of a heavy user's history:

* message lengths log-normal, a median of 60 words, a tail to 5,000;
* one row in five a tool result of code or logs (identifiers, paths, numbers, levels);
* 5% of chats over 1,000 messages, the rest short, and chats interleaved in time (a long chat
  goes on for months while others come and go), so rowids mix chats as a real journal does;
* a vocabulary of 50,000 made-up words, Zipf-distributed with ranks in random order (so a
  common word is as likely to start with any letter, and common words start each other).

The text and the shape come from a fixed seed. Rows are written as ``TranscriptWriter``
writes them, in time order, so the journal's own triggers fill the search index.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.lifetime_journal import lifetime_at
from host.canonical import canonical_json_bytes
from host.journal import Journal

__all__ = ["Varied", "generate", "search_queries"]

SEED = 28
VOCABULARY = 50_000
ZIPF = 1.0
MEDIAN_WORDS = 60
SIGMA = 1.0  # of the log-normal: a tenth of messages over 220 words, one in a thousand over 1,300
LONGEST = 5_000
TOOL_SHARE = 0.2
LONG_SHARE = 0.05  # chats over 1,000 messages
BATCH = 20_000  # rows per transaction
_COLUMNS = "id, session_id, seq, role, hidden, content, model_system, anchor, created_at"
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")


@dataclass(frozen=True)
class Varied:
    words: tuple[str, ...]  # most common first
    sessions: int
    rows: int


def vocabulary(rng: random.Random, size: int = VOCABULARY) -> tuple[str, ...]:
    """``size`` distinct made-up words of two to twelve letters, in the random order that is
    their rank."""
    seen: set[str] = set()
    while len(seen) < size:
        length = min(12, max(2, int(rng.lognormvariate(math.log(6), 0.35))))
        seen.add("".join(rng.choice(_LETTERS) for _ in range(length)))
    words = sorted(seen)
    rng.shuffle(words)
    return tuple(words)


class _Text:
    def __init__(self, rng: random.Random, words: tuple[str, ...]) -> None:
        self._rng, self._words = rng, words
        self._cum = list(itertools.accumulate(1 / (rank**ZIPF) for rank in range(1, len(words) + 1)))

    def length(self) -> int:
        return max(1, min(LONGEST, int(self._rng.lognormvariate(math.log(MEDIAN_WORDS), SIGMA))))

    def prose(self) -> str:
        return " ".join(self._rng.choices(self._words, cum_weights=self._cum, k=self.length())) + "."

    def tool_output(self) -> str:
        """Code or logs of about a message's length: identifiers, paths and numbers."""
        rng, lines, left = self._rng, [], self.length()
        code = rng.random() < 0.5
        while left > 0:
            a, b, c = rng.choices(self._words, cum_weights=self._cum, k=3)
            if code:
                lines.append(f"    def {a}_{b}(self, {c}): return self.{a}.{c}({rng.randint(0, 999)})")
            else:
                level = rng.choice(_LEVELS)
                lines.append(
                    f"2026-03-{rng.randint(1, 28):02d} {level} {a}.{b}: {c} at /srv/{a}/{b}.py:{rng.randint(1, 2000)}"
                )
            left -= 6
        return "\n".join(lines)


def _chat_sizes(rng: random.Random, sessions: int, rows: int) -> list[int]:
    longs = max(1, int(sessions * LONG_SHARE))
    long_rows = [rng.randint(1_001, 1_600) for _ in range(longs)]
    rest = max(sessions - longs, 1) * 2
    share = max(rows - sum(long_rows), rest)
    short = [share * (i + 1) // (sessions - longs) - share * i // (sessions - longs) for i in range(sessions - longs)]
    sizes = long_rows + [max(2, s) for s in short]
    rng.shuffle(sizes)
    return sizes


def _schedule(rng: random.Random, sizes: list[int]) -> list[tuple[float, int]]:
    """Every row as (when, chat), in time order: a chat starts at a random moment of five
    years and writes its rows at random over its span (months for a long one, hours for most)."""
    times: list[tuple[float, int]] = []
    for chat, size in enumerate(sizes):
        begun = rng.uniform(0, 5 * 365)
        span = rng.uniform(60, 200) if size > 1_000 else rng.uniform(0.01, 2)
        times.extend((begun + rng.random() * span, chat) for _ in range(size))
    times.sort()
    return times


def _content(role: str, text: str) -> str:
    part = (
        {"kind": "tool_result", "call_id": "call", "content": text}
        if role == "tool"
        else {"kind": "text", "text": text}
    )
    body: dict[str, object] = {"parts": [part]}
    if role == "assistant":
        body |= {"model": "custom/loopback-chat", "status": "complete"}
    return canonical_json_bytes(body).decode("utf-8")


def _stamp(days: float) -> str:
    seconds = 1_640_995_200 + days * 86_400  # from 2022-01-01
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 1e6):06d}Z"


def _rows(
    rng: random.Random, text: _Text, ids: list[str], times: list[tuple[float, int]]
) -> Iterator[tuple[object, ...]]:
    seqs = [0] * len(ids)
    for n, (when, chat) in enumerate(times):
        seqs[chat] += 1
        seq = seqs[chat]
        role = "tool" if rng.random() < TOOL_SHARE else ("user" if seq % 2 else "assistant")
        body = text.tool_output() if role == "tool" else text.prose()
        yield (f"row-{n:09d}", ids[chat], seq, role, 0, _content(role, body), None, None, _stamp(when))


def generate(
    journal: Journal, *, sessions: int = 10_000, rows: int = 1_000_000, seed: int = SEED, progress: bool = False
) -> Varied:
    rng = random.Random(seed)
    words = vocabulary(rng)
    text = _Text(rng, words)
    sizes = _chat_sizes(rng, sessions, rows)
    times = _schedule(rng, sizes)
    ids = [f"chat-{n:06d}" for n in range(sessions)]
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    for when, chat in times:
        first.setdefault(chat, when)
        last[chat] = when
    with journal.write("generated chats") as conn:
        conn.executemany(
            "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
            [
                (ids[c], " ".join(rng.choices(words[:5000], k=3)).capitalize(), _stamp(first[c]), _stamp(last[c]))
                for c in sorted(first, key=first.__getitem__)
            ],
        )
    started, written = time.perf_counter(), 0
    pending = _rows(rng, text, ids, times)
    while batch := list(itertools.islice(pending, BATCH)):
        with journal.write("generated rows") as conn:
            conn.executemany(f"INSERT INTO transcript_rows ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
        written += len(batch)
        if progress:
            print(f"  {written:,} rows, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return Varied(words=words, sessions=sessions, rows=written)


def search_queries(words: tuple[str, ...], seed: int = SEED) -> dict[str, list[str]]:
    """The issue's queries: a third common words, a third middling, a third rare, each alone
    and in pairs, and their three- and four-letter prefixes."""
    rng = random.Random(seed + 1)
    common, middling, rare = words[:100], words[1_000:5_000], words[20_000:]
    picked = [rng.choice(band) for band in (common, middling, rare) for _ in range(12)]
    pairs = [f"{a} {b}" for a, b in zip(picked[::2], picked[1::2], strict=True)]
    prefixes = sorted({w[:n] for w in picked for n in (3, 4) if len(w) > n})
    return {"one word": picked, "two words": pairs, "3- and 4-letter prefixes": prefixes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("home", type=Path, help="a CAIRN_HOME folder to create")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    path = lifetime_at(args.home)
    if path.exists():
        sys.exit(f"{path} already exists; choose a new folder.")
    started = time.perf_counter()
    with Journal.open(path) as journal:
        made = generate(journal, sessions=args.sessions, rows=args.rows, progress=True)
    size = path.stat().st_size / 1e6
    took = time.perf_counter() - started
    print(f"{made.sessions:,} chats, {made.rows:,} rows in {path} ({size:,.0f} MB) in {took:.0f} s")


if __name__ == "__main__":
    main()
