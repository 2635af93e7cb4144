"""What every command shares: its error, and text made safe to print on a terminal (``printable``)."""

from __future__ import annotations

from desktop.message_text import printable

__all__ = ["CommandError", "printable"]


class CommandError(Exception):
    """A command cannot go on; the message tells the person what to do."""
