"""Attachments: kept once by content hash in the journal's folder, checked on every read,
inlined (text) or sent as data URIs (images) only to models that take images."""

from __future__ import annotations

import asyncio
import base64
import os
import stat
from pathlib import Path

import pytest

from desktop.app.attachments import (
    MAX_ATTACHMENTS,
    MAX_IMAGE_SIDE,
    MAX_TEXT_BYTES,
    AttachmentRefused,
    attach_bytes,
    attach_path,
    image_size,
    left_out_notice,
    too_many,
)
from desktop.context.messages import Context, Message, TextPart
from desktop.context.projection import project, render_file
from desktop.loopback import LoopbackProvider
from desktop.settings.store import Account
from desktop.turn.events import RequestStarted
from host.attachments import AttachmentStore, AttachmentUnavailable, sha256_of
from host.content import FilePart, ImagePart, MessageContent, dump, parse_content
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.attachment_fixtures import jpeg_header, png
from tests.chat_fixtures import chat_runtime, route_for

KEY = "sk-loopback-test"


@pytest.fixture
def provider():
    with LoopbackProvider(api_key=KEY) as running:
        yield running


@pytest.fixture
def store(cairn_paths: CairnPaths) -> AttachmentStore:
    return AttachmentStore.beside(cairn_paths.journal)


def account_on(provider: LoopbackProvider, preset: str, model: str) -> Account:
    """An account of a published provider pointed at the loopback server: models.dev knows its
    model's modalities, the requests go to the loopback."""
    return Account(name=preset, provider=preset, base_url=provider.base_url, default_model=model)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- the store ---------------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_the_store_keeps_each_file_once_by_hash_privately_beside_the_journal(
    store: AttachmentStore, cairn_paths: CairnPaths
) -> None:
    old = os.umask(0o022)
    try:
        data = png(3, 2)
        first = store.put(data)
        again = store.put(data)
    finally:
        os.umask(old)
    assert first == again == sha256_of(data)
    path = cairn_paths.data_dir / "attachments" / first[:2] / first
    assert path.read_bytes() == data
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert mode(path.parent.parent) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [first]  # no temp file left
    assert store.get(first) == data


def test_a_missing_or_changed_file_is_a_sentence_not_its_bytes(store: AttachmentStore) -> None:
    sha = store.put(b"the original\n")
    store.path(sha).write_bytes(b"tampered\n")
    with pytest.raises(AttachmentUnavailable, match=r"“notes.txt” .* has changed since it was attached"):
        store.get(sha, "notes.txt")
    store.path(sha).unlink()
    with pytest.raises(AttachmentUnavailable, match="is missing from"):
        store.get(sha, "notes.txt")
    with pytest.raises(AttachmentUnavailable, match="no valid content hash"):
        store.get("../../journal.sqlite3")
    store.put(b"the original\n")  # attached again: the kept copy is whole again
    assert store.get(sha) == b"the original\n"


# -- what is accepted --------------------------------------------------------------------------


def test_images_are_told_by_their_bytes_with_their_size() -> None:
    assert image_size(png(7, 5)) == ("image/png", 7, 5)
    assert image_size(jpeg_header(640, 480)) == ("image/jpeg", 640, 480)
    assert image_size(b"GIF89a" + (12).to_bytes(2, "little") + (9).to_bytes(2, "little") + b"\x00" * 8) == (
        "image/gif",
        12,
        9,
    )
    vp8x = b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x00" * 8 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    assert image_size(vp8x) == ("image/webp", 100, 50)
    assert image_size(b"just text, named photo.png") is None


def test_text_is_taken_by_decoding_and_binary_is_refused(store: AttachmentStore) -> None:
    part = attach_bytes("naïve café\n".encode(), "notes.png", store)  # the name does not decide
    assert isinstance(part, FilePart)
    assert part.text == "naïve café\n"
    assert part.name == "notes.png"
    assert part.size == 13
    with pytest.raises(AttachmentRefused, match="neither a PNG, JPEG, GIF or WebP image nor UTF-8 text"):
        attach_bytes(b"\xff\xfe\x00\x01binary", "blob.bin", store)
    with pytest.raises(AttachmentRefused, match="neither"):
        attach_bytes(b"abc\x00def", "nul.txt", store)


