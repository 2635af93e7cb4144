"""Chat settings and assistants in the real window, against the loopback provider: the dialog
opens from the Chat menu's shortcut and from the route bar, says what is inherited, saves a
chat's own system prompt (the next request carries it as an appended update) and resets it;
assistants are made in Settings and start chats with their settings."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.session.chat_settings import chat_settings_of
from host.content import ChatSettings
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import WAIT, add_loopback_account, answered, open_settings, running_cairn
from ui.chat_panel.chat_settings_dialog import ChatSettingsDialog
from ui.window.main_window import MainWindow

STARTERS = ["Writing editor", "Code reviewer", "Translator", "Summariser"]  # the assistants Cairn ships


def open_dialog(qtbot: QtBot, window: MainWindow, *, shortcut: bool = True) -> ChatSettingsDialog:
    actions = window.chat_settings
    actions.dialog = None
    if shortcut:
        window.activateWindow()  # shortcuts act on the active window
        qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
        QTest.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    else:
        window.route_bar.settings_button.click()
    qtbot.waitUntil(lambda: actions.dialog is not None and actions.dialog.isVisible(), timeout=WAIT)
    assert actions.dialog is not None
    return actions.dialog


def own_settings(run_journal, session_id: str) -> ChatSettings:
    return chat_settings_of(TranscriptWriter(run_journal).model_order(session_id))


def test_a_chats_own_system_prompt_is_saved_sent_and_reset(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            w = run.window
            w.core.submit(lambda: run.app.preferences.save_instructions("Prefer metric units.")).result(timeout=WAIT)
            answered(qtbot, w, "one")
            session = w.session_id
            assert session is not None

            dialog = open_dialog(qtbot, w)
            assert dialog.prompt_note.text() == "From Settings: your custom instructions (“Prefer metric units.”)."
            assert dialog.fields.max_output_note.text() == "From Settings: the server decides."
            assert not dialog.prompt_own.isChecked()
            assert not dialog.prompt.isEnabled()
            assert dialog.prompt.toPlainText() == "Prefer metric units."  # what it inherits, shown
            assert not dialog.fields.effort.isEnabled()  # the loopback model has no effort setting
            dialog.prompt_own.setChecked(True)
            dialog.prompt.setPlainText("Talk like a pirate.")
            dialog.fields.temperature_own.setChecked(True)
            dialog.fields.temperature.setValue(0.4)
            dialog.save_button.click()
            qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT)
            assert own_settings(run.journal, session) == ChatSettings(system_prompt="Talk like a pirate.",
                                                                      temperature=0.4)  # fmt: skip

            answered(qtbot, w, "two")
            first, second = provider.requests[0].body["messages"], provider.requests[1].body["messages"]
            assert second[: len(first)] == first
            assert provider.requests[1].body["temperature"] == 0.4
            new_text = "\n".join(m["content"] for m in second[len(first) :] if isinstance(m["content"], str))
            assert '<system-update section="instructions">' in new_text
            assert "Talk like a pirate." in new_text

            dialog = open_dialog(qtbot, w, shortcut=False)  # the route bar's button
            assert dialog.prompt_own.isChecked()
            assert dialog.prompt.toPlainText() == "Talk like a pirate."
            dialog.reset_button.click()
            assert not dialog.prompt_own.isChecked()
            assert not dialog.fields.temperature_own.isChecked()
            dialog.save_button.click()
            qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT)
            assert own_settings(run.journal, session) == ChatSettings()
            assert "Chat settings saved" in w.statusBar().currentMessage()


def test_a_new_window_opens_chat_settings_on_a_new_chat(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            w = run.window
            assert w.session_id is None
            dialog = open_dialog(qtbot, w)
            dialog.fields.max_output_own.setChecked(True)
            dialog.fields.max_output.setValue(300)
            dialog.save_button.click()
            qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT)
            qtbot.waitUntil(lambda: w.session_id == dialog.session_id, timeout=WAIT)
            answered(qtbot, w, "hello")
            assert provider.requests[0].body["max_tokens"] == 300


def test_assistants_are_made_in_settings_and_start_chats(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            w = run.window
            settings = open_settings(qtbot, w)
            tab = settings.assistants
            settings.tabs.setCurrentWidget(tab)
            assert [tab.list.item(i).text() for i in range(tab.list.count())] == STARTERS  # Cairn ships these
            tab.new_button.click()
            tab.save_button.click()
            qtbot.waitUntil(lambda: tab.status.text() != "", timeout=WAIT)
            assert tab.status.text() == "The assistant needs a name; fill it in."

            tab.name.setText("Pirate")
            tab.prompt.setPlainText("Talk like a pirate.")
            assert not tab.model.isEnabled()  # the route used last: no model to choose
            tab.account.setCurrentIndex(tab.account.findText("Loop"))
            qtbot.waitUntil(lambda: tab.model.findText("loopback-reasoner") >= 0, timeout=WAIT)  # the endpoint's
            assert tab.model.isEnabled()
            tab.model.setFocus()
            QTest.keyClicks(tab.model, "loopback-parrot")  # a model it does not list, typed
            assert tab.model.currentText() == "loopback-parrot"
            assert tab.name.text() == "Pirate"  # what was typed went nowhere else
            tab.fields.max_output_own.setChecked(True)
            tab.fields.max_output.setValue(250)
            tab.save_button.click()
            qtbot.waitUntil(lambda: tab.status.text() == "Saved “Pirate”.", timeout=WAIT)
            assert [tab.list.item(i).text() for i in range(tab.list.count())] == [*STARTERS, "Pirate"]
            qtbot.waitUntil(lambda: len(w.snapshot.assistants) == 5, timeout=WAIT)
            settings.accept()

            menu = w.chat_settings.assistants
            menu.aboutToShow.emit()
            entries = [a.text() for a in menu.actions() if a.text()]
            assert entries == [*STARTERS, "Pirate", "Manage assistants…"]
            before = w.session_id
            next(a for a in menu.actions() if a.text() == "Pirate").trigger()
            qtbot.waitUntil(lambda: w.session_id not in (None, before) and w.chat_route is not None, timeout=WAIT)
            assert w.models.currentText() == "loopback-parrot"
            assert w.route_bar.assistant.isVisibleTo(w.route_bar)  # the chat says whose it is
            assert w.route_bar.assistant.text() == "Pirate"
            assert w.panel.welcome.title.text().startswith("Pirate")
            assert "assistant Pirate" in w.panel.welcome.model.text()
            answered(qtbot, w, "ahoy")
            body = provider.requests[0].body
            assert body["model"] == "loopback-parrot"
            assert body["max_tokens"] == 250
            assert "Talk like a pirate." in body["messages"][0]["content"]
            w.new_session()  # a chat of no assistant says none
            assert not w.route_bar.assistant.isVisibleTo(w.route_bar)
            assert w.panel.welcome.title.text() == "What can I help with?"

            # Managing them opens Settings on the Assistants tab; deleting one says so.
            w.settings_dialog = None
            next(a for a in menu.actions() if a.text() == "Manage assistants…").trigger()
            qtbot.waitUntil(lambda: w.settings_dialog is not None, timeout=WAIT)
            settings = w.settings_dialog
            assert settings.tabs.currentWidget() is settings.assistants
            pirate = next(
                r
                for r in range(settings.assistants.list.count())
                if settings.assistants.list.item(r).text() == "Pirate"
            )
            settings.assistants.list.setCurrentRow(pirate)
            settings.assistants.delete_button.click()
            qtbot.waitUntil(lambda: settings.assistants.list.count() == 4, timeout=WAIT)
            assert settings.assistants.status.text().startswith("Deleted “Pirate”.")
            settings.accept()
