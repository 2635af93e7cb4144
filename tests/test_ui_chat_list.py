"""The chat list: pinned chats on top, the rest grouped by day in local time, archived chats
folded away at the end; headers are never selected and the keyboard steps over them."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from host.journal import Journal, SessionRecord
from host.paths import CairnPaths
from tests.ui_fixtures import rename_in_place, running_cairn
from ui.window.chat_groups import day_group, group_chats
from ui.window.chat_list import ARCHIVED_ROLE, HEADER_ROLE, ID_ROLE, PINNED_ROLE, ChatList
from ui.window.main_window import MainWindow

WAIT = 10_000
# 09:30 on 12 March in a zone five hours ahead of UTC.
ZONE = timezone(timedelta(hours=5))
NOW = datetime(2026, 3, 12, 9, 30, tzinfo=ZONE)


def utc_text(local: datetime) -> str:
    return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record(title: str, local: datetime, *, pinned: str | None = None, archived: str | None = None) -> SessionRecord:
    when = utc_text(local)
    return SessionRecord(
        id=title, title=title, created_at=when, updated_at=when, pinned_at=pinned, archived_at=archived
    )


def test_chats_are_grouped_by_the_local_calendar_day() -> None:
    # 00:10 local on the 12th is still the 11th in UTC: it is today's all the same.
    assert day_group(utc_text(NOW.replace(hour=0, minute=10)), NOW) == "today"
    assert day_group(utc_text(NOW.replace(day=11, hour=23, minute=59)), NOW) == "yesterday"
    assert day_group(utc_text(NOW.replace(day=10, hour=0, minute=1)), NOW) == "week"
    assert day_group(utc_text(NOW.replace(day=5)), NOW) == "week"  # seven days back
    assert day_group(utc_text(NOW.replace(day=4)), NOW) == "older"
    assert day_group(utc_text(NOW + timedelta(days=2)), NOW) == "today"  # a clock set back

    found = [
        (record("this morning", NOW - timedelta(hours=2)), ""),
        (record("archived", NOW - timedelta(hours=3), pinned=None, archived="2026-03-12T01:00:00.000000Z"), ""),
        (record("pinned first", NOW - timedelta(hours=4), pinned="2026-03-01T00:00:00.000000Z"), ""),
        (record("last night", NOW - timedelta(hours=10)), ""),
        (record("pinned later", NOW - timedelta(days=40), pinned="2026-03-02T00:00:00.000000Z"), ""),
        (record("monday", NOW - timedelta(days=3)), ""),
        (record("last year", NOW - timedelta(days=400)), ""),
    ]
    groups = group_chats(found, NOW)
    assert [(g.title, [r.title for r, _ in g.chats]) for g in groups] == [
        ("Pinned", ["pinned later", "pinned first"]),  # the latest pinned on top
        ("Today", ["this morning"]),
        ("Yesterday", ["last night"]),
        ("Previous 7 days", ["monday"]),
        ("Older", ["last year"]),
        ("Archived", ["archived"]),
    ]


def seed(paths: CairnPaths) -> dict[str, str]:
    """Chats last active at different times, one pinned and one archived."""
    ids: dict[str, str] = {}
    with Journal.open(paths.journal) as journal:
        for title in ("Old soup", "Monday walk", "Yesterday's bread", "Today's lentils", "Pinned plans", "Archived"):
            ids[title] = journal.create_session(title).id
        journal.pin_session(ids["Pinned plans"], True)
        journal.archive_session(ids["Archived"], True)
    times = {
        "Old soup": NOW - timedelta(days=30),
        "Monday walk": NOW - timedelta(days=3),
        "Yesterday's bread": NOW - timedelta(days=1),
        "Today's lentils": NOW - timedelta(hours=1),
        "Pinned plans": NOW - timedelta(days=60),
        "Archived": NOW - timedelta(hours=2),
    }
    conn = sqlite3.connect(paths.journal)
    with conn:
        for title, when in times.items():
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (utc_text(when), ids[title]))
    conn.close()
    return ids


def shown(window: MainWindow) -> list[str]:
    """The list as a person sees it: headers in brackets, chats by title, folded ones left out."""
    return window.sidebar.list.texts()


def show_grouped(window: MainWindow, qtbot: QtBot) -> None:
    window.sidebar.list.now = lambda: NOW
    window.sessions.refresh()
    qtbot.waitUntil(lambda: "[Pinned]" in shown(window), timeout=WAIT)


def test_the_list_shows_groups_and_folds_the_archive(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    ids = seed(cairn_paths)
    with running_cairn(cairn_paths) as run:
        w = run.window
        show_grouped(w, qtbot)
        assert shown(w) == [
            "[Pinned]", "Pinned plans",
            "[Today]", "Today's lentils",
            "[Yesterday]", "Yesterday's bread",
            "[Previous 7 days]", "Monday walk",
            "[Older]", "Old soup",
            "[Archived (1)]",
        ]  # fmt: skip
        chats = w.sidebar.list
        headers = [chats.model().index(r, 0) for r in range(chats.count())]
        headers = [h for h in headers if h.data(HEADER_ROLE)]
        assert not any(h.flags() & Qt.ItemFlag.ItemIsSelectable for h in headers)

        # The Archived header opens the archive and folds it again.
        archived_header = next(h for h in headers if h.data(HEADER_ROLE) == "archived")
        QTest.mouseClick(chats.viewport(), Qt.MouseButton.LeftButton, pos=chats.visualRect(archived_header).center())
        assert shown(w)[-2:] == ["[Archived (1)]", "Archived"]
        assert "open" in chats.model().index(archived_header.row(), 0).data(Qt.ItemDataRole.AccessibleTextRole)
        chats.toggle_archive()
        assert "Archived" not in shown(w)

        # A search lists what it finds flat, archived chats too.
        w.sidebar.search.setText("Archived")
        qtbot.waitUntil(lambda: shown(w) == ["Archived"], timeout=WAIT)
        w.sidebar.search.clear()
        qtbot.waitUntil(lambda: "[Pinned]" in shown(w), timeout=WAIT)
        assert set(chats.chat_ids()) == set(ids.values())


def test_the_keyboard_steps_over_headers_and_opens_the_archive(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    ids = seed(cairn_paths)
    with running_cairn(cairn_paths) as run:
        w = run.window
        show_grouped(w, qtbot)
        chats = w.sidebar.list
        chats.setFocus()
        chats.setCurrentIndex(chats.index_of(ids["Pinned plans"]))
        qtbot.waitUntil(lambda: w.session_id == ids["Pinned plans"], timeout=WAIT)
        visited = []
        for _ in range(4):
            QTest.keyClick(chats, Qt.Key.Key_Down)
            visited.append(chats.currentIndex().data())
        # Each press lands on the next chat, never on a date header; the Archived switch is a stop.
        assert visited == ["Today's lentils", "Yesterday's bread", "Monday walk", "Old soup"]
        qtbot.waitUntil(lambda: w.session_id == ids["Old soup"], timeout=WAIT)
        QTest.keyClick(chats, Qt.Key.Key_Down)
        assert chats.currentIndex().data(HEADER_ROLE) == "archived"
        assert w.session_id == ids["Old soup"]  # a header opens nothing
        QTest.keyClick(chats, Qt.Key.Key_Return)
        QTest.keyClick(chats, Qt.Key.Key_Down)
        assert chats.currentIndex().data() == "Archived"
        qtbot.waitUntil(lambda: w.session_id == ids["Archived"], timeout=WAIT)
        QTest.keyClick(chats, Qt.Key.Key_Home)
        assert chats.currentIndex().data() == "Pinned plans"  # not the Pinned header above it
        QTest.keyClick(chats, Qt.Key.Key_Up)
        assert chats.currentIndex().data() == "Pinned plans"  # nothing above but a header
        QTest.keyClick(chats, Qt.Key.Key_Down)
        QTest.keyClick(chats, Qt.Key.Key_Up)
        assert chats.currentIndex().data() == "Pinned plans"


def menu_action(window: MainWindow, session_id: str, text: str) -> None:
    index = window.sidebar.list.index_of(session_id)
    assert index.isValid()
    menu = window.sidebar.chat_menu(index)
    assert menu is not None
    action = next(a for a in menu.actions() if a.text() == text)
    action.trigger()


def test_pin_unpin_archive_and_unarchive_from_the_menu(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    ids = seed(cairn_paths)
    with running_cairn(cairn_paths) as run:
        w = run.window
        show_grouped(w, qtbot)
        lentils, soup = ids["Today's lentils"], ids["Old soup"]

        menu_action(w, soup, "Pin")
        qtbot.waitUntil(lambda: shown(w)[:3] == ["[Pinned]", "Old soup", "Pinned plans"], timeout=WAIT)
        menu_action(w, soup, "Unpin")
        qtbot.waitUntil(lambda: shown(w)[-3:] == ["[Older]", "Old soup", "[Archived (1)]"], timeout=WAIT)

        # Archiving takes the chat out of the list (and off the pins); the chat on screen stays
        # on screen, and the archive opens to show where it went.
        w.sidebar.list.setCurrentIndex(w.sidebar.list.index_of(lentils))
        qtbot.waitUntil(lambda: w.session_id == lentils, timeout=WAIT)
        menu_action(w, lentils, "Archive")
        qtbot.waitUntil(lambda: "[Archived (2)]" in shown(w), timeout=WAIT)
        assert shown(w)[-3:] == ["[Archived (2)]", "Today's lentils", "Archived"]
        assert "[Today]" not in shown(w)
        assert w.sidebar.current_id() == lentils
        assert run.journal.session(lentils).archived_at is not None  # type: ignore[union-attr]

        menu = w.sidebar.chat_menu(w.sidebar.list.index_of(lentils))
        assert menu is not None
        assert "Pin" not in [a.text() for a in menu.actions()]  # an archived chat is not pinned
        menu_action(w, lentils, "Unarchive")
        qtbot.waitUntil(lambda: shown(w)[2:4] == ["[Today]", "Today's lentils"], timeout=WAIT)
        assert run.journal.session(lentils).archived_at is None  # type: ignore[union-attr]


def test_one_group_of_chats_needs_no_header(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        for title in ("first", "second"):
            journal.create_session(title)
    with running_cairn(cairn_paths) as run:
        w = run.window
        qtbot.waitUntil(lambda: len(shown(w)) == 2, timeout=WAIT)
        assert shown(w) == ["second", "first"]
        assert w.sidebar.list.headers() == []


def test_the_rename_and_title_of_a_grouped_chat(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    ids = seed(cairn_paths)
    with running_cairn(cairn_paths) as run:
        w = run.window
        show_grouped(w, qtbot)
        assert w.sidebar.title_of(ids["Monday walk"]) == "Monday walk"
        rename_in_place(w.sidebar.list, ids["Monday walk"], "Tuesday walk")
        qtbot.waitUntil(lambda: "Tuesday walk" in shown(w), timeout=WAIT)
        # The rename is saved on the core thread: wait for it rather than race it.
        qtbot.waitUntil(lambda: run.journal.session(ids["Monday walk"]).title == "Tuesday walk", timeout=WAIT)  # type: ignore[union-attr]
        assert "[Previous 7 days]" in shown(w)  # a rename is not activity: the chat keeps its group


RECORDS = st.lists(
    st.builds(
        lambda n, days, pinned, archived: SessionRecord(
            id=f"s{n}",
            title=f"chat {n}" if n % 5 else "",
            created_at=utc_text(NOW - timedelta(days=days)),
            updated_at=utc_text(NOW - timedelta(days=days)),
            pinned_at=utc_text(NOW - timedelta(days=days)) if pinned else None,
            archived_at=utc_text(NOW) if archived else None,
        ),
        st.integers(0, 10_000),
        st.integers(0, 30),
        st.booleans(),
        st.booleans(),
    ),
    max_size=40,
    unique_by=lambda record: record.id,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=RECORDS, open_archive=st.booleans())
def test_the_list_model_keeps_every_chat_and_folds_only_the_archive(
    qtbot: QtBot, records: list[SessionRecord], open_archive: bool
) -> None:
    chats = ChatList()
    qtbot.addWidget(chats)
    chats.now = lambda: NOW
    chats.fill([(r, "") for r in records], None, grouped=True)
    if open_archive:
        chats.toggle_archive()
    assert sorted(chats.chat_ids()) == sorted(r.id for r in records)  # every chat, folded or not
    listed = [chats.model().index(n, 0) for n in range(chats.count())]
    shown_ids = [index.data(ID_ROLE) for index in listed if index.data(ID_ROLE)]
    archived = {r.id for r in records if r.archived_at is not None}
    assert set(shown_ids) == {r.id for r in records} - (set() if open_archive else archived)
    for index in listed:
        header = index.data(HEADER_ROLE)
        selectable = bool(index.flags() & Qt.ItemFlag.ItemIsSelectable)
        assert selectable == (header is None)
        if header is None:
            record = next(r for r in records if r.id == index.data(ID_ROLE))
            assert index.data() == (record.title or "Untitled chat")
            assert index.data(ARCHIVED_ROLE) == (record.archived_at is not None)
            assert index.data(PINNED_ROLE) == (record.pinned_at is not None and record.archived_at is None)
    # Folding again leaves the live chats as they were.
    if open_archive:
        chats.toggle_archive()
        assert all(not chats.model().index(n, 0).data(ARCHIVED_ROLE) for n in range(chats.count()))


def test_a_rename_typed_in_place_is_asked_for_not_shown_before_it_is_saved(qtbot: QtBot) -> None:
    chats = ChatList()
    qtbot.addWidget(chats)
    chats.show()
    record = SessionRecord(id="s1", title="Lentils", created_at=utc_text(NOW), updated_at=utc_text(NOW))
    chats.fill([(record, "")], None, grouped=True)
    asked: list[tuple[str, str]] = []
    chats.chats.renamed.connect(lambda session_id, title: asked.append((session_id, title)))
    rename_in_place(chats, "s1", "Lentil soup")
    assert asked == [("s1", "Lentil soup")]
    assert chats.texts() == ["Lentils"]  # the journal's answer fills the list again
    assert not chats.model().setData(chats.model().index(5, 0), "nowhere")


def test_a_right_click_opens_the_chats_menu_without_opening_the_chat(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    ids = seed(cairn_paths)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.show()
        show_grouped(w, qtbot)
        chats = w.sidebar.list
        chats.setCurrentIndex(chats.index_of(ids["Pinned plans"]))
        qtbot.waitUntil(lambda: w.session_id == ids["Pinned plans"], timeout=WAIT)
        menus: list[list[str]] = []

        def close_menu() -> None:
            menu = QApplication.activePopupWidget()
            if menu is None:
                QTimer.singleShot(20, close_menu)
                return
            menus.append([a.text() for a in menu.actions()])
            menu.close()

        QTimer.singleShot(20, close_menu)
        soup = chats.visualRect(chats.index_of(ids["Old soup"])).center()
        # As a desktop sends a right-click: the press, the menu's event (which opens it), the release.
        QTest.mousePress(chats.viewport(), Qt.MouseButton.RightButton, pos=soup)
        menu_event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, soup, chats.viewport().mapToGlobal(soup))
        QApplication.sendEvent(chats.viewport(), menu_event)
        QTest.mouseRelease(chats.viewport(), Qt.MouseButton.RightButton, pos=soup)
        qtbot.waitUntil(lambda: bool(menus), timeout=WAIT)
        assert "Rename" in menus[0]
        qtbot.wait(300)  # what opening would have taken
        assert w.session_id == ids["Pinned plans"]
        assert w.sidebar.current_id() == ids["Pinned plans"]
