"""Settings and the first start, in the real window, with a fake keychain at the keyring seam."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from host.paths import CairnPaths
from tests.ui_fixtures import SECRET, WAIT, fill, open_settings, running_cairn


def test_a_settings_round_trip(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=SECRET) as provider, running_cairn(cairn_paths) as run:
        w = run.window
        assert w.pages.currentWidget() is w.start_page
        dialog = open_settings(qtbot, w)
        tab = dialog.accounts
        fill(dialog, provider="custom", name="Loopback", base_url=provider.base_url, model="loopback-chat", key=SECRET)
        QTest.mouseClick(tab.test, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.result.text().startswith("Connected"), timeout=WAIT)
        assert "lists loopback-chat (2 models) and answered a one-token chat" in tab.result.text()
        (tried,) = provider.requests  # the chat Test connection sent: one token, with the key
        assert (tried.body["max_tokens"], tried.authorization) == (1, f"Bearer {SECRET}")
        QTest.mouseClick(tab.load_models, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.model.findText("loopback-reasoner") >= 0, timeout=WAIT)
        QTest.mouseClick(tab.save, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.result.text() == "Saved Loopback.", timeout=WAIT)
        assert "no transport flags" in tab.flags.text()
        assert list(run.keyring.entries.values()) == [SECRET]
        settings_file = cairn_paths.config_dir / "settings.json"
        saved = json.loads(settings_file.read_text())
        assert [a["name"] for a in saved["accounts"]] == ["Loopback"]
        assert SECRET not in settings_file.read_text()
        qtbot.waitUntil(lambda: w.pages.currentIndex() == 0, timeout=WAIT)

        dialog.instructions.setPlainText("Always answer in haiku.")  # saved as typed: no button to forget
        qtbot.waitUntil(lambda: "Saved" in dialog.instructions_status.text(), timeout=WAIT)
        assert json.loads(settings_file.read_text())["custom_instructions"] == "Always answer in haiku."

        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        dialog.theme.activated.emit(dialog.theme.currentIndex())
        qtbot.waitUntil(lambda: json.loads(settings_file.read_text())["theme"] == "dark", timeout=WAIT)
        assert w.chat.message_delegate.dark
        dialog.accept()

        again = open_settings(qtbot, w)
        assert again.accounts.name.text() == "Loopback"
        assert again.accounts.key.placeholderText() == "Saved"
        assert again.instructions.toPlainText() == "Always answer in haiku."
        again.accept()

        w.composer.set_text("Hello")
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: len(provider.requests) == 2, timeout=WAIT)
        assert provider.requests[1].authorization == f"Bearer {SECRET}"
        assert "Always answer in haiku." in provider.requests[1].body["messages"][0]["content"]
        # The window renders the core's snapshots: it never called the keychain itself.
        assert run.keyring.threads
        assert set(run.keyring.threads) == {"cairn-core"}
    leaks = [p for p in Path(os.environ["CAIRN_HOME"]).rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == []


def test_the_flags_panel_shows_published_and_actual_identity(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        fill(dialog, provider="deepseek", name="DeepSeek", model="deepseek-flash")
        assert "✔ mid conversation system" in tab.flags.text()
        assert "Exact published binding" in tab.flags.text()
        assert "Published" in tab.flags.text()
        tab.base_url.setText("https://relay.example.com/v1")
        assert "✘ mid conversation system" in tab.flags.text()
        assert "relay or override" in tab.flags.text()
        assert "https://relay.example.com/v1" in tab.flags.text()
        dialog.reject()


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("not-a-url", "is not an http:// or https:// URL"),
        ("html", "did not answer with a model list (an HTML page)"),
        ("404", "answered 404"),
    ],
)
def test_bad_endpoints_get_a_clear_message(qtbot: QtBot, cairn_paths: CairnPaths, setup: str, expected: str) -> None:
    with LoopbackProvider(models_as_html=setup == "html") as provider, running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        base = {"not-a-url": "not a url", "html": provider.base_url, "404": provider.base_url.removesuffix("/v1")}
        fill(dialog, provider="custom", name="Bad", base_url=base[setup], model="m")
        QTest.mouseClick(tab.test, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: expected in tab.result.text(), timeout=WAIT)
        if setup == "not-a-url":
            QTest.mouseClick(tab.save, Qt.MouseButton.LeftButton)
            assert expected in tab.result.text()
            assert not (cairn_paths.config_dir / "settings.json").exists()
        dialog.reject()


def test_the_first_start_offers_local_servers(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(models=("llama3.2:3b", "qwen3:8b")) as local, running_cairn(cairn_paths) as run:
        w = run.window
        assert w.pages.currentWidget() is w.start_page
        port = int(local.base_url.split(":")[2].split("/")[0])
        w.start_page.ports = {"ollama": port, "lmstudio": 9}  # nothing listens on port 9
        w.start_page.probe(w.client)
        qtbot.waitUntil(lambda: len(w.start_page.found) == 1, timeout=WAIT)
        assert w.start_page.found[0].models == ("llama3.2:3b", "qwen3:8b")
        use = next(b for b in w.start_page.findChildren(type(w.composer.button)) if b.text() == "Use Ollama (local)")
        QTest.mouseClick(use, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: w.pages.currentIndex() == 0, timeout=WAIT)
        account = run.app.settings.accounts[0]
        assert (account.provider, account.base_url, account.default_model) == ("ollama", local.base_url, "llama3.2:3b")
        w.composer.set_text("hi")
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: len(local.requests) == 1, timeout=WAIT)


def test_the_start_page_finds_a_server_started_while_it_is_shown(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    from PySide6.QtWidgets import QLabel

    with running_cairn(cairn_paths) as run:
        w = run.window
        page = w.start_page
        w.resize(420, 700)
        w.show()
        qtbot.waitUntil(page.isVisible, timeout=WAIT)
        with LoopbackProvider(models=("a-model-with-a-rather-long-name:latest",)) as local:
            port = int(local.base_url.split(":")[2].split("/")[0])
            page.ports = {"lmstudio": 9}  # nothing answers there
            QTest.mouseClick(page.scan, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: "No other local server" in page.local_title.text(), timeout=WAIT)
            page._rescan.setInterval(200)  # every few seconds in life; sooner here
            page.ports = {"llamacpp": port}  # a server started meanwhile: found with no click
            qtbot.waitUntil(lambda: len(page.found) == 1, timeout=WAIT)
            assert page.found[0].base_url == local.base_url
            line = next(label for label in page.findChildren(QLabel) if local.base_url in label.text())
            qtbot.waitUntil(line.isVisible, timeout=WAIT)
            assert line.height() >= line.heightForWidth(line.width())  # wrapped to fit, never cut
            assert line.width() >= line.minimumSizeHint().width()  # not squeezed narrower than its text
            assert line.mapTo(page.card, QPoint(line.width(), 0)).x() <= page.card.width()  # nor past the card
            w.hide()
            assert not page._rescan.isActive()  # not shown: no scanning


def test_the_start_page_says_when_nothing_answers(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        page = run.window.start_page
        page.ports = {"ollama": 9}
        page.probe(run.window.client)
        qtbot.waitUntil(lambda: "No other local server" in page.local_title.text(), timeout=WAIT)


def test_the_skills_tab_lists_skills_and_reasons(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    from tests.cache_scenario import write_skill

    write_skill(cairn_paths.skills_dir, "trail-notes", "Keep notes of routes.")
    write_skill(cairn_paths.skills_dir, "Bad Name", "Left out.")
    workspace = tmp_path / "project"
    write_skill(workspace / ".agents" / "skills", "house-style", "Write in the house style.")
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        qtbot.waitUntil(lambda: dialog.skills_tab.skills.count() == 1, timeout=WAIT)
        assert dialog.skills_tab.skills.item(0).text() == "trail-notes (user): Keep notes of routes."
        assert "not a valid skill name" in dialog.skills_tab.invalid.item(0).text()
        dialog.skills_tab.set_workspace(workspace)
        qtbot.waitUntil(lambda: dialog.skills_tab.skills.count() == 2, timeout=WAIT)
        assert dialog.skills_tab.skills.item(0).text() == "house-style (workspace): Write in the house style."
        assert json.loads((cairn_paths.config_dir / "settings.json").read_text())["workspace"] == str(workspace)
        dialog.reject()


def test_account_options_round_trip(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider, running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        fill(dialog, provider="custom", name="Local", base_url=provider.base_url, model="loopback-chat")
        tab.options.max_output.setValue(2048)
        tab.options.first_token.setValue(600)
        tab.options.instructions_first.setChecked(True)
        tab.options.tools.setChecked(False)
        QTest.mouseClick(tab.save, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.result.text() == "Saved Local.", timeout=WAIT)
        saved = json.loads((cairn_paths.config_dir / "settings.json").read_text())["accounts"][0]
        assert (saved["max_output_tokens"], saved["first_token_timeout"]) == (2048, 600.0)
        assert saved["instructions_in_first_message"] is True
        assert saved["tools"] is False
        assert "no system role is used" in tab.flags.text()
        dialog.accept()
        again = open_settings(qtbot, run.window)
        options = again.accounts.options
        assert (options.max_output.value(), options.first_token.value()) == (2048, 600)
        assert options.instructions_first.isChecked()
        assert not options.tools.isChecked()
        again.accept()


def test_test_connection_offers_instructions_in_the_first_message(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    from tests.chat_templates import GEMMA_JINJA

    with LoopbackProvider(chat_template=GEMMA_JINJA) as local, running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        fill(dialog, provider="llamacpp", name="Gemma", base_url=local.base_url, model="loopback-chat")
        QTest.mouseClick(tab.test, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.result.text().startswith("Connected"), timeout=WAIT)
        assert "chat template (llama.cpp /props) has no system role" in tab.result.text()
        assert "Instructions in the first message" in tab.options.hint.text()
        tab.options.instructions_first.setChecked(True)
        QTest.mouseClick(tab.test, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.options.hint.text() == "", timeout=WAIT)
        dialog.reject()


def test_an_account_added_by_the_command_line_meanwhile_survives(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    from desktop.settings.store import Account, SettingsStore

    with running_cairn(cairn_paths) as run:
        w = run.window
        # What `cairn accounts add` does from another process while the window runs.
        SettingsStore(cairn_paths.config_dir / "settings.json").add_account(
            Account(name="FromCli", provider="custom", base_url="http://127.0.0.1:9/v1", default_model="m")
        )
        dialog = open_settings(qtbot, w)
        qtbot.waitUntil(lambda: dialog.accounts.list.count() == 1, timeout=WAIT)
        assert dialog.accounts.list.item(0).text() == "FromCli"
        dialog.instructions.setPlainText("Be brief.")  # saved as typed
        qtbot.waitUntil(lambda: "Saved" in dialog.instructions_status.text(), timeout=WAIT)
        saved = json.loads((cairn_paths.config_dir / "settings.json").read_text())
        assert [a["name"] for a in saved["accounts"]] == ["FromCli"]
        assert saved["custom_instructions"] == "Be brief."
        dialog.accept()


def test_instructions_typed_and_then_closed_are_kept(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentIndex(1)
        QTest.keyClicks(dialog.instructions, "Use metric units.")
        dialog.reject()  # at once, as Escape does: nothing typed is lost
        settings_file = cairn_paths.config_dir / "settings.json"
        qtbot.waitUntil(
            lambda: settings_file.exists() and "Use metric units." in settings_file.read_text(), timeout=WAIT
        )
        assert run.app.settings.custom_instructions == "Use metric units."
        again = open_settings(qtbot, run.window)
        assert again.instructions.toPlainText() == "Use metric units."
        again.reject()
