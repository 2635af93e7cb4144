"""MCP pieces that need no server: tool names, canonical schemas, results, configs."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import ValidationError

from host.identity import tool_schema_sha256
from host.mcp import McpServerConfig
from host.mcp.names import tool_names
from host.mcp.results import MediaLimits, tool_output
from host.mcp.schemas import canonical_schema, schema_problem
from host.tools import AUDIO_FORMATS, TOOL_NAME_PATTERN, ToolSpec

REPO = Path(__file__).resolve().parents[1]


def same(text: str) -> str:
    return text


# -- names ---------------------------------------------------------------------------------------


def test_names_are_server_then_tool_and_sanitised() -> None:
    names = tool_names("files", ["read", "list dir", "über/älter"])
    assert names["read"] == "files__read"
    assert names["list dir"] == "files__list_dir"
    assert names["über/älter"] == "files___ber__lter"
    assert all(re.match(TOOL_NAME_PATTERN, name) for name in names.values())


def test_long_names_end_in_a_stable_hash_of_the_full_name() -> None:
    long_a, long_b = "a" * 80, "a" * 79 + "b"
    first = tool_names("srv", [long_a, long_b])
    again = tool_names("srv", [long_b, long_a, "other"])
    assert first[long_a] == again[long_a]
    assert first[long_b] == again[long_b]
    assert first[long_a] != first[long_b]  # they share their first 55 characters
    for name in first.values():
        assert len(name) == 64
        assert re.match(TOOL_NAME_PATTERN, name)
        assert re.search(r"-[0-9a-f]{8}$", name)


def test_tools_that_sanitise_alike_do_not_collide_and_the_valid_name_wins() -> None:
    names = tool_names("s", ["a.b", "a_b", "a b"])
    assert names["a_b"] == "s__a_b"  # already valid: keeps its name
    assert len(set(names.values())) == 3
    # Deterministic: the same set in another order gives the same mapping.
    assert tool_names("s", ["a b", "a_b", "a.b"]) == names


# -- canonical schemas ---------------------------------------------------------------------------


def test_required_and_string_enums_are_sorted_at_every_depth() -> None:
    schema = {
        "type": "object",
        "required": ["b", "a"],
        "properties": {
            "colour": {"enum": ["red", "blue", "green"]},
            "mixed": {"enum": [3, 1, 2]},  # not all strings: order kept
            "nested": {"type": "object", "required": ["z", "y"], "properties": {"y": {}, "z": {}}},
            "required": {"type": "string"},  # a property called "required" is a name, not the keyword
            "enum": {"type": "object", "required": ["q", "p"]},
        },
        "$defs": {"Deep": {"anyOf": [{"enum": ["b", "a"]}, {"required": ["d", "c"]}]}},
        "default": {"required": ["y", "x"]},  # data, not schema: left as sent
        "examples": [["b", "a"]],
    }
    out = canonical_schema(schema)
    assert out["required"] == ["a", "b"]
    assert out["properties"]["colour"]["enum"] == ["blue", "green", "red"]
    assert out["properties"]["mixed"]["enum"] == [3, 1, 2]
    assert out["properties"]["nested"]["required"] == ["y", "z"]
    assert out["properties"]["required"] == {"type": "string"}
    assert out["properties"]["enum"]["required"] == ["p", "q"]
    assert out["$defs"]["Deep"]["anyOf"] == [{"enum": ["a", "b"]}, {"required": ["c", "d"]}]
    assert out["default"] == {"required": ["y", "x"]}
    assert out["examples"] == [["b", "a"]]
    assert schema["required"] == ["b", "a"]  # the input is not changed


def test_two_orders_of_one_schema_hash_alike_only_after_canonicalising() -> None:
    one = {"type": "object", "required": ["a", "b"], "properties": {"c": {"enum": ["x", "y"]}}}
    two = {"type": "object", "required": ["b", "a"], "properties": {"c": {"enum": ["y", "x"]}}}

    def identity(schema: dict[str, object]) -> str:
        return tool_schema_sha256([ToolSpec(name="t", description="", parameters=schema)])

    assert identity(one) != identity(two)
    assert identity(canonical_schema(one)) == identity(canonical_schema(two))


def test_canonical_schema_redacts_every_string() -> None:
    schema = {"type": "object", "description": "uses sk-SECRET", "properties": {"sk-SECRET": {"default": "sk-SECRET"}}}
    out = canonical_schema(schema, lambda text: text.replace("sk-SECRET", "[redacted]"))
    assert "sk-SECRET" not in repr(out)


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {}}, None),
        ("a string", "not a JSON object"),
        ({"type": "array"}, '"type": "object"'),
        ({"properties": {}}, '"type": "object"'),
        ({"type": "object", "properties": {"x": {"type": "strin"}}}, "not valid JSON Schema at properties/x/type"),
        ({"type": "object", "properties": {"x": {"minLength": -1}}}, "not valid JSON Schema"),
        ({"type": "object", "required": "x"}, "not valid JSON Schema at required"),
    ],
)
def test_schema_problems_are_named(schema: object, problem: str | None) -> None:
    found = schema_problem(schema)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


# -- results -------------------------------------------------------------------------------------


def test_text_is_joined_and_structured_content_alone_is_canonical_json() -> None:
    texts = [TextContent(type="text", text="one"), TextContent(type="text", text="two")]
    assert tool_output(CallToolResult(content=texts), redact=same, max_chars=1000).text == "one\ntwo"
    alone = CallToolResult(content=[], structured_content={"b": [1, 2], "a": "é"})
    out = tool_output(alone, redact=same, max_chars=1000)
    assert out.text == '{"a":"é","b":[1,2]}'
    assert out.is_error is False


def test_structured_content_is_sent_once() -> None:
    """One faithful copy: the text, unless the tool declares an output schema and the text is
    the same JSON (then the structured form, canonical)."""
    file_text = "line one\nline two\n"
    read = CallToolResult(content=[TextContent(type="text", text=file_text)], structured_content={"content": file_text})
    assert tool_output(read, redact=same, max_chars=100).text == file_text  # the reference filesystem server
    assert tool_output(read, redact=same, max_chars=100, declares_output=True).text == file_text
    as_json = CallToolResult(content=[TextContent(type="text", text='{\n  "a": 1\n}')], structured_content={"a": 1})
    assert tool_output(as_json, redact=same, max_chars=100).text == '{\n  "a": 1\n}'
    assert tool_output(as_json, redact=same, max_chars=100, declares_output=True).text == '{"a":1}'
    wrapped = CallToolResult(content=[TextContent(type="text", text="5")], structured_content={"result": 5})
    assert tool_output(wrapped, redact=same, max_chars=100, declares_output=True).text == "5"
    summary = CallToolResult(content=[TextContent(type="text", text="3 files")], structured_content={"files": [1, 2]})
    assert tool_output(summary, redact=same, max_chars=100).text == "3 files"


def test_images_are_kept_resources_shown_and_links_say_how_to_read_them() -> None:
    png = b"\x89PNG" + b"\0" * 2996
    data = base64.b64encode(png).decode()
    result = CallToolResult(
        content=[
            ImageContent(type="image", data=data, mime_type="image/png"),
            ImageContent(type="image", data=data, mime_type="image/tiff"),
            ImageContent(type="image", data="not base64!", mime_type="image/png"),
            AudioContent(type="audio", data=data, mime_type="audio/wav"),
            ResourceLink(type="resource_link", uri="file:///a.txt", name="a", mime_type="text/plain"),
            EmbeddedResource(type="resource", resource=TextResourceContents(uri="mem://t", text="hello" * 10)),
            EmbeddedResource(type="resource", resource=BlobResourceContents(uri="mem://b", blob=data)),
        ]
    )
    out = tool_output(result, redact=same, max_chars=10_000, server="files")
    assert data not in out.text
    assert [(m.kind, m.media_type, m.data) for m in out.media] == [
        ("image", "image/png", png),
        ("audio", "audio/wav", png),
    ]
    lines = out.text.split("\n")
    assert lines[0] == "[image 1: image/png, 3,000 bytes]"
    assert lines[1] == "[image: image/tiff, 3,000 bytes; not shown: a model is not sent image/tiff]"
    assert lines[2] == "[image: image/png; not shown: its data is not valid base64]"
    assert lines[3] == "[audio 1: audio/wav, 3,000 bytes]"
    assert lines[4] == '[resource link: file:///a.txt (text/plain); read_resource(server="files", uri=…) reads it]'
    assert lines[5:7] == ["[resource: mem://t]", "hello" * 10]  # embedded text is shown
    assert lines[7] == "[resource: mem://b, 3,000 bytes; binary, not shown]"


def test_images_are_bounded_in_number_and_size() -> None:
    data = base64.b64encode(b"\0" * 3000).decode()
    many = CallToolResult(content=[ImageContent(type="image", data=data, mime_type="image/png")] * 6)
    out = tool_output(many, redact=same, max_chars=10_000, media=MediaLimits(count=4, bytes=10_000))
    assert len(out.media) == 4
    assert out.text.count("not shown: Cairn sends at most 4 images") == 2
    big = tool_output(many, redact=same, max_chars=10_000, media=MediaLimits(count=4, bytes=1_000))
    assert big.media == ()
    assert "larger than" in big.text


@pytest.mark.parametrize(
    ("media_type", "audio_format"),
    [("audio/wav", "wav"), ("audio/x-wav", "wav"), ("audio/wave", "wav"), ("audio/mpeg", "mp3"), ("audio/mp3", "mp3")],
)
def test_wav_and_mp3_sounds_are_kept_by_the_format_input_audio_names(media_type: str, audio_format: str) -> None:
    sound = b"RIFF" + b"\0" * 20
    block = AudioContent(type="audio", data=base64.b64encode(sound).decode(), mime_type=media_type)
    out = tool_output(CallToolResult(content=[block]), redact=same, max_chars=1_000)
    assert [(m.kind, m.media_type, m.data) for m in out.media] == [("audio", media_type, sound)]
    assert out.text == f"[audio 1: {media_type}, 24 bytes]"
    assert AUDIO_FORMATS[media_type] == audio_format


@pytest.mark.parametrize("media_type", ["audio/ogg", "audio/flac", "audio/webm", "audio/L16"])
def test_other_sounds_are_described_only(media_type: str) -> None:
    block = AudioContent(type="audio", data=base64.b64encode(b"\0" * 24).decode(), mime_type=media_type)
    out = tool_output(CallToolResult(content=[block]), redact=same, max_chars=1_000)
    assert out.media == ()
    assert out.text == f"[audio: {media_type}, 24 bytes; not shown: a model is sent WAV or MP3 sounds only]"


def test_sounds_are_bounded_in_number_and_size_apart_from_images() -> None:
    data = base64.b64encode(b"\0" * 3000).decode()
    image = ImageContent(type="image", data=data, mime_type="image/png")
    sound = AudioContent(type="audio", data=data, mime_type="audio/mpeg")
    mixed = CallToolResult(content=[sound, image, sound, image, sound])
    out = tool_output(mixed, redact=same, max_chars=10_000, media=MediaLimits(count=4, bytes=10_000))
    assert [m.kind for m in out.media] == ["audio", "image", "audio", "image"]  # the default: two sounds
    assert out.text.split("\n") == [
        "[audio 1: audio/mpeg, 3,000 bytes]",
        "[image 1: image/png, 3,000 bytes]",
        "[audio 2: audio/mpeg, 3,000 bytes]",
        "[image 2: image/png, 3,000 bytes]",
        "[audio: audio/mpeg, 3,000 bytes; not shown: Cairn sends at most 2 sounds from one result]",
    ]
    big = tool_output(mixed, redact=same, max_chars=10_000, media=MediaLimits(sound_bytes=2_000))
    assert [m.kind for m in big.media] == ["image", "image"]
    assert big.text.count("not shown: larger than 0 MB") == 3
    assert MediaLimits().sounds == 2
    assert MediaLimits().sound_bytes == 5 * 1024 * 1024


def test_structured_content_that_repeats_the_blocks_is_not_sent_as_base64_text() -> None:
    data = base64.b64encode(b"RIFF" + b"\0" * 40).decode()
    block = AudioContent(type="audio", data=data, mime_type="audio/wav")
    repeated = {"content": [{"type": "audio", "data": data, "mimeType": "audio/wav"}]}  # read_media_file's shape
    out = tool_output(CallToolResult(content=[block], structured_content=repeated), redact=same, max_chars=10_000)
    assert out.text == "[audio 1: audio/wav, 44 bytes]"
    other = tool_output(CallToolResult(content=[block], structured_content={"seconds": 2}), redact=same, max_chars=99)
    assert other.text == '[audio 1: audio/wav, 44 bytes]\n{"seconds":2}'


def test_errors_are_errors_and_output_is_capped_and_redacted() -> None:
    failed = CallToolResult(content=[], is_error=True)
    assert tool_output(failed, redact=same, max_chars=100).is_error is True
    assert tool_output(failed, redact=same, max_chars=100).text  # says something
    flood = CallToolResult(content=[TextContent(type="text", text="key=sk-SECRET " + "x" * 5000)])
    out = tool_output(flood, redact=lambda text: text.replace("sk-SECRET", "[redacted]"), max_chars=1000)
    assert "sk-SECRET" not in out.text
    assert out.text.startswith("key=[redacted]")
    assert len(out.text) == 1000
    assert out.length == len("key=[redacted] ") + 5000  # the whole, redacted: the turn's one note says it


# -- configs -------------------------------------------------------------------------------------


def test_configs_say_what_is_missing() -> None:
    assert McpServerConfig(name="files", command="npx").transport == "stdio"
    assert McpServerConfig(name="web", transport="http", url="http://127.0.0.1:1/mcp").url
    with pytest.raises(ValidationError, match="needs a command"):
        McpServerConfig(name="files")
    with pytest.raises(ValidationError, match="needs an http"):
        McpServerConfig(name="web", transport="http", url="ftp://x")
    assert McpServerConfig(name="my_files-2", command="x").name == "my_files-2"
    # A dot would break scopes like mcp.<server>.read; "__" or an "_" at either end would let
    # two servers' tools share a name ("a" with "_b" and "a_" with "b" are both "a___b").
    for name in ("has.dot", "a__b", "a_", "_a", "", "x" * 33):
        with pytest.raises(ValidationError):
            McpServerConfig(name=name, command="x")


def test_configs_and_statuses_do_not_import_the_sdk() -> None:
    # Settings and the window hold configs and statuses; the SDK's half second is paid only
    # where servers start.
    probe = "import sys, host.mcp, host.mcp.config, host.mcp.status; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
