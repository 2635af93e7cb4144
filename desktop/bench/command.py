"""`cairn bench`: the comparison of the declaration policies (architecture §1), as a tool anyone can run.

Synthetic conversations (short, medium, long with compaction, tool-heavy, over the function
limit) go through Cairn's real runtime under each declaration strategy, and through the naive
hosts it is compared with, against the loopback provider's DeepSeek-like prefix cache. It prints
a table and, with ``--out``, writes JSON, CSV and (with the ``bench`` extra) plots. No claim of
a universal saving is made: the table shows where each strategy costs more.

With ``--account``, the short and medium conversations run against that real account instead,
stopping before ``--max-usd`` is spent, and report the provider's own cached and uncached
figures beside the loopback's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop.app.cairn import CairnApp
from desktop.bench.conversations import CONVERSATIONS, conversation
from desktop.bench.report import Figures, figures, table, to_csv, to_json
from desktop.bench.runner import STRATEGIES, run, strategies_for
from desktop.catalog.modelsdev import Cost
from desktop.cli.common import CommandError
from desktop.root import Root
from host.files import atomic_write_text

__all__ = ["add_bench_command", "run_bench"]

DEFAULT_MODEL = "deepseek/deepseek-chat"


def add_bench_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser("bench", help="compare cached and uncached tokens and cost across strategies")
    bench.add_argument("--conversation", action="append", choices=CONVERSATIONS, help="run only these (repeatable)")
    bench.add_argument("--strategy", action="append", choices=STRATEGIES, help="run only these (repeatable)")
    bench.add_argument("--unit", type=int, default=64, help="the loopback cache unit in tokens (default 64)")
    bench.add_argument("--seed", type=int, default=20261130, help="the conversations' seed")
    bench.add_argument("--model", default=DEFAULT_MODEL, help="PROVIDER/MODEL whose models.dev prices to use")
    bench.add_argument("--out", type=Path, help="write bench.json and bench.csv (and plots) into this folder")
    bench.add_argument("--plots", action="store_true", help="also draw PNG plots (needs the bench extra: matplotlib)")
    bench.add_argument("--account", help="run the short and medium conversations against this real account")
    bench.add_argument("--max-usd", type=float, help="with --account: stop before spending this much")


def run_bench(args: argparse.Namespace, app: CairnApp) -> int:
    """The bench runs below the front door on purpose: it drives the runtime under strategies the
    app does not offer; ``app`` gives it the composition root."""
    services = app.root
    if args.unit < 1 or args.unit > 4096:
        raise CommandError("The cache unit must be between 1 and 4,096 tokens; DeepSeek's is 64.")
    prices = _prices(args.model, services)
    if args.plots and args.out is None:
        raise CommandError("Say where the plots go with --out FOLDER.")
    if args.plots:
        _check_matplotlib()
    if args.account is not None:
        from desktop.bench.endpoint import run_endpoint

        return run_endpoint(args, app, prices)
    if args.max_usd is not None:
        raise CommandError("--max-usd caps a run against a real account; give the account with --account.")
    if args.out is not None:
        _check_out(args.out)
    chats = [conversation(name, args.seed) for name in dict.fromkeys(args.conversation or CONVERSATIONS)]
    planned = [(c, s) for c in chats for s in strategies_for(c) if not args.strategy or s in args.strategy]
    if not planned:
        raise CommandError(
            "None of the strategies asked for runs on these chats: drop_oldest runs on the long chat only, rewrite "
            "on every other one, fixed, on_demand and proxy on all."
        )
    rows: list[Figures] = []
    for chat, strategy in planned:
        print(f"[{chat.name}: {strategy}]", file=sys.stderr, flush=True)
        rows.append(figures(run(chat, strategy, unit=args.unit), args.unit, prices))
    print(table(rows, args.model))
    if args.out is not None:
        _write(args, rows)
    return 0


def _prices(model: str, services: Root) -> Cost:
    provider, _, name = model.partition("/")
    info = services.models_dev.model(provider, name) if name else None
    if info is None or info.cost is None or info.cost.input is None:
        known = sorted(
            f"{p}/{m}"
            for p, entry in services.models_dev.root.items()
            for m, i in entry.models.items()
            if i.cost and i.cost.input is not None
        )
        hint = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
        raise CommandError(
            f"models.dev has no input price for {model!r}; give PROVIDER/MODEL, such as {hint} "
            "(`cairn catalog refresh` updates the list)."
        )
    return info.cost


def _check_out(out: Path) -> None:
    """Refuse a results folder that cannot be one before the run, not after it."""
    if out.exists() and not out.is_dir():
        raise CommandError(f"{out} is a file, not a folder; give --out a folder for the results.")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".cairn-bench-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise CommandError(f"Cairn cannot write the results to {out}: {exc.strerror or exc}.") from None


def _check_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(
            "Plots need matplotlib: install Cairn's bench extra (pip install 'cairn[bench]'), or leave out --plots."
        ) from None


def _write(args: argparse.Namespace, rows: list[Figures]) -> None:
    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        meta: dict[str, object] = {"model": args.model, "unit": args.unit, "seed": args.seed}
        atomic_write_text(out / "bench.json", to_json(rows, meta))
        atomic_write_text(out / "bench.csv", to_csv(rows))
        written = [out / "bench.json", out / "bench.csv"]
        if args.plots:
            from desktop.bench.plots import draw

            written += draw(rows, out, args.model)
    except OSError as exc:
        raise CommandError(f"Cairn could not write the results to {out}: {exc.strerror or exc}.") from None
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
