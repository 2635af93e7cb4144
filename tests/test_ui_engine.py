"""The built-in engine in the window: the start page's first choice, a chat on this computer,
the engine in the status bar with Unload, Settings → Models, and the switch-model question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from host.paths import CairnPaths
from tests.gguf_files import gemma_like
from tests.ui_fixtures import idle, open_settings, running_cairn, type_and_send
from ui.message_list.display_message import header_line
from ui.widgets.theme import tokens_of

SLOW = 120_000  # ms: the first message starts the engine and reads the default model


def test_chat_on_this_computer_from_the_start_page_to_unload(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        window, page = run.window, run.window.start_page
        page.probe(window.client)
        qtbot.waitUntil(lambda: "tiny" in page.builtin_note.text(), timeout=SLOW)  # it says the model is tiny
        assert page.builtin.isEnabled()
        assert window.pages.currentWidget() is page
        page.builtin.click()
        qtbot.waitUntil(lambda: window.pages.currentWidget() is not page, timeout=SLOW)  # the chat page now
        qtbot.waitUntil(lambda: "Gemma" in window.route_label.text(), timeout=SLOW)
        settings = json.loads((cairn_paths.config_dir / "settings.json").read_text())
        [account] = settings["accounts"]
        assert (account["name"], account["provider"]) == ("Built-in", "built-in")
        assert "Gemma 3 270M" in window.route_label.text()  # the model's name, not its hash
        assert account["default_model"] not in window.route_label.text()
        indicator = window.panel.engine
        assert indicator.isHidden()  # nothing has run yet
        short = run.app.local.builtin_account().model_copy(update={"max_output_tokens": 8})  # type: ignore[union-attr]
        done: list[object] = []
        window.client.run_on_core(lambda app: app.accounts.replace(short), done.append)  # a short reply, on any machine
        qtbot.waitUntil(lambda: bool(done), timeout=SLOW)
        type_and_send(qtbot, window, "Hello there")
        qtbot.waitUntil(lambda: len(window.chat.model_rows().messages) >= 2 and idle(window), timeout=SLOW)
        reply = window.chat.model_rows().messages[-1]
        header = header_line(reply, tokens_of(window))
        assert "Gemma 3 270M" in header  # the reply is headed by the model's name
        assert account["default_model"] not in header
        qtbot.waitUntil(lambda: indicator.isVisible() and "MiB" in indicator.label.text(), timeout=SLOW)
        assert indicator.label.text().startswith("Engine ")
        assert "Gemma 3 270M" in indicator.label.toolTip()  # the model is in the route label beside it
        assert "reused" in indicator.label.text()
        assert indicator.unload.isVisible()
        assert run.app.root.local_engine.running
        indicator.unload.click()
        qtbot.waitUntil(lambda: not run.app.root.local_engine.running, timeout=SLOW)
        qtbot.waitUntil(indicator.isHidden, timeout=SLOW)
        assert run.app.root.slots.states.states()  # the chat was saved before the engine stopped


def test_the_models_tab_adds_tunes_and_removes_a_gguf(
    qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = gemma_like(tmp_path / "tiny.gguf")
    (tmp_path / "notes.gguf").write_text("not a model, only some notes " * 10)
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.models)
        tab = dialog.models
        qtbot.waitUntil(lambda: tab.overview is not None, timeout=10_000)
        chosen = [str(tmp_path / "notes.gguf")]
        monkeypatch.setattr(
            "ui.settings_dialog.models_tab.QFileDialog.getOpenFileName", lambda *_a, **_k: (chosen[0], "")
        )
        asked: list[str] = []
        tab.ask_copy = lambda _path, facts: asked.append(facts) or True  # type: ignore[method-assign]
        tab.add_button.click()
        qtbot.waitUntil(lambda: "not a GGUF model file" in tab.status.text(), timeout=10_000)
        assert asked == []  # a file that is not a model is refused before keep-or-copy is asked
        chosen[0] = str(source)
        tab.add_button.click()
        qtbot.waitUntil(lambda: tab.status.text() == "Added Tiny Test.", timeout=10_000)
        assert asked == ["Tiny Test · gemma3 · 0M · Q4_K_M · 0 MiB"]  # what the file says it is, asked first
        qtbot.waitUntil(lambda: tab.list.count() == 1 and "Tiny Test" in tab.list.item(0).text(), timeout=10_000)
        assert "in Cairn's folder" in tab.list.item(0).text()
        assert "8,192-token context" in tab.list.item(0).text()
        tab.list.setCurrentRow(0)
        tab.context.setValue(2048)
        tab.apply_button.click()
        qtbot.waitUntil(lambda: "2,048-token context" in tab.list.item(0).text(), timeout=10_000)
        tab.confirm_remove = lambda _entry: True  # type: ignore[method-assign]
        tab.remove_button.click()
        qtbot.waitUntil(lambda: "MiB freed" in tab.status.text() or "Removed" in tab.status.text(), timeout=10_000)
        assert not list((cairn_paths.data_dir / "models").glob("*.gguf"))
        tab.idle.setValue(7.5)
        tab.budget.setValue(1.5)  # applied as made: no button, saved once the values are still
        qtbot.waitUntil(lambda: tab.status.text() == "Saved.", timeout=10_000)
        settings = json.loads((cairn_paths.config_dir / "settings.json").read_text())
        assert (settings["engine_idle_minutes"], settings["engine_states_gb"]) == (7.5, 1.5)
        dialog.reject()


def test_switching_the_built_in_model_asks_first(
    qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running_cairn(cairn_paths) as run:
        app = run.app
        other = app.local.add(gemma_like(tmp_path / "other.gguf", **{"general.name": "Other Model"}))
        run.window.client.run_on_core(lambda a: a.local.ensure_account(other))
        bar = run.window.route_bar
        qtbot.waitUntil(lambda: bar.models.findData(other.sha256) >= 0, timeout=10_000)
        default = app.local.default_model()
        assert default is not None
        run.window.client.run_on_core(lambda a: a.publish())
        qtbot.waitUntil(lambda: bar.models.findData(default.sha256) >= 0, timeout=10_000)
        asked: list[str] = []
        answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Yes]

        def question(*args: object, **_kwargs: object) -> QMessageBox.StandardButton:
            asked.append(str(args[2]))
            return answers.pop(0)

        monkeypatch.setattr("ui.chat_panel.route_bar.QMessageBox.question", question)
        chosen: list[str] = []
        bar.model_chosen.connect(lambda _account, model: chosen.append(model))
        index = bar.models.findData(default.sha256)
        assert bar.models.itemText(index) == default.title
        bar.models.setCurrentIndex(index)
        bar.models.activated.emit(index)
        assert "cache starts again" in asked[0]
        assert chosen == []  # Cancel: nothing changes
        assert bar.models.currentData() == other.sha256
        bar.models.setCurrentIndex(index)
        bar.models.activated.emit(index)
        assert chosen == [default.sha256]


def test_the_models_tab_downloads_a_model_by_its_address(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    from tests.model_server import ModelServer

    server = ModelServer(gemma_like(tmp_path / "source.gguf").read_bytes())
    try:
        with running_cairn(cairn_paths) as run:
            dialog = open_settings(qtbot, run.window)
            dialog.tabs.setCurrentWidget(dialog.models)
            box = dialog.models.downloads
            qtbot.waitUntil(lambda: box.choice.count() > 1, timeout=10_000)
            assert "GB to run" in box.choice.itemText(0)  # a suggestion says what it takes
            assert "Hugging Face" in box.status.text()  # what the first suggestion is good at, and where it is from
            box.address.setText("not an address")
            box.start.click()
            qtbot.waitUntil(
                lambda: box.start.isEnabled() and "owner/name/file.gguf" in box.status.text(), timeout=10_000
            )
            box.address.setText(f"{server.base}/files/tiny.gguf")
            box.start.click()
            qtbot.waitUntil(lambda: box.status.text().startswith("Downloaded Tiny Test"), timeout=10_000)
            listed = dialog.models.list
            qtbot.waitUntil(lambda: listed.count() == 1 and "Tiny Test" in listed.item(0).text(), timeout=10_000)
            dialog.reject()
    finally:
        server.close()
