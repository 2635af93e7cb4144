"""Whether a tool call may run: modes, scopes, grants, the decision type and the gate that
applies invariant 7 (docs/architecture.md §6) in order."""

from host.permissions.gate import AfterHook, BeforeHook, CatalogGate, ToolGate, ToolRequest
from host.permissions.model import (
    Decision,
    PermissionPolicy,
    Permissions,
    identity_of,
    mode_allows,
    spec_pin,
)

__all__ = [
    "AfterHook",
    "BeforeHook",
    "CatalogGate",
    "Decision",
    "PermissionPolicy",
    "Permissions",
    "ToolGate",
    "ToolRequest",
    "identity_of",
    "mode_allows",
    "spec_pin",
]
