"""Whether a tool call may run: the decision type and the gate that makes it.

A ``Decision`` is allow, deny or ask, each with a reason that is recorded with the call and
shown to the person. The gate applies the checks of DESIGN.md invariant 7 in order (the
current catalog first); the tools issue fills in modes, scopes, grants and the workspace
jail. The gate Cairn runs with until then allows every tool that is in the turn's catalog
and refuses the rest, because current catalog and Host permissions are authoritative,
whatever the transcript says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from host.content import ToolCallPart
from host.tools import Tool, ToolCatalog

__all__ = ["CatalogGate", "Decision", "ToolGate", "ToolRequest"]


@dataclass(frozen=True)
class Decision:
    verdict: Literal["allow", "deny", "ask"]
    reason: str

    @classmethod
    def allow(cls, reason: str) -> Decision:
        return cls("allow", reason)

    @classmethod
    def deny(cls, reason: str) -> Decision:
        return cls("deny", reason)


@dataclass(frozen=True)
class ToolRequest:
    """One call the model made, with the catalog of the turn it was made in."""

    session_id: str
    call: ToolCallPart
    catalog: ToolCatalog

    @property
    def tool(self) -> Tool | None:
        return self.catalog.get(self.call.name)


class ToolGate(Protocol):
    async def check(self, request: ToolRequest) -> Decision: ...


class CatalogGate:
    """Allows exactly the tools of the turn's catalog."""

    async def check(self, request: ToolRequest) -> Decision:
        if request.tool is None:
            return Decision.deny(f"No tool named {request.call.name!r} is available in this chat.")
        return Decision.allow("it is in this chat's tool catalog")
