"""A chat with a two-scope tool, written under one ``PYTHONHASHSEED`` and read under others.

    python -m tests.seed_chat write    --home H --base-url U --catalog C
    python -m tests.seed_chat render   --home H --base-url U --catalog C --session S
    python -m tests.seed_chat continue --home H --base-url U --catalog C --session S

``write`` answers a short chat over HTTP: the tool is found, granted for the chat (a pin is
recorded) and run; it prints the session id. ``render`` makes no request: it rebuilds the
plan of a fresh catalog through a deep copy, a JSON reload and a journal round trip, then
prepares the chat's next request exactly as Cairn would, and prints what came out as JSON,
with every identity ``tests.identity_probe`` computes in the same process.
``continue`` calls the tool again over HTTP with an approver that fails if it is asked.
``park`` leaves a call of the tool waiting on an approval when Cairn closes, and prints the
session and call; ``resume --session S --call C`` approves it once in a new process and prints
what came of it.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import hashlib
import json
import sys
from pathlib import Path

import httpx

from desktop.context.context_engine import ContextEngine
from desktop.context.messages import context_from_rows
from desktop.context.projection import project
from desktop.context.system_state import SystemState
from desktop.session.state import SessionState
from desktop.tools.epochs import frozen_prefix, latest_plan, new_plan
from desktop.tools.registry import ToolRegistry, TurnInputs
from desktop.tools.sources import skill_tools
from desktop.turn.approvals import Approval
from desktop.turn.events import RuntimeEvent
from desktop.turn.preparation import RequestPreparer
from host.canonical import canonical_json_bytes
from host.content import ChatGrant, MessageContent, PlanRecord, ToolResultPart
from host.journal import Journal
from host.paths import CairnPaths
from host.permissions import Permissions, ToolRequest, spec_pin
from host.tools import ToolCatalog
from host.transcript import TranscriptWriter
from tests import identity_probe
from tests.epoch_chat import Never, park
from tests.lab_tools import SYNC_SCOPES, Hooks, Lab, lab_account, lab_route, lab_runtime

SYNC = '[[call lab__sync {"notebook": "a"}]]'


class Grants:
    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        return Approval("chat")


class Unasked:
    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        raise SystemExit(f"asked about {request.call.name} again: its pin moved ({reason})")


async def _talk(args: argparse.Namespace, session_id: str | None, texts: list[str], approver: object) -> str:
    paths = CairnPaths.under(args.home)
    route = lab_route(lab_account(args.base_url), args.catalog, paths)
    with Journal.open(paths.journal) as journal:
        session_id = session_id or journal.create_session().id
        async with httpx.AsyncClient(timeout=30) as http:
            runtime = lab_runtime(journal, route, http, Lab(), Hooks(), mode="ask", approver=approver)  # type: ignore[arg-type]
            for text in texts:
                outcome = await runtime.send(session_id, text)
                if not outcome.ok:
                    raise SystemExit(f"{text!r} failed: {outcome.error}")
    return session_id


async def _park(args: argparse.Namespace) -> dict[str, str]:
    """A chat whose call of the two-scope tool waits on an approval when Cairn closes."""
    paths = CairnPaths.under(args.home)
    route = lab_route(lab_account(args.base_url), args.catalog, paths)
    events: list[RuntimeEvent] = []
    with Journal.open(paths.journal) as journal:
        session_id = journal.create_session().id
        async with httpx.AsyncClient(timeout=30) as http:
            runtime = lab_runtime(journal, route, http, Lab(), Hooks(), mode="ask", approver=Never(), events=events)  # type: ignore[arg-type]
            for text in ["hello", '[[call tool_search {"query": "select:lab__sync"}]]']:
                assert (await runtime.send(session_id, text)).ok
            call_id = await park(runtime, journal, session_id, SYNC, events)
    return {"session": session_id, "call": call_id}


async def _resume(args: argparse.Namespace) -> dict[str, object]:
    """The parked call approved once, in a new process; what came of it."""
    paths = CairnPaths.under(args.home)
    route = lab_route(lab_account(args.base_url), args.catalog, paths)
    lab = Lab()
    with Journal.open(paths.journal) as journal:
        async with httpx.AsyncClient(timeout=30) as http:
            runtime = lab_runtime(journal, route, http, lab, Hooks(), mode="ask", approver=Unasked())  # type: ignore[arg-type]
            outcome = await runtime.resume(args.session, args.call, Approval("once"))
        rows = TranscriptWriter(journal).model_order(args.session)
    results = [p for r in rows if r.role == "tool" and isinstance(b := r.body(), MessageContent) for p in b.parts
               if isinstance(p, ToolResultPart)]  # fmt: skip
    return {
        "ok": outcome.ok,
        "error": outcome.error,
        "runs": lab.runs,
        "last_result": results[-1].content if results else None,
        "plans": [m.reason for r in rows if isinstance(m := r.meta(), PlanRecord)],
        "order": list(SYNC_SCOPES),
    }


def render(args: argparse.Namespace) -> dict[str, object]:
    paths = CairnPaths.under(args.home)
    route = lab_route(lab_account(args.base_url), args.catalog, paths)
    lab = Lab()
    with Journal.open(paths.journal) as journal:
        writer = TranscriptWriter(journal)
        rows = writer.model_order(args.session)
        stored = latest_plan(rows)
        assert stored is not None
        # A fresh plan of this process's catalog, through a copy, a reload and the journal.
        catalog = ToolCatalog(lab.source(TurnInputs(SystemState(), None, None)))  # type: ignore[arg-type]
        names = [s.name for s in catalog.specs]
        plan = new_plan(epoch=1, reason="first_request", prefix=frozen_prefix(rows), catalog=catalog,
                        declared=names, policy="fixed", fallback=None, route=route, mode="ask")  # fmt: skip
        plan = plan.model_copy(update={"created_at": "2026-01-01T00:00:00Z"})
        copied = copy.deepcopy(plan)
        reloaded = PlanRecord.model_validate_json(copied.model_dump_json())
        scratch = journal.create_session().id
        writer.append_meta(scratch, reloaded)
        (round_trip,) = [m for r in writer.rows(scratch) if isinstance(m := r.meta(), PlanRecord)]
        forms = {canonical_json_bytes(p) for p in (plan, copied, reloaded, round_trip)}
        # The chat's next request, prepared as Cairn would: it must keep the stored plan.
        preparer = RequestPreparer(ContextEngine(ToolRegistry([skill_tools, lab.source])), writer)
        permissions = Permissions.of_chat(rows, default_mode="ask")
        session = SessionState.load(journal, args.session)
        prepared = preparer.prepare(session, SystemState(), route=route, permissions=permissions,
                                    anchor=None, overrides=None, tools_allowed=True)  # fmt: skip
        after = writer.model_order(args.session)
        request = project(context_from_rows(after, list(prepared.declared)), route)
        grant = next(m for r in rows if isinstance(m := r.meta(), ChatGrant) and m.target.tool == "lab__sync")
    return {
        "order": list(SYNC_SCOPES),
        "plan_forms": len(forms),
        "plan_sha256": hashlib.sha256(forms.pop()).hexdigest(),
        "hashes": [plan.prefix_sha256, plan.tool_schema_sha256],
        "kept_plan": prepared.plan == stored and prepared.plan_row is None,
        "rows_written": len(after) - len(rows),
        "pin_kept": grant.target.pin == spec_pin(lab.specs["lab__sync"]),
        "activated": sorted(prepared.activated or ()),
        "body_sha256": hashlib.sha256(request.body_bytes).hexdigest(),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["write", "render", "continue", "park", "resume"])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--session")
    parser.add_argument("--call")
    args = parser.parse_args()
    if args.command == "write":
        texts = ["hello", '[[call tool_search {"query": "select:lab__sync"}]]', SYNC, "thanks"]
        print(asyncio.run(_talk(args, None, texts, Grants())))
    elif args.command == "render":
        json.dump({"chat": render(args), "identity": identity_probe.probe()}, sys.stdout)
    elif args.command == "park":
        json.dump(asyncio.run(_park(args)), sys.stdout)
    elif args.command == "resume":
        json.dump(asyncio.run(_resume(args)), sys.stdout)
    else:
        asyncio.run(_talk(args, args.session, [SYNC, "thanks again"], Unasked()))


if __name__ == "__main__":
    main()
