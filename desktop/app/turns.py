"""Turns: sending a message and everything else that asks the model (retry, regenerate, edit,
compact, a title), stopping a turn, and a person's answers to the calls parked on them.

A chat runs one turn at a time, whichever window asked for it; every window showing the chat
is told when a turn begins and ends (``TurnBusy``). Each turn gets a fresh runtime from the
composition root, so a changed key or tool schema always reaches the next request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from desktop.app.attachments import Attachment
from desktop.app.chat_options import ChatOptions
from desktop.app.preferences import Preferences
from desktop.app.shared import AppState, TurnInProgress
from desktop.app.titles import auto_title, first_message_title
from desktop.catalog.transport import BUILTIN_ENDPOINT
from desktop.compaction.compactor import CompactionFailed
from desktop.compaction.policy import NothingToCompact, focus_problem
from desktop.provider.errors import ProviderError
from desktop.provider.usage import Usage
from desktop.settings.store import Account
from desktop.turn.approvals import SUPERSEDED, Approval, Choice
from desktop.turn.events import RuntimeEvent
from desktop.turn.outcome import TurnOutcome
from desktop.turn.runtime import ChatRuntime
from host.content import Checkpoint
from host.permissions import PermissionPolicy
from host.tools.questions import Answer, Question

__all__ = ["STOPPED", "SessionEvent", "TurnBusy", "TurnRoute", "Turns"]

STOPPED = "Stopped."


@dataclass(frozen=True)
class SessionEvent:
    session_id: str
    event: RuntimeEvent


@dataclass(frozen=True)
class TurnRoute:
    """A route given for one turn (the command line's ``--account`` and ``--model``), in place
    of the chat's own; the chat does not keep it. ``key`` overrides the account's, when set."""

    account: Account
    model: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class TurnBusy:
    """A chat began or ended a turn (a reply or a compaction), whichever window asked for it:
    every window showing the chat shows it busy until it ends."""

    session_id: str
    busy: bool


class Turns:
    def __init__(self, shared: AppState, options: ChatOptions, preferences: Preferences, *, titles: bool) -> None:
        self._shared, self._options, self._preferences = shared, options, preferences
        self._titles = titles  # False: never ask a model for titles (tests that count every request)
        self._running: dict[str, asyncio.Task[TurnOutcome]] = {}
        self._stopped: set[str] = set()  # chats whose turn the person stopped

    # -- asking the model ------------------------------------------------------------------

    async def send(
        self,
        session_id: str,
        text: str,
        attachments: tuple[Attachment, ...] = (),
        *,
        via: TurnRoute | None = None,
    ) -> TurnOutcome:
        await self._supersede_waiting(session_id)
        journal = self._shared.journal
        session = journal.session(session_id)
        if session is not None and not session.title:
            named = text if text.strip() else ", ".join(a.name or "image" for a in attachments)
            journal.rename_session(session_id, first_message_title(named))
        return await self._turn(
            session_id, lambda runtime: runtime.send(session_id, text, attachments=attachments), via=via
        )

    async def retry(self, session_id: str, *, via: TurnRoute | None = None) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.retry(session_id), via=via)

    async def continue_reply(self, session_id: str, *, via: TurnRoute | None = None) -> TurnOutcome:
        """Ask the model to go on with the chat's last reply, cut off at the length limit; the
        window shows what follows joined to it (``desktop.turn.continuation``)."""
        return await self._turn(session_id, lambda runtime: runtime.continue_reply(session_id), via=via)

    async def regenerate(self, session_id: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.regenerate(session_id))

    async def edit_last(self, session_id: str, text: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.edit_last(session_id, text))

    async def edit(self, session_id: str, row_id: str, text: str) -> TurnOutcome:
        """A new version of the user message ``row_id``, answered; the earlier one stays a switch away."""
        return await self._turn(session_id, lambda runtime: runtime.edit(session_id, row_id, text))

    async def compact(self, session_id: str, focus: str | None = None) -> str:
        """Summarise the chat's earlier messages now (the Compact action); the sentence to
        show when nothing was compacted, else "". Stop cancels it as it does a reply."""
        problem = focus_problem(focus) if focus else None
        if problem is not None:
            return problem

        async def run(runtime: ChatRuntime) -> TurnOutcome:
            try:
                await runtime.compact(session_id, focus or None)
            except NothingToCompact as exc:
                return TurnOutcome(False, (), Usage(), None, f"Nothing was compacted. {exc}")
            except CompactionFailed as exc:
                return TurnOutcome(
                    False, (), Usage(), None, f"The chat was not compacted, and nothing was changed. {exc}"
                )
            return TurnOutcome(True, (), Usage(), None)

        outcome = await self._turn(session_id, run)
        if outcome.ok:
            return ""
        return "Compaction stopped; nothing was changed." if outcome.error == STOPPED else outcome.error or ""

    async def compact_now(
        self, session_id: str, focus: str | None = None, *, via: TurnRoute | None = None
    ) -> Checkpoint:
        """Summarise now and return the checkpoint; ``NothingToCompact`` or ``CompactionFailed``
        (with a message to show) say why not, and the chat is then as it was."""
        problem = focus_problem(focus) if focus else None
        if problem is not None:
            raise CompactionFailed(problem)
        made: list[Checkpoint] = []

        async def run(runtime: ChatRuntime) -> TurnOutcome:
            checkpoint = (await runtime.compact(session_id, focus or None)).meta()
            assert isinstance(checkpoint, Checkpoint)
            made.append(checkpoint)
            return TurnOutcome(True, (), Usage(), None)

        outcome = await self._turn(session_id, run, via=via)
        if not made:
            raise CompactionFailed(outcome.error or "The compaction stopped.")
        return made[0]

    async def auto_title(self, session_id: str) -> str | None:
        """After the chat's first exchange, a short title from its own route when the settings
        allow it there (see ``desktop.app.titles``); the new title, or ``None``."""
        shared, root = self._shared, self._shared.root
        view = self._options.route(session_id)
        account = shared.settings.account(view.account_id) if view.account_id else None
        if not self._titles or view.route is None or account is None:
            return None
        route = view.route
        if route.actual.base_url == BUILTIN_ENDPOINT and not root.library.chats(route.actual.model):
            return None  # a base model would echo the chat back as its title
        return await auto_title(
            shared.journal, shared.states.get(session_id).rows, session_id, setting=shared.settings.auto_titles,
            route=route, redactor=root.redactor,
            client=lambda: root.client(route, root.api_key(account), account.first_token_timeout),
        )  # fmt: skip

    # -- approvals -------------------------------------------------------------------------

    def waiting(self, session_id: str) -> list[str]:
        """The call ids of the chat waiting on a person's answer in this run."""
        return self._shared.root.approvals.waiting(session_id)

    async def answer_approval(self, session_id: str, call_id: str, choice: Choice) -> TurnOutcome | None:
        """A person's answer to a parked call. In this run the waiting turn goes on; a call
        parked before a restart resumes its turn now."""
        if self._shared.root.approvals.answer(session_id, call_id, Approval(choice)):
            return None
        return await self._turn(session_id, lambda runtime: runtime.resume(session_id, call_id, Approval(choice)))

    async def _supersede_waiting(self, session_id: str) -> None:
        """A new message denies the calls waiting in this run, ends their turn, then goes out.
        A form waiting on the person stops its turn (as Stop does): its call ends, and the
        server's question is declined with it."""
        approvals = self._shared.root.approvals
        waiting = approvals.waiting(session_id)
        for call_id in waiting:
            approvals.answer(session_id, call_id, Approval("deny", SUPERSEDED))
        asked = bool(self.questions(session_id)) and self.cancel(session_id)
        task = self._running.get(session_id)
        if (waiting or asked) and task is not None:
            with contextlib.suppress(asyncio.CancelledError, ProviderError):
                await task

    # -- questions of running calls --------------------------------------------------------

    def questions(self, session_id: str) -> list[tuple[str, Question]]:
        """The questions of the chat's running calls waiting on the person, oldest first."""
        return self._shared.root.elicitations.waiting(session_id)

    def answer_question(self, session_id: str, question_id: str, answer: Answer) -> bool:
        """The person's answer to a running call's question; ``False`` if it no longer waits
        (the call ended). ``AnswerInvalid`` when an accepted answer does not fit the form."""
        return self._shared.root.elicitations.answer(session_id, question_id, answer)

    # -- running ---------------------------------------------------------------------------

    def cancel(self, session_id: str) -> bool:
        task = self._running.get(session_id)
        if task is None or task.done():
            return False
        self._stopped.add(session_id)
        task.cancel()
        return True

    def busy(self, session_id: str) -> bool:
        task = self._running.get(session_id)
        return task is not None and not task.done()

    async def stop_all(self) -> None:
        """Stop every turn (what arrived is already kept, marked interrupted)."""
        for task in list(self._running.values()):
            task.cancel()
        for task in list(self._running.values()):
            with contextlib.suppress(asyncio.CancelledError, ProviderError):
                await task

    def _policy(self) -> PermissionPolicy:
        return self._shared.settings.permission_policy()  # the settings as they are now, not at turn start

    async def _turn(
        self,
        session_id: str,
        run: Callable[[ChatRuntime], Awaitable[TurnOutcome]],
        *,
        via: TurnRoute | None = None,
    ) -> TurnOutcome:
        if self.busy(session_id):
            raise TurnInProgress("This chat is already answering; wait for the reply or stop it first.")
        shared = self._shared
        if via is None:
            route, account = self._options.next_route(session_id)
            key = shared.root.api_key(account)
        else:
            route, account = shared.root.route(via.account, via.model), via.account
            shared.root.redactor.add(via.key)  # a key typed for this run only is a secret too
            key = via.key or shared.root.api_key(account)
        # A fresh runtime each turn: the key may have changed in Settings, and a tool whose
        # schema changed must never run from an idle runtime's copy.
        runtime = shared.root.runtime(
            route,
            key,
            lambda: shared.system,
            lambda event: shared.emit(SessionEvent(session_id, event)),
            first_token=account.first_token_timeout,
            policy=self._policy,
            remember=self._preferences.remember,
            states=shared.states,
        )
        task = asyncio.ensure_future(run(runtime))
        self._running[session_id] = task
        shared.emit(TurnBusy(session_id, True))
        try:
            with shared.states.holding(session_id):
                return await task
        except asyncio.CancelledError:
            if session_id not in self._stopped:
                raise  # the app itself is closing
            return TurnOutcome(False, (), Usage(), None, STOPPED)
        finally:
            self._running.pop(session_id, None)
            self._stopped.discard(session_id)
            shared.emit(TurnBusy(session_id, False))
