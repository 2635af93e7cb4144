"""Projection: the provider-neutral context turned into one request body for one route.

Where the route lacks a transport flag the projection adapts: a system update becomes a
tagged block folded into the next user message, reasoning is dropped or sent as text, a
tool call left without a result gets a synthetic error result, an image goes only to a
model that takes images (read from the attachment store at request time, as a data URI), a
tool's sound only to one that takes audio (as an ``input_audio`` block; ``tool_media``), and
an attached text file is inlined under its name. On a route whose account sends the opening system content in the
first user message (chat templates that drop the system role), that content becomes a
tagged block leading the first user message, before any folded updates and the person's
text. A fold exists only in the request; the journal never sees it, and the same journal
folds to the same bytes every time. The body is canonical JSON, so the same context gives the same bytes in any process.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from desktop.context.messages import (
    AudioPart,
    Context,
    FilePart,
    ImagePart,
    Message,
    ReasoningPart,
    SummaryPart,
    SystemUpdatePart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from desktop.context.tool_media import AUDIO_ESTIMATE_BYTES, StepMedia
from desktop.session.chat_settings import RequestParameters
from desktop.settings.routes import ResolvedRoute
from host.attachments import AttachmentUnavailable
from host.canonical import canonical_json_bytes
from host.tools import AUDIO_FORMATS

__all__ = [
    "FRAME_TAGS",
    "IMAGE_ESTIMATE_BYTES",
    "MISSING_RESULT",
    "OPENING_TAG",
    "ImageLoader",
    "ProjectedRequest",
    "neutralize",
    "project",
    "render_file",
    "render_opening",
    "render_section",
    "render_summary",
    "render_update",
]

MISSING_RESULT = "This tool call was interrupted before it returned a result."
OPENING_TAG = "system-instructions"
SUMMARY_TAG = "conversation-summary"
# Every tag Cairn frames content with. The same tags inside section content, tool results or
# another model's reasoning are neutralised, so a skill description or a tool cannot forge a
# block that looks like Cairn's own.
FRAME_TAGS = ("system-update", OPENING_TAG, SUMMARY_TAG, "reasoning")
# What an image is charged in a size estimate, in request bytes: about 1,600 tokens at the
# estimate's three bytes a token, above what common models charge for a large image. Its
# base64 is not counted: it is not read as text.
IMAGE_ESTIMATE_BYTES = 4_800

# Gives a stored image's or sound's bytes by content hash (and name, for the sentence if it
# cannot); raises ``AttachmentUnavailable``.
ImageLoader = Callable[[str, str], bytes]

_FRAME = re.compile(r"<(\s*/?\s*)(" + "|".join(map(re.escape, FRAME_TAGS)) + r")(?![\w-])", re.IGNORECASE)


def neutralize(text: str) -> str:
    """``text`` with every opening or closing frame tag made inert (``<`` becomes ``&lt;``).
    Deterministic, so the bytes stay stable; the journal keeps the raw text."""
    return _FRAME.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)


@dataclass(frozen=True)
class ProjectedRequest:
    body: dict[str, Any]
    body_bytes: bytes
    notes: list[str] = field(default_factory=list)
    image_bytes: int = 0  # how much of ``body_bytes`` is images' data URIs
    images: int = 0
    audio_bytes: int = 0  # how much is sounds' base64
    sounds: int = 0

    @property
    def estimate_bytes(self) -> int:
        """The size to estimate tokens from: images and sounds at their estimated cost, not
        their base64."""
        media = IMAGE_ESTIMATE_BYTES * self.images + AUDIO_ESTIMATE_BYTES * self.sounds
        return len(self.body_bytes) - self.image_bytes - self.audio_bytes + media


def render_file(part: FilePart) -> str:
    """A text file as the model reads it: its name, then its text in a fence longer than any
    run of backticks inside it, so the file cannot close the fence early."""
    name = neutralize(" ".join(part.name.split())) or "file"
    longest = max((len(run) for run in re.findall(r"`+", part.text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"Attached file: {name}\n{fence}\n{neutralize(part.text)}\n{fence}"


def render_section(content: JsonValue) -> str:
    """A section's content as the model reads it: text as is, anything else as canonical JSON;
    frame tags inside it neutralised."""
    return neutralize(content if isinstance(content, str) else canonical_json_bytes(content).decode("utf-8"))


def render_update(update: SystemUpdatePart) -> str:
    """A later change of one section, as one tagged block."""
    if update.content is None:
        return f'<system-update section="{update.section}" removed="true"/>'
    return f'<system-update section="{update.section}">\n{render_section(update.content)}\n</system-update>'


def render_summary(text: str) -> str:
    """A compaction's summary as the tagged block that leads the retained tail."""
    return f"<{SUMMARY_TAG}>\n{neutralize(text)}\n</{SUMMARY_TAG}>"


