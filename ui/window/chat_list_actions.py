"""What the sidebar's requests do: list the chats (or a search's results), make a new chat,
open one, rename, pin, archive, delete it (with Undo) and export it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMainWindow, QWidget

from desktop.app import CairnApp, SearchResults, SessionRecord, Snippet
from ui.bridge.core_client import CoreClient
from ui.chat_panel.chat_opener import ChatOpener
from ui.chat_panel.composer import Composer
from ui.chat_panel.shown_chat import ShownChat
from ui.widgets.export_name import export_folder, file_name
from ui.window.sidebar import Sidebar

__all__ = ["ChatListActions"]

Found = list[tuple[SessionRecord, Snippet]]


class ChatListActions(QObject):
    """The sidebar's chats for the window ``parent``; a chat chosen goes on screen through
    ``opener``."""

    def __init__(
        self,
        core: CoreClient,
        sidebar: Sidebar,
        shown: ShownChat,
        opener: ChatOpener,
        composer: Composer,
        *,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.core, self.sidebar, self.shown, self.opener, self.composer = core, sidebar, shown, opener, composer
        self.window = parent
        self._listing = 0  # the newest chat list asked of the core; older answers are dropped
        self._select: str | None = None  # a chat to open once the newest list has it
        self._found: Found = []  # the search's results so far (its pages joined)
        self._after: tuple[str, str] | None = None  # where the search goes on ("Search further")

    def refresh(self, query: str | None = None, select: str | None = None) -> None:
        """Ask the core for the chat list, or a search's results. Only the newest request's
        answer is shown: one still queued when a newer request comes is not run, one that
        arrives after it (a query typed over) is dropped, and a chat it was to select is
        selected by the newer one. A search is short (``host.journal_search`` bounds its work), so it
        is left to finish rather than interrupted."""
        text = self.sidebar.search.text() if query is None else query
        self._listing += 1
        asked = self._listing
        self._select = select or self._select

        def listed(app: CairnApp) -> SearchResults | None:
            # Still queued on the core when a newer request came: skip the work altogether.
            if asked != self._listing:
                return None
            return app.chats.search_page(text) if text.strip() else SearchResults(found=app.chats.search())

        def shown(results: SearchResults | None) -> None:
            if results is None or asked != self._listing:
                return
            self._found = []
            self._show(results)

        self.core.run_on_core(listed, shown)

    def further(self) -> None:
        """The search's next page, after the chats shown."""
        text, after = self.sidebar.search.text(), self._after
        if after is None or not text.strip():
            return
        self._listing += 1
        asked = self._listing

        def shown(results: SearchResults) -> None:
            if asked == self._listing:
                self._show(results)

        self.core.run_on_core(lambda app: app.chats.search_page(text, after=after), shown)

    def _show(self, results: SearchResults) -> None:
        self._found = self._found + results.found
        self._after = results.after
        chosen, self._select = self._select, None
        self.sidebar.show_sessions(self._found, chosen or self.shown.session_id)
        self.sidebar.show_search_more(_more_note(results, len(self._found)))
        if chosen and any(record.id == chosen for record, _ in self._found) and chosen != self.shown.session_id:
            self.open(chosen)

    def new(self) -> None:
        """An empty chat on screen. Nothing is saved until its first message is sent (which
        makes the chat), so New chat never leaves an empty "Untitled chat" behind."""
        self.opener.clear()
        self.sidebar.select_none()
        self.sidebar.search.clear()
        self.refresh(query="")
        self.composer.editor.setFocus()

    def show_chat(self, record: SessionRecord, *, focus: bool = False) -> None:
        """A chat just made (a branch, from an assistant): listed, selected and opened."""
        self.sidebar.search.clear()
        self.refresh(query="", select=record.id)
        if focus:
            self.composer.editor.setFocus()

    def open(self, session_id: str) -> None:
        self.opener.open(session_id)

    def rename(self, session_id: str, title: str) -> None:
        def renamed(_result: object) -> None:
            self.refresh()
            self.composer.take_focus()

        self.core.run_on_core(lambda app: app.chats.rename(session_id, title), renamed)

    def delete(self, session_id: str) -> None:
        title = self.sidebar.title_of(session_id)

        def deleted(_result: object) -> None:
            self.sidebar.show_undo(session_id, title)
            if self.shown.showing(session_id):
                self.opener.clear()
            self.refresh()

        self.core.run_on_core(lambda app: app.chats.delete(session_id), deleted)

    def restore(self, session_id: str) -> None:
        self.core.run_on_core(lambda app: app.chats.restore(session_id), lambda _r: self.refresh(select=session_id))

    def mark(self, mark: str, session_id: str, on: bool) -> None:
        """Pin (``mark`` "pin") or archive the chat, or undo that (``on`` false)."""

        def marked(app: CairnApp) -> None:
            (app.chats.pin if mark == "pin" else app.chats.archive)(session_id, on)

        self.core.run_on_core(marked, lambda _r: self.refresh())

    def export(self, session_id: str, kind: str) -> None:
        suffix = "Markdown (*.md)" if kind == "md" else "JSON (*.json)"
        title = self.sidebar.title_of(session_id)
        suggested = str(export_folder() / f"{file_name(title)}.{kind}")
        path, _ = QFileDialog.getSaveFileName(self.window, "Export chat", suggested, suffix)
        self.composer.take_focus()
        if path:
            bar = self.window.statusBar() if isinstance(self.window, QMainWindow) else None
            said = (lambda _r: bar.showMessage(f"Exported the chat to {path}.", 8000)) if bar is not None else None
            self.core.run_on_core(lambda app: app.chats.export(session_id, Path(path)), said)


def _more_note(results: SearchResults, shown: int) -> str | None:
    """What the sidebar says under a search's results when more may match."""
    if results.after is None:
        return None
    if results.stopped_early:
        return f"Search stopped after a moment at {shown} chats; more may match."
    return f"Showing the first {shown} chats that match."
