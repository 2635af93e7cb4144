"""Exports name attachments by name and hash; a text file's text is exact, an image's bytes never appear."""

from __future__ import annotations

import base64

from desktop.app.attachments import attach_bytes
from desktop.app.export import to_json, to_markdown
from host.attachments import AttachmentStore
from host.content import MessageContent, TextPart
from host.journal import Journal
from host.transcript import TranscriptWriter
from tests.attachment_fixtures import png


def test_the_markdown_export_names_attachments_and_keeps_text_files_exact(journal: Journal) -> None:
    store = AttachmentStore.beside(journal.path)
    data = png(40, 30)
    image = attach_bytes(data, "col.png", store)
    notes = attach_bytes(b"line one\n```\ncode\n```\n", "notes.md", store)
    session = journal.create_session("Trail")
    writer = TranscriptWriter(journal)
    writer.append_user(session.id, MessageContent(parts=[image, notes, TextPart(text="Which way?")]))
    rows = writer.rows(session.id)
    markdown = to_markdown(journal.session(session.id) or session, rows)
    assert f"🖼 *Attached image* `col.png` (image/png, 40 by 30 px, {len(data)} B, sha256 `{image.sha256}`)" in markdown
    assert (
        f"📎 *Attached file* `notes.md` (22 B, sha256 `{notes.sha256}`)\n\n````\nline one\n```\ncode\n```\n\n````"
        in (markdown)
    )
    assert "Which way?" in markdown
    encoded = base64.b64encode(data).decode()
    assert encoded[:40] not in markdown
    assert encoded[:40] not in to_json(session, rows, [])  # the JSON export has the row as stored: the hash
