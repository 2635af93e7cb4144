"""Projection: one request body per route, deterministic, with folds that are never stored."""

import json
import os
import subprocess
import sys
from pathlib import Path

from desktop.context.messages import (
    Context,
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    context_from_rows,
)
from desktop.context.projection import MISSING_RESULT, project
from host.journal import Journal
from host.paths import CairnPaths
from host.tools import ToolSpec
from host.transcript import TranscriptWriter
from tests.projection_fixtures import CHAT, assistant, make_route, system, user

REPO = Path(__file__).resolve().parents[1]


def test_leading_sections_become_one_instruction_message_in_the_routes_role() -> None:
    body = project(Context(messages=CHAT[:3]), make_route(developer_role=True)).body
    assert body["messages"][0] == {"role": "developer", "content": "You are Cairn.\n\nLinux"}
    body = project(Context(messages=CHAT[:3]), make_route(developer_role=False)).body
    assert body["messages"][0]["role"] == "system"


def test_updates_stay_in_place_where_mid_conversation_system_is_granted() -> None:
    messages = project(Context(messages=CHAT), make_route(mid_conversation_system=True)).body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "system", "user"]
    assert (
        messages[3]["content"] == '<system-update section="instructions">\nYou are Cairn. Be brief.\n</system-update>'
    )


def test_updates_fold_into_the_next_user_message_otherwise() -> None:
    messages = project(Context(messages=CHAT), make_route()).body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[3]["content"] == (
        '<system-update section="instructions">\nYou are Cairn. Be brief.\n</system-update>\n\nagain'
    )


def test_the_fold_is_stable_as_the_chat_grows() -> None:
    route = make_route()
    tail_update = [*CHAT, assistant(TextPart(text="ok")), system("guidance:os", None)]
    first = project(Context(messages=tail_update), route).body["messages"]
    grown = project(Context(messages=[*tail_update, assistant(TextPart(text="x")), user("more")]), route)
    assert grown.body["messages"][: len(first)] == first
    assert first[-1] == {"role": "user", "content": '<system-update section="guidance:os" removed="true"/>'}


def test_reasoning_is_replayed_dropped_or_sent_as_text() -> None:
    route = make_route(reasoning_replay=True)
    own = assistant(ReasoningPart(text="mine", model=route.key), TextPart(text="answer"))
    foreign = assistant(ReasoningPart(text="theirs", model="other/model"), TextPart(text="answer"))
    replayed = project(Context(messages=[user("q"), own]), route).body["messages"][1]
    assert replayed["reasoning_content"] == "mine"
    assert replayed["content"] == "answer"
    dropped = project(Context(messages=[user("q"), own]), make_route()).body["messages"][1]
    assert "reasoning_content" not in dropped
    assert dropped["content"] == "answer"
    as_text = project(Context(messages=[user("q"), foreign]), route).body["messages"][1]
    assert as_text["content"] == "<reasoning>\ntheirs\n</reasoning>\n\nanswer"


def test_a_tool_call_without_a_result_gets_a_synthetic_error_result() -> None:
    call = ToolCallPart(call_id="c1", name="search", arguments={"q": "x"})
    done = ToolCallPart(call_id="c2", name="search", arguments={"q": "y"})
    messages = [
        user("find"),
        assistant(call, done),
        Message(role="tool", parts=[ToolResultPart(call_id="c2", content="found y")]),
        user("and?"),
    ]
    out = project(Context(messages=messages), make_route()).body["messages"]
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "user"]
    assert out[2] == {"role": "tool", "tool_call_id": "c2", "content": "found y"}
    assert out[3] == {"role": "tool", "tool_call_id": "c1", "content": MISSING_RESULT}


def test_updates_never_split_a_call_from_its_results() -> None:
    call = ToolCallPart(call_id="c1", name="search", arguments={})
    messages = [
        user("go"),
        assistant(call),
        system("tool_activation", {"active": ["search"]}),
        Message(role="tool", parts=[ToolResultPart(call_id="c1", content="r")]),
    ]
    out = project(Context(messages=messages), make_route(mid_conversation_system=True)).body["messages"]
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "system"]


def test_images_reach_only_models_that_take_images() -> None:
    picture = Message(role="user", parts=[TextPart(text="look"), ImagePart(media_type="image/png", data="iVBORw0")])
    vision = project(Context(messages=[picture]), make_route("openai", "gpt-4o"))
    assert vision.body["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0"},
    }
    blind = project(Context(messages=[picture]), make_route())
    assert "deepseek-flash does not accept images" in blind.body["messages"][0]["content"]
    assert blind.notes == ["An image was left out: deepseek-flash does not accept images."]


def test_tools_are_declared_in_name_order_with_canonical_schemas() -> None:
    tools = [
        ToolSpec(name="zeta", description="z", parameters={"type": "object", "properties": {"b": {}, "a": {}}}),
        ToolSpec(name="alpha", description="a"),
    ]
    request = project(Context(messages=[user("x")], tools=tools), make_route())
    assert [t["function"]["name"] for t in request.body["tools"]] == ["alpha", "zeta"]
    assert b'"properties":{"a":{},"b":{}}' in request.body_bytes
    assert json.loads(request.body_bytes) == request.body


def test_the_fold_is_never_written_to_the_journal(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    session = journal.create_session()
    writer.append_system(session.id, "instructions", "v1")
    u = writer.append_user(session.id, {"parts": [{"kind": "text", "text": "hi"}]})
    writer.append_system(session.id, "instructions", "v2", anchor=u.id)
    before = [r.model_dump() for r in writer.rows(session.id)]
    project(context_from_rows(writer.model_order(session.id)), make_route())
    assert [r.model_dump() for r in writer.rows(session.id)] == before


PROBE = """
import sys
from tests.projection_fixtures import CHAT, make_route
from desktop.context.messages import Context
from host.tools import ToolSpec
tools = [ToolSpec(name=n, description=n, parameters={"type": "object", "properties": {k: {} for k in "zyxw"}},
                  required_scopes={"s.b", "s.a", "s.c"}) for n in ("t2", "t1")]
sys.stdout.buffer.write(project_bytes := __import__("desktop.context.projection").context.projection.project(
    Context(messages=CHAT, tools=tools), make_route()).body_bytes)
"""


def test_the_same_context_gives_the_same_bytes_in_any_process(cairn_paths: CairnPaths) -> None:
    outputs = set()
    for seed in ("0", "1", "7", "42"):
        done = subprocess.run(
            [sys.executable, "-c", PROBE],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
