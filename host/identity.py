"""The two identity hashes of a chat's request plan.

``prefix_sha256`` covers the frozen prefix and the pinned tool specs; ``tool_schema_sha256``
covers every spec the catalog defines, declared or not. Both hash canonical JSON, so a restart, a deep copy or a reload
under any ``PYTHONHASHSEED`` yields the same identity.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

from host.canonical import sha256_hex
from host.tools.spec import ToolSpec

__all__ = ["prefix_sha256", "tool_schema_sha256"]


def prefix_sha256(prefix: Sequence[Any], pinned_tools: Iterable[ToolSpec]) -> str:
    """Identity of the frozen prefix (any JSON-able items, in order) and the pinned tools."""
    return sha256_hex({"prefix": list(prefix), "tools": _by_name(pinned_tools)})


def tool_schema_sha256(declared_tools: Iterable[ToolSpec]) -> str:
    """Identity of the declared tool specs, taken in name order."""
    return sha256_hex({"tools": _by_name(declared_tools)})


def _by_name(tools: Iterable[ToolSpec]) -> list[ToolSpec]:
    """The specs in name order. They stay models, so canonical JSON sorts every set in them
    (scopes, and an enum built from a set inside the parameters) before it is hashed."""
    ordered = sorted(tools, key=lambda spec: spec.name)
    for earlier, later in pairwise(ordered):
        if earlier.name == later.name:
            raise ValueError(f"two tools are both named {earlier.name!r}; tool names must be unique")
    return ordered
