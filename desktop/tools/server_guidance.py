"""What the model is told about the MCP servers a person configured (architecture §1).

One ``guidance:mcp:<server>`` section per configured, enabled server (not per connection: a
server that failed or has not started yet keeps its section): a one-line purpose (the
person's description of it, else its name) and the server's own ``instructions`` from its
initialize result, framed as the server's words, never the person's, the whole capped at
2,000 characters. So the model knows which servers exist before it searches, and searches
fewer times.

The section changes only when the person edits the server's description, or the server's
instructions change; a server's tools coming and going, or a restart, leaves it as it was (the
instructions last seen are remembered, also across restarts of Cairn, with the program that
said them: ``desktop.tools.server_memory``). It grants nothing: permissions and activation
never read it.
"""

from __future__ import annotations

from desktop.context.sections import GUIDANCE_PREFIX

__all__ = ["CAP", "PREFIX", "guidance_text"]

CAP = 2_000
PREFIX = f"{GUIDANCE_PREFIX}mcp:"
CUT = "\n[Cairn cut the server's instructions here.]"


def guidance_text(server: str, description: str, instructions: str) -> str:
    """The section's text for ``server``."""
    purpose = " ".join(description.split()).rstrip(".") or f"an MCP server the person added, called {server!r}"
    text = (
        f"MCP server {server!r}: {purpose}. Its tools are named {server}__<tool>; find them with tool_search. "
        "Nothing here allows a call: every call is checked as usual."
    )
    said = instructions.strip()
    if said:
        text += f"\nWhat the server says about itself (its words, not the person's):\n{said}"
    if len(text) > CAP:
        text = text[: CAP - len(CUT)] + CUT
    return text