def render_opening(text: str) -> str:
    """The opening system content as a tagged block, for routes whose template drops the
    system role; it leads the first user message."""
    return f"<{OPENING_TAG}>\n{text}\n</{OPENING_TAG}>"


def project(
    context: Context,
    route: ResolvedRoute,
    *,
    stream: bool = True,
    fold_updates: bool = False,
    tool_choice: str | None = None,
    images: ImageLoader | None = None,
    parameters: RequestParameters | None = None,
) -> ProjectedRequest:
    """One request body for ``route``; see the module docstring for what adapts.

    ``images`` reads a stored image's bytes at request time; an image it cannot give (or any
    stored image when there is none) is left out with a sentence in its place and a note.

    ``fold_updates`` folds later system updates even where the route's flags would keep
    them in place: the session learnt that this route refuses them. ``tool_choice`` ("none"
    for a compaction's summary request) is sent only with tools. ``parameters``: the chat's
    own temperature, longest reply and reasoning effort; they change no cached token.
    """
    projector = _Projector(route, fold_updates=fold_updates, images=images)
    messages = projector.messages(context.messages)
    body: dict[str, Any] = {**route.extra_body, "model": route.actual.model, "messages": messages, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    max_output = parameters.max_output if parameters is not None else route.max_output_tokens
    if max_output is not None:
        body[route.max_output_field] = max_output
    if parameters is not None and parameters.temperature is not None:
        body["temperature"] = parameters.temperature
    if parameters is not None and parameters.reasoning_effort is not None:
        body["reasoning_effort"] = parameters.reasoning_effort
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in sorted(context.tools, key=lambda t: t.name)
        ]
        if tool_choice is not None:  # after the prompt: it changes no cached token
            body["tool_choice"] = tool_choice
    return ProjectedRequest(
        body=body,
        body_bytes=canonical_json_bytes(body),
        notes=projector.notes,
        image_bytes=projector.image_bytes,
        images=projector.images,
        audio_bytes=projector.audio_bytes,
        sounds=projector.sounds,
    )


def _opening(leading: list[Message]) -> str:
    """The state the conversation opens with, as one text. A section set twice in the leading
    block (a baseline redone before the first answer, say after a route refused tools) shows
    once, with its latest content, where it first appeared."""
    head: dict[str, JsonValue] = {}
    for message in leading:
        for part in message.parts:
            if not isinstance(part, SystemUpdatePart):
                continue
            if part.content is None:
                head.pop(part.section, None)
            else:
                head[part.section] = part.content
    return "\n\n".join(render_section(content) for content in head.values())


