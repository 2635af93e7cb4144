"""Long chats for the window's tests: a journal seeded with numbered messages, and Cairn open
on the chat's newest page, measured."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.settings.store import Account, SettingsStore
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import Running, running_cairn

WAIT = 10_000


def seed(paths: CairnPaths, messages: int, set_aside: range = range(0)) -> str:
    """A chat of ``messages`` numbered messages, those numbered in ``set_aside`` superseded (as
    an edit leaves the rows it replaced)."""
    with Journal.open(paths.journal) as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("A long chat")
        ids = []
        for n in range(messages):
            text = {"kind": "text", "text": f"message {n}: cairns mark the way over open ground."}
            if n % 2 == 0:
                row = writer.append_user(session.id, {"parts": [text]})
            else:
                row = writer.append_assistant(
                    session.id, {"parts": [text], "model": "loopback-chat", "status": "complete"}
                )
            ids.append(row.id)
        if set_aside:
            writer.append_supersede(session.id, [ids[n] for n in set_aside])
        return session.id


def numbers(run: Running) -> list[int]:
    """The numbers of the messages the view holds, in order."""
    messages = run.window.chat.model_rows().messages
    return [int(m.text.split(":")[0].split()[1]) for m in messages if m.text.startswith("message ")]


@contextmanager
def long_chat(
    qtbot: QtBot, paths: CairnPaths, messages: int, set_aside: range = range(0)
) -> Iterator[tuple[Running, LoopbackProvider]]:
    """Cairn with a chat of ``messages`` open on its newest page, that page measured."""
    session = seed(paths, messages, set_aside)
    with LoopbackProvider() as provider:
        # A long chat, but no summary: the replies scripted are the replies.
        account = Account(
            name="Loop",
            provider="custom",
            base_url=provider.base_url,
            default_model="loopback-chat",
            context_limit=10_000_000,
        )
        SettingsStore(paths.config_dir / "settings.json").add_account(account)
        with running_cairn(paths) as run:
            w = run.window
            w.resize(1000, 700)
            w.sessions.open(session)
            qtbot.waitUntil(lambda: bool(w.chat.model_rows().messages), timeout=WAIT)
            qtbot.waitUntil(lambda: not w.chat.message_delegate.later.busy(), timeout=WAIT)
            yield run, provider


@contextmanager
def long_chat_open(qtbot: QtBot, paths: CairnPaths, messages: int) -> Iterator[Running]:
    """The same, without the provider."""
    with long_chat(qtbot, paths, messages) as (run, _):
        assert len(run.window.chat.model_rows().messages) == min(messages, 200)
        yield run
