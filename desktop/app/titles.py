"""Chat titles: the first message's first line at once, then, after the first exchange, a
few words from the chat's own model when the settings allow it.

The title request is small and separate from the conversation (its own short prompt, at
most ``TITLE_MAX_TOKENS`` tokens out), so it never touches the chat's transcript or its
cache; its usage is recorded as kind ``title``. By default (``free_routes``) it is asked
only of routes that cost nothing: models.dev prices of zero, or no known price on a server
on this machine or the local network. A title the person chose is never overwritten, and a
title request that fails changes nothing but a line in the log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from desktop.context.messages import Context, Message, SystemUpdatePart, TextPart, context_from_rows
from desktop.context.projection import ProjectedRequest, project
from desktop.provider.limits import is_local
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import ReplyAssembler
from desktop.settings.redaction import Redactor
from desktop.settings.routes import ResolvedRoute
from desktop.settings.store import AutoTitles
from desktop.turn.reply import record_usage, stream_reply
from host.journal import Journal
from host.rows import TranscriptRow

__all__ = [
    "TITLE_MAX_TOKENS",
    "AutoTitles",
    "auto_title",
    "branch_title",
    "clean_title",
    "first_exchange",
    "first_message_title",
    "is_free",
    "title_request",
    "titles_allowed",
]

log = logging.getLogger(__name__)

TITLE_MAX_TOKENS = 16
TITLE_CHARS = 60  # the longest title kept, as the first message's
BRANCH_OF = "Branch of “{}”"
BRANCH_SOURCE_CHARS = 40  # of the original's title, in a branch's: the list shows about that much
EXCERPT_CHARS = 1_500  # of the question and of the answer: plenty to name a chat
TITLE_PROMPT = (
    "You name conversations. Reply with a title of three to six words for the conversation the "
    "person shows you, in the language it is written in: no quotation marks, no final full stop, "
    "nothing else."
)


def first_message_title(text: str) -> str:
    """A new chat's title until a better one comes: the first line of its first message."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _shortened(first)


def branch_title(original: str) -> str:
    """A branch's title: what it is a branch of, the original's title shortened. A branch of a
    branch keeps the title it has rather than nesting quotes (it still names the first chat)."""
    original = original.strip()
    if not original:
        return "Branch of an untitled chat"
    if original.startswith(BRANCH_OF.format("")[:-1]) and original.endswith("”"):
        return original
    source = original if len(original) <= BRANCH_SOURCE_CHARS else original[: BRANCH_SOURCE_CHARS - 1].rstrip() + "…"
    return BRANCH_OF.format(source)


def is_free(route: ResolvedRoute) -> bool:
    """Whether requests on ``route`` cost nothing: models.dev prices it at zero, or it has no
    known price and runs on this machine or the local network."""
    cost = route.model_info.cost if route.model_info else None
    if cost is not None and cost.input is not None and cost.output is not None:
        return cost.input == 0 and cost.output == 0
    return is_local(route.actual.base_url)


def titles_allowed(setting: AutoTitles, route: ResolvedRoute) -> bool:
    return setting == "always" or (setting == "free_routes" and is_free(route))


def first_exchange(rows: list[TranscriptRow]) -> tuple[str, str] | None:
    """The question and answer of a chat's ``rows`` (in model order) when it holds exactly one
    message from the person and an answer with text; ``None`` otherwise (no answer yet, or
    past its first exchange)."""
    messages = context_from_rows(rows).messages
    questions = [m.text() for m in messages if m.role == "user"]
    answers = [text for m in messages if m.role == "assistant" and (text := m.text().strip())]
    if len(questions) != 1 or not questions[0].strip() or not answers:
        return None
    return questions[0].strip(), answers[-1]


def title_request(route: ResolvedRoute, question: str, answer: str) -> ProjectedRequest:
    """The title request for ``route``: the prompt, then an excerpt of the exchange."""
    exchange = f"The person wrote:\n{question[:EXCERPT_CHARS]}\n\nThe assistant answered:\n{answer[:EXCERPT_CHARS]}"
    context = Context(
        messages=[
            Message(role="system", parts=[SystemUpdatePart(section="instructions", content=TITLE_PROMPT)]),
            Message(role="user", parts=[TextPart(text=exchange)]),
        ]
    )
    short = route.model_copy(update={"max_output_tokens": TITLE_MAX_TOKENS})
    return project(context, short)


def clean_title(text: str) -> str | None:
    """The title in a model's answer: its first line without quotes, Markdown, a "Title:"
    label or a final full stop; ``None`` when nothing is left."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = re.sub(r"^#+\s*", "", line)
    line = re.sub(r"^[*_]*title[*_]*\s*:[*_]*\s*", "", line, flags=re.IGNORECASE)
    line = line.strip("\"'`*_ \u201c\u201d\u2018\u2019\u00ab\u00bb").rstrip(".").strip()
    return _shortened(line) or None


async def auto_title(
    journal: Journal,
    rows: list[TranscriptRow],
    session_id: str,
    *,
    setting: AutoTitles,
    route: ResolvedRoute,
    client: Callable[[], OpenAICompatClient],
    redactor: Redactor,
) -> str | None:
    """Ask ``route`` for the title of the chat of ``rows`` after its first exchange, when
    ``setting`` allows it on this route and the title is still the first message's; the new title once saved, else
    ``None``. Never raises for a failed request or a full disk: the chat keeps its title."""
    if journal.read_only or not titles_allowed(setting, route):
        return None
    exchange = first_exchange(rows)
    session = journal.session(session_id)
    if exchange is None or session is None or session.title != first_message_title(exchange[0]):
        return None  # not the first exchange, or the person chose the title
    question, answer = exchange
    request = title_request(route, question, answer)
    assembler = ReplyAssembler(route.key)
    try:
        finished = await stream_reply(client(), request, assembler, redactor, lambda _event: None)
        record_usage(journal, session_id, None, finished=finished, request=request, route=route, kind="title")
        text = "".join(p.text for p in assembler.parts(complete=True) if isinstance(p, TextPart))
        title = clean_title(redactor.redact(text))
        if title is None:
            log.info("session %s: the title request answered no title; the first message stays the title", session_id)
            return None
        return title if journal.replace_title(session_id, session.title, title) else None
    except Exception as exc:  # noqa: BLE001 - a title is a nicety: nothing about it may disturb the chat
        log.warning("session %s: no title from %s: %s", session_id, route.key, redactor.redact(str(exc)))
        return None


def _shortened(text: str) -> str:
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"
