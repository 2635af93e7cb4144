"""A server's resources, as the composer's picker lists and reads them: real server processes
over stdio, the public everything server (text and blob resources, templates) and our own on
the SDK's low-level Server (three to a page, a changing list, reads that cannot be attached)."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable

from host.mcp import McpLimits, ServerState, ServerStatus
from host.mcp.offers import ResourceFile, ResourceListing
from host.mcp.resources import resource_file
from host.mcp.server import McpServer
from tests.mcp_servers import resources_server
from tests.public_mcp import everything

SECRET = "lab-secret-4f7a9c2e"
LIMIT = 10 * 1024 * 1024


def running(server: McpServer, scenario: Callable[[McpServer], Awaitable[None]]) -> None:
    async def run() -> None:
        status = await server.start()
        assert status.state is ServerState.READY, status
        try:
            await scenario(server)
        finally:
            await server.stop()

    asyncio.run(run())


async def attach(server: McpServer, uri: str, name: str) -> ResourceFile | str:
    read = await server.read_contents(uri)
    if isinstance(read, str):
        return read
    return resource_file(read, name, redact=hidden, max_bytes=LIMIT)


def hidden(text: str) -> str:
    return text.replace(SECRET, "[redacted]")


def uris(listing: ResourceListing) -> list[str]:
    return [resource.uri for resource in listing.resources]


def test_the_everything_server_lists_its_resources_and_templates_and_reads_text_and_blob() -> None:
    async def scenario(server: McpServer) -> None:
        listing = await server.resources.listing()
        assert listing.problem == ""
        docs = {r.name: r for r in listing.resources}
        assert "instructions.md" in docs
        assert len(docs) >= 5
        instructions = docs["instructions.md"]
        assert instructions.uri == "demo://resource/static/document/instructions.md"
        assert instructions.mime_type == "text/markdown"
        assert instructions.description == "Static document file exposed from /docs: instructions.md"
        assert {t.uri_template for t in listing.templates} >= {
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/blob/{resourceId}",
        }
        assert await server.resources.listing() is listing  # kept until the server says it changed

        text = await attach(server, instructions.uri, instructions.name)
        assert isinstance(text, ResourceFile)
        assert text.name == "instructions.md"
        assert text.mime_type == "text/markdown"
        assert len(text.data) > 100
        assert text.data.decode("utf-8").strip()

        blob = await attach(server, "demo://resource/dynamic/blob/2", "Blob 2")
        assert isinstance(blob, ResourceFile)
        assert blob.data.startswith(b"Resource 2: This is a base64 blob created at ")  # decoded, not base64
        assert blob.mime_type == "text/plain"

        missing = await server.read_contents("demo://resource/dynamic/text/0")
        assert isinstance(missing, str)
        assert missing.startswith("The MCP server 'everything' refused the read of 'demo://resource/dynamic/text/0'")

    running(McpServer(everything(start_timeout=30)), scenario)


def test_resources_are_listed_page_by_page_within_bounds() -> None:
    async def scenario(server: McpServer) -> None:
        listing = await server.resources.listing()
        assert uris(listing) == [
            "lab://notes", "lab://broken", "lab://big", "lab://secret", "lab://photo", "lab://bytes",
        ]  # fmt: skip  # three pages of three, two and one
        assert listing.problem == ""
        photo = listing.resources[4]
        assert (photo.name, photo.mime_type) == ("photo.png", "image/png")
        assert photo.size is not None
        assert photo.size > 50
        assert [t.name for t in listing.templates] == ["A day's notes"]

    running(McpServer(resources_server()), scenario)

    async def few_pages(server: McpServer) -> None:
        listing = await server.resources.listing()
        assert uris(listing) == ["lab://notes", "lab://broken", "lab://big"]
        assert listing.problem == "its list of resources did not end within 1 pages; the first 3 are shown"

    running(McpServer(resources_server(), limits=McpLimits(max_list_pages=1)), few_pages)

    async def few_resources(server: McpServer) -> None:
        listing = await server.resources.listing()
        assert len(listing.resources) == 4
        assert listing.problem == "it lists more than 4 resources; the first 4 are shown"

    running(McpServer(resources_server(), limits=McpLimits(max_resources=4)), few_resources)


def test_reads_become_files_or_say_why_not() -> None:
    async def scenario(server: McpServer) -> None:
        notes = await attach(server, "lab://notes", "notes.md")
        assert notes == ResourceFile("notes.md", b"# Notes\n\nThe teal flask is empty.\n", "text/markdown")
        photo = await attach(server, "lab://photo", "photo.png")
        assert isinstance(photo, ResourceFile)
        assert photo.data.startswith(b"\x89PNG\r\n\x1a\n")
        secret = await attach(server, "lab://secret", "secret.txt")
        assert isinstance(secret, ResourceFile)
        assert secret.data == b"token=[redacted]\n"
        broken = await attach(server, "lab://broken", "broken.txt")
        assert broken == "The MCP server 'shelf' refused the read of 'lab://broken': the shelf of lab://broken is empty"

    running(McpServer(resources_server(env={"LAB_SECRET": SECRET})), scenario)


def test_a_changed_list_is_listed_again_where_the_server_declares_it() -> None:
    told: list[ServerStatus] = []

    async def scenario(server: McpServer) -> None:
        before = await server.resources.listing()
        assert "lab://grown" not in uris(before)
        told.clear()
        await server.call("touch", {})  # resources/updated: Cairn subscribed to none, nothing changes
        await server.call("grow", {})
        async with asyncio.timeout(10):
            while not told:
                await asyncio.sleep(0.02)
        assert told[-1].state is ServerState.READY  # the status again: whoever shows the list reads it anew
        after = await server.resources.listing()
        assert uris(after)[-1] == "lab://grown"
        assert len(told) == 1

    running(McpServer(resources_server(), on_change=told.append), scenario)


def test_a_server_that_does_not_declare_list_changed_keeps_its_first_listing() -> None:
    told: list[ServerStatus] = []

    async def scenario(server: McpServer) -> None:
        before = await server.resources.listing()
        told.clear()
        await server.call("grow", {})
        await asyncio.sleep(0.5)
        assert told == []
        assert await server.resources.listing() is before

    running(McpServer(resources_server(mode="quiet"), on_change=told.append), scenario)


def test_a_resource_file_is_bounded_before_it_is_decoded() -> None:
    from mcp import types

    def read(*contents: types.TextResourceContents | types.BlobResourceContents) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=list(contents))

    def same(text: str) -> str:
        return text

    big = types.BlobResourceContents(uri="x://big", blob="QUJD" * 1000)
    assert resource_file(read(big), "big", redact=same, max_bytes=2000) == (
        "it is about 3,000 bytes, more than the 2,000 Cairn attaches"
    )
    said = types.BlobResourceContents(uri="x://said", blob=base64.b64encode(f"key {SECRET}".encode()).decode())
    assert resource_file(read(said), "said", redact=hidden, max_bytes=2000) == ResourceFile("said", b"key [redacted]")
    photo = types.BlobResourceContents(uri="x://photo", blob=base64.b64encode(b"\x89PNG " + SECRET.encode()).decode())
    kept = resource_file(read(photo), "photo", redact=hidden, max_bytes=2000)
    assert kept == ResourceFile("photo", b"\x89PNG " + SECRET.encode())  # binary: as it is
    bad = types.BlobResourceContents(uri="x://bad", blob="not base64!")
    assert resource_file(read(bad), "bad", redact=same, max_bytes=2000) == "its binary content is not valid base64"
    assert resource_file(read(), "none", redact=same, max_bytes=2000) == "it is empty"
    two = types.TextResourceContents(uri="x://a", text="one"), types.TextResourceContents(uri="x://b", text="two")
    joined = ResourceFile("two", b"one\n\ntwo", "text/plain")
    assert resource_file(read(*two), "two", redact=same, max_bytes=2000) == joined
    mixed = read(two[0], big)
    assert resource_file(mixed, "mixed", redact=same, max_bytes=10_000) == (
        "it came in 2 parts, some binary, and Cairn attaches binary content one part at a time"
    )


def test_a_resource_too_large_for_stdio_is_not_read() -> None:
    from host.mcp import McpServerConfig
    from host.mcp.resources import ServerResources

    limits = McpLimits(max_message_bytes=4 * 1024 * 1024)
    stdio = ServerResources(resources_server(), hidden, limits, lambda: None)
    assert stdio.too_large(None) is None  # unknown: read, bounded afterwards
    assert stdio.too_large(2_000_000) is None
    assert stdio.too_large(5_000_000) == (
        "it is 5,000,000 bytes, and from a server over stdio Cairn reads at most about 3,145,728"
    )
    remote = McpServerConfig(name="far", transport="http", url="https://example.org/mcp")
    assert ServerResources(remote, hidden, limits, lambda: None).too_large(5_000_000) is None
