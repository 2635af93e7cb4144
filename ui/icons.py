"""Icons from qtawesome's Phosphor set, tinted for the theme.

Every icon Cairn shows is named here once, by what it does, so a change of set or weight is
one edit. qtawesome needs a running QApplication; icons are made on first use and cached.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon

__all__ = ["NAMES", "icon", "icon_file"]

NAMES = {
    "copy": "ph.copy",
    "edit": "ph.pencil-simple",
    "regenerate": "ph.arrows-clockwise",
    "continue": "ph.arrow-line-down",
    "branch": "ph.git-branch",
    "retry": "ph.arrow-counter-clockwise",
    "version-prev": "ph.caret-left",
    "version-next": "ph.caret-right",
    "new-chat": "ph.note-pencil",
    "sidebar": "ph.list",
    "settings": "ph.gear-six",
    "chat-settings": "ph.sliders-horizontal",
    "send": "ph.arrow-up",
    "stop": "ph.stop",
    "search": "ph.magnifying-glass",
    "sparkle": "ph.sparkle",
    "folder": "ph.folder-open",
    "caret-down": "ph.caret-down",
    "check": "ph.check-bold",
    "caret-up": "ph.caret-up",
    "attach": "ph.paperclip",
    "file": "ph.file-text",
    "image": "ph.image",
    "remove": "ph.x",
    "caret-right": "ph.caret-right",
}


@cache
def icon(name: str, colour: str) -> QIcon:
    """The icon for ``name`` (a key of ``NAMES``) drawn in ``colour``."""
    import qtawesome

    made: QIcon = qtawesome.icon(NAMES[name], color=colour)
    return made


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
