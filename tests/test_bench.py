"""`cairn bench`: the regression gate on the acceptance comparison, the command's files and its
refusals, and the real-endpoint mode's spending cap (against the loopback provider standing in
for a real account: no real provider is ever called here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.bench.conversations import conversation
from desktop.bench.report import figures, table
from desktop.bench.runner import run
from desktop.catalog.modelsdev import Cost
from desktop.loopback import LoopbackProvider
from host.paths import CairnPaths

REPO = Path(__file__).resolve().parents[1]
PRICES = Cost(input=0.28, output=0.42, cache_read=0.028)
KEY = "sk-bench-test"


@pytest.mark.parametrize("unit", [64, 16])
@pytest.mark.parametrize("name", ["short", "medium", "tool_heavy"])
def test_the_gate_holds_on_each_strategy(name: str, unit: int) -> None:
    chat = conversation(name)
    fixed, on_demand, rewrite = (run(chat, s, unit=unit) for s in ("fixed", "on_demand", "rewrite"))
    f, o, r = (figures(x, unit, PRICES) for x in (fixed, on_demand, rewrite))
    assert f.later_uncached <= 1.05 * f.later_bound, f
    assert f.recaches == 0  # fixed declarations never change the tools
    # On demand pays the one re-cache per activation it reports, and nothing else above the bound.
    assert o.later_uncached - o.recache_excess <= 1.05 * o.later_bound, o
    assert o.recaches == (len(chat.activations) if name == "tool_heavy" else 0)
    # A gate that the naive rewrite passes could not fail.
    assert r.later_uncached >= 1.5 * r.later_bound, r
    # The bench's totals are the provider's: what it recorded, and what Cairn's ledger kept.
    for x, y in ((fixed, f), (on_demand, o)):
        assert y.prompt == sum(q.prompt_tokens for q in x.requests) == x.ledger_prompt
        assert y.prompt - y.cold_uncached - y.later_uncached == x.ledger_cached
    assert r.refused == 0


def test_the_tools_chat_is_at_the_bound_under_the_proxy_and_pays_only_its_recaches_on_demand() -> None:
    chat = conversation("tools_chat")
    runs = {s: run(chat, s) for s in ("on_demand", "proxy")}
    o, p = (figures(runs[s], 64, PRICES) for s in ("on_demand", "proxy"))
    assert runs["on_demand"].failed_calls == runs["proxy"].failed_calls == []  # every scripted call ran
    assert p.recaches == 0  # tools never change: nothing is re-read
    assert p.later_uncached == p.later_bound, p
    assert p.epochs == o.epochs == 3  # the first, the server added, the server removed
    # On demand, each activation and each epoch that voids one changes the tools (eight in all),
    # and pays for nothing else.
    assert o.recaches == 8
    assert o.later_uncached - o.recache_excess <= 1.05 * o.later_bound, o
    assert o.later_uncached > 2 * p.later_uncached


def bench(*args: str, home: Path, key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CAIRN_HOME": str(home)}
    if key:
        env["CAIRN_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "desktop", "bench", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_bench_prints_the_table_and_writes_json_csv_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = bench("--conversation", "short", "--out", str(out), "--plots", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["chat", "strategy", "requests"]
    assert [line.split()[1] for line in lines[1:5]] == ["fixed", "on_demand", "proxy", "rewrite"]
    data = json.loads((out / "bench.json").read_text())
    assert data["model"] == "deepseek/deepseek-chat"
    assert data["unit"] == 64
    assert {r["strategy"] for r in data["results"]} == {"fixed", "on_demand", "proxy", "rewrite"}
    fixed, on_demand = (next(r for r in data["results"] if r["strategy"] == s) for s in ("fixed", "on_demand"))
    # Said plainly: a short chat with a big catalog costs more with fixed declarations.
    assert fixed["cold_uncached"] > on_demand["cold_uncached"]
    assert fixed["input_usd"] > on_demand["input_usd"]
    assert (out / "bench.csv").read_text().splitlines()[0].startswith("conversation,strategy,requests")
    assert (out / "bench-short.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--unit", "0"), "The cache unit must be between 1 and 4,096 tokens"),
        (("--model", "nobody/nothing"), "models.dev has no input price for 'nobody/nothing'"),
        (("--plots",), "Say where the plots go with --out FOLDER."),
        (("--max-usd", "0.05"), "--max-usd caps a run against a real account"),
        (("--account", "Nobody", "--max-usd", "0.05"), "There is no account 'Nobody'"),
        (("--conversation", "huge"), "invalid choice: 'huge'"),
        (("--conversation", "short", "--strategy", "drop_oldest"), "None of the strategies asked for runs"),
    ],
)
def test_bench_refuses_what_it_cannot_do(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = bench(*args, home=tmp_path / "home")
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def add_priced_account(home: Path, base_url: str) -> None:
    """An account on a model models.dev prices (DeepSeek's), whose endpoint is the loopback."""
    env = {**os.environ, "CAIRN_HOME": str(home), "CAIRN_API_KEY": KEY}
    added = subprocess.run(
        [sys.executable, "-m", "desktop", "accounts", "add", "Priced", "--provider", "deepseek", "--base-url", base_url,
         "--model", "deepseek-chat"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr


def test_the_real_endpoint_mode_keeps_to_its_cap_and_leaves_the_journal_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with LoopbackProvider(api_key=KEY) as provider:
        add_priced_account(home, provider.base_url)
        no_cap = bench("--account", "Priced", home=home, key=KEY)
        assert no_cap.returncode == 2
        assert "needs a spending cap: add --max-usd" in no_cap.stderr
        whole = bench("--account", "Priced", "--max-usd", "0.05", home=home, key=KEY)
        assert whole.returncode == 0, whole.stderr
        sent = len(provider.requests)
        capped = bench("--account", "Priced", "--max-usd", "0.001", home=home, key=KEY)
    assert sent == 3 + 20  # the short and the medium conversations, one request a turn
    assert "deepseek/deepseek-chat at " in whole.stdout
    assert [line.split()[1] for line in whole.stdout.splitlines() if line.split()[:1] in (["short"], ["medium"])] == [
        "provider",
        "provider",
    ]
    spent = float(whole.stdout.split("spent $")[1].split()[0])
    assert 0 < spent <= 0.05
    assert capped.returncode == 1
    assert "stopped before turn" in capped.stdout
    assert float(capped.stdout.split("spent $")[1].split()[0]) <= 0.001
    assert KEY not in whole.stdout + whole.stderr + capped.stdout + capped.stderr
    # The bench's chats are not the person's.
    with __import__("host.journal", fromlist=["Journal"]).Journal.open(CairnPaths.under(home).journal) as journal:
        assert journal.sessions() == []


def test_a_results_folder_that_cannot_be_one_is_refused_before_the_run(tmp_path: Path) -> None:
    a_file = tmp_path / "results"
    a_file.write_text("not a folder")
    done = bench("--out", str(a_file), home=tmp_path / "home")
    assert done.returncode == 2
    assert f"{a_file} is a file, not a folder; give --out a folder for the results." in done.stderr
    assert "[short:" not in done.stderr  # refused before anything ran


def test_a_chat_asked_for_twice_runs_once(tmp_path: Path) -> None:
    done = bench("--conversation", "short", "--conversation", "short", "--strategy", "fixed", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert [line.split()[:2] for line in done.stdout.splitlines()[1:3]] == [["short", "fixed"], []]


def test_a_naive_host_refused_on_every_request_reads_not_applicable() -> None:
    figures_of = figures(run(conversation("over_limit"), "rewrite"), 64, PRICES)
    assert figures_of.refused == figures_of.requests > 0
    assert figures_of.ratio is None
    line = table([figures_of], "deepseek/deepseek-chat").splitlines()[1]
    assert "n/a" in line
