"""Only the branch on screen activates tools (architecture §6 invariant 6): a tool found in a
message the person then edited is not active, neither in the running chat nor after a
restart, and nothing from that branch is written again as the current activation; switching
back to that version brings its activation back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from desktop.loopback import LoopbackProvider
from desktop.settings.routes import ResolvedRoute
from host.content import MessageContent, ToolResultPart
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.lab_tools import Hooks, Lab, lab_account, lab_catalog, lab_route, lab_runtime

SEARCH = 'Find it. [[call tool_search {"query": "select:lab__weather"}]]'
CALL = 'Now use it. [[call lab__weather {"city": "Oslo"}]]'


def last_result(paths: CairnPaths, session_id: str) -> ToolResultPart:
    with Journal.open(paths.journal) as journal:
        rows = TranscriptWriter(journal).model_order(session_id)
    parts = [p for r in rows if r.role == "tool" and isinstance(b := r.body(), MessageContent) for p in b.parts]
    results = [p for p in parts if isinstance(p, ToolResultPart)]
    return results[-1]


def activation_sections(journal: Journal, session_id: str) -> list[object]:
    rows = TranscriptWriter(journal).rows(session_id)
    return [u.content for r in rows if (u := r.section_update()) is not None and u.section == "tool_activation"]


@pytest.mark.parametrize("call", ["live", "after_restart"])
def test_an_activation_in_an_edited_away_branch_does_not_come_back(tmp_path: Path, call: str) -> None:
    paths = CairnPaths.under(tmp_path)
    hooks = Hooks()
    with LoopbackProvider() as provider:
        catalog = lab_catalog(tmp_path / "transport.json", provider.base_url, fixed=False)
        route: ResolvedRoute = lab_route(lab_account(provider.base_url), catalog, paths)
        with Journal.open(paths.journal) as journal:
            session_id = journal.create_session().id

        async def live() -> None:
            with Journal.open(paths.journal) as journal:
                async with httpx.AsyncClient(timeout=30) as http:
                    runtime = lab_runtime(journal, route, http, Lab(), hooks)
                    assert (await runtime.send(session_id, "hello")).ok
                    assert (await runtime.send(session_id, SEARCH)).ok
                    assert activation_sections(journal, session_id)[-1]["active"] == ["lab__weather"]  # type: ignore[index]
                    # The person edits the message that found the tool: that branch is left.
                    assert (await runtime.edit_last(session_id, "Never mind, tell me about stones.")).ok
                    if call == "live":
                        assert (await runtime.send(session_id, CALL)).ok

        asyncio.run(live())
        if call == "live":
            refused = last_result(paths, session_id)
            assert refused.is_error, "the tool from the edited-away branch ran"
            assert "lab__weather" not in hooks.seen
        # What was written as current state since the edit holds nothing from the left branch.
        with Journal.open(paths.journal) as journal:
            written = activation_sections(journal, session_id)
        assert [s["active"] for s in written[:2]] == [[], ["lab__weather"]]  # type: ignore[index]
        assert all(s["active"] == [] for s in written[2:])  # type: ignore[index]

        async def restarted(text: str) -> None:
            with Journal.open(paths.journal) as journal:
                async with httpx.AsyncClient(timeout=30) as http:
                    runtime = lab_runtime(journal, route, http, Lab(), hooks)
                    assert (await runtime.send(session_id, text)).ok

        asyncio.run(restarted(CALL))  # a fresh runtime restores from the journal alone
        assert last_result(paths, session_id).is_error, "restored from the left branch"
        assert "lab__weather" not in hooks.seen

        # Back to the version that found the tool: its activation is the chat's again.
        async def switched_back() -> None:
            with Journal.open(paths.journal) as journal:
                async with httpx.AsyncClient(timeout=30) as http:
                    runtime = lab_runtime(journal, route, http, Lab(), hooks)
                    versions = runtime.versions(session_id)
                    searched = next(
                        r for r in versions.visible if versions.role[r] == "user" and r not in versions.active
                    )
                    runtime.switch_version(session_id, searched)
                    assert (await runtime.send(session_id, CALL)).ok

        asyncio.run(switched_back())
    assert not last_result(paths, session_id).is_error
    assert hooks.seen.count("lab__weather") == 1
