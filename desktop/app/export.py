"""Exporting a session: Markdown for people, JSON for programs. No secret is ever in either."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from desktop.app.attachments import shown_size
from host.content import (
    FilePart,
    ImagePart,
    MessageContent,
    ReasoningPart,
    StartedFrom,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from host.folds import superseded
from host.journal import SessionRecord
from host.rows import TranscriptRow
from host.usage import RequestUsage
from host.versions import Versions, entries_of

__all__ = ["to_json", "to_markdown"]

EXPORT_VERSION = 1


def to_markdown(session: SessionRecord, rows: list[TranscriptRow]) -> str:
    """The conversation as a person saw it: visible messages of the version on screen, in
    order; a message with other versions says which one it is."""
    gone = superseded(rows)
    versions = Versions.of(entries_of(rows))
    started = next((m.name for m in (r.meta() for r in rows) if isinstance(m, StartedFrom)), None)
    from_assistant = f" with the assistant {started}" if started else ""
    lines = [
        f"# {session.title or 'Untitled session'}",
        "",
        f"*Exported from Cairn; started {_when(session.created_at)}{from_assistant}.*",
        "",
    ]
    continuing = False  # a continue prompt came last: the next reply goes on the one before it
    text_at: int | None = None  # the line holding the last reply's text so far
    for row in rows:
        body = row.body()
        if row.hidden or row.id in gone or row.role == "system" or not isinstance(body, MessageContent):
            continue
        if body.continues is not None and row.role == "user":  # the window's prompt, not the person's
            continuing = True
            continue
        joined = continuing and row.role == "assistant" and text_at is not None
        continuing = False
        if not joined:
            text_at = None
            lines += _heading(row, body, versions)
        for part in body.parts:
            if isinstance(part, TextPart) and text_at is not None and joined:
                lines[text_at] += part.text  # one reply: its parts join with no separator
            elif isinstance(part, TextPart):
                lines += [part.text, ""]
                text_at = len(lines) - 2 if row.role == "assistant" else None
            elif isinstance(part, ReasoningPart):
                lines += ["<details><summary>Reasoning</summary>", "", part.text, "", "</details>", ""]
            elif isinstance(part, ToolCallPart):
                arguments = json.dumps(part.arguments, indent=2, ensure_ascii=False)
                lines += [f"Calls `{part.name}`:", "", "```json", arguments, "```", ""]
            elif isinstance(part, ToolResultPart):
                lines += ["```", part.content, "```", ""]
            elif isinstance(part, ImagePart | FilePart):
                lines += _attachment(part)
    return "\n".join(lines).rstrip() + "\n"


def _when(stamp: str) -> str:
    """A journal time as a person reads it: "5 December 2026, 08:59 UTC"."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return stamp
    return f"{moment.day} {moment:%B %Y, %H:%M} UTC"


def _heading(row: TranscriptRow, body: MessageContent, versions: Versions) -> list[str]:
    model = body.model.split("/", 1)[1] if body.model and "/" in body.model else body.model  # the route's model
    heading = {"user": "You", "assistant": f"Assistant ({model})" if model else "Assistant", "tool": "Tool result"}
    lines = [f"## {heading.get(row.role, row.role)}", ""]
    if len(group := versions.siblings(row.id)) > 1:
        lines += [f"*(version {group.index(row.id) + 1} of {len(group)})*", ""]
    if body.status == "interrupted":
        lines += ["*(interrupted)*", ""]
    return lines


def _attachment(part: ImagePart | FilePart) -> list[str]:
    """An attachment by name, size and content hash (the file is in Cairn's attachments folder
    under that hash). A text file's text follows, exactly; an image's bytes never do."""
    if isinstance(part, FilePart):
        longest = max((len(run) for run in re.findall(r"`+", part.text)), default=0)
        fence = "`" * max(3, longest + 1)
        head = f"📎 *Attached file* `{part.name}` ({shown_size(part.size)}, sha256 `{part.sha256}`)"
        return [head, "", fence, part.text, fence, ""]
    if part.sha256 is None:
        return [f"🖼 *Attached image* ({part.media_type}, kept inline in the journal, not exported)", ""]
    pixels = f", {part.width} by {part.height} px" if part.width and part.height else ""
    size = f", {shown_size(part.size)}" if part.size is not None else ""
    return [
        f"🖼 *Attached image* `{part.name or 'image'}` ({part.media_type}{pixels}{size}, sha256 `{part.sha256}`)",
        "",
    ]


def to_json(session: SessionRecord, rows: list[TranscriptRow], usage: list[RequestUsage]) -> str:
    """Every row exactly as stored (hidden and superseded ones included, marked), and usage.
    A message with other versions has ``versions``: the ids of all of them, in order, its own
    among them; ``superseded`` rows are those of versions not on screen."""
    gone = superseded(rows)
    versions = Versions.of(entries_of(rows))

    def exported(row: TranscriptRow) -> dict[str, Any]:
        group = versions.siblings(row.id)
        return {**row.model_dump(), "superseded": row.id in gone, **({"versions": group} if len(group) > 1 else {})}

    document: dict[str, Any] = {
        "cairn_export": EXPORT_VERSION,
        "session": session.model_dump(),
        "rows": [exported(r) for r in rows],
        "usage": [u.model_dump() for u in usage],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
