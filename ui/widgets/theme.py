"""Cairn's look in one place: named design tokens for spacing, radius, type and colour, in
light and dark, and the palette and style sheet made from them.

Everything that paints (the chat view, the cards, the Markdown, the widgets' style sheet)
takes its colours from ``Tokens.of(dark)``; nothing else names a colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from desktop.app import TEXT_SIZE_MAX, TEXT_SIZE_MIN

__all__ = [
    "RADIUS",
    "SPACE",
    "TEXT_SIZES",
    "Tokens",
    "apply_text_size",
    "apply_theme",
    "is_dark",
    "style_sheet",
    "tokens_of",
]

SPACE = {"xs": 4, "s": 8, "m": 12, "l": 16, "xl": 24, "xxl": 32}
RADIUS = {"s": 6, "m": 10, "l": 16}
TEXT_SIZES = range(TEXT_SIZE_MIN, TEXT_SIZE_MAX + 1)  # points; Ctrl+plus and Ctrl+minus step through them
DEFAULT_TEXT_SIZE = 11


@dataclass(frozen=True)
class Tokens:
    """The colours of one theme, named by what they are for."""

    dark: bool
    window: str  # the window's background, behind the chat
    surface: str  # inputs, the composer, cards
    surface_alt: str  # the sidebar, table headers, code
    border: str
    border_strong: str
    text: str
    muted: str  # secondary text: timestamps, notes, placeholders
    accent: str  # the primary button, links, focus rings
    accent_text: str  # text on the accent
    accent_soft: str  # hovered and selected rows
    user_bubble: str  # your messages
    user_text: str
    danger: str
    danger_soft: str  # behind an error
    warning_soft: str  # behind an approval card
    ok: str
    info_soft: str  # behind a summary marker
    code_bg: str
    code_border: str
    chip_bg: str  # inline code
    quote_rule: str
    highlight: str  # a search match
    pygments_style: str

    @classmethod
    @cache
    def of(cls, *, dark: bool) -> Tokens:
        if dark:
            return cls(
                dark=True,
                window="#17191d",
                surface="#1f2228",
                surface_alt="#1b1e23",
                border="#2e333b",
                border_strong="#414853",
                text="#e7e9ee",
                muted="#949cab",
                accent="#6d9eff",
                accent_text="#0d1320",
                accent_soft="#263247",
                user_bubble="#2a3a57",
                user_text="#f1f4fa",
                danger="#ff8a80",
                danger_soft="#3a2326",
                warning_soft="#3a3323",
                ok="#5fd47c",
                info_soft="#1f2d38",
                code_bg="#121417",
                code_border="#2e333b",
                chip_bg="#2a2f37",
                quote_rule="#4b5563",
                highlight="#6b5a12",
                pygments_style="monokai",
            )
        return cls(
            dark=False,
            window="#ffffff",
            surface="#ffffff",
            surface_alt="#f6f7f9",
            border="#e3e6eb",
            border_strong="#c9ced6",
            text="#1d2128",
            muted="#69717f",
            accent="#2f6fdb",
            accent_text="#ffffff",
            accent_soft="#e7effc",
            user_bubble="#e6eefc",
            user_text="#14213d",
            danger="#c62828",
            danger_soft="#fdecea",
            warning_soft="#fff6dc",
            ok="#1a7f37",
            info_soft="#eef4f8",
            code_bg="#f6f8fa",
            code_border="#e3e6eb",
            chip_bg="#eef0f3",
            quote_rule="#c9ced6",
            highlight="#ffe58a",
            pygments_style="friendly",
        )


def tokens_of(widget: QWidget) -> Tokens:
    """The tokens of the theme ``widget`` is drawn in now (read from its palette), for widgets
    that tint icons themselves."""
    return Tokens.of(dark=widget.palette().base().color().lightness() < 128)


def _palette(t: Tokens) -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: t.surface_alt,
        QPalette.ColorRole.WindowText: t.text,
        QPalette.ColorRole.Base: t.window,
        QPalette.ColorRole.AlternateBase: t.surface_alt,
        QPalette.ColorRole.Text: t.text,
        QPalette.ColorRole.Button: t.surface,
        QPalette.ColorRole.ButtonText: t.text,
        QPalette.ColorRole.Highlight: t.accent,
        QPalette.ColorRole.HighlightedText: t.accent_text,
        QPalette.ColorRole.ToolTipBase: t.surface,
        QPalette.ColorRole.ToolTipText: t.text,
        QPalette.ColorRole.PlaceholderText: t.muted,
        QPalette.ColorRole.Link: t.accent,
        QPalette.ColorRole.Mid: t.border,
        QPalette.ColorRole.Midlight: t.border,
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(t.muted))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(t.muted))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor(t.muted))
    return palette


def style_sheet(t: Tokens) -> str:
    """The widgets' style sheet: rounded inputs and buttons, quiet lists, bordered tables."""
    from ui.widgets.icons import icon_file  # needs the running QApplication

    r, s = RADIUS, SPACE
    arrows = {
        "down": icon_file("caret-down", t.muted).as_posix(),
        "up": icon_file("caret-up", t.muted).as_posix(),
        "check": icon_file("check", t.accent_text).as_posix(),
    }
    return f"""
QToolTip {{ color: {t.text}; background: {t.surface}; border: 1px solid {t.border_strong};
    border-radius: {r["s"]}px; padding: {s["xs"]}px {s["s"]}px; }}
QPushButton {{ background: {t.surface}; color: {t.text}; border: 1px solid {t.border_strong};
    border-radius: {r["s"]}px; padding: 5px 14px; }}
QPushButton:hover {{ background: {t.accent_soft}; }}
QPushButton:pressed {{ background: {t.border}; }}
QPushButton:focus {{ border: 1px solid {t.accent}; }}
QPushButton:disabled {{ color: {t.muted}; border-color: {t.border}; }}
QPushButton[primary="true"] {{ background: {t.accent}; color: {t.accent_text}; border: 1px solid {t.accent}; }}
QPushButton[primary="true"]:hover {{ background: {t.accent}; border: 1px solid {t.text}; }}
QPushButton[primary="true"]:disabled {{ background: {t.border}; color: {t.muted}; border-color: {t.border}; }}
QPushButton[flat="true"], QToolButton {{ background: transparent; border: none; border-radius: {r["s"]}px;
    padding: {s["xs"]}px; }}
QToolButton:hover, QPushButton[flat="true"]:hover {{ background: {t.accent_soft}; }}
QLineEdit, QPlainTextEdit, QTextEdit, QSpinBox, QComboBox {{ background: {t.surface}; color: {t.text};
    border: 1px solid {t.border_strong}; border-radius: {r["s"]}px; padding: 4px 8px;
    selection-background-color: {t.accent}; selection-color: {t.accent_text}; }}
QLineEdit:focus, QPlainTextEdit:focus, QTextEdit:focus, QSpinBox:focus, QComboBox:focus {{
    border: 1px solid {t.accent}; }}
QComboBox::drop-down {{ subcontrol-origin: padding; subcontrol-position: center right; width: 22px;
    border: none; }}
QComboBox::down-arrow {{ image: url("{arrows["down"]}"); width: 12px; height: 12px; }}
QSpinBox::up-button, QSpinBox::down-button {{ width: 18px; border: none; background: transparent; }}
QSpinBox::up-arrow {{ image: url("{arrows["up"]}"); width: 10px; height: 10px; }}
QSpinBox::down-arrow {{ image: url("{arrows["down"]}"); width: 10px; height: 10px; }}
QCheckBox::indicator {{ width: 15px; height: 15px; border: 1px solid {t.muted}; border-radius: 4px;
    background: {t.surface}; }}
QCheckBox::indicator:hover {{ border-color: {t.accent}; }}
QCheckBox::indicator:checked {{ background: {t.accent}; border-color: {t.accent}; image: url("{arrows["check"]}"); }}
QCheckBox::indicator:disabled {{ background: {t.surface_alt}; border-color: {t.border}; }}
QComboBox QAbstractItemView {{ background: {t.surface}; border: 1px solid {t.border_strong};
    selection-background-color: {t.accent_soft}; selection-color: {t.text}; }}
QFrame#Composer {{ background: {t.surface}; border: 1px solid {t.border_strong}; border-radius: {r["l"]}px; }}
QFrame#Composer QPlainTextEdit {{ border: none; background: transparent; padding: 6px 4px; }}
QWidget#Sidebar, QWidget#Sidebar QListView#Chats {{ background: {t.surface_alt}; }}
QListWidget, QListView, QTreeView, QTableView {{ background: {t.surface}; border: 1px solid {t.border};
    border-radius: {r["s"]}px; outline: none; }}
QWidget#Sidebar QListView#Chats {{ border: none; }}
QListWidget::item, QListView#Chats::item, QTreeView::item {{ padding: 6px 8px; border-radius: {r["s"]}px; }}
QListWidget::item:hover, QListView#Chats::item:hover, QTreeView::item:hover {{ background: {t.accent_soft}; }}
QListWidget::item:selected, QListView#Chats::item:selected, QTreeView::item:selected {{
    background: {t.accent_soft}; color: {t.text}; }}
QListView#Conversation {{ background: {t.window}; border: none; }}
QTableView {{ gridline-color: {t.border}; }}
QHeaderView::section {{ background: {t.surface_alt}; color: {t.text}; border: none;
    border-right: 1px solid {t.border}; border-bottom: 1px solid {t.border}; padding: 4px 8px; font-weight: 600; }}
QTabWidget::pane {{ border: 1px solid {t.border}; border-radius: {r["s"]}px; top: -1px; background: {t.surface}; }}
QTabBar::tab {{ padding: 6px 14px; border: none; color: {t.muted}; background: transparent; }}
QTabBar::tab:selected {{ color: {t.text}; border-bottom: 2px solid {t.accent}; }}
QTabBar::tab:hover {{ color: {t.text}; }}
QScrollBar:vertical {{ background: transparent; width: 10px; margin: 2px; }}
QScrollBar::handle:vertical {{ background: {t.border_strong}; border-radius: 4px; min-height: 32px; }}
QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 2px; }}
QScrollBar::handle:horizontal {{ background: {t.border_strong}; border-radius: 4px; min-width: 32px; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}
QScrollBar::add-page, QScrollBar::sub-page {{ background: transparent; }}
QStatusBar {{ color: {t.muted}; background: {t.surface_alt}; border-top: 1px solid {t.border}; }}
QStatusBar QLabel {{ color: {t.muted}; padding: 0 {s["xs"]}px; }}
QMenu {{ background: {t.surface}; border: 1px solid {t.border_strong}; border-radius: {r["s"]}px; padding: 4px; }}
QMenu::item {{ padding: 5px 22px 5px 12px; border-radius: 4px; }}
QMenu::item:selected {{ background: {t.accent_soft}; color: {t.text}; }}
QSplitter::handle {{ background: {t.border}; }}
QLabel#Muted {{ color: {t.muted}; }}
QLabel#Title {{ font-size: 20pt; font-weight: 600; }}
QLabel#Chip {{ background: {t.accent_soft}; color: {t.text}; border-radius: {r["s"]}px; padding: 2px 8px;
    font-weight: 600; }}
QFrame#Card {{ background: {t.surface}; border: 1px solid {t.border}; border-radius: {r["m"]}px; }}
"""


