"""A tool's sounds in the journal and in a request: an ``AudioPart`` beside ``ImagePart`` in a
result's media, stored so that rows without one read and write exactly as before, and sent
as ``input_audio`` blocks only to a model models.dev says takes audio."""

from __future__ import annotations

import base64
import hashlib
import json

from desktop.context.messages import AudioPart, Context, ImagePart, Message, ToolCallPart, ToolResultPart
from desktop.context.projection import IMAGE_ESTIMATE_BYTES, project
from desktop.context.tool_media import AUDIO_ESTIMATE_BYTES, TOOL_IMAGES, TOOL_MEDIA, TOOL_SOUNDS, TOOL_SOUNDS_MAX
from host.attachments import AttachmentUnavailable
from host.canonical import canonical_json_bytes
from host.content import MessageContent, dump, parse_content
from tests.projection_fixtures import make_route, user

WAV = b"RIFF" + bytes(range(256)) * 4
MP3 = b"ID3" + bytes(range(255, -1, -1)) * 4
PNG = b"\x89PNG" + b"\0" * 64
STORE = {hashlib.sha256(data).hexdigest(): data for data in (WAV, MP3, PNG)}


def sound(data: bytes, media_type: str = "audio/wav") -> AudioPart:
    return AudioPart(media_type=media_type, sha256=hashlib.sha256(data).hexdigest(), size=len(data), name="from t")


def image() -> ImagePart:
    return ImagePart(media_type="image/png", sha256=hashlib.sha256(PNG).hexdigest(), size=len(PNG), name="from t")


def step(*media: list[AudioPart | ImagePart]) -> list[Message]:
    """A question, the model's calls and one result per list of media."""
    calls = [ToolCallPart(call_id=f"c{i}", name="t", arguments={}) for i in range(len(media))]
    results = [ToolResultPart(call_id=f"c{i}", content=f"result {i}", media=m) for i, m in enumerate(media)]
    return [user("listen"), Message(role="assistant", parts=list(calls)), Message(role="tool", parts=list(results))]


def load(sha256: str, name: str) -> bytes:
    return STORE[sha256]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_result_without_sounds_is_stored_byte_for_byte_as_before() -> None:
    # The bytes a Cairn before sounds wrote for a tool result with an image.
    before = (
        '{"finish_reason":null,"kind":"message","model":null,"parts":[{"activated":null,"call_id":"c1",'
        '"content":"[image 1: image/png, 3 bytes]","decision":"allow","elapsed_ms":1.5,"is_error":false,'
        '"kind":"tool_result","media":[{"kind":"image","media_type":"image/png","name":"from t","sha256":"'
        + "ab" * 32
        + '","size":3}],"reason":"r","resolved":null}],"status":"complete"}'
    )
    row = parse_content(json.loads(before))
    assert isinstance(row, MessageContent)
    assert canonical_json_bytes(dump(row)).decode() == before
    plain = (
        '{"finish_reason":null,"kind":"message","model":null,"parts":[{"activated":null,"call_id":"c2",'
        '"content":"plain","decision":null,"elapsed_ms":null,"is_error":false,"kind":"tool_result",'
        '"reason":null,"resolved":null}],"status":"complete"}'
    )
    assert (
        canonical_json_bytes(dump(MessageContent(parts=[ToolResultPart(call_id="c2", content="plain")])))
        == plain.encode()
    )
    # An image written without its kind (by hand) still reads as an image.
    media = [{"media_type": "image/png", "sha256": "ab" * 32}]
    untagged = {"kind": "message", "parts": [{"kind": "tool_result", "call_id": "c", "content": "x", "media": media}]}
    assert [type(m) for p in getattr(parse_content(untagged), "parts", []) for m in p.media or []] == [ImagePart]
    # A sound is written with its kind, beside the image, and reads back as an AudioPart.
    (result,) = row.parts
    assert isinstance(result, ToolResultPart)
    with_sound = row.model_copy(
        update={"parts": [result.model_copy(update={"media": [*(result.media or []), sound(WAV)]})]}
    )
    again = parse_content(dump(with_sound))
    assert isinstance(again, MessageContent)
    assert isinstance(again.parts[0], ToolResultPart)
    assert [type(m) for m in again.parts[0].media or []] == [ImagePart, AudioPart]
    assert dump(again) == dump(with_sound)


