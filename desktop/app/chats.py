"""The chats: listing and searching them, starting one (from an assistant, or a branch of
another), renaming, pinning, archiving, deleting with Undo, exporting, and reading one for the
window in pages, with its versions, usage, parked calls and how full its context is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.app.assistants import start_from
from desktop.app.chat_options import ChatOptions
from desktop.app.export import to_json, to_markdown
from desktop.app.shared import AppState, NoSuchChat
from desktop.app.titles import branch_title
from desktop.compaction.policy import ContextFill, context_fill
from desktop.session.chat_route import ChatRouteView
from desktop.session.parked import ParkedCall
from desktop.settings.store import SettingsError
from host.branching import branch_session
from host.content import Checkpoint, Mode
from host.files import atomic_write_text
from host.journal import Journal, SearchResults, SessionRecord
from host.rows import TranscriptRow
from host.search_text import NO_SNIPPET, Snippet
from host.usage import RequestUsage, UsageTotals
from host.versions import NotAVersion, switch_version

__all__ = ["PAGE", "ChatPage", "Chats", "OpenedChat"]

PAGE = 200  # messages a page of a chat holds


@dataclass(frozen=True)
class ChatPage:
    """A range of the rows a person sees of a chat, in storage order: up to ``limit`` rows
    before a row (``before_seq``), after one (``after_seq``), or the newest ones. ``first`` is
    true when nothing a person sees comes before it, ``last`` when nothing comes after it."""

    session_id: str
    rows: tuple[TranscriptRow, ...]
    first: bool
    last: bool = True

    @property
    def seqs(self) -> tuple[int, int] | None:
        """The range of ``seq`` it covers, when it holds any row."""
        return (self.rows[0].seq, self.rows[-1].seq) if self.rows else None


@dataclass(frozen=True)
class OpenedChat:
    """What the window shows when it opens a chat, read at one moment on the core."""

    page: ChatPage
    versions: dict[str, tuple[str, ...]]  # a message shown -> its versions, in order
    usage: tuple[UsageTotals, RequestUsage | None]  # the chat's totals and its last request
    parked: list[ParkedCall]
    mode: Mode
    fill: ContextFill | None
    busy: bool  # a turn is running in it (from any window)
    route: ChatRouteView
    focus: str | None = None  # the row the window brings into view (else the chat's end)


class Chats:
    def __init__(self, shared: AppState, options: ChatOptions, busy: Callable[[str], bool]) -> None:
        self._shared, self._options, self._busy = shared, options, busy

    @property
    def _journal(self) -> Journal:
        return self._shared.journal

    # -- the list --------------------------------------------------------------------------

    def read_only_reason(self) -> str | None:
        """Why the journal is open read-only (a newer Cairn wrote it, its disk is full, another
        Cairn holds it), in one sentence; ``None`` when it is writable."""
        return self._journal.read_only_reason

    def search(self, query: str = "") -> list[tuple[SessionRecord, Snippet]]:
        """Every chat newest first, or those matching ``query``, each with its snippet."""
        journal = self._journal
        return journal.search_sessions(query) if query.strip() else [(s, NO_SNIPPET) for s in journal.sessions()]

    def search_page(self, query: str, after: tuple[str, str] | None = None) -> SearchResults:
        """A page of the chats matching ``query``; ``after`` (from the page before) goes on
        where it stopped ("Search further")."""
        return self._journal.search_page(query, after=after)

    def new(self, title: str = "") -> SessionRecord:
        return self._journal.create_session(title)

    def exists(self, session_id: str) -> bool:
        return self._journal.session(session_id) is not None

    def record(self, session_id: str) -> SessionRecord | None:
        """The chat as the list shows it (its title, when it was pinned); ``None`` once deleted."""
        return self._journal.session(session_id)

    def new_from(self, assistant_id: str) -> SessionRecord:
        """A new chat with the assistant's settings and route as its own."""
        settings = self._shared.settings
        assistant = settings.assistant(assistant_id)
        if assistant is None:
            raise SettingsError("That assistant is not in Settings any more; choose another.")
        session = self._journal.create_session()
        start_from(self._shared.writer, session, assistant, settings)
        return session

    def branch(self, session_id: str, row_id: str) -> SessionRecord:
        """A new chat holding this chat's branch up to the answer ``row_id``; it starts with
        the same bytes, so the provider's cache still holds its beginning."""
        record = self._journal.session(session_id)
        title = branch_title(record.title if record is not None else "")
        return branch_session(self._journal, session_id, row_id, title)

    def rename(self, session_id: str, title: str) -> None:
        self._journal.rename_session(session_id, title)

    def pin(self, session_id: str, pinned: bool) -> None:
        self._journal.pin_session(session_id, pinned)

    def archive(self, session_id: str, archived: bool) -> None:
        self._journal.archive_session(session_id, archived)

    def delete(self, session_id: str) -> None:
        """Take the chat out of the list; ``restore`` brings it back until Cairn closes. A
        server's request for input waiting in it is declined: nobody will see it now."""
        self._journal.delete_session(session_id)
        self._shared.states.forget(session_id)
        self._shared.root.elicitations.decline_all(session_id, "the chat was deleted")

    def restore(self, session_id: str) -> None:
        self._journal.restore_session(session_id)

    def export(self, session_id: str, path: Path) -> None:
        """Write the chat to ``path``: JSON for a .json name, Markdown otherwise."""
        session = self._journal.session(session_id)
        if session is None:
            raise NoSuchChat(f"Session {session_id} is not in the journal; it may have been deleted.")
        rows = self._shared.writer.rows(session_id)
        if path.suffix.lower() == ".json":
            text = to_json(session, rows, self._shared.ledger.requests(session_id))
        else:
            text = to_markdown(session, rows)
        atomic_write_text(path, self._shared.root.redactor.redact(text))

    def save_reply(self, path: Path, text: str) -> None:
        """Write a reply's text to ``path`` as it reads (Save as… on a long reply), with any
        secret in it redacted as an export would."""
        atomic_write_text(path, self._shared.root.redactor.redact(text))

    # -- one chat, for the window ----------------------------------------------------------

    def page(
        self, session_id: str, before_seq: int | None = None, limit: int = PAGE, *, after_seq: int | None = None
    ) -> ChatPage:
        rows, ended = self._shared.writer.display_range(
            session_id, before_seq=before_seq, after_seq=after_seq, limit=limit
        )
        if after_seq is not None:
            return ChatPage(session_id, tuple(rows), first=False, last=ended)
        return ChatPage(session_id, tuple(rows), first=ended, last=before_seq is None)

    def page_around(self, session_id: str, row_id: str, limit: int = PAGE) -> ChatPage | None:
        """A page holding the row ``row_id`` near its middle; ``None`` when the row is not in
        the chat, or is among its newest rows (the newest page holds it)."""
        writer = self._shared.writer
        seq = writer.seq_of(session_id, row_id)
        if seq is None:
            return None
        after, ended = writer.display_range(session_id, after_seq=seq, limit=limit // 2)
        if ended:
            return None
        before, first = writer.display_range(session_id, before_seq=seq + 1, limit=limit - len(after))
        return ChatPage(session_id, tuple(before + after), first=first, last=False)

    def open(self, session_id: str, limit: int = PAGE, *, around: str | None = None, matching: str = "") -> OpenedChat:
        """The chat and everything the window shows with it: its newest page, or the page
        around the row ``around`` (a version switched to), or around its newest message that
        the search ``matching`` found."""
        state = self._shared.states.get(session_id)
        if around is None and matching.strip():
            around = self._journal.newest_match(session_id, matching)
        page = self.page_around(session_id, around, limit) if around is not None else None
        return OpenedChat(
            page=page or self.page(session_id, limit=limit),
            versions=state.versions.shown(),
            usage=self.usage(session_id),
            parked=state.parked(),
            mode=state.mode(self._shared.settings.default_mode),
            fill=self.context_fill(session_id),
            busy=self._busy(session_id),
            route=self._options.route(session_id),
            focus=around,
        )

    def versions(self, session_id: str) -> dict[str, tuple[str, ...]]:
        """Each message on screen that has other versions, and its versions in order."""
        return self._shared.states.get(session_id).versions.shown()

    def switch_version(self, session_id: str, row_id: str) -> None:
        """Show the version ``row_id`` and the branch it had; the next message continues it."""
        if self._busy(session_id):
            raise NotAVersion("This chat is still answering; wait for the reply or stop it, then switch versions.")
        switch_version(self._shared.writer, session_id, row_id)

    def parked(self, session_id: str) -> list[ParkedCall]:
        """The chat's tool calls waiting on a person (also those parked before a restart)."""
        return self._shared.states.get(session_id).parked()

    def usage(self, session_id: str) -> tuple[UsageTotals, RequestUsage | None]:
        ledger = self._shared.ledger
        requests = ledger.requests(session_id)
        return ledger.totals(session_id), (requests[-1] if requests else None)

    def context_fill(self, session_id: str) -> ContextFill | None:
        """How full the chat's context is on its route now (``None``: nothing counted yet, or
        no route)."""
        view = self._options.route(session_id)
        if view.route is None:
            return None
        state = self._shared.states.get(session_id)
        checkpoint = state.checkpoint.meta() if state.checkpoint is not None else None
        budget = self._shared.root.limits.budget(view.route)
        requests = self._shared.ledger.requests(session_id)
        return context_fill(checkpoint if isinstance(checkpoint, Checkpoint) else None, requests, budget)
