"""What the account form says about the chosen provider: a "Get a key" link to the page where it
hands out keys, and what a person should know before choosing it (the preset's note: that its
endpoint caches no prompts, say, and which route does). Both are the preset's data."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from desktop.app import ProviderPreset
from ui.settings_dialog.notes import quiet_note

__all__ = ["PresetHelp"]


class PresetHelp(QWidget):
    """A key link and a note under the provider box; each hidden when the preset has none."""

    def __init__(self) -> None:
        super().__init__()
        self.key_link = QLabel()
        self.key_link.setTextFormat(Qt.TextFormat.RichText)
        self.key_link.setOpenExternalLinks(True)  # the system's browser, not Cairn
        self.key_link.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.key_link.setAccessibleName("Get a key")
        self.note = quiet_note("")
        self.note.setAccessibleName("About this provider")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(3)
        column.addWidget(self.key_link)
        column.addWidget(self.note)
        self.show_preset(None)

    def show_preset(self, preset: ProviderPreset | None) -> None:
        url = preset.key_url if preset is not None else None
        self.key_link.setVisible(url is not None)
        if url is not None and preset is not None:
            self.key_link.setText(f'<a href="{escape(url, quote=True)}">Get a key</a> from {escape(preset.name)}')
            self.key_link.setToolTip(url)
        note = preset.note if preset is not None else ""
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self.setVisible(url is not None or bool(note))
