"""One MCP server's requests for input (``elicitation/create``), and its calls' time limits,
which pause while a person answers.

The SDK answers a server's request on a task of its own, which knows nothing of the call the
server is working on: over stdio nothing on the wire says. So each call to the server is
recorded while it runs, with the asker the turn set around it (``host.tools.questions``), and
a request goes to the asker of the one call in flight. With no call in flight (the server asks
on its own) there is no chat to ask in, and nothing the answer would be for: the request is
declined, and the log says so. The same when calls of two chats are in flight (Cairn cannot
tell which one asks), for a URL (Cairn answers forms only) and for a form Cairn cannot show.

While a person answers, the time limits of the server's calls in flight stand still, and run
on from where they stood once the answer is in. A call that ends first (stopped, timed out
before the question came, the server gone) withdraws its questions: they are declined.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio
from mcp import types as mcp_types
from mcp.client.session import ClientRequestContext

from host.tools.forms import Form, FormUnusable, parse_form
from host.tools.questions import Answer, Asker, Question, asker

__all__ = ["Elicitations"]

log = logging.getLogger(__name__)

MAX_MESSAGE = 2_000  # what a person is shown of a server's message


@dataclass(eq=False)
class _Call:
    """A call in flight: whom it may ask, its time limit, and the questions it has open."""

    ask: Asker | None
    scope: anyio.CancelScope
    left: float | None = None  # seconds the limit had when it was paused
    questions: set[anyio.CancelScope] = field(default_factory=set)

    def pause(self) -> None:
        if self.left is None:
            self.left = self.scope.deadline - anyio.current_time()
            self.scope.deadline = math.inf

    def resume(self) -> None:
        if self.left is not None:
            self.scope.deadline = anyio.current_time() + max(self.left, 0.0)
            self.left = None


class Elicitations:
    """The questions of the server ``server``: ``answer`` is the SDK's elicitation callback
    (which declares the capability), ``limit`` replaces ``anyio.fail_after`` around a call."""

    def __init__(self, server: str, redact: Callable[[str], str]) -> None:
        self.server = server
        self._redact = redact
        self._calls: list[_Call] = []
        self._open = 0  # questions a person is answering now

    @contextmanager
    def limit(self, timeout: float) -> Iterator[None]:
        """Run a call within ``timeout`` seconds, not counting the time a person spends
        answering the server; ``TimeoutError`` past it. Enter it on the call's task."""
        with anyio.fail_after(timeout) as scope:
            call = _Call(asker(), scope)
            if self._open:
                call.pause()
            self._calls.append(call)
            try:
                yield
            finally:
                self._calls.remove(call)
                for question in call.questions:
                    question.cancel()

    async def answer(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """The server's request, put to the person through the asker of the call in flight."""
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            return self._declined("it asked to open a web page, and Cairn answers forms only")
        try:
            form = parse_form(params.requested_schema)
        except FormUnusable as exc:
            return self._declined(str(exc))
        askers = [call for call in self._calls if call.ask is not None]
        if not askers:
            return self._declined("it asked outside any tool call, so no chat could show it")
        if len(askers) > 1:
            return self._declined("calls of more than one chat were running, and it did not say which one asks")
        call = askers[0]
        assert call.ask is not None
        message = self._redact(params.message.strip())[:MAX_MESSAGE]
        question = Question(self.server, message, form)
        answer = Answer("decline", note="the call ended before an answer")
        with anyio.CancelScope() as waiting:
            call.questions.add(waiting)
            self._paused(True)
            try:
                answer = await call.ask(question)
            except Exception:  # a broken asker declines; the call goes on
                log.exception("asking about the MCP server %s's request for input failed", self.server)
            finally:
                call.questions.discard(waiting)
                self._paused(False)
        return _result(answer, form)

    def _paused(self, asking: bool) -> None:
        self._open += 1 if asking else -1
        for call in self._calls:
            if self._open:
                call.pause()
            else:
                call.resume()

    def _declined(self, why: str) -> mcp_types.ElicitResult:
        log.info("declined the MCP server %s's request for input: %s", self.server, why)
        return mcp_types.ElicitResult(action="decline")


def _result(answer: Answer, form: Form) -> mcp_types.ElicitResult:
    """The answer as the server reads it; an accepted answer is checked once more here, where
    it leaves Cairn, and one that does not pass is declined."""
    if answer.action != "accept":
        return mcp_types.ElicitResult(action=answer.action)
    content, problems = form.check(answer.content)
    if problems:
        log.warning("an answer that does not fit its form was declined: %s", sorted(problems))
        return mcp_types.ElicitResult(action="decline")
    return mcp_types.ElicitResult(action="accept", content=content)
