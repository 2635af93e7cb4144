"""A provider that echoes the API key back, a model that repeats it, a tool that returns it:
the key reaches no byte Cairn writes. The journal, its -wal, the backups, the logs and the
exports are scanned raw for a canary key, while the journal is open and after it closes."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from desktop.app.cairn import CairnApp
from desktop.logs import configure_logging
from desktop.loopback import Fault, LoopbackProvider, Reply
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account
from desktop.turn.events import TurnFailed
from host.journal import Journal
from host.paths import CairnPaths
from host.schema import MIGRATIONS
from tests.cache_scenario import write_skill
from tests.fake_keyring import MemoryKeyring

CANARY = "sk-canary-7f3e9b21c4d05a68"


def leaks(root: Path) -> list[str]:
    """Files under ``root`` holding the canary; the skill folder the test wrote it into aside."""
    return [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and "skills" not in p.relative_to(root).parts and CANARY.encode() in p.read_bytes()
    ]


def test_an_echoed_key_reaches_no_file(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    home = cairn_paths.data_dir.parent
    log_file = configure_logging(cairn_paths.log_dir)
    assert log_file is not None
    with Journal.open(cairn_paths.journal, migrations=MIGRATIONS[:3]) as old:
        old.create_session("from an older Cairn")  # so opening migrates, and takes a backup
    write_skill(cairn_paths.skills_dir, "notes", "Keep notes.", body=f"Use the key {CANARY} for everything.")
    failures: list[str] = []

    def on_event(item: object) -> None:
        event = getattr(item, "event", None)
        if isinstance(event, TurnFailed):
            failures.append(event.message)

    try:
        with LoopbackProvider(api_key=CANARY) as provider:
            services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
            app = CairnApp(services, on_event=on_event)
            account = Account(name="Echo", provider="custom", base_url=provider.base_url, default_model="loopback-chat")
            app.accounts.save(account, CANARY)
            session = app.chats.new()
            provider.script(
                Reply(fault=Fault("echo_key")),
                Reply(text=f"Your key is {CANARY}, again: {CANARY}.", reasoning=f"They said {CANARY}", chunk_chars=3),
                Reply(tool_calls=(("c1", "load_skill", f'{{"name": "{CANARY}"}}'),)),
                Reply(tool_calls=(("c2", "load_skill", '{"name": "notes"}'),)),
                Reply(text="Done."),
            )

            async def chat() -> None:
                assert not (await app.turns.send(session.id, "What is my key?")).ok
                assert (await app.turns.retry(session.id)).ok
                assert (await app.turns.send(session.id, "Load a skill named after my key.")).ok

            asyncio.run(chat())
            app.chats.export(session.id, tmp_path / "chat.md")
            app.chats.export(session.id, tmp_path / "chat.json")
            wal = cairn_paths.journal.with_name(cairn_paths.journal.name + "-wal")
            assert wal.exists()
            assert wal.stat().st_size > 0  # scanned while the journal is open
            assert leaks(home) == []
            asyncio.run(app.close())
            services.close()
    finally:
        root = logging.getLogger()
        for handler in [h for h in root.handlers if getattr(h, "baseFilename", "") == str(log_file)]:
            root.removeHandler(handler)
            handler.close()
    assert any("[redacted]" in f and "Incorrect API key provided" in f for f in failures), failures
    assert all(CANARY not in f for f in failures)
    assert list((cairn_paths.data_dir / "backups").iterdir())
    assert (tmp_path / "chat.json").read_text().count("[redacted]") >= 4
    assert leaks(home) == []
    assert leaks(tmp_path) == []
    # Sent, of course: the key goes where it belongs, in the Authorization header.
    assert provider.requests[0].authorization == f"Bearer {CANARY}"