class _Projector:
    def __init__(self, route: ResolvedRoute, *, fold_updates: bool, images: ImageLoader | None = None) -> None:
        self.route = route
        self.load_image = images
        self.image_bytes = 0
        self.images = 0
        self.audio_bytes = 0
        self.sounds = 0
        self.system_role = "developer" if route.flags.developer_role else "system"
        self.fold_updates = fold_updates or route.fold_opening or not route.flags.mid_conversation_system
        self.notes: list[str] = []
        self.out: list[dict[str, Any]] = []
        self.folded: list[str] = []  # updates waiting for the next user message
        self.deferred: list[str] = []  # in-place updates waiting for tool results to be placed
        self.open_calls: list[str] = []  # tool calls of the last assistant message without a result yet
        self.media = StepMedia(route.actual.model, route.model_info)  # from the tool results just placed

    def messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        leading = 0
        while leading < len(messages) and messages[leading].role == "system":
            leading += 1
        head_text = _opening(messages[:leading])
        if head_text and self.route.fold_opening:
            self.folded.append(render_opening(head_text))
        elif head_text:
            self.out.append({"role": self.system_role, "content": head_text})

        for message in messages[leading:]:
            if message.role == "system":
                for part in message.parts:
                    if isinstance(part, SystemUpdatePart):
                        self._update(render_update(part))
                continue
            if message.role == "tool":
                self._tool_results(message)
                continue
            self._close_calls()
            if message.role == "user":
                self.out.append(self._user(message))
            else:
                self._flush_folded_alone()
                self.out.append(self._assistant(message))
        self._close_calls()
        self._flush_folded_alone()
        return self.out

    # -- system updates ------------------------------------------------------------------

    def _update(self, block: str) -> None:
        if self.fold_updates:
            self.folded.append(block)
        elif self.open_calls:
            self.deferred.append(block)  # tool results must follow their call directly
        else:
            self.out.append({"role": self.system_role, "content": block})

    def _flush_folded_alone(self) -> None:
        """Updates with no user message right after them travel as their own user message."""
        if self.folded:
            self.out.append({"role": "user", "content": "\n\n".join(self.folded)})
            self.folded = []

    # -- tool calls and results ----------------------------------------------------------

    def _tool_results(self, message: Message) -> None:
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                content = neutralize(part.content) + self.media.take(part.media or [])
                self.out.append({"role": "tool", "tool_call_id": part.call_id, "content": content})
                if part.call_id in self.open_calls:
                    self.open_calls.remove(part.call_id)

    def _close_calls(self) -> None:
        for call_id in self.open_calls:
            self.out.append({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT})
        self.open_calls = []
        if self.media.parts:  # tool messages take text only: the media follow every result, as the person's
            sent = [self._image(p) if isinstance(p, ImagePart) else self._sound(p) for p in self.media.parts]
            self.out.append({"role": "user", "content": [{"type": "text", "text": self.media.lead()}, *sent]})
            self.media.parts = []
        for block in self.deferred:
            self.out.append({"role": self.system_role, "content": block})
        self.deferred = []

    # -- user and assistant messages -----------------------------------------------------

    def _user(self, message: Message) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": b} for b in self.folded]
        self.folded = []
        accepts_images = self._accepts_images()
        for part in message.parts:
            if isinstance(part, TextPart):
                blocks.append({"type": "text", "text": part.text})
            elif isinstance(part, SummaryPart):
                blocks.append({"type": "text", "text": render_summary(part.text)})
            elif isinstance(part, FilePart):
                blocks.append({"type": "text", "text": render_file(part)})
            elif isinstance(part, ImagePart) and accepts_images:
                blocks.append(self._image(part))
            elif isinstance(part, ImagePart):
                model = self.route.actual.model
                note = f"[An image was attached here; {model} does not accept images, so it was left out.]"
                blocks.append({"type": "text", "text": note})
                self.notes.append(f"An image was left out: {self.route.actual.model} does not accept images.")
        if all(b["type"] == "text" for b in blocks):
            return {"role": "user", "content": "\n\n".join(b["text"] for b in blocks)}
        return {"role": "user", "content": blocks}

    def _accepts_images(self) -> bool:
        return self.route.model_info is None or self.route.model_info.accepts_images

    def _image(self, part: ImagePart) -> dict[str, Any]:
        """An image as a data URI, or, when its bytes cannot be had, a sentence in its place.
        Without a loader (a summary request, say) a stored image is only mentioned."""
        name = f" ({neutralize(' '.join(part.name.split()))})" if part.name else ""
        data = part.data
        if data is None and part.sha256 is not None and self.load_image is None:
            return {"type": "text", "text": f"[An image{name} was attached here.]"}
        if data is None and part.sha256 is not None and self.load_image is not None:
            try:
                data = base64.b64encode(self.load_image(part.sha256, part.name or "")).decode("ascii")
            except AttachmentUnavailable as exc:
                self.notes.append(str(exc))
        if data is None:
            return {"type": "text", "text": f"[An image{name} was attached here; its file could not be read.]"}
        url = f"data:{part.media_type};base64,{data}"
        self.image_bytes += len(url)
        self.images += 1
        return {"type": "image_url", "image_url": {"url": url}}

    def _sound(self, part: AudioPart) -> dict[str, Any]:
        """A tool's sound as an ``input_audio`` block, or, when its bytes cannot be had, a
        sentence in its place. Without a loader (a summary request, say) it is only mentioned."""
        name = f" ({neutralize(' '.join(part.name.split()))})" if part.name else ""
        audio_format = AUDIO_FORMATS.get(part.media_type)
        if audio_format is None or self.load_image is None:
            return {"type": "text", "text": f"[A sound{name} was here.]"}
        try:
            data = base64.b64encode(self.load_image(part.sha256, part.name)).decode("ascii")
        except AttachmentUnavailable as exc:
            self.notes.append(str(exc))
            return {"type": "text", "text": f"[A sound{name} was here; its file could not be read.]"}
        self.audio_bytes += len(data)
        self.sounds += 1
        return {"type": "input_audio", "input_audio": {"data": data, "format": audio_format}}

    def _assistant(self, message: Message) -> dict[str, Any]:
        text: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCallPart] = []
        for part in message.parts:
            if isinstance(part, ReasoningPart):
                if part.model != self.route.key:
                    text.append(f"<reasoning>\n{neutralize(part.text)}\n</reasoning>")
                elif self.route.flags.reasoning_replay:
                    reasoning.append(part.text)
            elif isinstance(part, TextPart):
                text.append(part.text)
            elif isinstance(part, ToolCallPart):
                calls.append(part)
        out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(text) if text or not calls else None}
        if reasoning:
            out["reasoning_content"] = "".join(reasoning)
        if calls:
            out["tool_calls"] = [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": canonical_json_bytes(c.arguments).decode("utf-8")},
                }
                for c in calls
            ]
            self.open_calls = [c.call_id for c in calls]
        return out
