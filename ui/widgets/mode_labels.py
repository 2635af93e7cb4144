"""The permission modes as a person reads them, for every box that offers a choice of them."""

from __future__ import annotations

__all__ = ["MODE_LABELS"]

MODE_LABELS = {
    "ask": "Ask before changes",
    "read_only": "Read only",
    "auto": "Run tools without asking",
}
