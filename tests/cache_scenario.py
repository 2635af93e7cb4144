"""A 32-turn chat that changes Cairn's system content as it goes, for the cache tests and the
cache benchmark.

The chat starts with no skills at all. Along the way the first skills are added, one is
edited, renamed and removed on disk, the custom instructions are edited twice, one turn runs
with a temporary persona, one turn has the model load a skill, every skill is removed, and
one is added back. The chat is driven in a separate process per range of turns, so a whole-process
restart can sit in the middle:

    python -m tests.cache_scenario --session ID --base-url URL --catalog FILE --workspace DIR --turns 0:16

(CAIRN_HOME must be set.) ``naive_bodies`` re-renders the same chat the way a host that
rebuilds its system prompt at the top would, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from pydantic import JsonValue

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context.context_engine import ContextEngine
from desktop.context.messages import Context, Message, SystemUpdatePart, message_from_row
from desktop.context.projection import project
from desktop.context.sections import SKILL_PREFIX, section_order
from desktop.context.system_state import LOAD_SKILL, SystemState
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.routes import ResolvedRoute, resolve_route
from desktop.settings.store import Account
from desktop.turn.runtime import ChatRuntime
from host.folds import fold_sections
from host.journal import Journal
from host.paths import CairnPaths
from host.rows import TranscriptRow
from host.skills import SkillStore

TURNS = 32
# Custom instructions are settings: edited at these turns, read back by a restarted process.
INSTRUCTION_EDITS = {9: "Prefer metric units.", 21: "Prefer metric units. Be brief."}
RESTART_AT = 16
MODEL = "loopback-chat"


def write_skill(root: Path, name: str, description: str, body: str = "") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    body = body or f"# {name}\n\nSteps for {name}."
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


def remove_skill(root: Path, name: str) -> None:
    (root / name / "SKILL.md").unlink()
    (root / name).rmdir()


def set_up(skills: Path, workspace: Path) -> None:
    """The chat starts with no skills: both skill folders exist and are empty."""
    skills.mkdir(parents=True, exist_ok=True)
    SkillStore.workspace_root(workspace).mkdir(parents=True, exist_ok=True)


def apply(turn: int, skills: Path, states: list[SystemState]) -> dict[str, JsonValue] | None:
    """Change the world before ``turn`` (a settings change appends a new state to ``states``);
    return the turn's temporary overrides, if any."""
    workspace_skills = SkillStore.workspace_root(Path(states[-1].workspace or "."))
    if turn == 3:
        write_skill(skills, "recipes", "Cook simple meals from what is at hand.")  # the first skill
    elif turn == 5:
        write_skill(skills, "notes", "Keep tidy notes of what the person decides.")
        write_skill(skills, "trip-planner", "Plan walking trips with distances and daylight.")
        write_skill(workspace_skills, "project-style", "Follow the project's writing style.")
    elif turn == 6:
        write_skill(skills, "notes", "Keep tidy, dated notes of what the person decides and why.")
    elif turn in INSTRUCTION_EDITS:
        states.append(replace(states[-1], custom_instructions=INSTRUCTION_EDITS[turn]))
    elif turn == 14:
        remove_skill(skills, "trip-planner")
    elif turn == 18:
        remove_skill(skills, "recipes")
        write_skill(skills, "cooking", "Cook simple meals from what is at hand.")
    elif turn == 24:
        write_skill(skills, "gardening", "Grow vegetables in small spaces.")
    elif turn == 27:
        return {"instructions": "For this one answer, speak as a cheerful ship's cook."}
    elif turn == 30:
        for name in ("notes", "cooking", "gardening"):  # every skill goes
            remove_skill(skills, name)
        remove_skill(workspace_skills, "project-style")
    elif turn == 31:
        write_skill(skills, "notes", "Keep tidy notes of what the person decides.")  # and one comes back
    return None


def message(turn: int) -> str:
    if turn == 12:
        return 'Turn 12: how do I make soup? [[call load_skill {"name": "recipes"}]]'
    return f"Turn {turn}: tell me one more thing about stone number {turn}, in a sentence or two."


def system_state(paths: CairnPaths, workspace: Path) -> SystemState:
    roots = (("user", paths.skills_dir), ("workspace", SkillStore.workspace_root(workspace)))
    return SystemState(
        workspace=workspace, environment="The person uses Linux with the locale en_GB.", skill_roots=roots
    )


def route(base_url: str, catalog: Path, paths: CairnPaths) -> ResolvedRoute:
    account = Account(name="Loopback", provider="custom", base_url=base_url, default_model=MODEL)
    return resolve_route(account, None, load_transport_catalog(catalog), load_models_dev(paths.cache_dir))


async def drive(session_id: str, base_url: str, catalog: Path, workspace: Path, turns: range) -> None:
    paths = CairnPaths.from_env()
    states = [system_state(paths, workspace)]
    for turn, text in sorted(INSTRUCTION_EDITS.items()):
        if turn < turns.start:
            states.append(replace(states[-1], custom_instructions=text))
    with Journal.open(paths.journal) as journal:
        async with httpx.AsyncClient(timeout=30) as http:
            the_route = route(base_url, catalog, paths)
            client = OpenAICompatClient(http, the_route.actual.base_url, api_key=None)
            runtime = ChatRuntime(journal, the_route, client, engine=ContextEngine(), system=lambda: states[-1])
            for turn in turns:
                overrides = apply(turn, paths.skills_dir, states)
                outcome = await runtime.send(session_id, message(turn), overrides=overrides)
                if not outcome.ok:
                    raise SystemExit(f"turn {turn} failed: {outcome.error}")


def naive_bodies(rows_in_model_order: list[TranscriptRow], the_route: ResolvedRoute) -> list[bytes]:
    """The request bodies a host would send that re-renders its whole system prompt at the top
    whenever anything changes: one per assistant reply in the chat."""
    bodies = []
    for index, row in enumerate(rows_in_model_order):
        if row.role != "assistant" or row.hidden:
            continue
        before = rows_in_model_order[:index]
        state = fold_sections(before)
        top = Message(
            role="system",
            parts=[SystemUpdatePart(section=k, content=state[k]) for k in sorted(state, key=section_order)],
        )
        rest = [m for m in (message_from_row(r) for r in before if r.role != "system") if m is not None]
        tools = [LOAD_SKILL] if any(k.startswith(SKILL_PREFIX) for k in state) else []
        bodies.append(project(Context(messages=[top, *rest], tools=tools), the_route).body_bytes)
    return bodies


def test_catalog(path: Path, base_url: str, *, mid_conversation_system: bool) -> Path:
    """A copy of the transport catalog with one exact binding for the loopback endpoint."""
    data: dict[str, Any] = json.loads(load_transport_catalog().model_dump_json())
    if mid_conversation_system:
        flags = {"mid_conversation_system": True}
        data["bindings"].append({"provider": "custom", "model": MODEL, "base_url": base_url, "flags": flags})
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--session", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--turns", required=True, help="START:STOP")
    args = parser.parse_args()
    start, stop = (int(x) for x in args.turns.split(":"))
    asyncio.run(drive(args.session, args.base_url, args.catalog, args.workspace, range(start, stop)))


if __name__ == "__main__":
    main()
