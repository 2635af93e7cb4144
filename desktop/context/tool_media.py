"""The images and sounds one step's tool results returned, gathered for the projection.

A tool message carries text only, so what a step's tools returned follows all of its results
in one request-only user message, as the person's. Each kind goes only to a model models.dev
says takes it: a tool's media, unlike an attachment, was chosen by nobody, and a model that
does not take it refuses the whole request. A result whose media is left out says so in its
text. The lead text names what follows; for images alone it is the text every chat with tool
images has sent, so their requests stay byte-stable.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop.catalog.modelsdev import ModelInfo
from host.content import AudioPart, ImagePart, ResultMedia

__all__ = [
    "AUDIO_ESTIMATE_BYTES",
    "TOOL_IMAGES",
    "TOOL_IMAGES_MAX",
    "TOOL_MEDIA",
    "TOOL_SOUNDS",
    "TOOL_SOUNDS_MAX",
    "StepMedia",
]

_WHY = "Cairn sends them here because a tool message carries text only.]"
TOOL_IMAGES = f"[The images the tool results above returned, in order. {_WHY}"
TOOL_SOUNDS = f"[The sounds the tool results above returned, in order. {_WHY}"
TOOL_MEDIA = f"[The images and sounds the tool results above returned, in order. {_WHY}"
TOOL_IMAGES_MAX = 10  # images after one step's results, as many as one message may attach
TOOL_SOUNDS_MAX = 4  # sounds after one step's results: two results' worth at the per-result bound
# What a sound is charged in a size estimate, in request bytes: about 3,200 tokens at the
# estimate's three bytes a token, what Gemini charges for 100 seconds at 32 tokens a second.
# Its base64 is not counted: it is not read as text.
AUDIO_ESTIMATE_BYTES = 9_600
# Each kind: what the model must take, the words for it and for the media, and the most sent.
_KINDS: tuple[tuple[type, str, str, str, int], ...] = (
    (ImagePart, "images", "images", "shown", TOOL_IMAGES_MAX),
    (AudioPart, "audio", "sounds", "sent", TOOL_SOUNDS_MAX),
)


class StepMedia:
    """The media of the results placed since the last assistant message, in their order."""

    def __init__(self, model: str, info: ModelInfo | None) -> None:
        self.model = model
        self.info = info
        self.parts: list[ResultMedia] = []

    def take(self, media: Sequence[ResultMedia]) -> str:
        """Take what of one result's ``media`` the model is sent; what it is told of any left
        out, to add to the result's text."""
        sent: list[ResultMedia] = []
        said = ""
        for kind, taken, noun, verb, most in _KINDS:
            found = [m for m in media if isinstance(m, kind)]
            if found and not self._takes(kind):
                said += f"\n[{self.model} is not known to take {taken}, so the tool's {noun} were not {verb}.]"
            elif found:
                room = max(most - self._count(kind), 0)
                sent += found[:room]
                if len(found) > room:
                    said += f"\n[{room} of these {noun} were {verb}: at most {most} follow one step's results.]"
        self.parts += [m for m in media if any(m is s for s in sent)]
        return said

    def lead(self) -> str:
        """The text before the media: it names what follows."""
        kinds = {type(part) for part in self.parts}
        if AudioPart not in kinds:
            return TOOL_IMAGES
        return TOOL_SOUNDS if ImagePart not in kinds else TOOL_MEDIA

    def _takes(self, kind: type) -> bool:
        if self.info is None:
            return False
        return self.info.accepts_images if kind is ImagePart else self.info.accepts_audio

    def _count(self, kind: type) -> int:
        return sum(1 for part in self.parts if isinstance(part, kind))
