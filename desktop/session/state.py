"""A chat's state, folded from its rows once and then advanced by the rows added since.

Everything a turn or the window asks about a chat comes from its rows in model order (the
journal stores nothing else): the effective sections and the last compaction checkpoint,
the latest declaration plan and the frozen prefix, the permission mode and the chat's own
grants, the route fallbacks it has learnt, its own settings and route, the calls waiting on
a person, and the tree of versions. ``SessionState.load`` reads every row once (a *full
fold*); ``advance`` reads only the rows written since (one indexed query) and folds them in,
so a step's cost does not grow with the chat's length.

Most rows fold in as they come: they go at the end of model order and change one thing. Two
cases are worked out again from the rows already in memory (a *refold*, which reads nothing
from the journal): a supersede marker, which changes which rows count, and an anchored
section update placed before a row that would have overridden it. Either way the state is
the one a full fold of the same rows gives; ``tests/test_session_state.py`` checks that on
random histories.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from desktop.session.fallbacks import SessionFallbacks
from desktop.session.parked import ParkedCall, open_calls, parked_calls, started_calls
from desktop.settings.routes import ResolvedRoute
from host.content import (
    ChatGrant,
    ChatRoute,
    ChatSettings,
    Checkpoint,
    Mode,
    PermissionMode,
    PlanRecord,
    RouteFallback,
    SectionUpdate,
    StartedFrom,
    SupersedeContent,
    ToolCallPart,
    ToolIdentity,
)
from host.folds import fold_sections, last_checkpoint
from host.journal import Journal
from host.permissions import PermissionPolicy, Permissions
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter
from host.versions import Versions, entries_of

__all__ = ["FoldCount", "SessionState"]


@dataclass
class FoldCount:
    """How often chats' states were worked out: ``loads`` read every row from the journal;
    ``refolds`` worked one out again from the rows in memory."""

    loads: int = 0
    refolds: int = 0


class SessionState:
    """One chat's state; see the module docstring. Not thread-safe: the core's loop owns it."""

    folds: ClassVar[FoldCount] = FoldCount()

    def __init__(self, journal: Journal, session_id: str) -> None:
        self.session_id = session_id
        self._reader = TranscriptWriter(journal)
        self._last_seq = 0
        self.stored: list[TranscriptRow] = []  # storage order
        self.rows: list[TranscriptRow] = []  # model order
        self._index: dict[str, int] = {}  # a row's place in ``rows`` while nothing is inserted before it
        self.gone: set[str] = set()
        self.branch_changes = 0  # supersede markers folded: the branch on screen changed
        self.sections: dict[str, Any] = {}
        self.checkpoint: TranscriptRow | None = None
        self.plan: PlanRecord | None = None
        self.chat_settings = ChatSettings()
        self.chat_route: ChatRoute | None = None
        self.started_from: StartedFrom | None = None  # the assistant the chat was started from
        self._mode: Mode | None = None
        self._grants: set[ToolIdentity] = set()
        self._learnt: list[RouteFallback] = []
        self._versions: Versions | None = None

    @classmethod
    def load(cls, journal: Journal, session_id: str) -> SessionState:
        """Every row of the chat, folded: a full fold."""
        state = cls(journal, session_id)
        SessionState.folds.loads += 1
        state.advance()
        return state

    def advance(self) -> tuple[TranscriptRow, ...]:
        """Fold in the rows written since the last fold; the new rows, in storage order."""
        new = self._reader.rows(self.session_id, after_seq=self._last_seq)
        if not new:
            return ()
        self._last_seq = new[-1].seq
        refold = False
        for row in new:
            self.stored.append(row)
            refold |= self._place(row)
            self._fold_meta(row)
        if self._versions is not None:
            self._versions.add(entries_of(new))
        if refold:
            SessionState.folds.refolds += 1
            self._refold_sections()
        return tuple(new)

    # -- folding ---------------------------------------------------------------------------

    def _place(self, row: TranscriptRow) -> bool:
        """Put ``row`` in model order and fold what depends on that order; whether the
        sections must be worked out again."""
        if row.anchor is None:
            self._index[row.id] = len(self.rows)
            self.rows.append(row)
            return self._fold_in_order(row)
        at = self._find(row.anchor)
        if at is None:
            return False  # an anchor that is not a user row of this chat: not in model order
        self.rows.insert(at, row)
        self._index.clear()  # every place after ``at`` moved
        if any(_orders_sections(later) for later in self.rows[at + 1 :]):
            return True
        return self._fold_in_order(row)

    def row(self, row_id: str) -> TranscriptRow | None:
        """The row ``row_id`` of this chat, when it is in model order."""
        at = self._find(row_id)
        return self.rows[at] if at is not None else None

    def _find(self, row_id: str) -> int | None:
        at = self._index.get(row_id)
        if at is not None and at < len(self.rows) and self.rows[at].id == row_id:
            return at
        for at in range(len(self.rows) - 1, -1, -1):  # anchors are nearly always the latest user row
            if self.rows[at].id == row_id:
                return at
        return None

    def _fold_in_order(self, row: TranscriptRow) -> bool:
        """Fold ``row``, now the last row that orders the sections; whether a refold is due."""
        if row.role != "system":
            return False
        meta = row.meta()
        if isinstance(meta, SectionUpdate):
            if meta.is_tombstone:
                self.sections.pop(meta.section, None)
            else:
                self.sections[meta.section] = meta.content
        elif isinstance(meta, Checkpoint):
            self.checkpoint = row
            self.sections = meta.state()
        elif row.model_system is None and isinstance(row.body(), SupersedeContent):
            return True
        return False

    def _fold_meta(self, row: TranscriptRow) -> None:
        """Fold the metadata whose latest row wins, in storage order (none of it is anchored)."""
        if row.role != "system":
            return
        if row.model_system is None:
            marker = row.body()
            if isinstance(marker, SupersedeContent):
                self.gone.update(marker.supersedes)
                self.gone.difference_update(marker.restores)
                self.branch_changes += 1
            return
        meta = row.meta()
        if isinstance(meta, PlanRecord):
            self.plan = meta
        elif isinstance(meta, PermissionMode):
            self._mode = meta.mode
        elif isinstance(meta, ChatGrant):
            (self._grants.add if meta.allow else self._grants.discard)(meta.target)
        elif isinstance(meta, RouteFallback):
            self._learnt.append(meta)
        elif isinstance(meta, ChatSettings):
            self.chat_settings = meta
        elif isinstance(meta, ChatRoute):
            self.chat_route = meta
        elif isinstance(meta, StartedFrom):
            self.started_from = meta

    def _refold_sections(self) -> None:
        at = last_checkpoint(self.rows, self.gone)
        self.checkpoint = None if at is None else self.rows[at]
        self.sections = fold_sections(self.rows)

    # -- what the chat is now --------------------------------------------------------------

    def permissions(self, policy: PermissionPolicy) -> Permissions:
        """The chat's mode (its last mode row, else the policy's default) and grants, with the
        settings' Always and Never answers."""
        return Permissions(self.mode(policy.default_mode), self.grants, policy.always, policy.never)

    def mode(self, default_mode: Mode = "ask") -> Mode:
        return self._mode or default_mode

    @property
    def grants(self) -> frozenset[ToolIdentity]:
        """The tools allowed for this chat ("This chat" answers not withdrawn since)."""
        return frozenset(self._grants)

    def fallbacks(self, route: ResolvedRoute) -> SessionFallbacks:
        """What the chat has learnt about ``route``."""
        return SessionFallbacks.of(self._learnt, route)

    def open_calls(self) -> list[ToolCallPart]:
        return open_calls(self.rows)

    def started(self) -> set[str]:
        """The calls that were about to run (see ``host.metadata.CallStarted``)."""
        return started_calls(self.rows)

    def parked(self) -> list[ParkedCall]:
        """The calls waiting on a person, as the journal has them."""
        return parked_calls(self.rows)

    @property
    def versions(self) -> Versions:
        if self._versions is None:
            self._versions = Versions.of(entries_of(self.stored))
        return self._versions

    def visible(self) -> list[TranscriptRow]:
        """The rows a person sees on the branch shown, in model order."""
        return [r for r in self.rows if not r.hidden and r.id not in self.gone]


def _orders_sections(row: TranscriptRow) -> bool:
    """Whether a row placed after an inserted section update could change what it folds to."""
    if row.role != "system":
        return False
    if row.model_system is None:
        return isinstance(row.body(), SupersedeContent)
    meta = row.meta()
    return isinstance(meta, SectionUpdate | Checkpoint)
