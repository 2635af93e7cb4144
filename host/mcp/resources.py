"""A server's resources as Cairn offers them to attach: listed when first asked (page by page,
within bounds), listed again when asked after the server said its list changed, and a read
resource turned into one file.

Listing waits for someone to ask (the composer's picker): a server's start never waits on its
resources, and a server that lists none or fails to list them still runs its tools.
``notifications/resources/list_changed`` from a server that declares ``listChanged`` forgets the
listing and tells ``on_change`` once, so a picker that shows it lists again; more of them before
anyone lists again change nothing. Cairn subscribes to no single resource: an attachment is a
copy kept by hash, which a later change of the resource does not touch, so a
``notifications/resources/updated`` would have nothing to update.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import anyio
from mcp import Client
from mcp import types as mcp_types
from mcp.shared.exceptions import MCPError

from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.failures import leaf
from host.mcp.offers import ListedResource, ListedTemplate, ResourceFile, ResourceListing
from host.mcp.pages import Page, all_pages
from host.mcp.results import cap_text

__all__ = ["MAX_URI", "ServerResources", "resource_file"]

MAX_URI = 2048  # what read_resource takes, and what a listed resource's address may be
_NAME, _SHOWN_URI, _DESCRIPTION, _MIME = 200, 500, 1_000, 100


_I = TypeVar("_I")
_P = TypeVar("_P", bound=Page)


class ServerResources:
    """One server's resources, for as long as it runs. ``connected`` at each start and end of
    its session; ``take`` each notification; ``listing`` when someone asks."""

    def __init__(
        self, config: McpServerConfig, redact: Callable[[str], str], limits: McpLimits, on_change: Callable[[], None]
    ) -> None:
        self.server, self._redact, self._limits, self._on_change = config.name, redact, limits, on_change
        self._stdio = config.transport == "stdio"
        self._client: Client | None = None
        self._offered = self._follows = False
        self._listing: ResourceListing | None = None
        self._changes = 0  # list_changed heard: a listing begun before one is not kept
        self._begun: int | None = None  # _changes when the listing under way began
        self._lock = asyncio.Lock()

    def connected(self, client: Client | None) -> None:
        """The server is ready on ``client``, or (``None``) no longer: what was listed is forgotten."""
        self._client, self._listing = client, None
        declared = client.server_capabilities.resources if client is not None else None
        self._offered = declared is not None
        self._follows = declared is not None and declared.list_changed is True

    def too_large(self, size: int | None) -> str | None:
        """Why a resource of ``size`` bytes (as listed) cannot be read, if it cannot: over stdio,
        a message past ``max_message_bytes`` is not read (``host.mcp.oversize``), so it is not
        asked for."""
        most = self._limits.max_message_bytes
        if not self._stdio or size is None or (size + 2) // 3 * 4 + 1024 <= most:
            return None
        return f"it is {size:,} bytes, and from a server over stdio Cairn reads at most about {most * 3 // 4:,}"

    def take(self, message: object) -> bool:
        """Whether ``message`` is about resources; it is handled then."""
        if isinstance(message, mcp_types.ResourceListChangedNotification):
            if self._follows:
                # Told once per listing: a flood of notifications costs one more listing.
                tell = self._listing is not None or self._begun == self._changes
                self._listing = None
                self._changes += 1
                if tell:
                    self._on_change()
            return True
        return isinstance(message, mcp_types.ResourceUpdatedNotification)  # unasked: Cairn subscribes to none

    async def listing(self) -> ResourceListing:
        """The resources and templates the server lists now (kept until it says they changed);
        an empty listing with a ``problem`` when they cannot be listed. Never raises, except
        cancellation."""
        async with self._lock:
            client = self._client
            if client is None:
                return ResourceListing(self.server, problem="it is not running")
            if not self._offered:
                return ResourceListing(self.server)
            if self._listing is not None:
                return self._listing
            changes = self._begun = self._changes
            try:
                listing = await self._list(client)
            finally:
                self._begun = None
            if isinstance(listing, str):  # not kept: the next one to ask tries again
                return ResourceListing(self.server, problem=cap_text(self._redact(listing), 500))
            if changes == self._changes and client is self._client:
                self._listing = listing
            return listing

    async def _list(self, client: Client) -> ResourceListing | str:
        limits = self._limits
        try:
            with anyio.fail_after(limits.list_timeout):
                resources, cut = await _paged(
                    lambda cursor: client.list_resources(cursor=cursor),
                    lambda page: page.resources,
                    limits,
                    "resources",
                )
                try:
                    templates, _ = await _paged(
                        lambda cursor: client.list_resource_templates(cursor=cursor),
                        lambda page: page.resource_templates,
                        limits,
                        "templates",
                    )
                except MCPError:
                    templates = []  # a server with resources need not have templates
        except TimeoutError:
            return f"listing them took longer than {limits.list_timeout:g} s"
        except MCPError as exc:
            return f"listing them was refused: {exc.error.message}"
        except Exception as exc:  # noqa: BLE001 - a broken listing never breaks the server
            return f"listing them failed: {leaf(exc)}"
        return self._built(resources, templates, cut)

    def _built(
        self, resources: Sequence[mcp_types.Resource], templates: Sequence[mcp_types.ResourceTemplate], cut: str
    ) -> ResourceListing:
        said = self._said
        listed: list[ListedResource] = []
        seen: set[str] = set()
        long = 0
        for resource in resources:
            if len(resource.uri) > MAX_URI:
                long += 1
                continue
            if resource.uri in seen:
                continue
            seen.add(resource.uri)
            listed.append(
                ListedResource(
                    server=self.server,
                    uri=resource.uri,
                    name=said(resource.title or resource.name, _NAME) or said(resource.uri, _NAME),
                    shown_uri=said(resource.uri, _SHOWN_URI),
                    description=said(resource.description, _DESCRIPTION),
                    mime_type=said(resource.mime_type, _MIME),
                    size=resource.size if resource.size is not None and resource.size >= 0 else None,
                )
            )
        shapes = tuple(
            ListedTemplate(
                server=self.server,
                uri_template=said(template.uri_template, _SHOWN_URI),
                name=said(template.title or template.name, _NAME),
                description=said(template.description, _DESCRIPTION),
                mime_type=said(template.mime_type, _MIME),
            )
            for template in templates
        )
        problems = [cut] if cut else []
        if long:
            problems.append(f"{long} with an address longer than {MAX_URI:,} characters left out")
        return ResourceListing(self.server, tuple(listed), shapes, "; ".join(problems))

    def _said(self, text: str | None, limit: int) -> str:
        """What the server wrote, as Cairn shows it: one line, redacted, capped."""
        if not text:
            return ""
        line = " ".join(self._redact(text).split())
        return line if len(line) <= limit else line[: limit - 1] + "…"


async def _paged(
    fetch: Callable[[str | None], Awaitable[_P]],
    items: Callable[[_P], Sequence[_I]],
    limits: McpLimits,
    what: str,
) -> tuple[list[_I], str]:
    """Every item of a paged list, within ``limits``; what was cut short, in words."""
    most = limits.max_resources
    got = await all_pages(fetch, items, most=most, pages=limits.max_list_pages)
    if got.too_many:
        return got.items[:most], f"it lists more than {most:,} {what}; the first {most:,} are shown"
    if got.unended:
        pages, count = limits.max_list_pages, len(got.items)
        return got.items, f"its list of {what} did not end within {pages} pages; the first {count:,} are shown"
    return got.items, ""


def resource_file(
    result: mcp_types.ReadResourceResult, name: str, *, redact: Callable[[str], str], max_bytes: int
) -> ResourceFile | str:
    """A read resource as one file to attach: its text parts joined (redacted, as UTF-8), or its
    one binary part decoded (redacted too when it is text); else why not, in words (a clause:
    "it is empty")."""
    contents = result.contents
    blobs = [part for part in contents if isinstance(part, mcp_types.BlobResourceContents)]
    if not contents:
        return "it is empty"
    if blobs and len(contents) > 1:
        return f"it came in {len(contents)} parts, some binary, and Cairn attaches binary content one part at a time"
    if blobs:
        blob = blobs[0]
        if len(blob.blob) * 3 // 4 > max_bytes:
            return f"it is about {len(blob.blob) * 3 // 4:,} bytes, more than the {max_bytes:,} Cairn attaches"
        try:
            data = base64.b64decode(blob.blob, validate=True)
        except (binascii.Error, ValueError):
            return "its binary content is not valid base64"
        return ResourceFile(name, _redacted(data, redact), blob.mime_type or "")
    texts = [part.text for part in contents if isinstance(part, mcp_types.TextResourceContents)]
    data = redact("\n\n".join(texts)).encode("utf-8")
    if len(data) > max_bytes:
        return f"it is {len(data):,} bytes of text, more than the {max_bytes:,} Cairn attaches"
    return ResourceFile(name, data, contents[0].mime_type or "text/plain")


def _redacted(data: bytes, redact: Callable[[str], str]) -> bytes:
    """Binary content that is UTF-8 text is attached as text, so it is redacted like text."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    return redact(text).encode("utf-8")
