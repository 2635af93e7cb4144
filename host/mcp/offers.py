"""What a server offers to attach besides its tools: its resources and resource templates, as
immutable values the window can show, and a resource read to be attached like a file.

Like ``config`` and ``status``, this module imports nothing from the SDK. Everything here that
the server wrote is redacted and capped already, except ``ListedResource.uri``: the address a
read sends back to the server, exactly as the server gave it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ListedResource", "ListedTemplate", "ResourceFile", "ResourceListing"]


@dataclass(frozen=True)
class ListedResource:
    """One resource a server lists. ``name``: its title, else its name; ``shown_uri``: its
    address as a person sees it; ``size``: in bytes, when the server says."""

    server: str
    uri: str
    name: str
    shown_uri: str
    description: str = ""
    mime_type: str = ""
    size: int | None = None


@dataclass(frozen=True)
class ListedTemplate:
    """A resource template (RFC 6570): shown, not filled in."""

    server: str
    uri_template: str
    name: str
    description: str = ""
    mime_type: str = ""


@dataclass(frozen=True)
class ResourceListing:
    """One ready server's resources, in the order it lists them. ``problem``: why the list is
    empty or cut short, in words ("" when it is whole)."""

    server: str
    resources: tuple[ListedResource, ...] = ()
    templates: tuple[ListedTemplate, ...] = ()
    problem: str = ""


@dataclass(frozen=True)
class ResourceFile:
    """A resource read to be attached: its bytes (text as UTF-8, redacted) and its name."""

    name: str
    data: bytes
    mime_type: str = ""
