"""Start one stdio MCP server through Cairn's own spawn path, recorded as Cairn records it,
then wait to be killed, like a Cairn that is killed while a server runs.

Usage: python -m tests.children_spawner RECORD_FOLDER MARKER
Prints the server's pid. The server ignores SIGTERM (as one busy cleaning up may), so the
SIGTERM that PR_SET_PDEATHSIG sends when this process dies cannot end it: it is left over.
It writes MARKER once it ignores SIGTERM.
"""

import sys
from pathlib import Path

import anyio

from host.children import ChildRecord
from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.stdio import ProcessWatch, open_stdio

STUBBORN = (
    "import pathlib, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "pathlib.Path(sys.argv[1]).write_text('ready')\n"
    "time.sleep(600)\n"
)


async def main() -> None:
    folder, marker = Path(sys.argv[1]), sys.argv[2]
    config = McpServerConfig(name="stubborn", command=sys.executable, args=("-c", STUBBORN, marker))
    limits = McpLimits()
    watch = ProcessWatch(limits, str, lambda _fault: None)
    async with open_stdio(config, watch, limits, ChildRecord(folder)):
        print(watch.pid, flush=True)
        await anyio.sleep_forever()


anyio.run(main)
