"""The presets in the window: the account form shows a preset's address as the base URL's
placeholder, a "Get a key" link to its key page and its note (Anthropic's says its endpoint
caches no prompts and names the route that does); the inspector says where a chat's context
figure came from, here an Ollama server's own word, and how to give the model more."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.settings.store import Account, SettingsStore
from host.paths import CairnPaths
from tests.server_kinds import StatingServer
from tests.ui_fixtures import WAIT, idle, open_settings, running_cairn, type_and_send


def test_each_preset_shows_its_address_key_page_and_note(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        tab = open_settings(qtbot, run.window).accounts
        help_ = tab.preset_help
        tab.provider.setCurrentIndex(tab.provider.findData("anthropic"))
        assert tab.base_url.placeholderText() == "https://api.anthropic.com/v1"
        assert (tab.name.text(), tab.model.currentText()) == ("Anthropic", "claude-sonnet-4-6")
        assert help_.key_link.isVisibleTo(tab)
        assert 'href="https://console.anthropic.com/settings/keys"' in help_.key_link.text()
        assert help_.key_link.openExternalLinks()
        assert "does not cache prompts" in help_.note.text()
        assert "OpenRouter" in help_.note.text()
        tab.provider.setCurrentIndex(tab.provider.findData("groq"))
        assert tab.base_url.placeholderText() == "https://api.groq.com/openai/v1"
        assert 'href="https://console.groq.com/keys"' in help_.key_link.text()
        assert not help_.note.isVisibleTo(tab)  # Groq has nothing to warn of
        tab.provider.setCurrentIndex(tab.provider.findData("ollama"))
        assert not help_.key_link.isVisibleTo(tab)  # no key for a server on this computer
        assert "silently drops the start of a longer prompt" in help_.note.text()
        tab.provider.setCurrentIndex(tab.provider.findData("custom"))
        assert not help_.isVisibleTo(tab)


def test_the_inspector_says_the_context_came_from_ollama_and_how_to_raise_it(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    model = "qwen3:8b"
    with (
        LoopbackProvider(models=(model,)) as upstream,
        StatingServer("ollama", model, upstream, num_ctx=8_192, model_max=40_960, loaded=False) as server,
    ):
        account = Account(name="Ollama", provider="ollama", base_url=server.base_url, default_model=model)
        SettingsStore(cairn_paths.config_dir / "settings.json").add_account(account)
        with running_cairn(cairn_paths) as run:
            w = run.window
            w.activateWindow()
            qtbot.waitUntil(w.isActiveWindow, timeout=WAIT)
            QTest.keyClick(w, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
            type_and_send(qtbot, w, "Where does the trail go?")
            qtbot.waitUntil(lambda: idle(w) and w.inspector.list.count() == 1, timeout=WAIT)
            details = w.inspector.details.toPlainText()
            assert "Context: 8,192 tokens, from the server (Ollama /api/show)" in details
            assert "OLLAMA_CONTEXT_LENGTH=32768 ollama serve" in details
            qtbot.waitUntil(lambda: "/ 8,192" in w.context_label.text(), timeout=WAIT)  # the fill, counted
