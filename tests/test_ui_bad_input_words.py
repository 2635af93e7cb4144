"""Bad input hypothesis makes, typed into the MCP server form and the Context tab of the real
Settings: whatever is refused is refused in a sentence, never in pydantic's words or a
traceback. (The account form has the same check in test_ui_account_form.py.)"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.settings.store import Account, SettingsStore
from host.paths import CairnPaths
from tests.pydantic_words import RAW
from tests.ui_fixtures import WAIT, open_settings, running_cairn

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)
ENV_NAMES = st.one_of(st.just(""), st.just("MY VAR"), st.just("A=B"), st.from_regex(r"[A-Z_]{1,8}", fullmatch=True))


def assert_plain(text: str) -> None:
    assert text
    assert not [raw for raw in RAW if raw.lower() in text.lower()], text
    assert text.rstrip().endswith((".", "?", "!", "…")), text


def test_the_mcp_form_refuses_in_sentences(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.mcp
        dialog.tabs.setCurrentWidget(tab)

        @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(
            name=st.one_of(st.just(""), TEXT, st.from_regex(r"[a-z]{1,6}", fullmatch=True)),
            http=st.booleans(),
            where=st.one_of(st.just(""), TEXT, st.sampled_from(["ftp://x", "https://", "mcp.example.com/mcp"])),
            env=st.lists(st.tuples(ENV_NAMES, TEXT), max_size=3),
        )
        def check(name: str, http: bool, where: str, env: list[tuple[str, str]]) -> None:
            tab.new_server()
            form = tab.form
            form.name.setText(name)
            form.transport.setCurrentIndex(form.transport.findData("http" if http else "stdio"))
            form.start.setCurrentIndex(form.start.findData(False))
            form.enabled.setChecked(False)  # nothing saved here is ever started
            (form.url if http else form.command).setText(where)
            for key, value in env:
                form.env.add_row(key, value)
            QTest.mouseClick(tab.save, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: tab.message.text() not in ("", "Saving…"), timeout=WAIT)
            assert_plain(tab.message.text())

        check()
        dialog.reject()


def test_the_context_tab_refuses_in_sentences(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    SettingsStore(cairn_paths.config_dir / "settings.json").add_account(
        Account(name="Cheap", provider="custom", base_url="http://127.0.0.1:9/v1", default_model="small")
    )
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.context
        dialog.tabs.setCurrentWidget(tab)

        @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(reserve=st.integers(0, 2_000), tail=st.integers(0, 2_000), model=TEXT)
        def check(reserve: int, tail: int, model: str) -> None:
            tab.reserve.setValue(reserve)
            tab.tail.setValue(tail)
            tab.summary_account.setCurrentIndex(tab.summary_account.findText("Cheap"))
            tab.summary_model.setText(model)
            tab.status.clear()
            tab.saving.flush()  # as a moment's pause, or closing Settings, does
            qtbot.waitUntil(lambda: tab.status.text() != "", timeout=WAIT)
            assert_plain(tab.status.text())

        check()
        dialog.reject()
