"""A tool call's result as the text the model reads.

Text blocks are joined; structured content is written as canonical JSON, unless a text
block already carries it (servers are asked to send both); images, audio and resources are
described, never inlined, because the model cannot use base64 and the journal should not hold
it. What the server says is redacted, and the whole is capped: a capped text says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
from host.tools import ToolOutput

__all__ = ["cap_text", "resource_output", "tool_output"]


def tool_output(result: CallToolResult, *, redact: Callable[[str], str], max_chars: int) -> ToolOutput:
    parts: list[str] = []
    texts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
            parts.append(block.text)
        else:
            parts.append(_describe(block))
    structured = result.structured_content
    if structured is not None and not any(_carries(text, structured) for text in texts):
        try:
            parts.append(canonical_json_bytes(structured).decode("utf-8"))
        except (TypeError, ValueError) as exc:
            parts.append(f"[structured content that is not plain JSON: {exc}]")
    text = (
        "\n".join(parts) if parts else ("The tool reported an error and said nothing more." if result.is_error else "")
    )
    return ToolOutput(cap_text(redact(text), max_chars), is_error=result.is_error)


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
    return ToolOutput(cap_text(redact(text), max_chars))


def cap_text(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n[cut: the tool's output was {len(text):,} characters; Cairn keeps {max_chars:,}]"


def _carries(text: str, structured: Any) -> bool:
    """Whether a text block is the structured content spelled out. The SDK's servers wrap a
    result that is not an object as ``{"result": value}`` and send ``value`` as the text."""
    wrapped = isinstance(structured, dict) and structured.keys() == {"result"}
    if wrapped and structured["result"] == text:
        return True
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return parsed == structured or (wrapped and parsed == structured["result"])


def _describe(block: ImageContent | AudioContent | ResourceLink | EmbeddedResource) -> str:
    if isinstance(block, ImageContent):
        return f"[image: {block.mime_type}, {_decoded_size(block.data)}; not shown to the model]"
    if isinstance(block, AudioContent):
        return f"[audio: {block.mime_type}, {_decoded_size(block.data)}; not shown to the model]"
    if isinstance(block, ResourceLink):
        what = f" ({block.mime_type})" if block.mime_type else ""
        return f"[resource link: {block.uri}{what}]"
    contents = block.resource
    mime = f", {contents.mime_type}" if contents.mime_type else ""
    if isinstance(contents, BlobResourceContents):
        return f"[resource: {contents.uri}{mime}, {_decoded_size(contents.blob)}; not shown to the model]"
    return f"[resource: {contents.uri}{mime}, {len(contents.text):,} characters of text; not shown to the model]"


def _decoded_size(base64_text: str) -> str:
    size = len(base64_text) * 3 // 4
    return f"{size:,} bytes" if size < 10_000 else f"{size / 1024:,.1f} KB"
