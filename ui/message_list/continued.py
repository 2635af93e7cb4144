"""A reply continued after it was cut off at the length limit, shown as one message.

Continue saves a prompt (a user row whose ``continues`` names the reply) and the model's
next reply goes on from there. On screen the prompt is hidden and each continuation is
folded into the reply it continues, its *head*: the head shows the parts' text joined with
no separator, their reasoning and calls, and the last part's state (streaming, cut off
again). Every row stays in the model as itself, at no height, so pages, keys and ``seq``
ranges work as for any row; ``join`` works the heads out again after rows come and go.

Joined with no separator, a part cut inside a code fence goes on inside it, as the head is
one Markdown text. Where the model opened the fence again at the start of its continuation,
the view leaves that line out, so the code reads as one block (``Joined.shown``); Copy and
export give the parts exactly as they are.
"""

from __future__ import annotations

import re
from copy import copy

from ui.message_list.display_message import DisplayMessage, Joined

__all__ = ["join", "open_fence"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def join(messages: list[DisplayMessage]) -> list[int]:
    """Fold each continuation into its head; the rows whose message shows something new."""
    heads: dict[str, DisplayMessage] = {}  # a reply's key -> the message that shows it
    parts: dict[int, list[DisplayMessage]] = {}  # a head (by id) -> its continuations, in order
    waiting: DisplayMessage | None = None  # the head the last prompt continues
    for message in messages:
        into: DisplayMessage | None = None
        if message.continues is not None:
            waiting = into = heads.get(message.continues)
        elif message.kind == "assistant" and waiting is not None:
            into, waiting = waiting, None
            parts.setdefault(id(into), []).append(message)
        elif message.kind != "error":  # a failed try leaves the prompt waiting for its retry
            waiting = None
        if message.kind == "assistant":
            heads[message.key] = into or message
        message.into = into
    changed = []
    for row, message in enumerate(messages):  # a part that was a head before (its own reply came back)
        if message.folded and _rejoin(message, []):
            changed.append(row)
    for row, message in enumerate(messages):
        if not message.folded and _rejoin(message, parts.get(id(message), [])):
            changed.append(row)
    return sorted(changed)


def _rejoin(head: DisplayMessage, parts: list[DisplayMessage]) -> bool:
    """Show ``parts`` joined to ``head``; whether what it shows changed."""
    joined = head.joined
    if joined is None and not parts:
        return False
    stamp = tuple((id(p), p.version, len(p.text), len(p.reasoning)) for p in parts)
    if joined is not None and stamp == joined.stamp:
        return False
    own = joined.own if joined is not None else copy(head)
    if not parts:  # its continuations were let go (or set aside): it shows itself again
        head.joined = None
        _show(head, own, [])
    else:
        head.joined = joined = joined or Joined(own, parts)
        joined.parts, joined.stamp = parts, stamp
        _show(head, own, parts)
        joined.shown = _shown(joined)
    head.touch()
    return True


def _show(head: DisplayMessage, own: DisplayMessage, parts: list[DisplayMessage]) -> None:
    last = parts[-1] if parts else own
    head.text = own.text + "".join(p.text for p in parts)
    head.reasoning = "\n\n".join(r for r in (own.reasoning, *(p.reasoning for p in parts)) if r)
    head.tool_calls = [*own.tool_calls, *(c for p in parts for c in p.tool_calls)]
    head.status, head.finish_reason, head.waited = last.status, last.finish_reason, last.waited


def _shown(joined: Joined) -> str:
    """The parts joined as the view renders them. Where a part was cut inside a code fence
    and its continuation starts by opening that fence again, the continuation goes on inside
    the fence instead. Where each part left a fence open is worked out once per part, so a
    continuation streaming in costs only its own text."""
    pieces = [joined.own.text]
    size = len(joined.own.text)
    before = id(joined.own)
    for part in joined.parts:
        fence = joined.fences.get((size, before), "?")
        if fence == "?":
            fence = joined.fences[(size, before)] = open_fence("".join(pieces))
        text = part.text
        first, newline, rest = text.partition("\n")
        again = _FENCE.fullmatch(first) if fence is not None and newline else None
        if again is not None and again.group(1) == fence:
            text = rest if pieces[-1].endswith("\n") else "\n" + rest
        pieces.append(text)
        size += len(text)
        before = id(part)
    return "".join(pieces)


def open_fence(text: str) -> str | None:
    """The code fence ``text`` ends inside (its opening run of backticks or tildes), if any."""
    fence: str | None = None
    for line in text.split("\n"):
        found = _FENCE.fullmatch(line)
        if found is None:
            continue
        run, info = found.groups()
        if fence is None:
            fence = run
        elif run[0] == fence[0] and len(run) >= len(fence) and not info.strip():
            fence = None
    return fence
