"""The bench's plots (matplotlib, from the optional ``bench`` extra): per conversation, the
cumulative input cost after each request and the uncached tokens of each request, one line per
strategy."""

from __future__ import annotations

from pathlib import Path

from desktop.bench.report import Figures

__all__ = ["draw"]

COLOURS = {
    "fixed": "#2f6fdb",
    "on_demand": "#1a9850",
    "proxy": "#e6ab02",
    "rewrite": "#d73027",
    "drop_oldest": "#984ea3",
}


def draw(rows: list[Figures], out: Path, model: str) -> list[Path]:
    """One PNG per conversation, two panels each; the paths written."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no Qt
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    written = []
    for name in dict.fromkeys(r.conversation for r in rows):
        mine = [r for r in rows if r.conversation == name]
        figure, (cost, uncached) = plt.subplots(1, 2, figsize=(11, 4), dpi=110)
        for row in mine:
            steps = range(1, len(row.cumulative_usd) + 1)
            colour = COLOURS.get(row.strategy)
            cost.plot(steps, row.cumulative_usd, label=row.strategy, color=colour, linewidth=1.6)
            uncached.plot(steps, row.uncached, label=row.strategy, color=colour, linewidth=1.0, alpha=0.85)
        cost.set_title(f"{name}: cumulative input cost ({model})")
        cost.set_xlabel("request")
        cost.set_ylabel("US dollars")
        uncached.set_title(f"{name}: uncached tokens per request")
        uncached.set_xlabel("request")
        uncached.set_ylabel("tokens")
        for axes in (cost, uncached):
            axes.xaxis.set_major_locator(MaxNLocator(integer=True))
            axes.grid(alpha=0.3)
            axes.legend()
        figure.tight_layout()
        path = out / f"bench-{name}.png"
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    return written
