"""The Context tab of Settings, in the real window: the reply reserve, the retained tail and the
summary route are saved to settings.json and used by the next request; bad values say what is
wrong and save nothing."""

from __future__ import annotations

import json

from pytestqt.qtbot import QtBot

from desktop.context.estimate import budget_for
from desktop.loopback import LoopbackProvider
from desktop.settings.store import Account, SettingsStore
from host.paths import CairnPaths
from tests.ui_fixtures import WAIT, open_settings, running_cairn
from ui.settings_dialog.context_tab import ContextTab


def saved(paths: CairnPaths) -> dict[str, object]:
    return json.loads((paths.config_dir / "settings.json").read_text())


def refused(qtbot: QtBot, tab: ContextTab, paths: CairnPaths, words: str) -> None:
    before = saved(paths)
    tab.status.clear()
    tab.saving.flush()  # as a moment's pause, or closing Settings, does
    qtbot.waitUntil(lambda: tab.status.text() != "", timeout=WAIT)
    assert words in tab.status.text()
    assert saved(paths) == before


def test_context_settings_are_saved_and_bad_ones_are_refused(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    with LoopbackProvider() as provider:
        chat = Account(name="Chat", provider="custom", base_url=provider.base_url, default_model="loopback-chat",
                       context_limit=32_000)  # fmt: skip
        cheap = Account(name="Cheap", provider="custom", base_url=provider.base_url, default_model="small")
        store.add_account(chat)
        store.add_account(cheap)
        with running_cairn(cairn_paths) as run:
            w = run.window
            dialog = open_settings(qtbot, w)
            tab = dialog.context
            dialog.tabs.setCurrentWidget(tab)
            assert tab.reserve.text() == "Automatic"
            assert tab.summary_account.currentText() == "The chat's own model (costs least)"
            names = [tab.summary_account.itemText(i) for i in range(tab.summary_account.count())]
            assert names[1:] == ["Chat", "Cheap"]

            tab.reserve.setValue(100)
            refused(qtbot, tab, cairn_paths, "The room for the reply must be between 256 and 1,000,000 tokens")
            tab.reserve.setValue(4_000)
            tab.tail.setValue(6_000)
            tab.summary_account.setCurrentIndex(names.index("Cheap"))
            tab.summary_model.setText("two words")
            refused(qtbot, tab, cairn_paths, "The summary model cannot be used")
            tab.summary_model.setText("small-model")
            store.remove_account(cheap.id)  # meanwhile, from the command line
            refused(qtbot, tab, cairn_paths, "The account chosen for summaries is not in settings any more")
            store.add_account(cheap)
            tab.summary_model.setText("small")  # the person changes something again: saved as made
            tab.summary_model.setText("small-model")
            tab.saving.flush()  # as a moment's pause, or closing Settings, does
            qtbot.waitUntil(lambda: tab.status.text().startswith("Saved."), timeout=WAIT)
            on_disk = saved(cairn_paths)
            assert on_disk["reply_reserve"] == 4_000
            assert on_disk["retained_tail"] == 6_000
            assert on_disk["summary_route"] == {"account_id": cheap.id, "model": "small-model"}
            assert "Chat" in [a["name"] for a in on_disk["accounts"]]  # the change made meanwhile is kept
            # The budget the next request is estimated with takes the reserve.
            budget = budget_for(run.app.accounts.route(), run.app.settings)
            assert (budget.limit, budget.threshold, budget.tail) == (32_000, 28_000, 6_000)
            dialog.accept()

            # Opened again, the tab shows what was saved; Automatic saves no value.
            dialog = open_settings(qtbot, w)
            tab = dialog.context
            dialog.tabs.setCurrentWidget(tab)
            assert tab.reserve.value() == 4_000
            assert tab.summary_account.currentText() == "Cheap"
            assert tab.summary_model.text() == "small-model"
            tab.reserve.setValue(0)
            tab.summary_account.setCurrentIndex(0)
            tab.saving.flush()  # as a moment's pause, or closing Settings, does
            qtbot.waitUntil(lambda: tab.status.text().startswith("Saved."), timeout=WAIT)
            on_disk = saved(cairn_paths)
            assert on_disk["reply_reserve"] is None
            assert on_disk["summary_route"] is None
            dialog.accept()


def test_an_accounts_context_size_is_set_in_its_options(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from tests.ui_fixtures import fill

    with LoopbackProvider() as provider, running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.accounts
        fill(dialog, provider="custom", name="Small", base_url=provider.base_url, model="loopback-chat")
        tab.options.context.setValue(100)  # too small to be a context
        QTest.mouseClick(tab.save, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "1024" in tab.result.text() or "1,024" in tab.result.text(), timeout=WAIT)
        settings_file = cairn_paths.config_dir / "settings.json"
        assert not settings_file.exists() or saved(cairn_paths)["accounts"] == []
        tab.options.context.setValue(3_000)
        QTest.mouseClick(tab.save, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.result.text() == "Saved Small.", timeout=WAIT)
        assert saved(cairn_paths)["accounts"][0]["context_limit"] == 3_000
        dialog.accept()
        again = open_settings(qtbot, run.window)
        assert again.accounts.options.context.value() == 3_000
        again.accept()
