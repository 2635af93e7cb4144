"""Each chat's own route: the account and model it sends to.

A chat remembers its route in a ``ChatRoute`` row (hidden metadata, like its permission
mode). A chat from before Cairn kept one takes the route of its latest request. A chat
that has neither, a new one, starts on the route used last. A chat whose account was
removed falls back to the route used last, and the window says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop.settings.routes import ResolvedRoute
from desktop.settings.store import Settings
from host.content import ChatRoute
from host.usage import RequestUsage

__all__ = ["ChatRouteView", "remembered_route", "resolve_chat_route"]


@dataclass(frozen=True)
class ChatRouteView:
    """What the route bar shows for a chat: its account and model (``None``: the account's
    default), the route they resolve to (or why they do not), and a notice when the chat's
    own account is gone and it fell back."""

    account_id: str | None
    model: str | None
    route: ResolvedRoute | None = None
    problem: str | None = None
    notice: str | None = None
    stored: bool = False  # the chat has a ChatRoute row saying exactly this
    assistant: str | None = None  # the name of the assistant the chat was started from


def remembered_route(route_row: ChatRoute | None, requests: list[RequestUsage]) -> tuple[ChatRoute | None, bool]:
    """The route the chat remembers: its latest ``ChatRoute`` row (``route_row``), else its
    latest request's; and whether it came from a row."""
    if route_row is not None:
        return route_row, True
    chats = [usage for usage in requests if usage.kind == "chat"]
    if chats:
        return ChatRoute(account_id=chats[-1].account_id, model=chats[-1].model), False
    return None, False


def resolve_chat_route(
    remembered: ChatRoute | None, stored: bool, settings: Settings, last: tuple[str | None, str | None]
) -> ChatRouteView:
    """The chat's account and model: what it remembers while its account exists, else the
    route used last (``last``), with a notice when it had one of its own."""
    if remembered is not None and settings.account(remembered.account_id) is not None:
        return ChatRouteView(remembered.account_id, remembered.model, stored=stored)
    account_id, model = last
    if account_id is None or settings.account(account_id) is None:
        account_id, model = settings.default_account, None
    if remembered is None:
        return ChatRouteView(account_id, model)
    account = settings.account(account_id) if account_id else None
    if account is None:
        return ChatRouteView(None, None, notice="This chat's account was removed; add an account in Settings.")
    return ChatRouteView(
        account_id,
        model,
        notice=(
            f"This chat's account was removed, so it now uses {account.name} · {model or account.default_model}. "
            "Choose another route above if you like."
        ),
    )
