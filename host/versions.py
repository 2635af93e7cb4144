"""Versions of a message: the tree that edits, regenerations and switches grow, derived from rows.

Nothing but the supersede markers is stored. Replaying a session's rows in storage order, the
rows not taken out are *active*; the active visible rows (user, assistant and tool rows that
are not hidden) form the branch on screen, one chain. Each visible row's *parent* is the last
active visible row when it was written, so an edited message and the one it replaced, or a
regenerated answer and the earlier one, share a parent: they are *versions* of one another,
ordered by when they were written.

Every other row (hidden ones: section updates, checkpoints, approvals, error records) has an
*owner*, the visible row whose branch it belongs to: its anchor when it has one (the sections
of a user row's turn), else the last active visible row when it was written; except that a
hidden row written while that row had a child taken out belongs to the next child written
(a regenerated answer's fresh section updates are that answer's, not its question's). Taking
a branch out takes every active row its subtree owns, so switching away and back gives the
model the same context, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from host.content import SupersedeContent
from host.errors import CairnError
from host.rows import TranscriptRow, VersionEntry
from host.transcript import TranscriptWriter

__all__ = ["NotAVersion", "Versions", "entries_of", "switch_version"]

VISIBLE = frozenset({"user", "assistant", "tool"})


class NotAVersion(CairnError):
    """The row asked for is not a version the person can switch to or edit now."""


def entries_of(rows: Iterable[TranscriptRow]) -> list[VersionEntry]:
    """Rows (in storage order) as ``Versions.of`` takes them."""
    entries = []
    for row in rows:
        marker = row.body() if row.role == "system" and row.model_system is None else None
        entries.append(
            VersionEntry(row.id, row.seq, row.role, row.hidden, row.anchor,
                         marker if isinstance(marker, SupersedeContent) else None)
        )  # fmt: skip
    return entries


@dataclass
class Versions:
    """The session's version tree and which branch is active, replayed from its rows."""

    order: dict[str, int] = field(default_factory=dict)  # non-marker row -> its seq
    role: dict[str, str] = field(default_factory=dict)
    visible: set[str] = field(default_factory=set)
    active: set[str] = field(default_factory=set)
    parent: dict[str, str | None] = field(default_factory=dict)  # visible row -> its parent
    children: dict[str | None, list[str]] = field(default_factory=dict)  # in the order written
    owner: dict[str, str | None] = field(default_factory=dict)  # hidden row -> its visible row
    pending: dict[str | None, list[str]] = field(default_factory=dict)  # owned by the next child
    taken: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the last marker that took it
    written: list[str] = field(default_factory=list)  # the visible rows in storage order

    last: str | None = None  # the tip after the entries replayed so far

    @classmethod
    def of(cls, entries: Iterable[VersionEntry]) -> Versions:
        """Replay ``entries`` in storage order (``version_entries`` or ``entries_of``)."""
        tree = cls()
        tree.add(entries)
        return tree

    def add(self, entries: Iterable[VersionEntry]) -> None:
        """Replay more entries, the ones written after those replayed so far."""
        order, role, active, visible, written = self.order, self.role, self.active, self.visible, self.written
        parent, children, owner, pending = self.parent, self.children, self.owner, self.pending
        tip = self.last
        for entry in entries:
            if entry.marker is not None:
                tip = self._apply(entry.marker)
                continue
            row_id = entry.id
            order[row_id] = entry.seq
            role[row_id] = entry.role
            active.add(row_id)
            if entry.role in VISIBLE and not entry.hidden:
                visible.add(row_id)
                written.append(row_id)
                parent[row_id] = tip
                children.setdefault(tip, []).append(row_id)
                if tip in pending:
                    for waiting in pending.pop(tip):
                        owner[waiting] = row_id
                tip = row_id
            elif entry.anchor is not None:
                owner[row_id] = entry.anchor
            elif tip in children:
                pending.setdefault(tip, []).append(row_id)
            else:
                owner[row_id] = tip
        self.last = tip

    def _apply(self, marker: SupersedeContent) -> str | None:
        """Apply one marker; the new tip (the last active visible row)."""
        taken = tuple(marker.supersedes)
        for row_id in marker.supersedes:
            if row_id in self.active:
                self.active.discard(row_id)
                self.taken[row_id] = taken
        self.active.update(r for r in marker.restores if r in self.order)
        return self.tip()

    # -- reading ---------------------------------------------------------------------------

    def tip(self) -> str | None:
        """The last active visible row: what the next message continues. (It is looked for
        from the end: past the rows of the branch just left, at most.)"""
        return next((r for r in reversed(self.written) if r in self.active), None)

    def path(self) -> list[str]:
        """The active visible rows, in storage order: the branch on screen."""
        return sorted((r for r in self.visible if r in self.active), key=self.order.__getitem__)

    def siblings(self, row_id: str) -> list[str]:
        """The versions of a visible row (itself among them), in the order they were written."""
        if row_id not in self.visible:
            return []
        return list(self.children.get(self.parent[row_id], [row_id]))

    def shown(self) -> dict[str, tuple[str, ...]]:
        """Each active visible row that has other versions, and its versions."""
        return {r: tuple(group) for r in self.path() if len(group := self.siblings(r)) > 1}

    def active_child(self, row_id: str | None) -> str | None:
        return next((c for c in self.children.get(row_id, []) if c in self.active), None)

    def branch(self, row_id: str) -> list[str]:
        """The active rows that go when ``row_id``'s branch is taken out, in storage order:
        every row its subtree owns, and the rows waiting for a next child in it or of its
        parent (after a regeneration that failed)."""
        subtree = {row_id}
        todo = [row_id]
        while todo:
            for child in self.children.get(todo.pop(), []):
                subtree.add(child)
                todo.append(child)
        waiting = {r for node in (*subtree, self.parent.get(row_id)) for r in self.pending.get(node, [])}
        return self._sorted(
            r
            for r in self.active
            if r in subtree or r in waiting or (r not in self.visible and self.owner.get(r, "") in subtree)
        )

    # -- changing --------------------------------------------------------------------------

    def switch(self, row_id: str) -> SupersedeContent | None:
        """The marker that shows ``row_id`` in place of its active version, with the branch
        it had when it was last shown (nested choices included); ``None`` if it is shown."""
        if row_id not in self.visible:
            raise NotAVersion("That message is not in this chat.")
        if row_id in self.active:
            return None
        parent = self.parent[row_id]
        if parent is not None and parent not in self.active:
            raise NotAVersion("That version belongs to a branch that is not shown; switch to that branch first.")
        current = self.active_child(parent)
        if current is not None:
            out = self.branch(current)
        else:
            out = [r for r in self.pending.get(parent, []) if r in self.active]
        gone = set(out)
        back = self._sorted(r for r in self.taken.get(row_id, (row_id,)) if r in self.order and r not in self.active)
        return SupersedeContent(supersedes=out, restores=[r for r in back if r not in gone])

    def _sorted(self, rows: Iterable[str]) -> list[str]:
        return sorted(rows, key=self.order.__getitem__)


def switch_version(writer: TranscriptWriter, session_id: str, row_id: str) -> TranscriptRow | None:
    """Show ``row_id`` in place of its version on screen, with the branch it had; the next
    message continues it. One hidden marker row; ``None`` when it is shown already."""
    marker = Versions.of(writer.version_entries(session_id)).switch(row_id)
    if marker is None:
        return None
    return writer.append_supersede(session_id, marker.supersedes, marker.restores)