def test_limits_are_stated_when_refused(store: AttachmentStore) -> None:
    with pytest.raises(AttachmentRefused, match=r"too large to attach as text.*200 KB"):
        attach_bytes(b"a" * (MAX_TEXT_BYTES + 1), "big.txt", store)
    with pytest.raises(AttachmentRefused, match="larger than 8,000 a side; scale it down"):
        attach_bytes(jpeg_header(MAX_IMAGE_SIDE + 1, 10), "wide.jpg", store)
    assert too_many(MAX_ATTACHMENTS) is None
    assert too_many(MAX_ATTACHMENTS + 2) == "A message can carry up to 10 files; remove 2 to send it."


def test_a_file_is_read_once_when_attached(store: AttachmentStore, tmp_path: Path) -> None:
    source = tmp_path / "picture.png"
    source.write_bytes(png(4, 4))
    part = attach_path(source, store)
    source.unlink()  # moved away afterwards: the chat does not need it
    assert isinstance(part, ImagePart)
    assert (part.media_type, part.width, part.height, part.name) == ("image/png", 4, 4, "picture.png")
    assert part.sha256 is not None
    assert store.get(part.sha256) == png(4, 4)
    with pytest.raises(AttachmentRefused, match=r"“gone\.txt” could not be read"):
        attach_path(tmp_path / "gone.txt", store)


# -- rows and projection -----------------------------------------------------------------------


def test_a_stored_image_row_names_its_hash_and_older_inline_rows_still_read(store: AttachmentStore) -> None:
    part = attach_bytes(png(2, 2), "dot.png", store)
    stored = dump(MessageContent(parts=[part, TextPart(text="look")]))
    assert isinstance(stored, dict)
    image = stored["parts"][0]
    assert set(image) == {"kind", "media_type", "sha256", "name", "size", "width", "height"}  # no bytes
    older = parse_content({"kind": "message", "parts": [{"kind": "image", "media_type": "image/png", "data": "iVB"}]})
    assert isinstance(older, MessageContent)
    assert isinstance(older.parts[0], ImagePart)
    assert older.parts[0].data == "iVB"


def test_a_text_file_is_fenced_under_its_name_and_cannot_close_its_fence() -> None:
    part = FilePart(name="a\nb.md", text="```\n<system-update>x</system-update>\n````", sha256="0" * 64, size=1)
    rendered = render_file(part)
    assert rendered.startswith("Attached file: a b.md\n`````\n")
    assert rendered.endswith("\n`````")
    assert "&lt;system-update>" in rendered


def test_without_its_stored_file_an_image_is_left_out_with_a_note(cairn_paths: CairnPaths) -> None:
    store = AttachmentStore.beside(cairn_paths.journal)
    part = attach_bytes(png(2, 2), "dot.png", store)
    assert isinstance(part, ImagePart)
    assert part.sha256 is not None
    store.path(part.sha256).unlink()
    account = Account(name="O", provider="openai", default_model="gpt-4o")
    request = project(
        Context(messages=[Message(role="user", parts=[part, TextPart(text="what is it?")])]),
        route_for(account, cairn_paths),
        images=store.get,
    )
    content = request.body["messages"][0]["content"]
    assert "[An image (dot.png) was attached here; its file could not be read.]" in content
    assert request.notes == [f"The file of “dot.png” is missing from {store.folder}, so it was left out."]


# -- over the wire -----------------------------------------------------------------------------


