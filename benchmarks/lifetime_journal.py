"""A journal holding a lifetime of history: 10,000 sessions and 1,000,000 rows by default.

    .venv/bin/python -m benchmarks.lifetime_journal /tmp/cairn-lifetime      # a CAIRN_HOME folder

Text is drawn from a Zipf-distributed vocabulary of made-up words with a fixed seed, so the
same journal comes out every time. One session holds 5,000 messages; the others share the
remaining rows evenly. The schema is the journal's own (``Journal.open`` migrates a new file),
and rows are written as ``TranscriptWriter`` writes them (canonical JSON content, UUIDv7 ids,
``seq`` from 1), so the search index is filled by the journal's own triggers; only the
per-row transaction is skipped: each batch of sessions is one transaction with ``executemany``.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from host.canonical import canonical_json_bytes
from host.journal import Journal
from host.paths import CairnPaths

__all__ = ["Lifetime", "generate", "queries", "vocabulary"]

SEED = 16
VOCABULARY = 30_000
ZIPF = 1.07
START_MS = int(datetime(2021, 12, 1, tzinfo=UTC).timestamp() * 1000)
SESSION_GAP_MS = 4 * 3600 * 1000 + 23 * 60 * 1000  # about five years for 10,000 sessions
ROW_GAP_MS = 40_000
BATCH = 250  # sessions per transaction
_ONSETS = ("", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "pl")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou")
_CODAS = ("", "", "n", "r", "s", "t", "l", "m", "nd", "st")
_COLUMNS = "id, session_id, seq, role, hidden, content, model_system, anchor, created_at"


@dataclass(frozen=True)
class Lifetime:
    """What was generated: the long chat's id and the words, most common first."""

    long_chat: str
    words: tuple[str, ...]
    sessions: int
    rows: int


def vocabulary(rng: random.Random, size: int = VOCABULARY) -> tuple[str, ...]:
    """``size`` distinct made-up words of one to four syllables, most common first."""
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < size:
        syllables = rng.choice((1, 2, 2, 3, 3, 3, 4))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))
        if len(word) > 1 and word not in seen:
            seen.add(word)
            words.append(word)
    return tuple(words)


def _cumulative(size: int) -> list[float]:
    return list(itertools.accumulate(1 / (rank**ZIPF) for rank in range(1, size + 1)))


class _Text:
    """Sentences from the vocabulary, each word drawn with Zipf's law."""

    def __init__(self, rng: random.Random, words: tuple[str, ...]) -> None:
        self._rng = rng
        self._words = words
        self._cum = _cumulative(len(words))

    def words(self, count: int) -> list[str]:
        return self._rng.choices(self._words, cum_weights=self._cum, k=count)

    def message(self) -> str:
        count = self._rng.randint(4, 48)
        picked = self.words(count)
        picked[0] = picked[0].capitalize()
        return " ".join(picked) + "."


def _uuid7(ms: int, rng: random.Random) -> str:
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64 | 0b10 << 62 | rng.getrandbits(62)
    return str(uuid.UUID(int=value))


def _stamp(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _content(role: str, text: str) -> str:
    parts = [{"kind": "text", "text": text}]
    body: dict[str, object] = {"parts": parts}
    if role == "assistant":
        body |= {"model": "custom/loopback-chat", "status": "complete"}
    return canonical_json_bytes(body).decode("utf-8")


def _row_counts(sessions: int, rows: int, long_chat: int) -> Iterator[int]:
    """Rows per session: the last session is the long chat; the rest share what is left evenly."""
    others = sessions - 1
    rest = rows - long_chat
    for i in range(others):
        yield rest * (i + 1) // others - rest * i // others
    yield long_chat


def generate(
    journal: Journal,
    *,
    sessions: int = 10_000,
    rows: int = 1_000_000,
    long_chat: int = 5_000,
    seed: int = SEED,
    progress: bool = False,
) -> Lifetime:
    """Fill an empty ``journal`` with ``sessions`` sessions and ``rows`` rows."""
    if sessions < 2 or rows < long_chat + sessions - 1:
        raise ValueError("need at least two sessions and one row for each besides the long chat")
    rng = random.Random(seed)
    words = vocabulary(rng, min(VOCABULARY, max(200, rows // 10)))
    text = _Text(rng, words)
    started = time.perf_counter()
    counts = list(_row_counts(sessions, rows, long_chat))
    long_id = ""
    written = 0
    for first in range(0, sessions, BATCH):
        session_rows: list[tuple[str, str, str, str]] = []
        row_rows: list[tuple[object, ...]] = []
        for index in range(first, min(first + BATCH, sessions)):
            begun = START_MS + index * SESSION_GAP_MS
            session_id = _uuid7(begun, rng)
            title = " ".join(text.words(rng.randint(2, 5))).capitalize()
            last = begun
            for seq in range(1, counts[index] + 1):
                last = begun + seq * ROW_GAP_MS
                role = "user" if seq % 2 else "assistant"
                content = _content(role, text.message())
                row_rows.append((_uuid7(last, rng), session_id, seq, role, 0, content, None, None, _stamp(last)))
            session_rows.append((session_id, title, _stamp(begun), _stamp(last)))
            if index == sessions - 1:
                long_id = session_id
        with journal.write("generated sessions") as conn:
            conn.executemany("INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?,?,?,?)", session_rows)
            conn.executemany(f"INSERT INTO transcript_rows ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row_rows)
        written += len(row_rows)
        if progress:
            done = first + len(session_rows)
            print(f"  {done:,} sessions, {written:,} rows, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return Lifetime(long_chat=long_id, words=words, sessions=sessions, rows=written)


def queries(words: tuple[str, ...], count: int = 50, seed: int = SEED) -> list[str]:
    """``count`` search queries as a person types them: half one word, half two, each word
    drawn with the same Zipf law as the text (so common words come up often)."""
    rng = random.Random(seed + 1)
    cum = _cumulative(len(words))
    found: list[str] = []
    for n in range(count):
        picked = rng.choices(words, cum_weights=cum, k=1 + n % 2)
        found.append(" ".join(picked))
    return found


def common_prefixes(words: tuple[str, ...]) -> list[str]:
    """The one- and two-letter prefixes of the most common words: the worst a search box sees
    while a word is being typed."""
    return sorted({w[:1] for w in words[:20]} | {w[:2] for w in words[:10]})


def lifetime_at(home: Path) -> Path:
    """The journal file of the CAIRN_HOME folder ``home``."""
    import os

    os.environ["CAIRN_HOME"] = str(home)
    return CairnPaths.from_env().journal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("home", type=Path, help="a CAIRN_HOME folder to create")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--long-chat", type=int, default=5_000)
    args = parser.parse_args()
    path = lifetime_at(args.home)
    if path.exists():
        sys.exit(f"{path} already exists; choose a new folder.")
    started = time.perf_counter()
    with Journal.open(path) as journal:
        made = generate(journal, sessions=args.sessions, rows=args.rows, long_chat=args.long_chat, progress=True)
    size = path.stat().st_size / 1e6
    print(
        f"{made.sessions:,} sessions, {made.rows:,} rows in {path} ({size:,.0f} MB) "
        f"in {time.perf_counter() - started:.0f} s; the long chat is {made.long_chat}"
    )


if __name__ == "__main__":
    main()
