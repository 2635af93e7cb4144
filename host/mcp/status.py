"""What a server is doing and what it offers, as immutable snapshots the window and the CLI can show."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["PromptArgument", "ServerPrompt", "ServerState", "ServerStatus", "SkippedTool"]


class ServerState(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    SIGN_IN = "sign in"  # a remote server that needs the person to sign in (again)


@dataclass(frozen=True)
class SkippedTool:
    """A tool the server offers that Cairn leaves out, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class ServerStatus:
    """One server's state. ``reason`` says why it failed; ``stderr_tail`` is the end of what
    it wrote on stderr (a few KB at most, redacted); ``tools_sha256`` changes only when its
    tools' specs really change; ``instructions`` is the ``instructions`` of its initialize
    result."""

    server: str
    state: ServerState
    tool_count: int = 0
    reason: str = ""
    stderr_tail: str = ""
    skipped: tuple[SkippedTool, ...] = ()
    tools_sha256: str = ""
    instructions: str = ""  # what the server said about itself when it started (redacted, capped)

    def describe(self) -> str:
        """One line for a person."""
        if self.state is ServerState.READY:
            tools = "1 tool" if self.tool_count == 1 else f"{self.tool_count} tools"
            left_out = f", {len(self.skipped)} left out" if self.skipped else ""
            return f"{self.server}: ready, {tools}{left_out}"
        if self.state is ServerState.FAILED:
            return f"{self.server}: failed: {self.reason}"
        if self.state is ServerState.SIGN_IN:
            return f"{self.server}: sign in again to {self.server}"
        return f"{self.server}: {self.state.value}"


@dataclass(frozen=True)
class PromptArgument:
    """One argument a prompt takes: its name (as the server spells it), what it is for."""

    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class ServerPrompt:
    """One prompt a ready server offers (``prompts/list``), as the composer lists it. ``name`` is
    the server's own, sent back as it is; ``title`` and ``description`` are redacted and capped."""

    server: str
    name: str
    title: str = ""
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()