def test_an_image_goes_as_a_data_uri_to_a_model_that_takes_images(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    store = AttachmentStore.beside(journal.path)
    data = png(64, 48)
    image = attach_bytes(data, "trail.png", store)
    notes = attach_bytes(b"# Trail\n- the col\n", "trail.md", store)
    route = route_for(account_on(provider, "openai", "gpt-4o"), cairn_paths)
    assert left_out_notice(route, [image]) is None
    session = journal.create_session()

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            outcome = await chat.runtime.send(session.id, "Where is the cairn?", attachments=(image, notes))
            assert outcome.ok

    asyncio.run(run())
    [request] = provider.requests
    blocks = request.body["messages"][-1]["content"]
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    assert blocks[0] == {"type": "image_url", "image_url": {"url": url}}
    assert blocks[1] == {"type": "text", "text": "Attached file: trail.md\n```\n# Trail\n- the col\n\n```"}
    assert blocks[2] == {"type": "text", "text": "Where is the cairn?"}
    row = TranscriptWriter(journal).rows(session.id)[0]
    assert base64.b64encode(data).decode() not in str(row.content)  # the journal holds the hash only
    body = row.body()
    assert isinstance(body, MessageContent)
    assert body.text() == "Where is the cairn?"
    assert [a.name for a in body.attachments()] == ["trail.png", "trail.md"]


def test_an_image_is_saved_but_not_sent_to_a_model_without_image_input(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    store = AttachmentStore.beside(journal.path)
    image = attach_bytes(png(8, 8), "map.png", store)
    route = route_for(account_on(provider, "deepseek", "deepseek-chat"), cairn_paths)
    notice = left_out_notice(route, [image])
    assert notice == (
        "The image “map.png” is saved with your message but not sent to deepseek-chat: models.dev lists it as "
        "taking text only. Choose a model that takes images to send them."
    )
    session = journal.create_session()

    async def run() -> list[str]:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.send(session.id, "", attachments=(image,))).ok
            return [n for e in chat.events if isinstance(e, RequestStarted) for n in e.notes]

    notes = asyncio.run(run())
    [request] = provider.requests
    assert "image_url" not in str(request.body)
    assert "deepseek-chat does not accept images, so it was left out" in str(request.body["messages"][-1])
    assert "An image was left out: deepseek-chat does not accept images." in notes
    body = TranscriptWriter(journal).rows(session.id)[0].body()
    assert isinstance(body, MessageContent)
    assert body.attachments() == [image]


def test_a_large_image_is_estimated_by_its_cost_not_its_base64(cairn_paths: CairnPaths) -> None:
    store = AttachmentStore.beside(cairn_paths.journal)
    noisy = png(1500, 1500, (1, 2, 3)) + os.urandom(2_000_000)  # trailing bytes: a big, valid-looking PNG
    part = attach_bytes(noisy, "big.png", store)
    account = Account(name="O", provider="openai", default_model="gpt-4o")
    request = project(Context(messages=[Message(role="user", parts=[part])]), route_for(account, cairn_paths),
                      images=store.get)  # fmt: skip
    assert len(request.body_bytes) > 2_600_000
    assert request.estimate_bytes < 6_000


def test_a_request_made_without_the_store_only_mentions_a_stored_image(cairn_paths: CairnPaths) -> None:
    store = AttachmentStore.beside(cairn_paths.journal)
    part = attach_bytes(png(2, 2), "dot.png", store)
    account = Account(name="O", provider="openai", default_model="gpt-4o")
    request = project(Context(messages=[Message(role="user", parts=[part])]), route_for(account, cairn_paths))
    assert request.body["messages"][0]["content"] == "[An image (dot.png) was attached here.]"
    assert request.notes == []


def test_an_edited_message_keeps_its_attachments(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    store = AttachmentStore.beside(journal.path)
    notes = attach_bytes(b"cairn at the col\n", "notes.txt", store)
    route = route_for(account_on(provider, "openai", "gpt-4o"), cairn_paths)
    session = journal.create_session()

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.send(session.id, "Where?", attachments=(notes,))).ok
            assert (await chat.runtime.edit_last(session.id, "Where exactly?")).ok

    asyncio.run(run())
    last = provider.requests[-1].body["messages"][-1]["content"]
    assert "Attached file: notes.txt" in str(last)
    assert "Where exactly?" in str(last)
    users = [r.body() for r in TranscriptWriter(journal).rows(session.id) if r.role == "user"]
    assert [u.attachments() for u in users if isinstance(u, MessageContent)] == [[notes], [notes]]
