"""Where an exported chat is offered to go: the Documents folder, under the chat's title."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QStandardPaths

__all__ = ["export_folder", "file_name"]

# Characters no file name may hold on Windows, macOS or Linux, and control characters.
_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]+')
# Names Windows keeps for devices, whatever the extension.
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{n}" for n in range(1, 10)), *(f"LPT{n}" for n in range(1, 10))}
MAX_CHARS = 80


def file_name(title: str) -> str:
    """The chat's title as a file name without extension, safe on every system."""
    name = _UNSAFE.sub(" ", title)
    name = " ".join(name.split())[:MAX_CHARS].strip(" .")
    if not name or name.upper() in _RESERVED:
        return "Chat"
    return name


def export_folder() -> Path:
    """The person's Documents folder, or their home folder when there is none."""
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if documents and Path(documents).is_dir():
        return Path(documents)
    return Path.home()
