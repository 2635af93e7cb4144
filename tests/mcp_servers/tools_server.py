"""An MCP server written with the SDK's MCPServer, run as a process by the tests.

    python tools_server.py [MODE] [--http]

Modes: ``normal`` (the default), ``reword`` (normal, and a tool that changes ``add``'s
description), ``seeds`` (an enum and a ``required`` list built from sets),
``many N`` (N tools), ``progress`` (tools that report progress), ``logs`` (a tool that logs), ``schemas`` (tools with
broken input schemas), ``flood-stderr`` (a working server whose stderr never stops). With
``--http`` it serves streamable HTTP on a free port of 127.0.0.1 and prints ``PORT <n>`` on
stdout. ``LAB_INSTRUCTIONS`` in its
environment becomes the ``instructions`` of its initialize result; ``LAB_FAIL_AT_START`` makes
it exit at once; ``LAB_SLOW_START`` (seconds) makes it wait that long before it serves;
``LAB_ADD_DOC`` replaces the description of its ``add`` tool; ``LAB_CALLS`` names a file
where each run of ``add`` leaves a line; ``LAB_JSON_RESPONSE`` makes it
answer over HTTP with JSON bodies, not server-sent events.
"""

import asyncio
import base64
import enum
import os
import socket
import sys
import threading
import time
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.types import ImageContent, TextContent, ToolAnnotations


def add(a: int, b: int) -> int:
    """Add two numbers."""
    if calls := os.environ.get("LAB_CALLS"):  # a file where each call leaves a line: proof it ran
        with open(calls, "a", encoding="utf-8") as file:
            file.write(f"add {a} {b}\n")
    return a + b


