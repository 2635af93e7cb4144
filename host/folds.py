"""Folding a chat's rows: the order the model sees them in, what supersede markers took out,
the last compaction checkpoint that counts, and the effective sections (docs/architecture.md §1,
"Model order" and "Effective state").

These read rows already in memory; ``desktop.session.state`` applies them to a chat's rows once
and then advances row by row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from host.content import Checkpoint, SupersedeContent
from host.rows import TranscriptRow

__all__ = ["fold_sections", "last_checkpoint", "order_for_model", "replay", "superseded"]


def order_for_model(rows: list[TranscriptRow]) -> list[TranscriptRow]:
    """Place every anchored row just before its anchor; see ``TranscriptWriter.model_order``."""
    anchored: dict[str, list[TranscriptRow]] = {}
    for row in rows:
        if row.anchor is not None:
            anchored.setdefault(row.anchor, []).append(row)
    ordered: list[TranscriptRow] = []
    for row in rows:
        if row.anchor is None:
            ordered.extend(anchored.get(row.id, ()))
            ordered.append(row)
    return ordered


def last_checkpoint(rows: list[TranscriptRow], gone: set[str] | None = None) -> int | None:
    """The index of the last compaction checkpoint among ``rows`` that is not superseded (a
    checkpoint in a branch the person left does not apply), if any. ``gone``: the rows'
    ``superseded`` set, when the caller has it already."""
    if gone is None:
        gone = superseded(rows)
    for index in range(len(rows) - 1, -1, -1):
        meta = rows[index].model_system
        # Most rows are not: look at the kind before parsing the whole row.
        if (
            isinstance(meta, dict)
            and meta.get("kind") == "checkpoint"
            and rows[index].id not in gone
            and isinstance(rows[index].meta(), Checkpoint)
        ):
            return index
    return None


def superseded(rows: list[TranscriptRow]) -> set[str]:
    """The ids that supersede markers among ``rows`` have taken out and not put back.

    Markers apply in storage order; they are never anchored, so their order in model order
    is the same."""
    return replay(
        marker
        for row in rows
        if row.role == "system" and row.model_system is None and isinstance(marker := row.body(), SupersedeContent)
    )


def replay(markers: Iterable[SupersedeContent]) -> set[str]:
    """The ids taken out by ``markers`` applied in order: each takes its ``supersedes`` out,
    then puts its ``restores`` back."""
    gone: set[str] = set()
    for marker in markers:
        gone.update(marker.supersedes)
        gone.difference_update(marker.restores)
    return gone


def fold_sections(rows_in_model_order: list[TranscriptRow]) -> dict[str, Any]:
    """Fold section updates in order from the last compaction checkpoint (whose saved state
    they start from) or the first row; tombstones remove; unknown versions are ignored.
    Superseded rows (a branch the person left) are not folded."""
    gone = superseded(rows_in_model_order)
    start = last_checkpoint(rows_in_model_order, gone)
    state: dict[str, Any] = {}
    if start is not None:
        checkpoint = rows_in_model_order[start].meta()
        assert isinstance(checkpoint, Checkpoint)
        state = checkpoint.state()
    for row in rows_in_model_order[(start or -1) + 1 :]:
        update = row.section_update()
        if update is None or row.id in gone:
            continue
        if update.is_tombstone:
            state.pop(update.section, None)
        else:
            state[update.section] = update.content
    return state
