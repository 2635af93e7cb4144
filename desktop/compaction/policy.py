"""Compaction: a long chat summarised, with the effective state saved once (architecture §5).

When the next request would pass the compaction threshold (the context limit less the reply
reserve), or the person asks, or the provider says the prompt is too long, Cairn:

1. chooses the retained tail: whole turns from the end (each starts on a user message, so a
   tool call is never split from its result) while they fit the retained-tail budget; the
   latest turn always stays;
2. asks for a summary with the request as it stands plus a fixed, versioned prompt as a last
   user message (so the provider's cache covers all but the prompt), with ``tool_choice``
   ``none``; it streams through the adapter, can be cancelled, and its usage is recorded
   with kind ``compaction``;
3. commits one hidden checkpoint row (``host.content.Checkpoint``): every section's content,
   the declaration epoch, the summary, where the tail starts, with the usage, in one
   transaction, before any later request is sent.

The context after it is the state as leading system content (rendered as a session's first
request is, so an unchanged state sends the same bytes and its cached prefix still hits),
the summary as a user-role ``<conversation-summary>`` block leading the tail's first user
message, the tail, and what follows. Nothing is deleted: the rows before stay in the journal
and in the window. A crash before the commit leaves no checkpoint, and the next request
compacts again; after it, the checkpoint is whole.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from desktop.context.estimate import BYTES_PER_TOKEN, ContextBudget
from desktop.context.messages import Message, TextPart, message_from_row
from desktop.provider.errors import ContextOverflow, MalformedResponse
from desktop.settings.routes import ResolvedRoute
from host.canonical import canonical_json_bytes
from host.content import Checkpoint, SectionEntry
from host.errors import CairnError
from host.folds import last_checkpoint, superseded
from host.journal import utc_now
from host.rows import TranscriptRow
from host.usage import RequestUsage

__all__ = [
    "MAX_FOCUS_CHARS",
    "PROMPT_VERSION",
    "ContextFill",
    "NothingToCompact",
    "Reason",
    "TailChoice",
    "checkpoint_text",
    "choose_tail",
    "context_fill",
    "focus_problem",
    "longest_prompt_tokens",
    "make_checkpoint",
    "overflowed",
    "prompt_message",
    "stated_limit",
    "summary_prompt",
    "tail_messages",
    "too_long",
]

PROMPT_VERSION = 1
# A stream that ends with nothing while the prompt is this close to the limit is taken for an
# overflow: a server whose real context is smaller than Cairn was told does that. Compacting
# when it was something else costs one summary, never a message.
NEAR_LIMIT = 0.5
Reason = Literal["automatic", "manual", "overflow"]


class NothingToCompact(CairnError):
    """The conversation has nothing before its latest turn to summarise."""


MAX_FOCUS_CHARS = 2_000
EXCERPT = 80  # characters of the tail's first message the summary prompt quotes


def focus_problem(focus: str) -> str | None:
    """What is wrong with a focus note for a manual compaction, if anything."""
    if len(focus) > MAX_FOCUS_CHARS:
        return f"The focus note is {len(focus):,} characters; keep it under {MAX_FOCUS_CHARS:,}, a sentence or two."
    if any("\ud800" <= ch <= "\udfff" for ch in focus) or "\x00" in focus:
        return "The focus note is not plain text; write it again as text."
    return None


def summary_prompt(tail_start: str | None, focus: str | None = None) -> str:
    """The fixed prompt of version ``PROMPT_VERSION``, added as the last user message."""
    lines = [
        "Cairn needs to shorten this conversation to keep going. Write a summary of the conversation above that "
        "lets you continue it without the earlier messages: the person's goals and preferences, decisions made "
        "and why, facts, names, numbers, file paths and code that still matter, what tools found or changed, and "
        "what is still open. Write it as plain notes addressed to yourself, in the conversation's language. Do not "
        "call tools, and do not answer or continue the conversation itself.",
    ]
    if tail_start:
        lines.append(
            "The most recent messages, from the person's message that begins "
            f"{_excerpt(tail_start)!r}, will be kept word for word after your summary: summarise what comes before "
            "them, and only mention them if something earlier needs it."
        )
    if focus:
        lines.append(f"The person asks the summary to keep especially: {focus.strip()}")
    return "\n\n".join(lines)


@dataclass(frozen=True)
class TailChoice:
    tail_from: str | None  # the first row of the retained tail; None: nothing is retained
    summarised: int  # how many turns go into the summary
    tail_tokens: int  # the tail's estimated size


def choose_tail(rows: list[TranscriptRow], budget: int) -> TailChoice:
    """The retained tail of ``rows`` (a session's rows in model order): whole turns from the
    end while they fit ``budget`` tokens; the latest turn always. ``NothingToCompact`` when
    no earlier turn is left to summarise."""
    gone = superseded(rows)
    at = last_checkpoint(rows, gone)
    start = 0
    if at is not None:
        checkpoint = rows[at].meta()
        assert isinstance(checkpoint, Checkpoint)
        start = next((i for i, r in enumerate(rows) if r.id == checkpoint.tail_from), at + 1)
    turns: list[tuple[str, int]] = []  # each turn's first row and its estimated tokens
    for index, row in enumerate(rows[start:], start=start):
        if row.id in gone or (at is not None and index < at and row.role == "system"):
            continue
        message = message_from_row(row)
        if message is None:
            continue
        size = _tokens(message)
        if message.role == "user" and not row.hidden:
            turns.append((row.id, size))
        elif turns:
            first, total = turns[-1]
            turns[-1] = (first, total + size)
    had_summary = at is not None  # an earlier summary is itself something to fold in
    if not turns or (len(turns) == 1 and not had_summary):
        raise NothingToCompact("There is nothing before the latest message to summarise yet.")
    kept, used = len(turns) - 1, turns[-1][1]
    while kept > 0 and used + turns[kept - 1][1] <= budget:
        kept -= 1
        used += turns[kept][1]
    if kept == 0:
        if had_summary and len(turns) < 2:
            raise NothingToCompact("Everything before the latest message is summarised already.")
        kept, used = 1, sum(size for _, size in turns[1:])  # at least one more turn goes into the summary
    return TailChoice(turns[kept][0], kept, used)


def tail_messages(rows: list[TranscriptRow], tail_from: str | None) -> int:
    """How many of the context's last messages the tail starting at ``tail_from`` gives."""
    if tail_from is None:
        return 0
    gone = superseded(rows)
    at = last_checkpoint(rows, gone)
    start = next((i for i, r in enumerate(rows) if r.id == tail_from), len(rows))
    return sum(
        1
        for i, row in enumerate(rows[start:], start=start)
        if not (at is not None and i < at and row.role == "system")
        and row.id not in gone
        and message_from_row(row) is not None
    )


def make_checkpoint(
    state: dict[str, JsonValue],
    order: list[str],
    *,
    epoch: int,
    summary: str,
    tail_from: str | None,
    reason: Reason,
    tokens_before: int,
    tokens_after: int,
) -> Checkpoint:
    """The checkpoint row's metadata. ``order``: the sections in rendering order."""
    return Checkpoint(
        sections=[SectionEntry(section=name, content=state[name]) for name in order if state.get(name) is not None],
        epoch=epoch,
        summary=summary,
        tail_from=tail_from,
        prompt_version=PROMPT_VERSION,
        reason=reason,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        created_at=utc_now(),
    )


# How servers state their context when they refuse a prompt: OpenAI's and vLLM's "maximum
# context length is N tokens", llama.cpp's "available context size (N tokens)", "n_ctx: N".
_STATED = re.compile(
    r"maximum context length is (\d[\d,]*)|context (?:size|window|length)\D{0,20}?(\d[\d,]{2,})\s*tokens|"
    r"n_ctx\D{0,5}(\d{3,})",
    re.IGNORECASE,
)


def stated_limit(error: Exception) -> int | None:
    """The context a server said it has when it refused a prompt as too long, if it said."""
    text = f"{error} {getattr(error, 'body', '')}"
    found = _STATED.search(text)
    if found is None:
        return None
    number = int(next(g for g in found.groups() if g).replace(",", ""))
    return number if 256 <= number <= 10_000_000 else None


def overflowed(error: Exception, estimate: int, budget: ContextBudget) -> bool:
    """Whether ``error`` says the prompt was too long: the provider said so, or a stream
    ended with nothing while the prompt was near the limit."""
    if isinstance(error, ContextOverflow):
        return True
    return isinstance(error, MalformedResponse) and estimate >= budget.limit * NEAR_LIMIT


@dataclass(frozen=True)
class ContextFill:
    """How full a chat's context is: about ``used`` tokens of ``limit`` (from ``source``);
    past ``threshold`` the next request compacts first."""

    used: int
    limit: int
    source: str
    threshold: int


def context_fill(
    checkpoint: Checkpoint | None, requests: list[RequestUsage], budget: ContextBudget
) -> ContextFill | None:
    """The chat's fill after its latest request: the provider's count of that request's
    prompt and reply, or the estimate of the chat's last ``checkpoint`` when that compaction
    came after it. ``None`` before anything was counted."""
    counted = [r for r in requests if r.kind == "chat" and r.prompt_tokens is not None]
    last = counted[-1] if counted else None
    if checkpoint is not None and (last is None or last.created_at < checkpoint.created_at):
        used = checkpoint.tokens_after
    elif last is not None and last.prompt_tokens is not None:
        used = last.prompt_tokens + (last.output_tokens or 0)
    else:
        return None
    return ContextFill(used, budget.limit, budget.source, budget.threshold)


def checkpoint_text(rows: list[TranscriptRow]) -> str:
    """The checkpoint a context built from ``rows`` starts from, in words ("" when none)."""
    at = last_checkpoint(rows)
    if at is None:
        return ""
    checkpoint = rows[at].meta()
    assert isinstance(checkpoint, Checkpoint)
    when = checkpoint.created_at[:19].replace("T", " ")
    return (
        f"row {rows[at].id} ({checkpoint.reason}, {when} UTC) · epoch {checkpoint.epoch or 'none'} · about "
        f"{checkpoint.tokens_before:,} → {checkpoint.tokens_after:,} tokens · summary of "
        f"{len(checkpoint.summary):,} characters · retained tail from row {checkpoint.tail_from or 'none'}"
    )


def too_long(route: ResolvedRoute, estimate: int, budget: ContextBudget, *, compacted: bool) -> str:
    """What to say when a chat does not fit, with the sizes. When the estimate fits the
    route's context, the server's own context is smaller than the route says: say so, since
    that is the setting to change."""
    done = "even after summarising earlier messages" if compacted else "and there was nothing left to summarise"
    model = route.actual.model
    if estimate <= budget.limit:
        return (
            f"The conversation is longer than the model's context on the server for {model}: it refused about "
            f"{estimate:,} tokens although the route allows {budget.limit:,} ({budget.source}), {done}. Set the "
            "route's context size to what the server loads, start a new chat, or shorten the last message."
        )
    return (
        f"The conversation is longer than the model's context for {model}: about {estimate:,} tokens against a "
        f"{budget.limit:,}-token context ({budget.source}), {done}. Start a new chat, shorten the last message, "
        "or use a model with a larger context."
    )


def prompt_message(tail_start: str | None, focus: str | None) -> Message:
    return Message(role="user", parts=[TextPart(text=summary_prompt(tail_start, focus))])


def longest_prompt_tokens(focus: str | None) -> int:
    """The summary prompt's estimated size whatever the tail starts with (its excerpt of the
    tail's first message is at most ``EXCERPT`` characters)."""
    return _tokens(prompt_message("x" * (EXCERPT + 1), focus))


def _tokens(message: Message) -> int:
    return math.ceil(len(canonical_json_bytes(message)) / BYTES_PER_TOKEN)


def _excerpt(text: str) -> str:
    first = " ".join(text.split())
    return first if len(first) <= EXCERPT else first[: EXCERPT - 1] + "…"
