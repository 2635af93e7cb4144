"""Attachments in the real window, offscreen, against the loopback provider: the paperclip,
a drop on the window, a pasted image, chips that can be removed, a message of attachments
alone, thumbnails in the chat, and an image kept but not sent to a model without image input."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.settings.store import Account, SettingsStore
from host.attachments import AttachmentStore
from host.content import ImagePart, MessageContent
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.attachment_fixtures import png
from tests.ui_fixtures import running_cairn
from ui.message_list.display_message import message_html
from ui.window.main_window import MainWindow

WAIT = 10_000


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def add_account(paths: CairnPaths, provider: LoopbackProvider, preset: str, model: str) -> None:
    """A published provider's account pointed at the loopback: models.dev knows the model's
    modalities, the requests go to the loopback."""
    account = Account(name=preset, provider=preset, base_url=provider.base_url, default_model=model)
    SettingsStore(paths.config_dir / "settings.json").add_account(account)


def chip_names(window: MainWindow) -> list[str]:
    return [p.name or "" for p in window.composer.attachments()]


def drop_files(window: MainWindow, *paths: Path) -> None:
    """Files dragged from a file manager and dropped on the window (not on the composer)."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    where = QPointF(window.chat.mapTo(window, QPoint(40, 40)))
    actions = Qt.DropAction.CopyAction
    enter = QDragEnterEvent(where.toPoint(), actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(where, actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)


def send_with_enter(window: MainWindow, text: str = "") -> None:
    window.composer.editor.setFocus()
    window.composer.set_text(text)
    QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)


def idle(window: MainWindow) -> bool:
    return not window.turns.busy and window.composer.button.text() == "Send"


def test_the_paperclip_a_drop_and_a_paste_attach_and_an_image_reaches_a_model_that_takes_images(
    qtbot: QtBot,
    cairn_paths: CairnPaths,
    provider: LoopbackProvider,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    add_account(cairn_paths, provider, "openai", "gpt-4o")
    picture = tmp_path / "col.png"
    picture.write_bytes(png(120, 80))
    notes = tmp_path / "route.md"
    notes.write_text("# Route\n\nLeft at the cairn.\n", encoding="utf-8")
    stray = tmp_path / "stray.txt"
    stray.write_text("remove me\n", encoding="utf-8")
    # The file dialog is the operating system's: the seam is what it answers.
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *_a, **_k: ([str(picture)], ""))
    with running_cairn(cairn_paths) as run:
        w = run.window
        assert "10 MB" in w.composer.attach.toolTip()  # the limits are stated where files are attached
        qtbot.mouseClick(w.composer.attach, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: chip_names(w) == ["col.png"], timeout=WAIT)
        drop_files(w, notes, stray)
        qtbot.waitUntil(lambda: sorted(chip_names(w)) == ["col.png", "route.md", "stray.txt"], timeout=WAIT)
        QGuiApplication.clipboard().setImage(_image(30, 20))
        w.composer.editor.setFocus()
        w.composer.editor.paste()
        qtbot.waitUntil(lambda: "Pasted image.png" in chip_names(w), timeout=WAIT)
        assert w.composer.text() == ""  # the image became an attachment, not text
        stray_chip = next(c for c in w.composer.chips.chips if c.part.name == "stray.txt")
        qtbot.mouseClick(stray_chip.remove, Qt.MouseButton.LeftButton)
        assert "stray.txt" not in chip_names(w)
        picture.unlink()  # read once when attached: the original is not needed any more

        send_with_enter(w)  # attachments alone make a message
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2, timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert w.composer.attachments() == ()
        assert not w.composer.chips.isVisible()

        [request] = provider.requests
        blocks = request.body["messages"][-1]["content"]
        assert [b["type"] for b in blocks].count("image_url") == 2
        assert {"type": "text", "text": "Attached file: route.md\n```\n# Route\n\nLeft at the cairn.\n\n```"} in blocks

        mine = w.chat.model_rows().messages[0]
        assert sorted(a.name or "" for a in mine.attachments) == ["Pasted image.png", "col.png", "route.md"]
        thumbnails = w.composer.thumbnails
        images = [a for a in mine.attachments if isinstance(a, ImagePart)]
        w.chat.viewport().update()
        qtbot.waitUntil(lambda: all(thumbnails.known(a.sha256 or "") for a in images), timeout=WAIT)
        assert all(thumbnails.image(a.sha256 or "") is not None for a in images)
        shown, _ = message_html(mine, dark=False, last_user=True, last_answer=False)
        assert "route.md" in shown
        assert "Left at the cairn" not in shown  # a chip, not a wall of text
        assert mine.text == ""  # Copy copies what you wrote; the file stays as it was attached


