"""A process that is started as an MCP server and misbehaves; no SDK, on purpose.

    python bad_server.py MODE

``exit``: writes a traceback-like line on stderr and exits with code 3 at once.
``hang``: reads its stdin and never answers.
``garbage``: answers the first line with text that is not JSON-RPC.
``flood``: answers the first line with megabytes and no newline, forever.
``stubborn``: ignores stdin closing and SIGTERM, and so does a child it starts (whose pid
it writes on stderr as ``CHILD <pid>``); only SIGKILL to the whole group ends them.
``wrong-shape``: speaks JSON-RPC, but lists a tool whose input schema is not an object.
``long``: speaks JSON-RPC; its tool ``long`` first logs ``size`` bytes, then answers with
``size`` bytes of text, the id after the result (as the TypeScript SDK writes it) and a
nested ``"id"`` in the result; ``garbage`` writes ``size`` bytes that are not JSON;
``short`` answers ``still here``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"


def wrong_shape() -> None:
    answers = {
        "initialize": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "wrong-shape", "version": "1"},
        },
        "tools/list": {"tools": [{"name": "listy", "inputSchema": {"type": "array"}}]},
    }
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": answers.get(message["method"], {})}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


LONG_TOOLS = [
    {"name": name, "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}}}
    for name in ("long", "garbage", "short")
]


def long() -> None:
    answers = {
        "initialize": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "long", "version": "1"},
        },
        "tools/list": {"tools": LONG_TOOLS},
    }
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        answer: dict[str, object] = {"result": answers.get(message["method"], {})}
        if message["method"] == "tools/call":
            tool, size = message["params"]["name"], message["params"].get("arguments", {}).get("size", 0)
            answer = {"result": {"content": [{"type": "text", "text": "still here"}]}}
            if tool == "garbage":
                sys.stdout.write("x" * size + "\n")
            if tool == "long":
                said = {"level": "info", "data": "y" * size}
                sys.stdout.write(
                    json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": said}) + "\n"
                )
                text = "START " + "x" * size + ' "id": 998}'
                rows = [{"id": 999}]  # a nested id, last before the answer's own
                answer = {"result": {"content": [{"type": "text", "text": text}], "structuredContent": {"rows": rows}}}
        sys.stdout.write(json.dumps({**answer, "jsonrpc": "2.0", "id": message["id"]}) + "\n")
        sys.stdout.flush()


def main() -> None:
    mode = sys.argv[1]
    if mode == "exit":
        sys.stderr.write("Traceback (most recent call last):\nRuntimeError: cannot open the database\n")
        sys.exit(3)
    if mode == "wrong-shape":
        wrong_shape()
        return
    if mode == "long":
        long()
        return
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", STUBBORN])
        sys.stderr.write(f"CHILD {child.pid}\n")
        sys.stderr.flush()
    sys.stdin.buffer.readline()
    if mode == "garbage":
        sys.stdout.write("Hello! Server v1.2 starting up...\n")
        sys.stdout.flush()
    elif mode == "flood":
        chunk = "x" * 65536
        while True:
            sys.stdout.write(chunk)
    while True:  # hang, stubborn, garbage: never answer, never leave
        time.sleep(1)


if __name__ == "__main__":
    main()
