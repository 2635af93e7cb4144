"""The window's icons: drawn from the Phosphor font by Cairn's own engine, in the colour asked,
fainter when disabled, and a missing or broken font leaves buttons without icons instead of
stopping the window."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QIcon, QImage
from pytestqt.qtbot import QtBot

from ui.widgets import icons


@pytest.fixture
def fresh_icons() -> Iterator[None]:
    icons.icon.cache_clear()
    icons._font.cache_clear()
    yield
    icons.icon.cache_clear()
    icons._font.cache_clear()


def inked(image: QImage) -> list[QColor]:
    """The colours of the pixels drawn on at all."""
    return [
        image.pixelColor(x, y)
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).alpha() > 0
    ]


@pytest.mark.parametrize("name", sorted(icons.NAMES))
def test_every_named_icon_is_drawn_in_the_colour_asked(qtbot: QtBot, name: str) -> None:
    image = icons.icon(name, "#3366cc").pixmap(32, 32).toImage()
    pixels = inked(image)
    assert len(pixels) > 12, f"{name} draws nothing"
    solid = max(pixels, key=lambda colour: colour.alpha())
    assert (solid.red(), solid.green(), solid.blue()) == (0x33, 0x66, 0xCC)


def test_a_disabled_icon_is_fainter(qtbot: QtBot) -> None:
    made = icons.icon("send", "#000000")
    normal = max(c.alpha() for c in inked(made.pixmap(32, 32, QIcon.Mode.Normal).toImage()))
    disabled = max(c.alpha() for c in inked(made.pixmap(32, 32, QIcon.Mode.Disabled).toImage()))
    assert disabled < normal * 0.6


def test_the_style_sheet_arrows_are_files(qtbot: QtBot) -> None:
    path = icons.icon_file("caret-down", "#445566")
    assert path.is_file()
    assert not QImage(str(path)).isNull()


@pytest.mark.parametrize(
    "files",
    [
        {},  # no font at all
        {"phosphor-1.0.ttf": b"not a font", "phosphor-charmap-1.0.json": b'{"copy": "0xf372"}'},
        {"phosphor-1.0.ttf": b"", "phosphor-charmap-1.0.json": b"{not json"},
        {"phosphor-1.0.ttf": b"", "phosphor-charmap-1.0.json": b'{"copy": "zz"}'},
        {"phosphor-1.0.ttf": b"", "phosphor-charmap-1.0.json": b'["copy"]'},
    ],
    ids=["missing", "not-a-font", "bad-json", "bad-code", "not-a-map"],
)
def test_a_missing_or_broken_font_leaves_icons_empty_and_says_so(
    qtbot: QtBot,
    fresh_icons: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    files: dict[str, bytes],
) -> None:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    monkeypatch.setattr(icons, "_font_folder", lambda: tmp_path)
    with caplog.at_level(logging.WARNING, logger="ui.widgets.icons"):
        made = icons.icon("copy", "#000000")
    assert made.isNull()
    assert "without icons" in caplog.text