def is_dark(theme: str) -> bool:
    if theme in ("light", "dark"):
        return theme == "dark"
    return QApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, theme: str) -> bool:
    """Apply ``system``, ``light`` or ``dark``; return whether the result is dark."""
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    dark = is_dark(theme)
    tokens = Tokens.of(dark=dark)
    # Setting either re-polishes every widget alive: only when it changes, so opening another
    # window costs the same however many came before it.
    palette = _palette(tokens)
    if app.palette() != palette:
        app.setPalette(palette)
    sheet = style_sheet(tokens)
    if app.styleSheet() != sheet:
        app.setStyleSheet(sheet)
    return dark


def apply_text_size(app: QApplication, points: int | None) -> int:
    """Set the application's text size in points (``None``: Cairn's default); return it."""
    size = DEFAULT_TEXT_SIZE if points is None else min(max(points, TEXT_SIZES[0]), TEXT_SIZES[-1])
    if app.font().pointSize() != size:
        font = QFont(app.font())
        font.setPointSize(size)
        app.setFont(font)
        # With a style sheet, widgets already polished keep the font they were polished with
        # (only the chat, which lays itself out again, took the new one): polish them again.
        sheet = app.styleSheet()
        if sheet:
            app.setStyleSheet("")
            app.setStyleSheet(sheet)
    return size
