"""The permission model: a chat's mode, the scopes each mode allows, grants, and decisions.

Modes, per chat and changeable mid-chat:

- ``ask``: every tool that can change something asks a person; tools that only read run;
- ``read_only``: tools that can change something are refused without asking;
- ``auto``: everything runs, still inside the workspace jail and the scopes.

A person's answers are grants keyed on the tool's identity (source, name and the pin of its
exact spec), so a tool whose spec changed is asked about again. "This chat" grants are rows of
the chat; "Always" and "Never" live in the settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from host.canonical import sha256_hex
from host.content import ChatGrant, Mode, PermissionMode, ToolIdentity
from host.rows import TranscriptRow
from host.tools import Tool, ToolSpec

__all__ = ["MODES", "Decision", "PermissionPolicy", "Permissions", "identity_of", "mode_allows", "spec_pin"]

MODES: tuple[Mode, ...] = ("ask", "read_only", "auto")


def mode_allows(mode: Mode, scope: str) -> bool:
    """Whether ``mode`` allows a tool that needs ``scope``: read-only allows reading scopes
    (``*.read``) only; the others allow every scope."""
    return mode != "read_only" or scope.endswith(".read")


def spec_pin(spec: ToolSpec) -> str:
    """SHA-256 of the exact spec, over canonical JSON: a call pinned to it runs only while the
    tool is still that tool."""
    return sha256_hex(spec)


def identity_of(tool: Tool) -> ToolIdentity:
    return ToolIdentity(source=tool.spec.source, tool=tool.name, pin=spec_pin(tool.spec))


@dataclass(frozen=True)
class Decision:
    """Allow, deny or ask, each with a reason that is recorded with the call and shown."""

    verdict: Literal["allow", "deny", "ask"]
    reason: str

    @classmethod
    def allow(cls, reason: str) -> Decision:
        return cls("allow", reason)

    @classmethod
    def deny(cls, reason: str) -> Decision:
        return cls("deny", reason)

    @classmethod
    def ask(cls, reason: str) -> Decision:
        return cls("ask", reason)


@dataclass(frozen=True)
class PermissionPolicy:
    """What the settings say for every chat: the mode a chat starts in, and the tools a
    person always or never allows."""

    default_mode: Mode = "ask"
    always: frozenset[ToolIdentity] = frozenset()
    never: frozenset[ToolIdentity] = frozenset()


@dataclass(frozen=True)
class Permissions:
    """Everything the gate knows about one chat when a call arrives. Immutable: built from the
    chat's rows and the settings for each turn, so the current mode and grants are authoritative
    whatever the transcript says."""

    mode: Mode = "ask"
    chat: frozenset[ToolIdentity] = frozenset()  # "This chat"
    always: frozenset[ToolIdentity] = frozenset()
    never: frozenset[ToolIdentity] = frozenset()
    # The deferred tools that may run now; ``None`` until activation exists: every tool counts.
    activated: frozenset[str] | None = field(default=None)

    @classmethod
    def of_chat(
        cls,
        rows: Iterable[TranscriptRow],
        *,
        default_mode: Mode = "ask",
        always: Iterable[ToolIdentity] = (),
        never: Iterable[ToolIdentity] = (),
    ) -> Permissions:
        """The chat's mode (its last mode row, else ``default_mode``) and its grants, folded
        in order (a later revocation withdraws an earlier grant)."""
        mode = default_mode
        chat: set[ToolIdentity] = set()
        for row in rows:
            meta = row.meta()
            if isinstance(meta, PermissionMode):
                mode = meta.mode
            elif isinstance(meta, ChatGrant):
                (chat.add if meta.allow else chat.discard)(meta.target)
        return cls(mode, frozenset(chat), frozenset(always), frozenset(never))
