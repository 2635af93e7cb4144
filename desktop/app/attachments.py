"""Attaching files to a message: what Cairn takes, read once and kept by content hash.

Images (PNG, JPEG, GIF, WebP, told apart by their bytes, not their names) up to
``MAX_IMAGE_BYTES`` and ``MAX_IMAGE_SIDE`` pixels a side; text files that decode as UTF-8 up
to ``MAX_TEXT_BYTES``; at most ``MAX_ATTACHMENTS`` a message. Anything else is refused with a
sentence that says what Cairn takes. An accepted file goes into the journal's attachment store
(``host.attachments``) at once and becomes a message part; it is never read again from where
it was.
"""

from __future__ import annotations

import struct
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from desktop.app.chat_options import ChatOptions
from desktop.app.shared import AppState, NoRoute
from desktop.settings.routes import ResolvedRoute, RouteError
from host.attachments import AttachmentStore
from host.content import FilePart, ImagePart
from host.errors import CairnError
from host.mcp.offers import ListedResource

__all__ = [
    "LIMITS",
    "MAX_ATTACHMENTS",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE",
    "MAX_TEXT_BYTES",
    "Attachment",
    "AttachmentRefused",
    "Attachments",
    "attach_bytes",
    "attach_path",
    "image_size",
    "left_out_notice",
    "shown_size",
    "too_many",
]

MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_IMAGE_SIDE = 8_000
MAX_TEXT_BYTES = 200 * 1024
MAX_ATTACHMENTS = 10
LIMITS = (
    "Images (PNG, JPEG, GIF, WebP) up to 10 MB and 8,000 pixels a side; UTF-8 text files up to 200 KB; "
    f"up to {MAX_ATTACHMENTS} files a message."
)

Attachment = ImagePart | FilePart


class AttachmentRefused(CairnError, ValueError):
    """A file Cairn will not attach; the message says why and what it takes, in a sentence."""


def shown_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def too_many(count: int) -> str | None:
    """The sentence for a message with ``count`` attachments, if that is too many."""
    if count <= MAX_ATTACHMENTS:
        return None
    return f"A message can carry up to {MAX_ATTACHMENTS} files; remove {count - MAX_ATTACHMENTS} to send it."


def attach_path(path: Path, store: AttachmentStore) -> Attachment:
    """Read the file at ``path`` once and keep it. ``AttachmentRefused`` with a sentence."""
    name = _clean_name(path.name)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise AttachmentRefused(f"“{name}” is not a file, so it cannot be attached.")
        if size > MAX_IMAGE_BYTES:  # the larger limit: refuse before reading a huge file
            raise AttachmentRefused(f"“{name}” is {shown_size(size)}, too large to attach. {LIMITS}")
        data = path.read_bytes()
    except OSError as exc:
        why = exc.strerror or exc
        raise AttachmentRefused(f"“{name}” could not be read ({why}); check it and try again.") from None
    return attach_bytes(data, name, store)


def attach_bytes(data: bytes, name: str, store: AttachmentStore) -> Attachment:
    """Keep ``data`` (a file named ``name``, or a pasted image) as an attachment."""
    name = _clean_name(name) or "attachment"
    found = image_size(data)
    if found is not None:
        media_type, width, height = found
        if len(data) > MAX_IMAGE_BYTES:
            raise AttachmentRefused(f"“{name}” is {shown_size(len(data))}, too large to attach. {LIMITS}")
        if width <= 0 or height <= 0:
            raise AttachmentRefused(f"“{name}” looks like an image but its size cannot be read; it is not attached.")
        if max(width, height) > MAX_IMAGE_SIDE:
            raise AttachmentRefused(
                f"“{name}” is {width:,} by {height:,} pixels, larger than {MAX_IMAGE_SIDE:,} a side; "
                "scale it down to attach it."
            )
        sha256 = _keep(store, data, name)
        return ImagePart(media_type=media_type, sha256=sha256, name=name, size=len(data), width=width, height=height)
    if len(data) > MAX_TEXT_BYTES:
        raise AttachmentRefused(f"“{name}” is {shown_size(len(data))}, too large to attach as text. {LIMITS}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        raise AttachmentRefused(
            f"“{name}” is neither a PNG, JPEG, GIF or WebP image nor UTF-8 text, so it cannot be attached."
        )
    return FilePart(name=name, text=text, sha256=_keep(store, data, name), size=len(data))


