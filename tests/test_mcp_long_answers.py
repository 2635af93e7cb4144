"""An answer longer than Cairn reads of one message (4 MB) is cut, not fatal: the call gets the
start of the text and one note that says why, the same server process answers the next call,
and what Cairn holds of the line stays bounded. Real server processes: the SDK's (its id before
its result), one without an SDK (its id after its result, as the TypeScript SDK writes it) and
the public filesystem server (TypeScript)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import httpx2
import pytest
from mcp.types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse
from pydantic import JsonValue

from host.mcp import McpLimits, McpServerConfig, ServerState
from host.mcp.http_events import CappedEvents
from host.mcp.lines import HEAD, TAIL, LineFramer, LongLine
from host.mcp.oversize import InFlight, Sent, judge
from host.mcp.server import McpServer
from host.tools import ToolOutput
from tests.mcp_servers import TOOLS_SERVER, bad_server, resources_server, tools_server
from tests.public_mcp import filesystem

MB = 1024 * 1024
ASK = "The server is still running; ask it for less at a time (a part, a range, a page).]"


def cut_note(size: str, limit: str = "4 MB") -> str:
    return (
        f"\n[Cairn cut this result here: the server's answer was {size}, more than the {limit} Cairn reads of one "
        f"answer, so only its start is shown. {ASK}"
    )


async def calls(
    config: McpServerConfig, *asked: tuple[str, Mapping[str, JsonValue]], limits: McpLimits | None = None
) -> tuple[list[ToolOutput], list[int | None], ServerState]:
    """Each call's output, the server's process before and after them, and its state after."""
    server = McpServer(config, limits=limits)
    try:
        assert (await server.start()).state is ServerState.READY
        pids = [server.pid]
        outputs = [await server.call(tool, arguments) for tool, arguments in asked]
        return outputs, [*pids, server.pid], server.status.state
    finally:
        await server.stop()


def test_a_50_mb_answer_is_cut_and_the_same_server_answers_the_next_call() -> None:
    # 25 MB of text, sent as text and again as structured content: 50 MB on one line.
    big, after = ("big", {"size": 25 * MB}), ("add", {"a": 2, "b": 3})
    (cut, added), (pid, same), state = asyncio.run(calls(tools_server("demo"), big, after))
    assert cut.is_error  # not the whole answer
    assert cut.text.endswith(cut_note("50 MB"))
    shown = cut.text.removesuffix(cut_note("50 MB"))
    assert shown == "x" * len(shown)
    assert 90_000 < len(shown) < HEAD
    assert len(cut.text) < 100_000  # under what a model reads of one result: no second cut, no second note
    assert added.text == "5"
    assert not added.is_error
    assert state is ServerState.READY
    assert pid == same


def test_the_id_after_a_long_result_is_found_and_a_long_log_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    limits = McpLimits(max_message_bytes=256 * 1024)
    long, short = ("long", {"size": MB}), ("short", {})
    with caplog.at_level(logging.WARNING, "host.mcp.stdio"):
        (cut, here), (pid, same), state = asyncio.run(
            calls(bad_server("long", call_timeout=20.0), long, short, limits=limits)
        )
    assert cut.is_error
    assert cut.text.startswith("START xxx")
    assert cut.text.endswith(cut_note("1 MB", "256 KB"))
    assert here.text == "still here"
    assert state is ServerState.READY
    assert pid == same
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert dropped == [
        "the MCP server bad sent more than Cairn reads of one message: "
        "a message of 1 MB from it ('notifications/message') was dropped unread"
    ]


def test_a_long_line_that_is_not_json_rpc_is_still_a_fault() -> None:
    async def scenario() -> tuple[ToolOutput, ServerState, str | None]:
        server = McpServer(bad_server("long", stop_timeout=0.3), limits=McpLimits(max_message_bytes=256 * 1024))
        try:
            await server.start()
            output = await server.call("garbage", {"size": MB})
            async with asyncio.timeout(10):  # the owner task winds the run down after the call has its answer
                while server.status.state is ServerState.READY:
                    await asyncio.sleep(0.02)
            return output, server.status.state, server.status.reason
        finally:
            await server.stop()

    output, state, reason = asyncio.run(scenario())
    fault = f"it wrote something that is not JSON-RPC on stdout: {'x' * 200!r}… (logs belong on stderr)"
    assert output.is_error
    assert output.text == f"The MCP server 'bad' stopped during the call: {fault}."
    assert state is ServerState.FAILED
    assert reason == fault


def test_the_public_filesystem_server_reading_a_50_mb_file_is_cut_and_stays_up(tmp_path: Path) -> None:
    (tmp_path / "huge.txt").write_text("line one\n" + "x" * (50 * MB) + "\n")
    (tmp_path / "small.txt").write_text("small\n")
    read = "read_text_file"
    huge, small = (read, {"path": str(tmp_path / "huge.txt")}), (read, {"path": str(tmp_path / "small.txt")})
    config = filesystem(tmp_path, start_timeout=30.0, call_timeout=60.0)
    (cut, after), (pid, same), state = asyncio.run(calls(config, huge, small))
    assert cut.is_error
    assert cut.text.startswith("line one\nxxx")
    assert "MB, more than the 4 MB Cairn reads of one answer, so only its start is shown." in cut.text
    assert cut.text.endswith(ASK)
    assert cut.text.count("[Cairn cut this result") == 1
    assert len(cut.text) < 100_000
    assert after.text == "small\n"
    assert not after.is_error
    assert state is ServerState.READY
    assert pid == same


def test_a_read_answered_with_too_much_says_so_and_the_server_reads_on() -> None:
    async def scenario() -> tuple[ToolOutput, ToolOutput, ServerState]:
        server = McpServer(resources_server(), limits=McpLimits(max_message_bytes=256 * 1024))
        try:
            await server.start()
            return (
                await server.read_resource("lab://big"),
                await server.read_resource("lab://notes"),
                server.status.state,
            )
        finally:
            await server.stop()

    big, notes, state = asyncio.run(scenario())
    assert big.is_error
    assert big.text.startswith(
        "Cairn did not read the answer of the MCP server 'shelf' to 'lab://big': its answer was "
    )
    assert big.text.endswith(
        " KB, more than the 256 KB Cairn reads of one answer; it is still running, so ask it for less."
    )
    assert "The teal flask is empty." in notes.text
    assert state is ServerState.READY


def test_a_call_given_up_on_is_no_longer_in_flight() -> None:
    in_flight = InFlight()
    for request_id in (4, 5):
        in_flight.sent(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call", params={"name": "t"}))
    in_flight.sent(JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 4}))
    in_flight.answered(JSONRPCResponse(jsonrpc="2.0", id=5, result={}))
    assert len(in_flight) == 0
    late = long_result(jsonrpc="2.0", id=4)  # the answer to a call that timed out, come at last
    assert judge(LongLine(late), in_flight, 1024).dropped == (
        "an answer of 196 KB to no request waiting for one was dropped unread"
    )


def test_a_long_line_is_never_held_whole() -> None:
    framer = LineFramer(McpLimits())
    chunk = b"x" * 65_536
    most = 0
    got: list[bytes | LongLine] = [*framer.feed(b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"')]
    for _ in range(50 * MB // len(chunk)):
        got += framer.feed(chunk)
        most = max(most, framer.held)
    assert framer.held == HEAD + TAIL  # past the cap: its head and tail only
    got += framer.feed(b'"}]}}\n{"jsonrpc":"2.0","method":"ping"}\n')
    assert most <= 4 * MB + len(chunk)  # what a line within the cap may hold, not 50 MB
    long, after = got
    assert isinstance(long, LongLine)
    assert long.size > 50 * MB
    assert len(long.head) == HEAD
    assert len(long.tail) == TAIL
    assert long.tail.endswith(b'"}]}}')
    assert after == b'{"jsonrpc":"2.0","method":"ping"}'
    assert framer.held == 0


def answer_to(line: bytes, *waiting: int) -> object:
    """What ``judge`` makes of ``line`` (over a 1 KB cap) with requests ``waiting`` in flight."""
    in_flight = InFlight()
    for request_id in waiting:
        in_flight.sent(JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call", params={"name": "t"}))
    verdict = judge(LongLine(line), in_flight, 1024)
    if verdict.answer is None:
        return verdict.dropped or verdict.fault
    assert isinstance(verdict.answer, JSONRPCResponse)
    return verdict.answer.id


def long_result(text: str = "x" * 200_000, **around: object) -> bytes:
    return json.dumps({"result": {"content": [{"type": "text", "text": text}]}, **around}).encode()


def test_the_id_a_long_line_answers_cannot_be_posed_by_its_text() -> None:
    assert answer_to(long_result(id=7, jsonrpc="2.0"), 7) == 7  # the tail's last key
    assert answer_to(long_result(jsonrpc="2.0", id=7), 7) == 7
    assert answer_to(json.dumps({"jsonrpc": "2.0", "id": 7, **json.loads(long_result())}).encode(), 7) == 7  # head
    assert answer_to(long_result(id="7", jsonrpc="2.0"), 7) == 7  # "7" and 7 are one id, as in the SDK
    nothing = "an answer of 196 KB to no request waiting for one was dropped unread"
    assert answer_to(long_result(id=8, jsonrpc="2.0"), 7) == nothing  # not in flight
    # Text that ends as an answer would, and a nested id last: neither is the answer's id.
    assert answer_to(long_result("x" * 200_000 + ', "id": 7}', jsonrpc="2.0", id=8), 7) == nothing
    nested = {"result": {"content": [{"type": "text", "text": "x" * 200_000}], "structuredContent": {"id": 7}}}
    assert answer_to(json.dumps({**nested, "jsonrpc": "2.0"}).encode(), 7) == nothing
    assert answer_to(json.dumps({"jsonrpc": "2.0", "id": 8, **nested}).encode(), 7) == nothing
    # Two ids that disagree: neither is trusted.
    both = json.dumps({"jsonrpc": "2.0", "id": 7, **json.loads(long_result()), "id2": 0}).encode()
    assert answer_to(both.replace(b'"id2": 0', b'"id": 9'), 7, 9) == nothing


@pytest.mark.parametrize("json_bodies", [False, True], ids=["events", "json"])
def test_over_http_a_50_mb_answer_is_cut_and_the_server_answers_the_next_call(json_bodies: bool) -> None:
    env = os.environ | ({"LAB_JSON_RESPONSE": "1"} if json_bodies else {})
    command = [sys.executable, str(TOOLS_SERVER), "normal", "--http"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert process.stdout is not None
        url = f"http://127.0.0.1:{int(process.stdout.readline().split()[1])}/mcp"
        config = McpServerConfig(name="web", transport="http", url=url, call_timeout=30)
        big, after = ("big", {"size": 25 * MB}), ("add", {"a": 2, "b": 3})
        (cut, added), _, state = asyncio.run(calls(config, big, after))
    finally:
        process.kill()
        process.wait(timeout=10)
    assert cut.is_error
    assert cut.text.endswith(cut_note("50 MB"))
    assert cut.text.startswith("xxx")
    assert len(cut.text) < 100_000
    assert added.text == "5"
    assert state is ServerState.READY


class Chunks(httpx2.AsyncByteStream):
    """A response body that arrives in ``size``-byte chunks."""

    def __init__(self, body: bytes, size: int) -> None:
        self._body, self._size = body, size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self._body), self._size):
            yield self._body[start : start + self._size]


async def read_events(body: bytes, size: int) -> bytes:
    return b"".join([chunk async for chunk in CappedEvents(Chunks(body, size), Sent(3, "tools/call"), 1024, "web")])


def test_events_over_the_cap_are_replaced_and_the_rest_pass_as_they_came(caplog: pytest.LogCaptureFixture) -> None:
    small = b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\r\n\r\n'
    said = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"' + b"y" * 5000
    result = b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"START ' + b"x" * 5000 + b'"}]},"id":3}'
    body = small + b"event: message\ndata: " + said + b'"}}\n\n' + b"id: 7\nevent: message\ndata: " + result + b"\n\n"
    with caplog.at_level(logging.WARNING, "host.mcp.http_events"):
        for size in (7, 100, 1500, len(body)):  # a line and an event cut anywhere, or whole
            out = asyncio.run(read_events(body + small, size))
            first, dropped, answer, last, end = out.split(b"\n\n")
            assert first == last == small.replace(b"\r", b"").removesuffix(b"\n\n")
            assert dropped == b"event: message"  # no data: the SDK passes it by
            fields, data = answer.split(b"\ndata: ")
            assert fields == b"id: 7\nevent: message"
            text = [block["text"] for block in json.loads(data)["result"]["content"]]
            assert text[0] == "START " + "x" * (len(text[0]) - 6)
            assert text[1] == cut_note("5 KB", "1 KB").removeprefix("\n")
            assert end == b""
    dropped = "a message of 5 KB that answers nothing was dropped unread"
    assert caplog.messages == [f"the MCP server web sent more than Cairn reads of one message: {dropped}"] * 4
