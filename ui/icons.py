"""Icons from qtawesome's Phosphor set, tinted for the theme.

Every icon Cairn shows is named here once, by what it does, so a change of set or weight is
one edit. qtawesome needs a running QApplication; icons are made on first use and cached.
"""

from __future__ import annotations

from functools import cache

from PySide6.QtGui import QIcon

__all__ = ["NAMES", "icon"]

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
    "send": "ph.arrow-up",
    "stop": "ph.stop",
    "search": "ph.magnifying-glass",
    "sparkle": "ph.sparkle",
    "folder": "ph.folder-open",
}


@cache
def icon(name: str, colour: str) -> QIcon:
    """The icon for ``name`` (a key of ``NAMES``) drawn in ``colour``."""
    import qtawesome

    made: QIcon = qtawesome.icon(NAMES[name], color=colour)
    return made
