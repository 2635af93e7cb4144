"""An MCP server with prompts, written with the SDK's MCPServer, run as a process by the tests.

    python prompts_server.py

Its prompts: ``review`` (user, assistant and user messages, the assistant's over two lines),
``picture`` (a text and a one-pixel PNG), ``token`` (says ``CAIRN_TEST_TOKEN`` from its
environment), ``empty`` (no messages) and ``greet`` (one required and one optional argument).
Its tool ``add_prompt`` adds the prompt ``later`` and says the prompts changed.
"""

import base64
import os
import struct
import zlib

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage
from mcp.types import ImageContent, TextContent


def one_pixel_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x10\x80\x80")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def main() -> None:
    server = MCPServer("test-prompts")

    @server.prompt(title="Review a change", description="Ask for a review, with an earlier answer as context.")
    def review(topic: str) -> list[Message]:
        return [
            UserMessage(f"Please review {topic}."),
            AssistantMessage("I looked at it before.\n\nThe tests were missing."),
            UserMessage("What changed since?"),
        ]

    @server.prompt(description="A text and a picture.")
    def picture() -> list[Message]:
        png = base64.b64encode(one_pixel_png()).decode()
        return [
            UserMessage(TextContent(type="text", text="Look at this:")),
            UserMessage(ImageContent(type="image", data=png, mime_type="image/png")),
        ]

    @server.prompt(description="Says the token from the environment.")
    def token() -> str:
        return f"the token is {os.environ.get('CAIRN_TEST_TOKEN', '')}"

    @server.prompt(description="Has no messages.")
    def empty() -> list[Message]:
        return []

    @server.prompt(description="Greets someone.")
    def greet(name: str, greeting: str = "Hello") -> str:
        return f"{greeting}, {name}!"

    @server.tool()
    async def add_prompt(ctx: Context) -> str:
        """Add the prompt 'later', then say the prompts changed."""
        server.prompt(name="later", description="Added while running.")(lambda: "a later prompt")
        await ctx.request_context.session.send_prompt_list_changed()
        return "added"

    server.run()


if __name__ == "__main__":
    main()
