"""Exporting a chat to Markdown and JSON, through the app the window drives."""

import asyncio
import json
import re
from pathlib import Path

from desktop.app.cairn import CairnApp
from desktop.loopback import LoopbackProvider, Reply
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.ui_fixtures import add_loopback_account

KEY = "sk-export-secret"


def test_export_markdown_and_json(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        account = add_loopback_account(cairn_paths, provider)
        secrets = SecretStore(MemoryKeyring())
        secrets.set(account.id, KEY)
        app = CairnApp(Root(cairn_paths, secrets=secrets))
        session = app.chats.new()
        provider.script(
            Reply(text="Use `stones`.\n\n```sh\nls\n```", reasoning="Think first."),
            Reply(text="second"),
            Reply(text="better second"),
        )

        async def run() -> None:
            assert (await app.turns.send(session.id, "How do I list stones?")).ok
            assert (await app.turns.send(session.id, "And then?")).ok
            assert (await app.turns.regenerate(session.id)).ok
            await app.close()

        asyncio.run(run())
    app.chats.export(session.id, tmp_path / "chat.md")
    app.chats.export(session.id, tmp_path / "chat.json")
    markdown = (tmp_path / "chat.md").read_text()
    assert markdown.startswith("# How do I list stones?\n")
    assert re.search(r"started \d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC\.\*", markdown)  # a date a person reads
    assert "## You\n\nHow do I list stones?" in markdown
    assert "## Assistant (loopback-chat)" in markdown
    assert "<details><summary>Reasoning</summary>" in markdown
    assert "```sh\nls\n```" in markdown
    assert "better second" in markdown
    assert "\nsecond\n" not in markdown  # the superseded answer is not part of the conversation
    assert "*(version 2 of 2)*\n\nbetter second" in markdown  # the answer shown says it has another
    document = json.loads((tmp_path / "chat.json").read_text())
    assert document["cairn_export"] == 1
    assert document["session"]["title"] == "How do I list stones?"
    superseded = [r for r in document["rows"] if r["superseded"]]
    assert [r["content"]["parts"][0]["text"] for r in superseded if r["role"] != "system"] == ["second"]
    (earlier,) = [r for r in superseded if r["role"] == "assistant"]
    (shown,) = [r for r in document["rows"] if r["role"] == "assistant" and "versions" in r and not r["superseded"]]
    assert earlier["versions"] == shown["versions"] == [earlier["id"], shown["id"]]
    assert any(r["role"] == "system" and r["model_system"] for r in document["rows"])
    assert len(document["usage"]) == 3
    for name in ("chat.md", "chat.json"):
        assert KEY not in (tmp_path / name).read_text()