def left_out_notice(route: ResolvedRoute, attachments: Sequence[Attachment]) -> str | None:
    """What the person should know when ``route`` cannot take the images they attached: the
    message keeps them, but the model will not see them."""
    images = [a for a in attachments if isinstance(a, ImagePart)]
    info = route.model_info
    if not images or info is None or info.accepts_images:
        return None
    model = route.actual.model
    what = f"The image “{images[0].name}” is" if len(images) == 1 else f"{len(images)} images are"
    return (
        f"{what} saved with your message but not sent to {model}: models.dev lists it as taking "
        f"{', '.join(info.modalities.input) or 'text'} only. Choose a model that takes images to send them."
    )


def image_size(data: bytes) -> tuple[str, int, int] | None:
    """The media type and pixel size of a PNG, JPEG, GIF or WebP image, from its bytes; ``None``
    for anything else. A size of 0 by 0: an image whose header cannot be read."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ("image/png", *_unpack(">II", data, 16))
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return ("image/gif", *_unpack("<HH", data, 6))
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg", *_jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp", *_webp_size(data)
    return None


def _unpack(layout: str, data: bytes, at: int) -> tuple[int, int]:
    try:
        first, second = struct.unpack_from(layout, data, at)
    except struct.error:
        return 0, 0
    return int(first), int(second)


def _jpeg_size(data: bytes) -> tuple[int, int]:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return 0, 0
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        (length,) = struct.unpack_from(">H", data, at + 2)
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            height, width = struct.unpack_from(">HH", data, at + 5)
            return int(width), int(height)
        at += 2 + length
    return 0, 0


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack_from("<HH", data, 26)
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        (bits,) = struct.unpack_from("<I", data, 21)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return 0, 0


def _keep(store: AttachmentStore, data: bytes, name: str) -> str:
    try:
        return store.put(data)
    except OSError as exc:
        raise AttachmentRefused(
            f"“{name}” could not be saved in {store.folder} ({exc.strerror or exc}); "
            "free disk space or fix the folder's permissions and try again."
        ) from None


def _clean_name(name: str) -> str:
    """A file name as shown and as the model reads it: one line, no control characters."""
    kept = "".join(" " if unicodedata.category(c).startswith("C") else c for c in name)
    return " ".join(kept.split())[:200]


class Attachments:
    """The composer's attachments: kept in the journal's folder as they are added, read back
    by hash, and what the chat's model will not see of them."""

    def __init__(self, shared: AppState, options: ChatOptions) -> None:
        self._shared, self._options = shared, options

    def attach_file(self, path: Path) -> Attachment:
        """Read ``path`` once and keep it in the journal's folder; ``AttachmentRefused``."""
        return attach_path(path, self._shared.attachments)

    def attach_data(self, data: bytes, name: str) -> Attachment:
        """Keep ``data`` (a pasted image, say) as an attachment; ``AttachmentRefused``."""
        return attach_bytes(data, name, self._shared.attachments)

    async def attach_resource(self, resource: ListedResource) -> Attachment:
        """Read an MCP server's resource and keep it like a file of its name: text as a text
        file, an image by its bytes, within the same limits; ``AttachmentRefused`` says why not."""
        read = await self._shared.root.mcp.resource_file(resource, MAX_IMAGE_BYTES)
        if isinstance(read, str):
            raise AttachmentRefused(read)
        return attach_bytes(read.data, read.name, self._shared.attachments)

    def stored_bytes(self, sha256: str, name: str = "") -> bytes:
        """A stored attachment's bytes, checked against its hash; ``AttachmentUnavailable``."""
        return self._shared.attachments.get(sha256, name)

    def notice(self, session_id: str | None, attachments: tuple[Attachment, ...]) -> str | None:
        """Why the chat's model will not see the images attached, if it will not."""
        try:
            route = self._options.route(session_id).route if session_id is not None else self._shared.route()
        except (NoRoute, RouteError, ValueError):
            return None  # sending says what is wrong with the route
        return left_out_notice(route, attachments) if route is not None else None
