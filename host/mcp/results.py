"""A tool call's result as the model reads it: one faithful copy of what the server sent.

- Text blocks are joined. Structured content is sent only when it adds something: alone when
  there is no text; in place of a text block that is the same JSON when the tool declares an
  output schema; never beside a text that already says it (the reference filesystem server
  sends a file's text and ``{"content": text}``: the model reads the text once).
- An embedded text resource is shown under its address; a binary one is described.
- An image, or a WAV or MP3 sound, is kept as bytes (``ToolOutput.media``, bounded in number
  and size) and described in the text by its number; the turn sends it to a model that takes
  it. A sound of another format is described only (Chat Completions takes WAV and MP3).
- Structured content that only repeats the content blocks (the reference filesystem server's
  ``read_media_file`` sends ``{"content": [<its blocks>]}``) adds nothing: the model is not
  made to read an image's or a sound's base64 as text.
- A resource link says how to read it (``read_resource``, the core tool).
- What the server says is redacted, then cut to ``max_chars`` *without* a note of its own:
  ``ToolOutput.length`` carries the whole length, so the one note the model reads (the turn's)
  is true.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Any

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ReadResourceResult,
    ResourceLink,
    TextContent,
)

from host.canonical import canonical_json_bytes
from host.mcp.config import McpLimits
from host.tools import AUDIO_FORMATS, ToolMedia, ToolOutput

__all__ = ["ContentReader", "MediaLimits", "cap_text", "instructions_text", "resource_output", "tool_output"]

# What a model may be sent: the image types every vision route takes.
_SENDABLE = {"image/png", "image/jpeg", "image/gif", "image/webp"}


@dataclass(frozen=True)
class MediaLimits:
    count: int = 4  # images kept from one result
    bytes: int = 10 * 1024 * 1024  # each, decoded
    # Sounds: two from one result, 5 MB each. A sound costs far more tokens than an image
    # (a model reads it second by second), and 5 MB is about five minutes of 128 kbit/s MP3 or
    # half a minute of CD-quality WAV; as base64 it adds under 7 MB to a request.
    sounds: int = 2
    sound_bytes: int = 5 * 1024 * 1024


def tool_output(
    result: CallToolResult,
    *,
    redact: Callable[[str], str],
    max_chars: int,
    server: str = "",
    declares_output: bool = False,
    media: MediaLimits | None = None,
) -> ToolOutput:
    """``declares_output``: the tool declared an output schema, so its structured content is
    the form the server means; ``server`` names the server in how to read a linked resource."""
    reader = ContentReader(server, media or MediaLimits())
    parts = [reader.block(block) for block in result.content]
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    structured = result.structured_content
    if structured is not None and _repeats(structured, result.content):
        structured = None
    if structured is not None and not texts:
        parts.append(_json(structured))
    elif structured is not None and declares_output:
        parts = [_json(structured) if _same_json(part, structured) else part for part in parts]
    text = (
        "\n".join(parts) if parts else ("The tool reported an error and said nothing more." if result.is_error else "")
    )
    return _capped(redact(text), max_chars, is_error=result.is_error, media=tuple(reader.kept))


def resource_output(result: ReadResourceResult, *, redact: Callable[[str], str], max_chars: int) -> ToolOutput:
    """A read resource as the model reads it: each part's text under its address (and type),
    binary parts described; redacted and capped like a tool's output."""
    parts = []
    for contents in result.contents:
        mime = f" ({contents.mime_type})" if contents.mime_type else ""
        if isinstance(contents, BlobResourceContents):
            parts.append(f"[{contents.uri}{mime}: binary, {_decoded_size(contents.blob)}; not shown to the model]")
        else:
            parts.append(f"[{contents.uri}{mime}]\n{contents.text}")
    text = "\n\n".join(parts) if parts else "The resource is empty."
    return _capped(redact(text), max_chars)


