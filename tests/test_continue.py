"""Continue after a reply cut off at the length limit, through the app the window drives: the
prompt is a model-visible row marked with the reply it continues, the conversation sent stays
append-only, Regenerate and Edit replace the whole joined reply, and the exports give the
joined text (Markdown) or the parts (JSON)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from desktop.app import CONTINUE, NothingToRetry
from desktop.app.cairn import CairnApp
from desktop.loopback import LoopbackProvider, Reply
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from host.content import MessageContent, TextPart, dump
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.fake_keyring import MemoryKeyring
from tests.ui_fixtures import add_loopback_account


def chat(
    cairn_paths: CairnPaths, provider: LoopbackProvider, work: Callable[[CairnApp, str], Awaitable[None]]
) -> tuple[CairnApp, str]:
    """Run ``work`` on a new chat of a Cairn on ``provider``; the Cairn and the chat's id."""
    add_loopback_account(cairn_paths, provider)
    app = CairnApp(Root(cairn_paths, secrets=SecretStore(MemoryKeyring())))
    session = app.chats.new()

    async def run() -> None:
        try:
            await work(app, session.id)
        finally:
            await app.close()

    asyncio.run(run())
    return app, session.id


def shown_rows(app: CairnApp, session_id: str) -> list[tuple[str, str, str | None]]:
    """(role, text, continues) of the rows a person's branch holds, in order."""
    state = app.chats._shared.states.get(session_id)
    out = []
    for row in state.visible():
        body = row.body()
        assert isinstance(body, MessageContent)
        out.append((row.role, body.text(), body.continues))
    return out


def test_continue_appends_a_marked_prompt_and_keeps_the_request_append_only(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        provider.script(Reply(text="The first half", finish_reason="length"), Reply(text=" and the rest."))

        async def work(app: CairnApp, session_id: str) -> None:
            assert (await app.turns.send(session_id, "Tell me everything")).ok
            assert (await app.turns.continue_reply(session_id)).ok

        app, session_id = chat(cairn_paths, provider, work)
        first, second = provider.requests
    rows = shown_rows(app, session_id)
    assert [(role, text) for role, text, _ in rows] == [
        ("user", "Tell me everything"),
        ("assistant", "The first half"),
        ("user", CONTINUE),
        ("assistant", " and the rest."),
    ]
    writer = TranscriptWriter(app.chats._shared.journal)
    reply_id = next(r.id for r in writer.rows(session_id) if r.role == "assistant")
    assert rows[2][2] == reply_id  # the prompt names the reply it continues
    sent = first.body["messages"]
    assert second.body["messages"][: len(sent)] == sent  # nothing earlier was rewritten
    added = second.body["messages"][len(sent) :]
    assert [m["role"] for m in added] == ["assistant", "user"]
    assert added[1]["content"] == CONTINUE or CONTINUE in json.dumps(added[1]["content"])


def test_continue_refuses_a_chat_whose_last_reply_was_not_cut_off(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        provider.script(Reply(text="Whole."))

        async def work(app: CairnApp, session_id: str) -> None:
            with pytest.raises(NothingToRetry, match="nothing to continue"):
                await app.turns.continue_reply(session_id)  # nothing yet
            assert (await app.turns.send(session_id, "Hi")).ok
            with pytest.raises(NothingToRetry, match="nothing to continue"):
                await app.turns.continue_reply(session_id)

        app, session_id = chat(cairn_paths, provider, work)
        assert len(provider.requests) == 1
    assert [role for role, _, _ in shown_rows(app, session_id)] == ["user", "assistant"]


def test_regenerate_and_edit_replace_the_whole_joined_reply(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        provider.script(
            Reply(text="Part one,", finish_reason="length"),
            Reply(text=" part two.", finish_reason="length"),
            Reply(text=" part three."),
            Reply(text="A fresh answer."),
            Reply(text="An edited answer."),
        )
        asked: list[list[dict[str, object]]] = []

        async def work(app: CairnApp, session_id: str) -> None:
            assert (await app.turns.send(session_id, "Question")).ok
            assert (await app.turns.continue_reply(session_id)).ok
            assert (await app.turns.continue_reply(session_id)).ok
            assert (await app.turns.regenerate(session_id)).ok
            asked.append(provider.requests[-1].body["messages"])
            assert [(r, t) for r, t, _ in shown_rows(app, session_id)] == [
                ("user", "Question"),
                ("assistant", "A fresh answer."),
            ]
            assert (await app.turns.edit_last(session_id, "Question, edited")).ok

        app, session_id = chat(cairn_paths, provider, work)
    # Regenerate asked the person's question again, not the continue prompt.
    assert [m["role"] for m in asked[0] if m["role"] != "system"][-1] == "user"
    assert "Question" in json.dumps(asked[0][-1])
    assert CONTINUE not in json.dumps(asked[0])
    assert [(r, t) for r, t, _ in shown_rows(app, session_id)] == [
        ("user", "Question, edited"),
        ("assistant", "An edited answer."),
    ]


def test_markdown_export_joins_the_parts_and_json_keeps_them(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    with LoopbackProvider() as provider:
        provider.script(
            Reply(text="```python\ndef f():\n    retu", finish_reason="length"),
            Reply(text="rn 1\n```\nDone."),
            Reply(text="Next answer."),
        )

        async def work(app: CairnApp, session_id: str) -> None:
            assert (await app.turns.send(session_id, "Write f")).ok
            assert (await app.turns.continue_reply(session_id)).ok
            assert (await app.turns.send(session_id, "And then?")).ok

        app, session_id = chat(cairn_paths, provider, work)
    app.chats.export(session_id, tmp_path / "chat.md")
    app.chats.export(session_id, tmp_path / "chat.json")
    markdown = (tmp_path / "chat.md").read_text()
    assert "```python\ndef f():\n    return 1\n```\nDone.\n" in markdown
    assert CONTINUE not in markdown
    assert markdown.count("## Assistant") == 2
    assert markdown.count("## You") == 2
    assert "## You\n\nAnd then?\n\n## Assistant (loopback-chat)\n\nNext answer." in markdown
    rows = json.loads((tmp_path / "chat.json").read_text())["rows"]
    messages = [r for r in rows if r["role"] in ("user", "assistant")]
    assert [m["content"]["parts"][0]["text"] for m in messages] == [
        "Write f",
        "```python\ndef f():\n    retu",
        CONTINUE,
        "rn 1\n```\nDone.",
        "And then?",
        "Next answer.",
    ]
    assert messages[2]["content"]["continues"] == messages[1]["id"]
    assert all("continues" not in m["content"] for i, m in enumerate(messages) if i != 2)


def test_a_message_without_continues_is_stored_as_before() -> None:
    plain = MessageContent(parts=[TextPart(text="hi")])
    assert dump(plain) == {"kind": "message", "parts": [{"kind": "text", "text": "hi"}], "model": None,
                           "status": "complete", "finish_reason": None}  # fmt: skip
    marked = MessageContent(parts=[TextPart(text=CONTINUE)], continues="r1")
    assert dump(marked)["continues"] == "r1"  # type: ignore[index]
