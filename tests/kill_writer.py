"""Append rows forever, printing "ack <id>" after each commit returns. Killed by the test.

Usage: python -m tests.kill_writer JOURNAL_PATH SESSION_ID

Each turn commits a user row, then an assistant row and its usage row in one transaction,
as the chat runtime does. Just before the usage row it prints "between <id>" and pauses a
moment, so that the test can kill it between the two writes of that transaction.
Each row's content and each usage row are derived from the row's id (see
``expected_content`` and ``expected_usage``), so a reader can tell a whole row from a
partial one.
"""

import hashlib
import sys
import time
from pathlib import Path
from typing import Any

from host.ids import new_id
from host.journal import Journal
from host.transcript import TranscriptWriter
from host.usage import UsageLedger

PAUSE_BETWEEN = 0.001  # seconds between the assistant row and its usage row


def expected_content(row_id: str) -> dict[str, object]:
    digest = hashlib.sha256(row_id.encode()).hexdigest()
    return {"echo": row_id, "digest": digest, "pad": digest * (1 + int(digest[:2], 16) % 40)}


def expected_usage(row_id: str) -> dict[str, Any]:
    """The usage recorded for assistant row ``row_id``; every third one was not reported."""
    digest = hashlib.sha256(row_id.encode()).hexdigest()
    prompt, cached = 1000 + int(digest[:4], 16), int(digest[4:7], 16) % 1000
    reported = int(digest[7:9], 16) % 3 != 0
    return {
        "row_id": row_id,
        "account_id": "kill-test",
        "provider": "loopback",
        "model": "loopback-chat",
        "api": "openai-completions",
        "base_url": "http://127.0.0.1:9/v1",
        "prompt_tokens": prompt if reported else None,
        "cached_tokens": cached if reported else None,
        "uncached_tokens": prompt - cached if reported else None,
        "output_tokens": int(digest[9:11], 16) if reported else None,
        "reasoning_tokens": 0 if reported else None,
        "cost_usd": prompt / 1e6 if reported else None,
        "body_sha256": digest,
    }


def main() -> None:
    journal = Journal.open(Path(sys.argv[1]))
    writer, ledger = TranscriptWriter(journal), UsageLedger(journal)
    session_id = sys.argv[2]
    print("ready", flush=True)
    while True:
        user_id = new_id()
        writer.append_user(session_id, expected_content(user_id), row_id=user_id)
        sys.stdout.write(f"ack {user_id}\n")
        sys.stdout.flush()

        reply_id = new_id()
        with journal.write("a reply and its usage"):
            writer.append(session_id, "assistant", expected_content(reply_id), row_id=reply_id)
            sys.stdout.write(f"between {reply_id}\n")
            sys.stdout.flush()
            time.sleep(PAUSE_BETWEEN)
            ledger.record(session_id=session_id, **expected_usage(reply_id))
        sys.stdout.write(f"ack {reply_id}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
