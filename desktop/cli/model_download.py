"""`cairn models download`: a GGUF from a web address, a Hugging Face repository and file, or
a suggested model, with its progress on stderr. Ctrl-C pauses it; the same command resumes."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys

from desktop.app import CairnApp, Download, KeychainUnavailable, Progress
from desktop.cli.common import CommandError, printable

__all__ = ["run_download"]

MIB = 1024 * 1024


def run_download(args: argparse.Namespace, app: CairnApp) -> int:
    if args.set_token:
        _keep_token(app)
        if args.source is None:
            return 0
    if args.source is None:
        raise CommandError("Say what to download: a web address, or a Hugging Face owner/name with --file FILE.")
    request = _request(args, app)
    print(printable(f"Downloading {request.file} from {request.host}…"), file=sys.stderr)
    try:
        entry = asyncio.run(app.downloads.fetch(request, _Shower()))
    except KeyboardInterrupt:
        print("\nPaused; run the same command again to go on from where it stopped.", file=sys.stderr)
        return 130
    print(file=sys.stderr)
    print(printable(f"Added {entry.describe()} ({entry.sha256[:12]}). `cairn models use {entry.sha256[:12]}` runs it."))
    return 0


def _request(args: argparse.Namespace, app: CairnApp) -> Download:
    source = args.source.strip()
    if args.file is None and "://" not in source:
        words = source.casefold()
        found = [m for m in app.downloads.curated() if words in m.title.casefold() or words == m.repo.casefold()]
        if len(found) == 1:
            return found[0].request()
        raise CommandError(
            f"{source!r} is not a web address, and names {len(found)} suggested models: give the address, or "
            "owner/name with --file FILE (`cairn models suggested` lists the suggestions)."
        )
    return app.downloads.request(source, file=args.file, sha256=args.sha256)


def _keep_token(app: CairnApp) -> None:
    token = getpass.getpass("Hugging Face token (kept with your other secrets): ").strip()
    if not token:
        raise CommandError("No token was given; nothing was kept.")
    try:
        app.downloads.keep_token(token)
    except KeychainUnavailable as exc:
        app.downloads.keep_token(token, memory_only=True)
        print(
            f"{exc.problem} It is kept in memory for this download only; `cairn secrets file on` keeps it in a file "
            "only you can read.",
            file=sys.stderr,
        )


class _Shower:
    """Progress on stderr: one line redrawn on a terminal, a line every tenth elsewhere."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.shown = -1

    def __call__(self, progress: Progress) -> None:
        total = progress.total
        share = progress.done / total if total else None
        if not self.tty:
            tenth = int(share * 10) if share is not None else progress.done // (100 * MIB)
            if tenth == self.shown:
                return
            self.shown = tenth
        parts = [f"{progress.done / MIB:,.0f} MiB" + (f" of {total / MIB:,.0f} MiB ({share:.0%})" if total else "")]
        parts.append(f"{progress.speed / MIB:,.1f} MiB/s")
        if progress.seconds_left is not None:
            parts.append(f"{progress.seconds_left:,.0f} s left")
        line = " · ".join(parts)
        print(f"\r{line:<70}" if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)
