"""The chat list's groups: pinned chats on top, the rest by the day they were last active in
local time (Today, Yesterday, Previous 7 days, Older), archived chats at the end.

Plain Python over the journal's records, so the grouping is tested with any clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from desktop.app import SessionRecord, Snippet

__all__ = ["GROUP_TITLES", "ChatGroup", "Found", "GroupKey", "day_group", "group_chats"]

GroupKey = Literal["pinned", "today", "yesterday", "week", "older", "archived"]
GROUP_TITLES: dict[GroupKey, str] = {
    "pinned": "Pinned",
    "today": "Today",
    "yesterday": "Yesterday",
    "week": "Previous 7 days",
    "older": "Older",
    "archived": "Archived",
}
Found = tuple[SessionRecord, Snippet]  # a chat and the snippet of where a search matched it (empty for none)


@dataclass(frozen=True)
class ChatGroup:
    key: GroupKey
    chats: tuple[Found, ...]

    @property
    def title(self) -> str:
        return GROUP_TITLES[self.key]


def day_group(updated_at: str, now: datetime) -> GroupKey:
    """The date group of a chat last active at ``updated_at`` (the journal's UTC text), seen
    at ``now`` (an aware local time): by calendar day where the person is, not by hours."""
    when = datetime.fromisoformat(updated_at).astimezone(now.tzinfo)
    days = (now.date() - when.date()).days
    if days <= 0:  # a clock set back shows a "future" chat as today's
        return "today"
    if days == 1:
        return "yesterday"
    return "week" if days <= 7 else "older"


def group_chats(found: Sequence[Found], now: datetime) -> list[ChatGroup]:
    """The groups that hold chats, in the list's order; each keeps ``found``'s order (the most
    recently active first), and pinned chats the order they were pinned in, the latest first."""
    groups: dict[GroupKey, list[Found]] = {key: [] for key in GROUP_TITLES}
    for chat in found:
        record = chat[0]
        if record.archived_at is not None:
            groups["archived"].append(chat)
        elif record.pinned_at is not None:
            groups["pinned"].append(chat)
        else:
            groups[day_group(record.updated_at, now)].append(chat)
    groups["pinned"].sort(key=lambda chat: chat[0].pinned_at or "", reverse=True)
    return [ChatGroup(key, tuple(chats)) for key, chats in groups.items() if chats]
