"""What every command shares."""

from __future__ import annotations

__all__ = ["KEY_ENV", "CommandError"]

KEY_ENV = "CAIRN_API_KEY"


class CommandError(Exception):
    """A command cannot go on; the message tells the person what to do."""
