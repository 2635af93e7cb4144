"""An MCP server of resources, written with the SDK's low-level Server, run as a process by the tests.

    python resources_server.py [MODE]

Its resources come three to a page: notes (text), a small PNG photo, a text too large to attach,
binary bytes that are no image, one whose read fails, and one whose text carries the secret
``LAB_SECRET`` from its environment; a template is listed too. Its tools: ``grow`` adds a
resource and says the list changed; ``touch`` says the notes were updated.

Modes: ``normal`` declares ``listChanged`` and ``subscribe``; ``quiet`` declares neither (and
still says its list changed when it grows); ``grows`` is ``normal``, and grows by itself a
second after it is first listed.
"""

import asyncio
import base64
import os
import struct
import sys
import zlib

import anyio
from mcp import types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server

PAGE = 3
MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
later: list[asyncio.Task[None]] = []


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x40\x80\xc0" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


TEXTS = {
    "lab://notes": ("notes.md", "text/markdown", "# Notes\n\nThe teal flask is empty.\n"),
    "lab://big": ("big.txt", "text/plain", "x" * 300_000),
    "lab://secret": ("secret.txt", "text/plain", f"token={os.environ.get('LAB_SECRET', '')}\n"),
}
BLOBS = {
    "lab://photo": ("photo.png", "image/png", png(4, 3)),
    "lab://bytes": ("bytes.bin", "application/octet-stream", bytes(range(256))),
}
listed = [
    types.Resource(uri=uri, name=name, mime_type=mime, size=len(body) if uri in BLOBS else None)
    for uri, (name, mime, body) in {**TEXTS, **BLOBS}.items()
]
listed.insert(1, types.Resource(uri="lab://broken", name="broken.txt", description="Fails when read."))


async def list_resources(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    if MODE == "grows" and not later:
        later.append(asyncio.get_running_loop().create_task(grow(ctx, delay=1.0)))
    start = int(params.cursor) if params is not None and params.cursor else 0
    more = str(start + PAGE) if start + PAGE < len(listed) else None
    return types.ListResourcesResult(resources=listed[start : start + PAGE], next_cursor=more)


async def list_templates(
    _ctx: ServerRequestContext, _params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(uri_template="lab://notes/{day}", name="A day's notes", mime_type="text/plain")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(
    _ctx: ServerRequestContext, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri in TEXTS:
        _name, mime, text = TEXTS[uri]
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])
    if uri in BLOBS:
        _name, mime, data = BLOBS[uri]
        blob = base64.b64encode(data).decode()
        return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, mime_type=mime, blob=blob)])
    if uri == "lab://grown":
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text="grown")])
    raise ValueError(f"the shelf of {uri} is empty")


async def subscribe(_ctx: ServerRequestContext, _params: types.SubscribeRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def list_tools(_ctx: ServerRequestContext, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    shape = {"type": "object", "properties": {}}
    return types.ListToolsResult(
        tools=[
            types.Tool(name="grow", description="Add a resource.", input_schema=shape),
            types.Tool(name="touch", description="Say the notes changed.", input_schema=shape),
        ]
    )


async def grow(ctx: ServerRequestContext, delay: float = 0.0) -> None:
    await asyncio.sleep(delay)
    listed.append(types.Resource(uri="lab://grown", name="grown.txt", mime_type="text/plain"))
    await ctx.session.send_resource_list_changed()


async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "grow":
        await grow(ctx)
    else:
        await ctx.session.send_resource_updated("lab://notes")
    return types.CallToolResult(content=[types.TextContent(type="text", text="done")])


async def main(mode: str) -> None:
    declares = mode != "quiet"
    handlers = {"on_subscribe_resource": subscribe} if declares else {}
    server: Server = Server(
        "test-resources",
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **handlers,  # type: ignore[arg-type]
    )
    options = server.create_initialization_options(NotificationOptions(resources_changed=declares))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main, MODE)