def normal(server: MCPServer) -> None:
    @server.resource("lab://notes", mime_type="text/plain")
    def notes() -> str:
        """The lab's notes."""
        return "Notebook: the teal flask is empty."

    @server.resource("lab://photo", mime_type="image/png")
    def photo() -> bytes:
        """A photo of the bench."""
        return b"\x89PNG\r\n\x1a\n" + bytes(600)

    server.add_tool(add, annotations=ToolAnnotations(read_only_hint=True), description=os.environ.get("LAB_ADD_DOC"))

    @server.tool()
    def shout(text: str) -> str:
        """Say it louder."""
        return text.upper()

    @server.tool(name="odd.name")
    def odd_name() -> str:
        """A name with a dot, which Cairn's tool names cannot hold."""
        return "odd"

    @server.tool(name="odd_name")
    def odd_name_too() -> str:
        """The name the one above sanitises to."""
        return "odd too"

    @server.tool()
    def secret() -> str:
        """Say the secret from the environment."""
        sys.stderr.write(f"the token is {os.environ.get('CAIRN_TEST_TOKEN', '')}\n")
        sys.stderr.flush()
        return f"token={os.environ.get('CAIRN_TEST_TOKEN', '')}"

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ValueError("the tool broke on purpose")

    @server.tool()
    def picture() -> list[TextContent | ImageContent]:
        """Text and an image."""
        png = base64.b64encode(b"\x89PNG" + b"\0" * 2000).decode()
        image = ImageContent(type="image", data=png, mime_type="image/png")
        return [TextContent(type="text", text="a picture:"), image]

    @server.tool()
    def big(size: int) -> str:
        """A long text."""
        return "x" * size

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return "slept"

    @server.tool()
    def die() -> str:
        """Exit in the middle of the call."""
        sys.stderr.write("dying now\n")
        sys.stderr.flush()
        os._exit(7)

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool, then say the tools changed."""
        server.add_tool(lambda: "new", name="grown", description="A tool added while running.")
        await ctx.request_context.session.send_tool_list_changed()
        return "grown"

    @server.tool()
    async def touch(ctx: Context, times: int = 1) -> str:
        """Say the tools changed, though they did not."""
        for _ in range(times):
            await ctx.request_context.session.send_tool_list_changed()
        return "touched"


def reword(server: MCPServer) -> None:
    @server.tool(name="reword")
    async def reword_add(ctx: Context, doc: str) -> str:
        """Give ``add`` the description ``doc``, then say the tools changed."""
        server.remove_tool("add")
        server.add_tool(add, annotations=ToolAnnotations(read_only_hint=True), description=doc)
        await ctx.request_context.session.send_tool_list_changed()
        return "reworded"


def seeds() -> list[Tool]:
    # Built from sets, so their order follows this process's PYTHONHASHSEED.
    colours = {"red", "green", "blue", "amber", "violet", "teal", "ochre", "slate"}
    fields = {"colour", "size", "weight", "label", "count"}
    Colour = enum.Enum("Colour", {name: name for name in colours})

    def paint(colour: Colour) -> str:
        return colour.value

    tool = Tool.from_function(paint, description="Paint.")
    nested = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in fields},
        "required": list(fields),
    }
    parameters = {**tool.parameters, "properties": {**tool.parameters["properties"], "options": nested}}
    order = ",".join(tool.parameters["$defs"]["Colour"]["enum"]) + "|" + ",".join(nested["required"])
    sys.stderr.write(f"RAW-ORDER {order}\n")
    sys.stderr.flush()
    return [tool.model_copy(update={"parameters": parameters})]


def many(server: MCPServer, count: int) -> None:
    for n in range(count):
        server.add_tool(lambda: "ok", name=f"tool_{n:03d}", description=f"Tool {n}.")


def schemas() -> list[Tool]:
    def good(text: str) -> str:
        return text

    tools = [Tool.from_function(good, description="A good tool.")]
    broken: dict[str, dict[str, Any]] = {
        "bad_type": {"type": "object", "properties": {"x": {"type": "strin"}}},
        "bad_min": {"type": "object", "properties": {"x": {"type": "string", "minLength": -1}}},
    }
    for name, parameters in broken.items():
        tool = Tool.from_function(lambda: "never", name=name, description="Broken schema.")
        tools.append(tool.model_copy(update={"parameters": parameters}))
    return tools


def progress(server: MCPServer) -> None:
    @server.tool()
    async def steps(ctx: Context, count: int = 3, pause: float = 0.3) -> str:
        """Work in steps, saying how far it got."""
        for n in range(count):
            await ctx.report_progress(n + 1, count, f"step {n + 1} of {count}")
            await asyncio.sleep(pause)
        return f"{count} steps done"

    @server.tool()
    async def chatter(ctx: Context, times: int = 2000) -> str:
        """Report progress as fast as it can: no total, or a total of 0, and long escapes."""
        for n in range(times):
            await ctx.report_progress(n, [None, 0, times][n % 3], "\x1b[31mred\x1b[0m " + "x" * 5000)
        return "said a lot"


def logs(server: MCPServer) -> None:
    @server.tool()
    async def say(ctx: Context, times: int = 1, text: str = "hello") -> str:
        """Log ``text`` ``times`` times, at info."""
        for n in range(times):
            await ctx.info(f"{text} {n}")
        return f"said it {times} times"


def flood_stderr() -> None:
    def flood() -> None:
        line = "noise " * 2000 + "\n"
        while True:
            sys.stderr.write(line)

    threading.Thread(target=flood, daemon=True).start()


def serve_http(server: MCPServer) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn is up, never refused
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    inner = server.streamable_http_app(json_response=bool(os.environ.get("LAB_JSON_RESPONSE")))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "DELETE":
            print("DELETE", flush=True)  # the test sees the client end its session
        await inner(scope, receive, send)

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


def main() -> None:
    if os.environ.get("LAB_FAIL_AT_START"):  # a server that breaks without its entry changing
        sys.exit(3)
    if slow := os.environ.get("LAB_SLOW_START"):  # a server that takes its time to start
        time.sleep(float(slow))
    args = [arg for arg in sys.argv[1:] if arg != "--http"]
    mode = args[0] if args else "normal"
    made = {"seeds": seeds, "schemas": schemas}
    said = os.environ.get("LAB_INSTRUCTIONS")  # what the server says about itself when it starts
    server = MCPServer("test-tools", instructions=said, tools=made[mode]() if mode in made else None)
    if mode == "normal":
        normal(server)
    elif mode == "reword":
        normal(server)
        reword(server)
    elif mode == "progress":
        progress(server)
    elif mode == "logs":
        logs(server)
    elif mode == "many":
        many(server, int(args[1]))
    elif mode == "flood-stderr":
        normal(server)
        flood_stderr()
    elif mode not in made:
        raise SystemExit(f"unknown mode {mode!r}")
    if "--http" in sys.argv:
        serve_http(server)
    else:
        server.run()


if __name__ == "__main__":
    main()
