"""The context engine's promise, measured on a 32-turn chat with a whole-process restart in the
middle: requests only ever append, so the provider charges only what is new."""

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from desktop.loopback import LoopbackProvider, RecordedRequest
from desktop.loopback.cache import PrefixCache, prompt_tokens
from host.journal import Journal
from host.paths import CairnPaths
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter
from tests import cache_scenario
from tests.recorded_requests import messages_prefix

REPO = Path(__file__).resolve().parents[1]
UNIT = 64


def run_chat(home: Path, provider: LoopbackProvider, catalog: Path, workspace: Path) -> str:
    """Drive the scenario in two processes (a restart at turn 16); return the session id."""
    env = {**os.environ, "CAIRN_HOME": str(home)}
    paths = CairnPaths.under(home)
    cache_scenario.set_up(paths.skills_dir, workspace)
    with Journal.open(paths.journal) as journal:
        session_id = journal.create_session("cache scenario").id
    for turns in (f"0:{cache_scenario.RESTART_AT}", f"{cache_scenario.RESTART_AT}:{cache_scenario.TURNS}"):
        done = subprocess.run(
            [sys.executable, "-m", "tests.cache_scenario", "--session", session_id, "--base-url", provider.base_url,
             "--catalog", str(catalog), "--workspace", str(workspace), "--turns", turns],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    return session_id


def check_append_only(requests: list[RecordedRequest]) -> None:
    for number, (earlier, later) in enumerate(pairwise(requests), start=1):
        before = messages_prefix(earlier.body_bytes)
        assert later.body_bytes.startswith(before + b","), f"request {number} rewrote earlier content"
        assert later.body.get("tools") == earlier.body.get("tools"), f"request {number} changed tools"


def journal_shape(home: Path, session_id: str) -> list[tuple]:
    """Every row, without what two runs on two routes never share: how long each tool took,
    and the route (and time) each epoch's plan records."""
    with Journal.open(CairnPaths.under(home).journal) as journal:
        rows = TranscriptWriter(journal).rows(session_id)
    seq_of = {r.id: r.seq for r in rows}

    def untimed(content: object) -> object:
        if isinstance(content, dict) and isinstance(content.get("parts"), list):
            return {**content, "parts": [{k: v for k, v in p.items() if k != "elapsed_ms"} for p in content["parts"]]}
        return content

    def unrouted(meta: object) -> object:
        # A plan records the route it was made for, and when: the rest must match.
        if isinstance(meta, dict) and meta.get("kind") == "plan":
            return {k: v for k, v in meta.items() if k not in ("account_id", "route", "created_at")}
        return meta

    return [(r.seq, r.role, r.hidden, untimed(r.content), unrouted(r.model_system), seq_of.get(r.anchor)) for r in rows]


@pytest.fixture(scope="module")
def chats(tmp_path_factory: pytest.TempPathFactory):
    """The same chat on a route with mid_conversation_system and on one without (whose
    provider rejects any later system message, as deepseek-reasoner does)."""
    root = tmp_path_factory.mktemp("cache")
    workspace = root / "workspace"
    results = {}
    with (
        LoopbackProvider(cache_unit=UNIT) as native,
        LoopbackProvider(cache_unit=UNIT, reject_late_system=True) as strict,
    ):
        for name, provider, mid in (("native", native, True), ("folded", strict, False)):
            catalog = cache_scenario.test_catalog(root / f"{name}.json", provider.base_url, mid_conversation_system=mid)
            home = root / name
            session_id = run_chat(home, provider, catalog, workspace)
            results[name] = (home, session_id, provider.requests, provider.base_url, catalog)
    return results


@pytest.mark.slow
def test_every_request_begins_with_the_previous_requests_messages(chats) -> None:
    for name in ("native", "folded"):
        requests = chats[name][2]
        assert all(r.status == 200 for r in requests), name
        assert len(requests) == cache_scenario.TURNS + 1  # one turn loads a skill: two requests
        check_append_only(requests)


@pytest.mark.slow
def test_uncached_tokens_are_what_was_appended_rounded_to_the_cache_unit(chats) -> None:
    for name in ("native", "folded"):
        requests = chats[name][2]
        assert requests[0].cached_tokens == 0
        for earlier, later in pairwise(requests):
            uncached = later.prompt_tokens - later.cached_tokens
            appended = later.prompt_tokens - earlier.prompt_tokens
            # Cached: every whole unit of the previous prompt. Uncached: what was appended plus
            # the previous prompt's last partial unit.
            assert later.cached_tokens == earlier.prompt_tokens // UNIT * UNIT
            assert appended <= uncached < appended + UNIT


@pytest.mark.slow
def test_updates_are_in_place_on_one_route_and_folded_on_the_other(chats) -> None:
    native, folded = chats["native"][2], chats["folded"][2]
    late_system = [m for r in native for m in r.body["messages"][1:] if m["role"] == "system"]
    assert any('section="skill:recipes"' in m["content"] for m in late_system)
    assert any('<system-update section="instructions">' in m["content"] for m in late_system)
    for request in folded:
        assert [m["role"] for m in request.body["messages"][1:]].count("system") == 0
    folded_users = [m["content"] for m in folded[-1].body["messages"] if m["role"] == "user"]
    assert any('<system-update section="skill:recipes">' in c for c in folded_users)
    assert any('<system-update section="skill:trip-planner" removed="true"/>' in c for c in folded_users)


@pytest.mark.slow
def test_both_routes_keep_the_identical_journal(chats) -> None:
    native = journal_shape(chats["native"][0], chats["native"][1])
    folded = journal_shape(chats["folded"][0], chats["folded"][1])
    assert native == folded
    assert not any("<system-update" in str(row[3]) for row in native)  # the fold is never stored


@pytest.mark.slow
def test_the_journal_records_each_change_once_where_it_happened(chats) -> None:
    home, session_id = chats["native"][0], chats["native"][1]
    with Journal.open(CairnPaths.under(home).journal) as journal:
        rows = TranscriptWriter(journal).rows(session_id)
    updates = [(u.section, u.content is None) for r in rows if (u := r.section_update()) is not None]
    baseline = [("instructions", False), ("guidance:environment", False), ("guidance:workspace", False)]
    assert updates[: len(baseline)] == baseline  # no skills at first: no skills header either
    later = updates[len(baseline) :]
    assert later == [
        ("skills", False),  # turn 3: the first skill brings the header
        ("skill:recipes", False),
        ("skill:notes", False),  # turn 5: three more
        ("skill:project-style", False),
        ("skill:trip-planner", False),
        ("skill:notes", False),  # turn 6: edited
        ("instructions", False),  # turn 9: custom instructions
        ("skill:trip-planner", True),  # turn 14: removed
        ("skill:cooking", False),  # turn 18: renamed, in rendering order
        ("skill:recipes", True),
        ("instructions", False),  # turn 21
        ("skill:gardening", False),  # turn 24
        ("instructions", False),  # turn 27: temporary persona
        ("instructions", False),  # turn 28: restored
        ("skills", True),  # turn 30: every skill removed
        ("skill:cooking", True),
        ("skill:gardening", True),
        ("skill:notes", True),
        ("skill:project-style", True),
        ("skills", False),  # turn 31: one is back
        ("skill:notes", False),
    ]
    persona, restored = [r for r in rows if (u := r.section_update()) is not None and u.section == "instructions"][-2:]
    assert "ship's cook" in persona.model_system["content"]
    assert restored.model_system["content"].endswith("Prefer metric units. Be brief.")
    anchored_users = {r.anchor for r in rows if r.anchor}
    assert all(a in {r.id for r in rows if r.role == "user"} for a in anchored_users)


def uncached(requests: list[RecordedRequest]) -> int:
    return sum(r.prompt_tokens - r.cached_tokens for r in requests)


@pytest.mark.slow
def test_a_naive_top_rewrite_pays_far_more_uncached_tokens(chats) -> None:
    home, session_id, requests, base_url, catalog = chats["native"]
    paths = CairnPaths.under(home)
    with Journal.open(paths.journal) as journal:
        rows: list[TranscriptRow] = TranscriptWriter(journal).model_order(session_id)
    route = cache_scenario.route(base_url, catalog, paths)
    naive = cache_scenario.naive_bodies(rows, route)
    assert len(naive) == len(requests)
    cache = PrefixCache(UNIT)
    naive_uncached = 0
    for body in naive:
        tokens = prompt_tokens(json.loads(body))
        naive_uncached += len(tokens) - cache.charge(tokens)
    appended_only = uncached(requests)
    assert naive_uncached > 3 * appended_only, (naive_uncached, appended_only)
