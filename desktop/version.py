"""Cairn's version: the one in ``pyproject.toml``, read from the installed package's metadata.

Every copy of Cairn has that metadata: ``pip install`` (and ``make run``) writes it, and the
frozen bundle carries a copy of it (``copy_metadata`` in ``packaging/cairn.spec``). There is
no second place that names the version.
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["cairn_version"]


def cairn_version() -> str:
    """``0.1.0``, say; a sentence instead when Cairn runs from a folder it was never installed from."""
    try:
        return metadata.version("cairn")
    except metadata.PackageNotFoundError:
        return "unknown (Cairn was not installed; `make run` installs it)"
