"""Per-request overhead of building and serializing a long context (500 messages).

    .venv/bin/python -m benchmarks.context_overhead [--messages 500] [--repeat 50]

A journal in a temporary folder holds a session of user and assistant rows (about 600
characters each) with a few system updates. Each repetition does what the runtime does
before a request: read the rows in model order, build the provider-neutral context, project
it for a route and serialize it canonically. Prints the median and worst of each stage.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.messages import context_from_rows
from desktop.context.projection import project
from desktop.settings.routes import resolve_route
from desktop.settings.store import Account
from host.journal import Journal
from host.transcript import TranscriptWriter

SENTENCE = "Cairns are human-made piles of stones that mark trails, summits and memorials. "


def fill(writer: TranscriptWriter, session_id: str, messages: int) -> None:
    writer.append_system(session_id, "instructions", "You are Cairn, a helpful assistant. " * 20)
    for n in range(messages):
        if n % 50 == 49:
            writer.append_system(session_id, f"guidance:note{n}", SENTENCE * 2)
        text = {"kind": "text", "text": f"{n}: " + SENTENCE * 8}
        if n % 2 == 0:
            writer.append_user(session_id, {"parts": [text]})
        else:
            writer.append_assistant(
                session_id, {"parts": [text], "model": "deepseek/deepseek-flash", "status": "complete"}
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    account = Account(name="bench", provider="deepseek", default_model="deepseek-flash")
    route = resolve_route(account, None, load_transport_catalog(), load_models_dev(Path("/nonexistent")))
    stages: dict[str, list[float]] = {"read rows": [], "build context": [], "project+serialize": [], "total": []}
    with tempfile.TemporaryDirectory() as folder, Journal.open(Path(folder) / "j.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session()
        fill(writer, session.id, args.messages)
        size = 0
        for _ in range(args.repeat + 3):
            t0 = time.perf_counter()
            rows = writer.model_order(session.id)
            t1 = time.perf_counter()
            context = context_from_rows(rows)
            t2 = time.perf_counter()
            request = project(context, route)
            t3 = time.perf_counter()
            size = len(request.body_bytes)
            for name, value in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
                stages[name].append(value * 1000)
    print(f"context overhead, {args.messages} messages ({size / 1024:.0f} KiB request body), {args.repeat} runs:")
    for name, samples in stages.items():
        timed = sorted(samples[3:])  # the first runs warm caches
        print(f"  {name:18} median {statistics.median(timed):7.2f} ms   worst {timed[-1]:7.2f} ms")


if __name__ == "__main__":
    main()
