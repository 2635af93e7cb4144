"""Icons from the Phosphor icon font, tinted for the theme.

Every icon Cairn shows is named here once, by what it does, so a change of set or weight is
one edit. The font and its map of names to characters come with the qtawesome package; Cairn
reads those two files itself and draws the glyphs with its own small icon engine, because
importing qtawesome (and qtpy under it) costs about a sixth of a second at every launch.
Icons need a running QApplication; each is made on first use and cached.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import shutil
import tempfile
from functools import cache
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QIcon, QIconEngine, QPainter, QPixmap

__all__ = ["NAMES", "icon", "icon_file"]

log = logging.getLogger(__name__)

NAMES = {
    "copy": "copy",
    "edit": "pencil-simple",
    "regenerate": "arrows-clockwise",
    "continue": "arrow-line-down",
    "branch": "git-branch",
    "retry": "arrow-counter-clockwise",
    "version-prev": "caret-left",
    "version-next": "caret-right",
    "new-chat": "note-pencil",
    "sidebar": "list",
    "settings": "gear-six",
    "chat-settings": "sliders-horizontal",
    "send": "arrow-up",
    "stop": "stop",
    "search": "magnifying-glass",
    "sparkle": "sparkle",
    "folder": "folder-open",
    "caret-down": "caret-down",
    "check": "check-bold",
    "caret-up": "caret-up",
    "attach": "paperclip",
    "attach-resource": "database",
    "file": "file-text",
    "image": "image",
    "remove": "x",
    "caret-right": "caret-right",
}

# A glyph drawn at 7/8 of the icon's height leaves room for the font's bearing, as icon fonts
# are designed to be drawn.
_GLYPH_SCALE = 0.875
_DISABLED_OPACITY = 0.4


@cache
def icon(name: str, colour: str) -> QIcon:
    """The icon for ``name`` (a key of ``NAMES``) drawn in ``colour``; an empty icon, and one
    warning in the log, if the icon font cannot be found."""
    font = _font()
    if font is None:
        return QIcon()
    family, characters = font
    return QIcon(_GlyphEngine(family, characters[NAMES[name]], colour))


class _GlyphEngine(QIconEngine):
    """One glyph of an icon font in one colour, at any size; fainter when disabled."""

    def __init__(self, family: str, character: str, colour: str) -> None:
        super().__init__()
        self._family = family
        self._character = character
        self._colour = colour

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        colour = QColor(self._colour)
        if mode == QIcon.Mode.Disabled:
            colour.setAlphaF(colour.alphaF() * _DISABLED_OPACITY)
        font = QFont(self._family)
        font.setPixelSize(max(1, round(_GLYPH_SCALE * rect.height())))
        painter.save()
        painter.setFont(font)
        painter.setPen(colour)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, self._character)
        painter.restore()

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        image = QPixmap(size)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        self.paint(painter, QRect(QPoint(0, 0), size), mode, state)
        painter.end()
        return image

    def clone(self) -> QIconEngine:
        return _GlyphEngine(self._family, self._character, self._colour)


@cache
def _font() -> tuple[str, dict[str, str]] | None:
    """The Phosphor font's family, registered with Qt, and its names mapped to characters."""
    try:
        folder = _font_folder()
        font_file = max(folder.glob("phosphor-*.ttf"))
        charmap = max(folder.glob("phosphor-charmap-*.json"))
        characters = {name: chr(int(code, 16)) for name, code in json.loads(charmap.read_text("utf-8")).items()}
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning("the icon font cannot be read (%s); buttons show without icons", exc)
        return None
    families = QFontDatabase.applicationFontFamilies(QFontDatabase.addApplicationFont(str(font_file)))
    missing = sorted(glyph for glyph in NAMES.values() if glyph not in characters)
    if not families or missing:
        log.warning("the icon font %s cannot be used (lacks %s); buttons show without icons", font_file, missing)
        return None
    return families[0], characters


def _font_folder() -> Path:
    """qtawesome's fonts folder, found without importing qtawesome (a bundle carries the
    folder as data beside the package's place)."""
    spec = importlib.util.find_spec("qtawesome")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise OSError("the qtawesome package is not installed")
    return Path(locations[0]) / "fonts"


_files: dict[tuple[str, str], Path] = {}


def icon_file(name: str, colour: str, size: int = 12) -> Path:
    """The icon as a PNG file, for style sheets (which take images only from files): written
    once per process into a private temporary folder that goes when Cairn exits."""
    key = (name, colour)
    if key not in _files:
        folder = _folder()
        path = folder / f"{name}-{colour.lstrip('#')}.png"
        icon(name, colour).pixmap(size * 2, size * 2).save(str(path))  # sharp on a scale factor of 2
        _files[key] = path
    return _files[key]


@cache
def _folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="cairn-icons-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder
