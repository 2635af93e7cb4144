"""What public MCP servers send reaches the model intact: one copy of structured content, text
resources shown, images and sounds sent to a model that takes them (and described to one that
does not), one cap with one true note, task-only tools left out with the reason. Real server
processes nobody at Cairn wrote (tests/public_mcp), the loopback provider, the journal.

The sounds come from the filesystem server's ``read_media_file``: the ``everything`` server
installed here (2026.8.31) has no tool that returns audio."""

from __future__ import annotations

import base64
import hashlib
import math
import struct
import wave
from pathlib import Path
from typing import Any

import pytest

from desktop.context.tool_media import TOOL_SOUNDS
from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import server_setting
from desktop.settings.store import Account
from host.attachments import AttachmentStore
from host.mcp import McpServerConfig
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.mcp_cairn import Cairn, call, search
from tests.public_mcp import everything, filesystem


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def cairn(cairn_paths: CairnPaths, provider: LoopbackProvider):
    made = Cairn(cairn_paths, provider, MemoryKeyring())
    yield made
    made.services.close()


def adding(config: McpServerConfig):
    async def add(cairn: Cairn) -> None:
        fields = {"name": config.name, "command": config.command, "args": list(config.args), "start_timeout": 30}
        if config.env:
            fields["env"] = dict(config.env)
        await cairn.mcp.put(server_setting(cairn.services.secrets, fields))

    return add


def write_wav(path: Path) -> bytes:
    """A tenth of a second of a 440 Hz tone, 8 kHz mono 16-bit: a real WAV file's bytes."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8_000)
        out.writeframes(
            b"".join(struct.pack("<h", int(8_000 * math.sin(i / 8_000 * 440 * 2 * math.pi))) for i in range(800))
        )
    return path.read_bytes()


def on(provider: LoopbackProvider, preset: str, model: str) -> Account:
    """An account of a published provider pointed at the loopback: models.dev knows whether
    its model takes images."""
    return Account(name=preset, provider=preset, base_url=provider.base_url, default_model=model)


def after_tool(request: Any) -> list[dict[str, Any]]:
    """The messages of a request after its last tool message."""
    messages = request.body["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "tool")
    return messages[last + 1 :]


def test_a_tool_image_reaches_a_model_that_takes_images_once_and_is_kept_by_hash(
    cairn: Cairn, provider: LoopbackProvider
) -> None:
    cairn.account = on(provider, "openai", "gpt-4o")
    errors = cairn.run(adding(everything()), search("select:everything__get-tiny-image"),
                       call("everything__get-tiny-image"), "and now?")  # fmt: skip
    assert errors == [None, None, None]
    result = cairn.results()[-1]
    assert result.content.startswith("Here's the image you requested:\n[image 1: image/png, ")
    (image,) = result.media or []
    data = AttachmentStore.beside(cairn.paths.journal).get(image.sha256 or "")
    assert data.startswith(b"\x89PNG")
    url = f"data:image/png;base64,{base64.b64encode(data).decode()}"
    answered, later = provider.requests[-2], provider.requests[-1]
    following = after_tool(answered)
    assert [m["role"] for m in following] == ["user"]  # right after the results, as the person's
    blocks = following[0]["content"]
    assert blocks[0]["type"] == "text"
    assert blocks[1:] == [{"type": "image_url", "image_url": {"url": url}}]
    # Request-only, and stable: the next request carries the same message in the same place.
    sent = answered.body["messages"]
    assert later.body["messages"][: len(sent)] == sent
    assert str(later.body).count(url) == 1
    assert base64.b64encode(data).decode().encode() not in cairn.paths.journal.read_bytes()


def test_a_model_that_does_not_take_images_is_told_so_and_sent_none(cairn: Cairn, provider: LoopbackProvider) -> None:
    cairn.account = on(provider, "deepseek", "deepseek-chat")
    errors = cairn.run(adding(everything()), search("select:everything__get-tiny-image"),
                       call("everything__get-tiny-image"))  # fmt: skip
    assert errors == [None, None]
    request = provider.requests[-1]
    assert "image_url" not in str(request.body)
    tool = [m for m in request.body["messages"] if m["role"] == "tool"][-1]
    assert tool["content"].endswith("[deepseek-chat is not known to take images, so the tool's images were not shown.]")


def test_an_embedded_text_resource_is_shown_and_a_task_only_tool_is_left_out_with_the_reason(cairn: Cairn) -> None:
    skipped: dict[str, str] = {}

    async def look(cairn: Cairn) -> None:
        view = cairn.services.mcp.view("everything")
        assert view is not None
        assert view.status is not None
        skipped.update((tool.name, tool.reason) for tool in view.status.skipped)

    errors = cairn.run(adding(everything()), search("select:everything__get-resource-reference"),
                       call("everything__get-resource-reference", '{"resourceType": "Text", "resourceId": 1}'),
                       look)  # fmt: skip
    assert errors == [None, None]
    text = cairn.results()[-1].content
    assert "[resource: demo://resource/dynamic/text/1, text/plain]\n" in text
    assert "not shown" not in text
    assert "taskSupport: required" in skipped["simulate-research-query"]


def test_a_file_is_read_once_and_a_huge_one_is_cut_once_with_a_true_note(
    cairn: Cairn, provider: LoopbackProvider, tmp_path: Path
) -> None:
    cairn.account = on(provider, "openai", "gpt-4o")  # room for a 100,000-character result
    folder = tmp_path / "files"
    folder.mkdir()
    small = "".join(f"line {i}\n" for i in range(2_000))
    (folder / "small.txt").write_text(small)
    (folder / "huge.txt").write_text("x" * 1_499_999 + "\n")
    read = '{"path": "%s"}'
    errors = cairn.run(adding(filesystem(folder)), search("select:files__read_text_file"),
                       call("files__read_text_file", read % (folder / "small.txt")),
                       call("files__read_text_file", read % (folder / "huge.txt")))  # fmt: skip
    assert errors == [None, None, None]
    once, huge = [r.content for r in cairn.results()[-2:]]
    assert once == small  # the text, not the text and {"content": text} beside it
    assert huge.count("[Cairn cut this result here") == 1
    assert huge.endswith("\n[Cairn cut this result here: 1,400,000 more characters were not shown.]")
    assert "[cut:" not in huge
    sent = [m for m in provider.requests[-1].body["messages"] if m["role"] == "tool"]
    assert sent[-2]["content"] == small


def test_a_tool_sound_reaches_a_model_that_takes_audio_once_and_is_kept_by_hash(
    cairn: Cairn, provider: LoopbackProvider, tmp_path: Path
) -> None:
    cairn.account = on(provider, "google", "gemini-2.5-flash")  # models.dev: takes audio
    folder = tmp_path / "sounds"
    folder.mkdir()
    sound = write_wav(folder / "tone.wav")
    read = call("files__read_media_file", '{"path": "%s"}' % (folder / "tone.wav"))
    errors = cairn.run(adding(filesystem(folder)), search("select:files__read_media_file"), read, read, "and now?")
    assert errors == [None, None, None, None]
    first, second = cairn.results()[-2:]
    assert first.content == f"[audio 1: audio/wav, {len(sound):,} bytes]"  # described on the card, no base64
    (kept,) = first.media or []
    assert (kept.kind, kept.media_type, kept.sha256, kept.size) == (
        "audio",
        "audio/wav",
        hashlib.sha256(sound).hexdigest(),
        len(sound),
    )
    assert second.media == first.media
    store = AttachmentStore.beside(cairn.paths.journal)
    assert store.get(kept.sha256) == sound
    assert [p.name for p in store.folder.rglob("*") if p.is_file()] == [kept.sha256]  # two results, one file
    data = base64.b64encode(sound).decode()
    assert data.encode() not in cairn.paths.journal.read_bytes()
    answered, later = provider.requests[-2], provider.requests[-1]
    following = after_tool(answered)
    assert [m["role"] for m in following] == ["user"]  # right after the results, as the person's
    blocks = following[0]["content"]
    assert blocks[0] == {"type": "text", "text": TOOL_SOUNDS}
    assert blocks[1:] == [{"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}]
    # Request-only, and stable: the next request carries the same message in the same place.
    sent = answered.body["messages"]
    assert later.body["messages"][: len(sent)] == sent
    assert str(later.body).count(data) == 2  # once after each of the two steps' results


def test_a_model_not_known_to_take_audio_is_told_so_and_sent_no_sound(
    cairn: Cairn, provider: LoopbackProvider, tmp_path: Path
) -> None:
    cairn.account = on(provider, "openai", "gpt-4o")  # images, not audio
    folder = tmp_path / "sounds"
    folder.mkdir()
    sound = write_wav(folder / "tone.wav")
    (folder / "tone.ogg").write_bytes(b"OggS" + b"\0" * 60)
    read = '{"path": "%s"}'
    errors = cairn.run(adding(filesystem(folder)), search("select:files__read_media_file"),
                       call("files__read_media_file", read % (folder / "tone.wav")),
                       call("files__read_media_file", read % (folder / "tone.ogg")))  # fmt: skip
    assert errors == [None, None, None]
    request = provider.requests[-1]
    assert "input_audio" not in str(request.body)
    assert base64.b64encode(sound).decode() not in str(request.body)
    wav, ogg = [m["content"] for m in request.body["messages"] if m["role"] == "tool"][-2:]
    assert wav == (
        f"[audio 1: audio/wav, {len(sound):,} bytes]\n"
        "[gpt-4o is not known to take audio, so the tool's sounds were not sent.]"
    )
    assert ogg == "[audio: audio/ogg, 64 bytes; not shown: a model is sent WAV or MP3 sounds only]"
    assert after_tool(request) == []
