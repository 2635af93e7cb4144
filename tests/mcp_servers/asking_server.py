"""An MCP server written with the SDK's MCPServer whose tool asks the person for input
(``elicitation/create``), run as a process by the tests.

    python asking_server.py

``book(after)`` asks for a name, a number of seats (1 to 8), a window seat and a meal, then
waits ``after`` seconds and says what it was told.
"""

import asyncio
import json
from typing import Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field


class Booking(BaseModel):
    name: str = Field(title="Name", description="Who travels")
    seats: int = Field(title="Seats", ge=1, le=8)
    window: bool = Field(default=False, title="A window seat")
    meal: Literal["none", "vegetarian", "vegan"] = Field(default="none", title="Meal")


def main() -> None:
    server = MCPServer("asking")

    @server.tool()
    async def book(ctx: Context, after: float = 0.0) -> str:
        """Book seats, asking the person for the details."""
        result = await ctx.elicit("Who is travelling?", schema=Booking)
        await asyncio.sleep(after)
        if result.action == "accept":
            return f"booked: {json.dumps(result.data.model_dump(), sort_keys=True)}"
        return f"not booked: {result.action}"

    server.run()


if __name__ == "__main__":
    main()
