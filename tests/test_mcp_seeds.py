"""A server that builds an enum and a ``required`` list from sets sends them in a new order
after every restart; Cairn's tool identity stays one (architecture §6, invariant 4)."""

from __future__ import annotations

import asyncio

from host.canonical import canonical_json_bytes
from host.mcp import ServerState
from host.mcp.server import McpServer
from host.tools import ToolCatalog
from tests.mcp_servers import tools_server

SEEDS = range(6)


async def raw_order(server: McpServer) -> str:
    """The order the server's sets came in, as it wrote it on stderr before serving."""
    async with asyncio.timeout(5):
        while True:
            for line in server.stderr_tail().splitlines():
                if line.startswith("RAW-ORDER "):
                    return line
            await asyncio.sleep(0.02)


def test_one_tool_schema_sha256_under_every_hash_seed() -> None:
    async def scenario() -> list[tuple[str, str, str]]:
        servers = [
            McpServer(tools_server("seeds", "seeds", env={"PYTHONHASHSEED": str(seed)}, stop_timeout=0.5))
            for seed in SEEDS
        ]
        statuses = await asyncio.gather(*(server.start() for server in servers))
        found = []
        for server, status in zip(servers, statuses, strict=True):
            assert status.state is ServerState.READY, status
            assert status.tool_count == 1
            raw = await raw_order(server)
            # One server name for every seed, so only the schema could tell the runs apart.
            (tool,) = server.tools()
            found.append((raw, ToolCatalog([tool]).identity(), canonical_json_bytes(tool.spec.parameters).decode()))
        await asyncio.gather(*(server.stop() for server in servers))
        return found

    found = asyncio.run(scenario())
    raw_orders = {raw for raw, _, _ in found}
    assert len(raw_orders) > 1, "every seed sent one order; the test could not fail"
    assert len({identity for _, identity, _ in found}) == 1
    assert len({parameters for _, _, parameters in found}) == 1