def _image(width: int, height: int) -> QImage:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.darkCyan)
    return image


def test_an_image_is_kept_but_not_sent_to_a_model_without_image_input_and_the_chat_says_so(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    add_account(cairn_paths, provider, "deepseek", "deepseek-chat")
    picture = tmp_path / "map.png"
    picture.write_bytes(png(64, 64))
    with running_cairn(cairn_paths) as run:
        w = run.window
        drop_files(w, picture)
        qtbot.waitUntil(lambda: chip_names(w) == ["map.png"], timeout=WAIT)
        send_with_enter(w, "What does the map show?")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2, timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        qtbot.waitUntil(w.notice.isVisible, timeout=WAIT)
        assert w.notice.text() == (
            "The image “map.png” is saved with your message but not sent to deepseek-chat: models.dev lists it "
            "as taking text only. Choose a model that takes images to send them."
        )
        [request] = provider.requests
        assert "image_url" not in str(request.body)
        assert "deepseek-chat does not accept images, so it was left out" in str(request.body["messages"][-1])
        session_id = w.session_id
        assert session_id is not None
        body = next(r.body() for r in TranscriptWriter(run.journal).rows(session_id) if r.role == "user")
        assert isinstance(body, MessageContent)
        assert [a.name for a in body.attachments()] == ["map.png"]
        assert w.chat.model_rows().messages[0].attachments == body.attachments()


def test_files_cairn_cannot_take_are_refused_in_a_sentence(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    add_account(cairn_paths, provider, "openai", "gpt-4o")
    binary = tmp_path / "tool.bin"
    binary.write_bytes(b"\x7fELF\x00\x01\x02\xff\xfe")
    with running_cairn(cairn_paths) as run:
        w = run.window
        drop_files(w, binary)
        qtbot.waitUntil(w.notice.isVisible, timeout=WAIT)
        assert w.notice.text() == (
            "“tool.bin” is neither a PNG, JPEG, GIF or WebP image nor UTF-8 text, so it cannot be attached."
        )
        assert w.composer.attachments() == ()
        files = [tmp_path / f"n{i}.txt" for i in range(11)]
        for i, path in enumerate(files):
            path.write_text(f"note {i}\n", encoding="utf-8")
        drop_files(w, *files)
        qtbot.waitUntil(lambda: len(w.composer.attachments()) == 10, timeout=WAIT)
        qtbot.waitUntil(lambda: "up to 10 files" in w.notice.text(), timeout=WAIT)


def test_a_chat_whose_stored_image_is_gone_still_opens(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    add_account(cairn_paths, provider, "openai", "gpt-4o")
    picture = tmp_path / "gone.png"
    picture.write_bytes(png(10, 10))
    with running_cairn(cairn_paths) as run:
        w = run.window
        drop_files(w, picture)
        qtbot.waitUntil(lambda: chip_names(w) == ["gone.png"], timeout=WAIT)
        [part] = w.composer.attachments()
        assert part.sha256 is not None
        AttachmentStore.beside(cairn_paths.journal).path(part.sha256).unlink()  # lost from disk since
        send_with_enter(w, "and now?")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2, timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        [request] = provider.requests
        assert "[An image (gone.png) was attached here; its file could not be read.]" in str(request.body)
        session_id = w.session_id
    assert session_id is not None
    with running_cairn(cairn_paths) as run:  # a new start: nothing cached
        w = run.window
        w.sessions.open(session_id)
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2, timeout=WAIT)
        w.chat.grab()  # painting asks for the thumbnail
        qtbot.waitUntil(lambda: w.composer.thumbnails.known(part.sha256 or ""), timeout=WAIT)
        assert w.composer.thumbnails.image(part.sha256) is None
        assert not w.chat.grab().isNull()  # a plain tile where the image was, no traceback
