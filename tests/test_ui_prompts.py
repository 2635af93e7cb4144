"""MCP prompts in the composer, in the real window offscreen: ``/`` lists the prompts of the
public everything server (a real process over stdio), typing filters them, a pick with
arguments opens the form, and the prompt's text lands in the composer for the person to edit
and send, with nothing sent. Without prompts, ``/`` is just a character."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.app import ServerState
from desktop.loopback import LoopbackProvider
from host.mcp.prompts import QUOTED
from host.paths import CairnPaths
from tests.mcp_servers import PROMPTS_SERVER
from tests.public_mcp import everything
from tests.ui_fixtures import Running, add_loopback_account, idle, running_cairn
from ui.chat_panel.prompt_form import PromptForm
from ui.chat_panel.prompt_picker import PromptPicker

WAIT = 30_000  # a Node server starting on a loaded machine


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def cairn(cairn_paths: CairnPaths, provider: LoopbackProvider) -> Iterator[Running]:
    add_loopback_account(cairn_paths, provider)  # the chat shows, and a message can be sent
    with running_cairn(cairn_paths) as run:
        yield run


def start_everything(qtbot: QtBot, run: Running) -> None:
    config = everything()
    start(qtbot, run, {"name": config.name, "command": config.command})


def start(qtbot: QtBot, run: Running, fields: dict[str, object]) -> None:
    """Save a server as Settings saves it, started with Cairn, and wait until it is ready."""
    fields = {**fields, "start_at_launch": True, "start_timeout": 30}
    run.window.core.submit(lambda: run.app.mcp.save(fields, {}, {})).result(timeout=10)  # as Settings saves it

    def ready() -> bool:
        views = run.window.core.submit(run.app.mcp.views).result(timeout=10)
        return any(v.status is not None and v.status.state is ServerState.READY for v in views)

    qtbot.waitUntil(ready, timeout=WAIT)


def rows(picker: PromptPicker) -> list[str]:
    return [picker.list.item(row).text().splitlines()[0] for row in range(picker.list.count())]


def typed(run: Running, text: str) -> None:
    run.window.composer.editor.setFocus()
    QTest.keyClicks(run.window.composer.editor, text)


def test_slash_lists_the_prompts_a_pick_fills_its_form_and_the_text_waits_in_the_composer(
    qtbot: QtBot, cairn: Running, provider: LoopbackProvider
) -> None:
    run = cairn
    picker, composer = run.window.panel.prompts, run.window.composer
    typed(run, "/")  # no server yet: the core answers no prompts
    qtbot.waitUntil(lambda: not picker.asking, timeout=WAIT)
    assert not picker.list.isVisible()
    assert composer.text() == "/"
    composer.clear()

    start_everything(qtbot, run)
    typed(run, "/")
    qtbot.waitUntil(picker.list.isVisible, timeout=WAIT)
    assert rows(picker) == [
        "/args-prompt   everything",
        "/completable-prompt   everything",
        "/resource-prompt   everything",
        "/simple-prompt   everything",
    ]
    assert picker.list.item(0).text().splitlines()[1] == "A prompt with two arguments, one required and one optional"
    QTest.keyClick(composer.editor, Qt.Key.Key_Down)
    QTest.keyClick(composer.editor, Qt.Key.Key_Down)
    assert picker.list.currentRow() == 2
    QTest.keyClick(composer.editor, Qt.Key.Key_Up)
    assert picker.list.currentRow() == 1
    QTest.keyClick(composer.editor, Qt.Key.Key_Escape)  # put away: the "/" stays a character
    assert not picker.list.isVisible()
    assert composer.text() == "/"
    QTest.keyClick(composer.editor, Qt.Key.Key_Backspace)
    typed(run, "/")
    qtbot.waitUntil(picker.list.isVisible, timeout=WAIT)
    QTest.keyClicks(composer.editor, "arg")
    assert rows(picker) == ["/args-prompt   everything"]
    QTest.keyClick(composer.editor, Qt.Key.Key_Return)  # picks; sends nothing
    qtbot.waitUntil(lambda: picker.form is not None and picker.form.isVisible(), timeout=WAIT)
    form = picker.form
    assert isinstance(form, PromptForm)
    assert list(form.fields) == ["city", "state"]
    assert not form.ok.isEnabled()  # city is required
    QTest.keyClicks(form.fields["state"], "Viken")
    assert not form.ok.isEnabled()
    QTest.keyClicks(form.fields["city"], "Oslo")
    assert form.ok.isEnabled()
    QTest.mouseClick(form.ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: composer.text() == "What's weather in Oslo, Viken?", timeout=WAIT)
    assert not picker.list.isVisible()
    assert run.window.chat.model_rows().messages == []  # waiting for the person to send it

    composer.clear()
    typed(run, "/simp")
    qtbot.waitUntil(picker.list.isVisible, timeout=WAIT)
    item = picker.list.item(0)
    QTest.mouseClick(picker.list.viewport(), Qt.MouseButton.LeftButton, pos=picker.list.visualItemRect(item).center())
    qtbot.waitUntil(lambda: composer.text() == "This is a simple prompt without arguments.", timeout=WAIT)
    assert run.window.chat.model_rows().messages == []
    QTest.keyClicks(composer.editor, " Briefly.")  # the person's to edit
    QTest.keyClick(composer.editor, Qt.Key.Key_Return)  # and to send, as their own message
    qtbot.waitUntil(lambda: len(provider.requests) == 1 and idle(run.window), timeout=WAIT)
    sent = provider.requests[0].body["messages"][-1]
    assert sent == {"role": "user", "content": "This is a simple prompt without arguments. Briefly."}


def test_a_prompts_reply_shows_quoted_in_the_message_and_its_image_is_attached(qtbot: QtBot, cairn: Running) -> None:
    run = cairn
    picker, composer = run.window.panel.prompts, run.window.composer
    start(qtbot, run, {"name": "notes", "command": sys.executable, "args": [str(PROMPTS_SERVER)]})
    typed(run, "/review")
    qtbot.waitUntil(picker.list.isVisible, timeout=WAIT)
    assert rows(picker) == ["/review   notes"]
    QTest.keyClick(composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: picker.form is not None and picker.form.isVisible(), timeout=WAIT)
    assert picker.form is not None
    QTest.keyClicks(picker.form.fields["topic"], "the parser")
    QTest.keyClick(picker.form.fields["topic"], Qt.Key.Key_Return)  # Enter in the form is Insert
    qtbot.waitUntil(lambda: composer.text().startswith("Please review the parser."), timeout=WAIT)
    assert composer.text() == (
        f"Please review the parser.\n\n{QUOTED}\n> I looked at it before.\n>\n> The tests were missing.\n\n"
        "What changed since?"
    )

    composer.clear()
    typed(run, "/picture")
    qtbot.waitUntil(picker.list.isVisible, timeout=WAIT)
    QTest.keyClick(composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: [p.name for p in composer.attachments()] == ["picture 1.png"], timeout=WAIT)
    assert composer.text().startswith("Look at this:\n\n[image 1: image/png, ")
    assert run.window.chat.model_rows().messages == []
