"""Append rows forever, printing "ack <id>" after each write returns. Killed by the test.

Usage: python -m tests.kill_writer JOURNAL_PATH SESSION_ID
Each row's content is derived from its id (see ``expected_content``), so a reader can tell
a whole row from a partial one.
"""

import hashlib
import sys
from pathlib import Path

from host.ids import new_id
from host.journal import Journal
from host.transcript import TranscriptWriter


def expected_content(row_id: str) -> dict[str, object]:
    digest = hashlib.sha256(row_id.encode()).hexdigest()
    return {"echo": row_id, "digest": digest, "pad": digest * (1 + int(digest[:2], 16) % 40)}


def main() -> None:
    journal = Journal.open(Path(sys.argv[1]))
    writer = TranscriptWriter(journal)
    session_id = sys.argv[2]
    print("ready", flush=True)
    while True:
        row_id = new_id()
        writer.append_user(session_id, expected_content(row_id), row_id=row_id)
        sys.stdout.write(f"ack {row_id}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
