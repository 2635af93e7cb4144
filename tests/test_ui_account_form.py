"""The account form in Settings, in the real window: a preset fills in its own name and model,
Load models chooses from what the endpoint lists, a key typed where no keychain works waits in
the form until the person says where it goes, removing asks first, and no raw validation text
reaches the screen. The keychain is faked only at the keyring seam."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import keyring.backends.fail
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SettingsStore
from host.paths import CairnPaths
from tests.cli_fixtures import cairn
from tests.fake_keyring import BrokenKeyring
from tests.gguf_files import gemma_like
from tests.pydantic_words import RAW
from tests.ui_fixtures import SECRET, WAIT, fill, open_settings, running_cairn
from ui.settings_dialog.accounts_tab import AccountsTab
from ui.widgets.collapsible import Collapsible


def click(button: QPushButton) -> None:
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def choose_provider(tab: AccountsTab, provider: str) -> None:
    """What picking a provider in the box does: its index changes."""
    tab.provider.setCurrentIndex(tab.provider.findData(provider))


def settings_json(paths: CairnPaths) -> dict[str, object] | None:
    path = paths.config_dir / "settings.json"
    return json.loads(path.read_text()) if path.exists() else None


def no_leaks() -> None:
    home = Path(os.environ["CAIRN_HOME"])
    assert [p for p in home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()] == []


def test_choosing_a_preset_fills_in_its_name_and_model(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        tab = open_settings(qtbot, run.window).accounts
        tab.new_account("deepseek")
        assert (tab.name.text(), tab.model.currentText()) == ("DeepSeek", "deepseek-flash")
        choose_provider(tab, "openai")
        assert (tab.name.text(), tab.model.currentText()) == ("OpenAI", "gpt-5-mini")
        assert tab.model.findText("deepseek-flash") < 0  # the last provider's models are not offered
        choose_provider(tab, "ollama")
        assert (tab.name.text(), tab.model.currentText()) == ("Ollama (local)", "")
        tab.name.setText("Work")
        tab.model.setCurrentText("some-local-model")
        choose_provider(tab, "openrouter")
        assert tab.name.text() == "Work"  # a name the person typed is theirs
        assert tab.model.currentText() == "deepseek/deepseek-chat-v3.1"
        choose_provider(tab, "custom")
        assert (tab.name.text(), tab.model.currentText()) == ("Work", "")
        tab.window().reject()


def test_load_models_chooses_from_what_the_endpoint_lists(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    listed = ("text-embedding-small", "llama3.2:3b", "qwen3:8b")
    with LoopbackProvider(models=listed) as local, running_cairn(cairn_paths) as run:
        tab = open_settings(qtbot, run.window).accounts
        tab.new_account("ollama")
        tab.base_url.setText(local.base_url)
        assert tab.model.currentText() == ""  # nothing typed yet: Load models still asks
        click(tab.load_models)
        qtbot.waitUntil(lambda: tab.model.count() == len(listed), timeout=WAIT)
        assert sorted(tab.model.itemText(i) for i in range(tab.model.count())) == sorted(listed)
        assert tab.model.currentText() == "llama3.2:3b"  # the first chat model, not the embedding one
        assert "lists 3 models; llama3.2:3b is chosen" in tab.result.text()
        tab.model.setCurrentIndex(tab.model.findText("qwen3:8b"))
        tab.result.clear()
        click(tab.load_models)
        qtbot.waitUntil(lambda: "is chosen" in tab.result.text(), timeout=WAIT)
        assert tab.model.currentText() == "qwen3:8b"  # the model chosen before stays chosen
        tab.window().reject()


def test_with_no_keychain_the_question_comes_before_anything_is_saved(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with (
        LoopbackProvider(api_key=SECRET) as provider,
        running_cairn(cairn_paths, secrets=SecretStore(keyring.backends.fail.Keyring())) as run,
    ):
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        assert tab.keychain_note.isVisible()
        fill(dialog, provider="custom", name="Loopback", base_url=provider.base_url, model="loopback-chat", key=SECRET)
        click(tab.save)
        qtbot.waitUntil(lambda: tab.saving.question is not None and tab.saving.question.isVisible(), timeout=WAIT)
        question = tab.saving.question
        assert "no system keychain" in question.text()
        assert "Nothing is saved yet." in question.informativeText()
        assert tab.key.text() == SECRET  # the key waits in the form
        assert settings_json(cairn_paths) is None

        click(question.back)
        qtbot.waitUntil(lambda: tab.saving.question is None, timeout=WAIT)
        assert tab.key.text() == SECRET
        assert "still in the form" in tab.result.text()
        assert settings_json(cairn_paths) is None

        click(tab.save)
        qtbot.waitUntil(lambda: tab.saving.question is not None and tab.saving.question.isVisible(), timeout=WAIT)
        click(tab.saving.question.keep)
        qtbot.waitUntil(lambda: tab.result.text().startswith("Saved Loopback."), timeout=WAIT)
        assert "kept in memory until Cairn closes" in tab.result.text()
        assert run.app.accounts.api_key(run.app.settings.accounts[0]) == SECRET
        dialog.accept()
    no_leaks()


@pytest.mark.parametrize("answer", ["keep", "without", "back"])
def test_a_keychain_that_refuses_the_key_leaves_it_in_the_form(
    qtbot: QtBot, cairn_paths: CairnPaths, answer: str
) -> None:
    with (
        LoopbackProvider(api_key=SECRET) as provider,
        running_cairn(cairn_paths, secrets=SecretStore(BrokenKeyring())) as run,
    ):
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        assert not tab.keychain_note.isVisible()  # the keychain looks fine until it refuses
        fill(dialog, provider="custom", name="Loopback", base_url=provider.base_url, model="loopback-chat", key=SECRET)
        click(tab.save)
        qtbot.waitUntil(lambda: tab.saving.question is not None and tab.saving.question.isVisible(), timeout=WAIT)
        question = tab.saving.question
        assert "The account is saved; only its key is waiting." in question.informativeText()
        assert "the collection is locked" in question.detailedText()
        assert tab.key.text() == SECRET  # not thrown away before the question
        assert tab.name.text() == "Loopback"
        saved = settings_json(cairn_paths)
        assert saved is not None
        assert [a["name"] for a in saved["accounts"]] == ["Loopback"]  # type: ignore[union-attr]
        account = run.app.settings.accounts[0]

        click(getattr(question, answer))
        qtbot.waitUntil(lambda: tab.saving.question is None, timeout=WAIT)
        if answer == "keep":
            qtbot.waitUntil(lambda: "kept in memory" in tab.result.text(), timeout=WAIT)
            assert run.app.accounts.api_key(account) == SECRET
        elif answer == "without":
            assert tab.result.text() == "Saved Loopback without a key."
            assert tab.key.text() == ""
            assert run.app.accounts.api_key(account) is None
        else:
            assert "still in the form" in tab.result.text()
            assert tab.key.text() == SECRET
            assert run.app.accounts.api_key(account) is None
        dialog.accept()
    no_leaks()


def test_removing_an_account_asks_first(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    account = Account(name="Trail", provider="custom", base_url="http://127.0.0.1:9/v1", default_model="m")
    store.add_account(account)
    with running_cairn(cairn_paths) as run:
        run.keyring.entries[("Cairn", account.id)] = SECRET
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        qtbot.waitUntil(lambda: tab.list.count() == 1, timeout=WAIT)
        before = (cairn_paths.config_dir / "settings.json").read_bytes()

        click(tab.remove)
        qtbot.waitUntil(lambda: tab.saving.confirmation is not None, timeout=WAIT)
        box = tab.saving.confirmation
        assert box.isVisible()
        assert "'Trail'" in box.text()
        assert "API key is deleted" in box.informativeText()
        assert "Your chats stay" in box.informativeText()
        assert box.defaultButton() is box.cancel  # Enter does not remove
        click(box.cancel)
        qtbot.waitUntil(lambda: tab.saving.confirmation is None, timeout=WAIT)
        assert (cairn_paths.config_dir / "settings.json").read_bytes() == before
        assert tab.list.count() == 1
        assert run.keyring.entries == {("Cairn", account.id): SECRET}

        click(tab.remove)
        qtbot.waitUntil(lambda: tab.saving.confirmation is not None, timeout=WAIT)
        click(tab.saving.confirmation.remove)
        qtbot.waitUntil(lambda: tab.result.text() == "Removed Trail.", timeout=WAIT)
        assert tab.list.count() == 0
        assert run.keyring.entries == {}
        assert settings_json(cairn_paths)["accounts"] == []  # type: ignore[index]
        dialog.accept()


def test_closing_settings_closes_its_open_question(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    store.add_account(Account(name="Trail", provider="custom", base_url="http://127.0.0.1:9/v1", default_model="m"))
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        qtbot.waitUntil(lambda: tab.list.count() == 1, timeout=WAIT)
        click(tab.remove)
        qtbot.waitUntil(lambda: tab.saving.confirmation is not None, timeout=WAIT)
        box = tab.saving.confirmation
        tab.name.setFocus()
        dialog.reject()
        assert tab.saving.confirmation is None
        assert not box.isVisible()
        assert QApplication.activeModalWidget() not in (dialog, box)  # nothing of Settings holds the window
        focused = QApplication.focusWidget()
        assert focused is None or not dialog.isAncestorOf(focused)
        assert dialog.skills_tab.watcher.files() == []
        assert dialog.skills_tab.watcher.directories() == []
        assert [a.name for a in run.app.settings.accounts] == ["Trail"]  # closing is not "Remove"


@st.composite
def bad_forms(draw: st.DrawFn) -> dict[str, object]:
    text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=90)
    return {
        "name": draw(st.one_of(st.just(""), st.just("   "), text, st.text("\x00\x07\t", max_size=3))),
        "base_url": draw(st.one_of(st.just(""), text, st.sampled_from(["ftp://x", "http://", "http://a b/v1"]))),
        "model": draw(st.one_of(st.just(""), text)),
        "headers": draw(st.one_of(st.just(""), text, st.sampled_from(["Authorization: sk-1", "X Y: 1", "novalue"]))),
        "context": draw(st.integers(0, 5_000)),
    }


def test_no_raw_validation_text_reaches_the_screen(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts

        @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(form=bad_forms())
        def check(form: dict[str, object]) -> None:
            tab.new_account("custom")
            tab.name.setText(str(form["name"]))
            tab.base_url.setText(str(form["base_url"]))
            tab.model.setCurrentText(str(form["model"]))
            tab.headers.setPlainText(str(form["headers"]))
            tab.options.context.setValue(int(form["context"]))  # type: ignore[call-overload]
            tab.result.clear()
            click(tab.save)
            qtbot.waitUntil(lambda: tab.result.text() != "", timeout=WAIT)  # a problem at once, or saved
            for shown in (tab.result.text(), tab.flags.text(), tab.model_note.text()):
                assert not [raw for raw in RAW if raw.lower() in shown.lower()], shown
            if not tab.result.text().startswith("Saved"):
                assert tab.result.text()[0].isupper() or tab.result.text()[0] in "'\"", tab.result.text()
                assert tab.result.text().rstrip().endswith("."), tab.result.text()

        check()
        dialog.reject()


# Words for the engine room: they belong in the Advanced area and the inspector, not in Settings' own words.
JARGON = re.compile(
    r"transport flag|published binding|binding|hash|sha-?256|row id|epoch|declaration|prompt cache|"
    r"retained tail|reply reserve|\broute\b",
    re.IGNORECASE,
)


def shown_words(dialog: QWidget) -> list[str]:
    """Every label, check box, button and tool tip text in Settings, outside the Advanced areas."""
    advanced = [c.body for c in dialog.findChildren(Collapsible)]
    words = []
    for widget in dialog.findChildren(QWidget):
        if any(body is widget or body.isAncestorOf(widget) for body in advanced):
            continue
        if isinstance(widget, QLabel | QAbstractButton):
            words.append(widget.text())
        words.append(widget.toolTip())
    return [w for w in words if w]


def test_settings_say_what_things_do_without_jargon(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        fill(dialog, provider="deepseek", name="DeepSeek", model="deepseek-flash")
        for index in range(dialog.tabs.count()):
            dialog.tabs.setCurrentIndex(index)
            jargon = [w for w in shown_words(dialog) if JARGON.search(w)]
            assert jargon == [], (dialog.tabs.tabText(index), jargon)
        dialog.tabs.setCurrentWidget(tab)
        assert not tab.details.expanded  # the Advanced area starts closed
        assert not tab.flags.isVisible()
        assert tab.model_note.text().startswith("This model reads up to")  # the plain part of it stays in view
        QTest.mouseClick(tab.details.toggle, Qt.MouseButton.LeftButton)
        assert tab.flags.isVisible()
        assert "Published binding" in tab.flags.text()
        dialog.reject()


def test_the_form_s_buttons_stay_in_view_and_the_wheel_scrolls_past_its_boxes(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent

    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.resize(900, 420)  # short: the form scrolls
        tab = dialog.accounts
        tab.details.toggle.setChecked(True)  # Advanced open: longer still
        bar = tab.form_scroll.verticalScrollBar()
        qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT)
        for button in (tab.test, tab.save):
            assert not tab.form_scroll.isAncestorOf(button)  # outside what scrolls
        bar.setValue(bar.maximum())
        qtbot.wait(50)
        for button in (tab.test, tab.save):
            assert button.isVisible()
            assert tab.rect().contains(button.geometry().translated(button.parentWidget().mapTo(tab, QPoint(0, 0))))

        box = tab.options.context
        tab.form_scroll.ensureWidgetVisible(box)
        qtbot.wait(50)
        before, value = bar.value(), box.value()

        def wheel() -> None:
            centre = QPointF(box.width() / 2, box.height() / 2)
            event = QWheelEvent(
                centre, box.mapToGlobal(centre), QPoint(0, 0), QPoint(0, 120), Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False,
            )  # fmt: skip
            QApplication.sendEvent(box, event)

        assert before > 0
        tab.name.setFocus()
        wheel()
        assert box.value() == value  # passing over the box does not change it
        assert bar.value() < before  # the form scrolled up instead
        dialog.activateWindow()
        qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT)
        box.setFocus()
        qtbot.waitUntil(box.hasFocus, timeout=WAIT)
        wheel()
        assert box.value() != value  # once chosen, the wheel is the box's
        dialog.reject()


def test_a_result_is_about_the_form_as_it_is_and_a_problem_looks_like_one(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    from desktop.loopback import Fault, Reply
    from ui.widgets.theme import tokens_of

    with LoopbackProvider() as provider, running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        fill(dialog, provider="custom", name="Loop", base_url=provider.base_url, model="loopback-chat", key=SECRET)
        click(tab.test)
        qtbot.waitUntil(lambda: tab.result.text().startswith("Connected"), timeout=WAIT)
        assert tokens_of(tab).danger not in tab.result.styleSheet()
        tab.name.setText("Loop 2")  # a field changed: what was found no longer holds
        assert tab.result.text() == ""

        # A key that may list models but not chat: found by Test connection's one-token chat, said
        # as a problem, and in the words Settings uses of itself.
        provider.script(Reply(fault=Fault("unauthorized")))
        click(tab.test)
        qtbot.waitUntil(lambda: "one-token chat with loopback-chat failed" in tab.result.text(), timeout=WAIT)
        assert tokens_of(tab).danger in tab.result.styleSheet()
        assert "in Settings" not in tab.result.text()
        assert "here" in tab.result.text()

        # An answer that arrives after the form changed is not shown against the new values.
        provider.script(Reply(text="OK", fault=Fault("slow_first_byte", seconds=1.5)))
        click(tab.test)
        qtbot.waitUntil(lambda: tab.result.text() == "Testing the connection…", timeout=WAIT)
        tab.base_url.setText(provider.base_url + "/")
        qtbot.wait(2_500)
        assert tab.result.text() == ""
        no_leaks()
        dialog.reject()


def test_changes_not_saved_are_named_before_they_would_be_lost(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    for name in ("First", "Second"):
        store.add_account(Account(name=name, provider="custom", base_url="http://127.0.0.1:9/v1", default_model="m"))
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        assert tab.name.text() == "First"
        assert tab.guard.unsaved() is None  # shown, not changed
        tab.list.setCurrentRow(1)  # nothing to lose: it just moves on
        assert tab.name.text() == "Second"
        tab.name.setText("Second, renamed")
        tab.list.setCurrentRow(0)  # changes would be lost: asked first
        qtbot.waitUntil(lambda: tab.guard.question is not None and tab.guard.question.isVisible(), timeout=WAIT)
        assert "the account “Second, renamed”" in tab.guard.question.text()
        tab.guard.question.keep.click()
        qtbot.waitUntil(lambda: tab.guard.question is None, timeout=WAIT)
        assert tab.name.text() == "Second, renamed"  # kept, with the list back on it
        assert tab.list.currentRow() == 1

        dialog.reject()  # Settings closing: the same question
        qtbot.waitUntil(lambda: tab.guard.question is not None and tab.guard.question.isVisible(), timeout=WAIT)
        assert dialog.isVisible()
        assert dialog.tabs.currentWidget() is tab
        tab.guard.question.discard.click()
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT)
        assert [a.name for a in store.load().accounts] == ["First", "Second"]  # the changes went, as chosen


def test_the_form_fits_its_dialog_with_room_for_a_wider_font(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    """The form scrolls only up and down, so whatever is wider than its column is cut off (the
    Load models button, once). At the dialog's usual size the form needs at most three quarters
    of its column: a desktop font a third wider than the tests' own still fits."""
    with running_cairn(cairn_paths, secrets=SecretStore(keyring.backends.fail.Keyring())) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        tab.new_account("custom")  # the note about the missing keychain shows too
        qtbot.wait(50)
        inner = tab.form_scroll.widget()
        assert inner.minimumSizeHint().width() <= 0.75 * tab.form_scroll.viewport().width()
        right = tab.load_models.mapTo(dialog, tab.load_models.rect().topRight()).x()
        assert right <= tab.form_scroll.mapTo(dialog, tab.form_scroll.rect().topRight()).x()
        dialog.reject()


def test_a_long_model_id_does_not_push_the_form_off_its_edge(
    qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path
) -> None:
    """The built-in engine's model ids are SHA-256s, 64 characters: the model box keeps its
    width and scrolls its text, rather than widen the form past the dialog (which cut off the
    right side of every field and the notes under them, with a model added to the library)."""
    added = cairn("models", "add", str(gemma_like(tmp_path / "tiny.gguf")), "--copy")
    assert added.returncode == 0, added.stderr
    assert cairn("models", "use", "tiny").returncode == 0
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        assert len(tab.model.currentText()) == 64  # the built-in account, its model's SHA-256
        assert tab.model_note.text().startswith("The built-in engine sets how much")  # not "Cairn does not know"
        qtbot.wait(50)
        inner = tab.form_scroll.widget()
        assert inner.minimumSizeHint().width() <= 0.75 * tab.form_scroll.viewport().width()
        assert inner.width() <= tab.form_scroll.viewport().width()
        dialog.reject()
