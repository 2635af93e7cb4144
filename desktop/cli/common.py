"""What every command shares."""

from __future__ import annotations

__all__ = ["CommandError"]


class CommandError(Exception):
    """A command cannot go on; the message tells the person what to do."""