def cap_text(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars``, saying so: for what Cairn keeps of a name, a description
    or an error, where there is no later note."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n[cut: the tool's output was {len(text):,} characters; Cairn keeps {max_chars:,}]"


def _capped(text: str, max_chars: int, *, is_error: bool = False, media: tuple[ToolMedia, ...] = ()) -> ToolOutput:
    length = len(text) if len(text) > max_chars else None
    return ToolOutput(text[:max_chars], is_error=is_error, length=length, media=media)


_PLURAL = {"image": "images", "audio": "sounds"}


class ContentReader:
    """The content blocks of one result, each as text; images and sounds kept as it goes."""

    def __init__(self, server: str, limits: MediaLimits) -> None:
        self.server = server
        self.limits = limits
        self.kept: list[ToolMedia] = []

    def block(self, block: object) -> str:
        if isinstance(block, TextContent):
            return block.text
        if isinstance(block, ImageContent):
            return self._image(block)
        if isinstance(block, AudioContent):
            return self._sound(block)
        if isinstance(block, ResourceLink):
            what = f" ({block.mime_type})" if block.mime_type else ""
            how = f'; read_resource(server="{self.server}", uri=…) reads it' if self.server else ""
            return f"[resource link: {block.uri}{what}{how}]"
        if isinstance(block, EmbeddedResource):
            contents = block.resource
            mime = f", {contents.mime_type}" if contents.mime_type else ""
            if isinstance(contents, BlobResourceContents):
                return f"[resource: {contents.uri}{mime}, {_decoded_size(contents.blob)}; binary, not shown]"
            return f"[resource: {contents.uri}{mime}]\n{contents.text}"
        return "[content of a kind Cairn does not know]"

    def _image(self, block: ImageContent) -> str:
        limits = self.limits
        unsent = f"a model is not sent {block.mime_type}"
        return self._keep(
            "image", block.mime_type, block.data, (_SENDABLE, unsent), most=limits.count, max_bytes=limits.bytes
        )

    def _sound(self, block: AudioContent) -> str:
        if not self.limits.sounds:  # where sounds cannot go (a person's message, from a prompt)
            return f"[audio: {block.mime_type}, {_decoded_size(block.data)}; not shown to the model]"
        formats = (AUDIO_FORMATS, "a model is sent WAV or MP3 sounds only")
        limits = self.limits
        return self._keep(
            "audio", block.mime_type, block.data, formats, most=limits.sounds, max_bytes=limits.sound_bytes
        )

    def _keep(
        self, kind: str, mime: str, data: str, formats: tuple[Container[str], str], *, most: int, max_bytes: int
    ) -> str:
        """An image or a sound kept for the model, within the limits; else why not, in words.
        ``formats``: the media types a model is sent, and the words for one it is not."""
        said = f"{kind}: {mime}, {_decoded_size(data)}"
        sendable, unsent = formats
        if mime not in sendable:
            return f"[{said}; not shown: {unsent}]"
        if self._count(kind) >= most:
            return f"[{said}; not shown: Cairn sends at most {most} {_PLURAL[kind]} from one result]"
        if len(data) * 3 // 4 > max_bytes:
            return f"[{said}; not shown: larger than {max_bytes // (1024 * 1024)} MB]"
        try:
            decoded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return f"[{kind}: {mime}; not shown: its data is not valid base64]"
        self.kept.append(ToolMedia(kind, mime, decoded))
        return f"[{kind} {self._count(kind)}: {mime}, {_size(len(decoded))}]"

    def _count(self, kind: str) -> int:
        return sum(1 for item in self.kept if item.kind == kind)


def _repeats(structured: Any, blocks: list[Any]) -> bool:
    """Whether ``structured`` is only the content blocks again, as a list or under one key."""
    if not blocks:
        return False
    dumped = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in blocks]
    if isinstance(structured, dict) and len(structured) == 1:
        structured = next(iter(structured.values()))
    return bool(structured == dumped)


def _json(structured: Any) -> str:
    try:
        return canonical_json_bytes(structured).decode("utf-8")
    except (TypeError, ValueError) as exc:
        return f"[structured content that is not plain JSON: {exc}]"


def _same_json(text: str, structured: Any) -> bool:
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False


def _decoded_size(base64_text: str) -> str:
    return _size(len(base64_text) * 3 // 4 - base64_text[-2:].count("="))  # padding is not data


def _size(size: int) -> str:
    return f"{size:,} bytes" if size < 10_000 else f"{size / 1024:,.1f} KB"


def instructions_text(instructions: object, redact: Callable[[str], str], limits: McpLimits) -> str:
    """A server's ``instructions`` as Cairn keeps them: text only, redacted, then capped (so
    no secret is cut in half before it is recognised)."""
    if not isinstance(instructions, str):
        return ""
    return redact(instructions.strip())[: limits.max_instructions_chars]