def test_sounds_reach_a_model_that_takes_audio_as_input_audio_blocks_after_the_results() -> None:
    route = make_route("google", "gemini-2.5-flash")
    sent = project(Context(messages=step([sound(WAV)], [image(), sound(MP3, "audio/mpeg")])), route, images=load)
    messages = sent.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert [m["content"] for m in messages[2:4]] == ["result 0", "result 1"]
    assert messages[-1]["content"] == [
        {"type": "text", "text": TOOL_MEDIA},
        {"type": "input_audio", "input_audio": {"data": b64(WAV), "format": "wav"}},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(PNG)}"}},
        {"type": "input_audio", "input_audio": {"data": b64(MP3), "format": "mp3"}},
    ]
    # Charged a fixed amount each, not their base64.
    base64_bytes = len(b64(WAV)) + len(b64(MP3)) + len(f"data:image/png;base64,{b64(PNG)}")
    fixed = 2 * AUDIO_ESTIMATE_BYTES + IMAGE_ESTIMATE_BYTES
    assert sent.estimate_bytes == len(sent.body_bytes) - base64_bytes + fixed
    assert (sent.sounds, sent.audio_bytes) == (2, len(b64(WAV)) + len(b64(MP3)))


def test_the_lead_text_for_images_alone_is_as_it_always_was() -> None:
    assert TOOL_IMAGES == (
        "[The images the tool results above returned, in order. Cairn sends them here because a tool "
        "message carries text only.]"
    )
    route = make_route("google", "gemini-2.5-flash")
    images_only = project(Context(messages=step([image()])), route, images=load).body["messages"][-1]
    assert images_only["content"][0] == {"type": "text", "text": TOOL_IMAGES}
    sounds_only = project(Context(messages=step([sound(WAV)])), route, images=load).body["messages"][-1]
    assert sounds_only["content"][0] == {"type": "text", "text": TOOL_SOUNDS}
    assert "sounds" in TOOL_SOUNDS
    assert "sounds" in TOOL_MEDIA


def test_a_model_not_known_to_take_audio_is_told_so_and_sent_no_sound() -> None:
    for route in (
        make_route("openai", "gpt-4o"),
        make_route("deepseek", "deepseek-chat"),
        make_route("openai", "a-model-models-dev-lacks"),
    ):
        sent = project(Context(messages=step([image(), sound(WAV)])), route, images=load)
        assert "input_audio" not in str(sent.body)
        tool = sent.body["messages"][2]["content"]
        model = route.actual.model
        assert tool.endswith(f"\n[{model} is not known to take audio, so the tool's sounds were not sent.]")
        assert sent.sounds == 0
    # gpt-4o takes images: the image still follows, under the images-only lead.
    vision = project(Context(messages=step([image(), sound(WAV)])), make_route("openai", "gpt-4o"), images=load)
    assert vision.body["messages"][-1]["content"][0] == {"type": "text", "text": TOOL_IMAGES}


def test_one_step_sends_at_most_so_many_sounds_and_says_how_many() -> None:
    route = make_route("google", "gemini-2.5-flash")
    many = [[sound(WAV), sound(MP3, "audio/mpeg")] for _ in range(3)]
    messages = project(Context(messages=step(*many)), route, images=load).body["messages"]
    blocks = [b for b in messages[-1]["content"] if b["type"] == "input_audio"]
    assert len(blocks) == TOOL_SOUNDS_MAX == 4
    assert messages[4]["content"].endswith("\n[0 of these sounds were sent: at most 4 follow one step's results.]")


def test_a_sound_whose_file_is_gone_is_a_sentence_and_a_note() -> None:
    def gone(sha256: str, name: str) -> bytes:
        raise AttachmentUnavailable(f"{name} is gone.")

    sent = project(Context(messages=step([sound(WAV)])), make_route("google", "gemini-2.5-flash"), images=gone)
    assert sent.body["messages"][-1]["content"][1] == {
        "type": "text",
        "text": "[A sound (from t) was here; its file could not be read.]",
    }
    assert sent.notes == ["from t is gone."]
