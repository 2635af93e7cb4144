"""Help > About Cairn: the name, the version, what Cairn is, and where it keeps its files."""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.app import CairnPaths, cairn_version

__all__ = ["about_text", "show_about"]


def about_text(paths: CairnPaths) -> str:
    return (
        f"<h3>Cairn {escape(cairn_version())}</h3>"
        "<p>A desktop chat host for any OpenAI-compatible endpoint; its conversations stay "
        "append-only, so the provider's prompt cache stays warm.</p>"
        f"<p>Chats: {escape(str(paths.data_dir))}<br>"
        f"Settings: {escape(str(paths.config_dir))}<br>"
        f"Logs: {escape(str(paths.log_dir))}</p>"
    )


def show_about(parent: QWidget, paths: CairnPaths) -> None:
    QMessageBox.about(parent, "About Cairn", about_text(paths))
