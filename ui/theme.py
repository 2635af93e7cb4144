"""Light and dark palettes, and following the system's choice."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

__all__ = ["apply_theme", "is_dark"]


def _palette(dark: bool) -> QPalette:
    palette = QPalette()
    colours = (
        {
            QPalette.ColorRole.Window: "#1e2127",
            QPalette.ColorRole.WindowText: "#e6e6e6",
            QPalette.ColorRole.Base: "#16181d",
            QPalette.ColorRole.AlternateBase: "#22262d",
            QPalette.ColorRole.Text: "#e6e6e6",
            QPalette.ColorRole.Button: "#2a2f37",
            QPalette.ColorRole.ButtonText: "#e6e6e6",
            QPalette.ColorRole.Highlight: "#3d6fd6",
            QPalette.ColorRole.HighlightedText: "#ffffff",
            QPalette.ColorRole.ToolTipBase: "#2a2f37",
            QPalette.ColorRole.ToolTipText: "#e6e6e6",
            QPalette.ColorRole.PlaceholderText: "#8b93a1",
            QPalette.ColorRole.Link: "#7aa7ff",
        }
        if dark
        else {
            QPalette.ColorRole.Window: "#f3f4f6",
            QPalette.ColorRole.WindowText: "#1f2328",
            QPalette.ColorRole.Base: "#ffffff",
            QPalette.ColorRole.AlternateBase: "#f6f8fa",
            QPalette.ColorRole.Text: "#1f2328",
            QPalette.ColorRole.Button: "#f6f8fa",
            QPalette.ColorRole.ButtonText: "#1f2328",
            QPalette.ColorRole.Highlight: "#2f6fdb",
            QPalette.ColorRole.HighlightedText: "#ffffff",
            QPalette.ColorRole.ToolTipBase: "#ffffff",
            QPalette.ColorRole.ToolTipText: "#1f2328",
            QPalette.ColorRole.PlaceholderText: "#6b7280",
            QPalette.ColorRole.Link: "#2f6fdb",
        }
    )
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    return palette


def is_dark(theme: str) -> bool:
    if theme in ("light", "dark"):
        return theme == "dark"
    return QApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, theme: str) -> bool:
    """Apply ``system``, ``light`` or ``dark``; return whether the result is dark."""
    app.setStyle("Fusion")
    dark = is_dark(theme)
    app.setPalette(_palette(dark))
    return dark
