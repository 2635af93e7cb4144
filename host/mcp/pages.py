"""A server's paged list (tools, prompts, resources, templates), read within bounds: at most
so many pages, and past so many items it stops, so a server cannot make Cairn read forever."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from host.mcp.failures import Refused

__all__ = ["Page", "Paged", "all_pages", "whole"]


class Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


_I = TypeVar("_I")
_P = TypeVar("_P", bound=Page)


@dataclass(frozen=True)
class Paged(Generic[_I]):
    """What was read. ``too_many``: more than ``most`` items came (all of them are here), and
    ``more`` says whether another page was still to come; ``unended``: the list did not end
    within ``pages`` pages."""

    items: list[_I]
    too_many: bool = False
    more: bool = False
    unended: bool = False


async def all_pages(
    fetch: Callable[[str | None], Awaitable[_P]], items: Callable[[_P], Sequence[_I]], *, most: int, pages: int
) -> Paged[_I]:
    """Every item of the list ``fetch`` reads page by page (by cursor), within the bounds."""
    listed: list[_I] = []
    cursor: str | None = None
    for _ in range(pages):
        page = await fetch(cursor)
        listed.extend(items(page))
        if len(listed) > most:
            return Paged(listed, too_many=True, more=page.next_cursor is not None)
        cursor = page.next_cursor
        if cursor is None:
            return Paged(listed)
    return Paged(listed, unended=True)


def whole(got: Paged[_I], noun: str, verb: str, *, most: int, pages: int) -> list[_I]:
    """The whole list, or ``Refused`` when it went past its bounds: Cairn takes all of a
    server's tools (or prompts) or none, rather than choose some. ``noun``: "tool";
    ``verb``: what Cairn does with them ("takes")."""
    if got.too_many:
        count = f"{'at least ' if got.more else ''}{len(got.items)}"
        raise Refused(
            f"it offers {count} {noun}s, and Cairn {verb} at most {most} from one server rather than choose some"
        )
    if got.unended:
        raise Refused(f"its {noun} list did not end within {pages} pages")
    return got.items
