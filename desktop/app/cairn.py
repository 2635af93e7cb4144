"""The application the window drives: sessions, turns, routes, accounts and skills.

Everything here runs on the core's asyncio loop (one worker thread), never on the GUI
thread. Events of every turn reach ``on_event`` tagged with their session, and every change
of what the window shows (accounts, the route, settings) is published as an ``AppSnapshot``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, get_args

import httpx
from pydantic import ValidationError

from desktop.app.assistants import make_assistant, start_from, with_assistant, without_assistant
from desktop.app.attachments import Attachment, attach_bytes, attach_path, left_out_notice
from desktop.app.export import to_json, to_markdown
from desktop.app.snapshot import AccountView, AppSnapshot
from desktop.app.titles import AutoTitles, auto_title, first_message_title
from desktop.compaction.compactor import CompactionFailed
from desktop.compaction.policy import ContextFill, NothingToCompact, context_fill, focus_problem
from desktop.context.system_state import SystemState
from desktop.provider.errors import ProviderError
from desktop.provider.limits import is_local
from desktop.provider.local_probe import ServerReport, probe_server
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.usage import Usage
from desktop.root import Services
from desktop.session.chat_route import ChatRouteView, remembered_route, resolve_chat_route
from desktop.session.chat_settings import ChatSettingsView, chat_settings_of, make_chat_settings, settings_view
from desktop.settings.mcp_import import ImportPlan, read_import
from desktop.settings.mcp_servers import McpServerSetting
from desktop.settings.problems import problem_text
from desktop.settings.routes import ResolvedRoute, RouteError
from desktop.settings.store import (
    MAX_TOKENS,
    MIN_TOKENS,
    TEXT_SIZE_MAX,
    TEXT_SIZE_MIN,
    Account,
    Assistant,
    Settings,
    SettingsError,
    SummaryRoute,
)
from desktop.tools.mcp_hub import ServerView
from desktop.turn.approvals import SUPERSEDED, Approval, Choice, WaitingApprovals
from desktop.turn.events import RuntimeEvent
from desktop.turn.runtime import ChatRuntime, TurnOutcome
from desktop.turn.tool_calls import ParkedCall, parked_calls
from host.attachments import AttachmentStore
from host.branching import branch_session
from host.content import (
    ChatGrant,
    ChatRoute,
    Mode,
    PermissionMode,
    ReasoningEffort,
    ToolIdentity,
    parse_model_system,
)
from host.files import atomic_write_text
from host.journal import SessionRecord
from host.mcp import ServerStatus
from host.permissions import PermissionPolicy, Permissions
from host.skills import SkillCatalog
from host.transcript import TranscriptRow, TranscriptWriter
from host.usage import RequestUsage, UsageLedger, UsageTotals
from host.versions import NotAVersion, Versions, switch_version

__all__ = ["LOCAL_PORTS", "CairnApp", "LocalServer", "NoRoute", "SessionEvent", "TurnBusy"]

# Local servers Cairn offers on first start when they answer: Ollama, LM Studio, llama.cpp.
LOCAL_PORTS = {"ollama": 11434, "lmstudio": 1234, "llamacpp": 8080}


class NoRoute(Exception):
    """There is no account to send to yet."""


@dataclass(frozen=True)
class SessionEvent:
    session_id: str
    event: RuntimeEvent


@dataclass(frozen=True)
class TurnBusy:
    """A chat began or ended a turn (a reply or a compaction), whichever window asked for it:
    every window showing the chat shows it busy until it ends."""

    session_id: str
    busy: bool


@dataclass(frozen=True)
class LocalServer:
    preset: str
    name: str
    base_url: str
    models: tuple[str, ...]


STOPPED = "Stopped."


class CairnApp:
    def __init__(
        self,
        services: Services,
        *,
        on_event: Callable[[object], None] | None = None,
        workspace: Path | None = None,
        titles: bool = True,
    ) -> None:
        self.services = services
        self.titles = titles  # False: never ask a model for titles (tests that count every request)
        self.paths = services.paths
        self.journal = services.open_journal()
        self.writer = TranscriptWriter(self.journal)
        self.ledger = UsageLedger(self.journal)
        self.attachments = AttachmentStore.beside(self.journal.path)
        self.secrets = services.secrets
        self.settings: Settings = services.load_settings()
        self.state: SystemState = services.system_state(self.settings, workspace)
        self._on_event = on_event or (lambda _event: None)
        self._running: dict[str, asyncio.Task[TurnOutcome]] = {}
        self._stopped: set[str] = set()  # sessions whose turn the person stopped
        # The route used last: new chats start on it; each chat then keeps its own.
        self.account_id: str | None = self.settings.default_account
        self.model: str | None = None
        # The window's approver: a parked call waits on a future the approval card resolves.
        self.approvals = WaitingApprovals()
        services.approver = self.approvals

    # -- what the window shows -----------------------------------------------------------

    def snapshot(self) -> AppSnapshot:
        """The state the window renders; it reads the keychain, so it is made on the core."""
        route: ResolvedRoute | None = None
        problem: str | None = None
        try:
            route = self.route()
        except (NoRoute, RouteError, ValueError) as exc:
            problem = str(exc)
        services = self.services
        providers = [p.id for p in services.transport.providers]
        return AppSnapshot(
            accounts=tuple(AccountView(a, bool(self.secrets.get(a.id))) for a in self.settings.accounts),
            account_id=self.account_id,
            model=self.model,
            route=route,
            route_problem=problem,
            custom_instructions=self.settings.custom_instructions,
            theme=self.settings.theme,
            text_size=self.settings.text_size,
            workspace=self.settings.workspace,
            skills_dir=self.paths.skills_dir,
            keychain_problem=self.secrets.keychain_problem(),
            read_only=self.journal.read_only_reason if self.journal.read_only else None,
            transport=services.transport,
            models_dev=services.models_dev,
            catalog_models={p: tuple(services.catalog_models(p)) for p in [*providers, "custom"]},
            default_mode=self.settings.default_mode,
            tool_grants=tuple(self.settings.tool_grants),
            reply_reserve=self.settings.reply_reserve,
            retained_tail=self.settings.retained_tail,
            summary_route=self.settings.summary_route,
            assistants=tuple(self.settings.assistants),
        )

    def publish(self) -> AppSnapshot:
        snapshot = self.snapshot()
        self._on_event(snapshot)
        return snapshot

    # -- routes --------------------------------------------------------------------------

    def account(self) -> Account | None:
        return self.settings.account(self.account_id) if self.account_id else None

    def route(self) -> ResolvedRoute:
        account = self.account()
        if account is None:
            raise NoRoute("Add an account in Settings to start chatting.")
        return self.services.route(account, self.model)

    def choose(self, account_id: str, model: str | None) -> ResolvedRoute:
        """Make this account and model the route used last, the one new chats start on."""
        self.account_id, self.model = account_id, model
        route = self.route()
        self.publish()
        return route

    def chat_route(self, session_id: str) -> ChatRouteView:
        """The chat's own account and model, resolved (see ``desktop.session.chat_route``)."""
        remembered, stored = remembered_route(self.writer.model_order(session_id), self.ledger.requests(session_id))
        view = resolve_chat_route(remembered, stored, self.settings, (self.account_id, self.model))
        account = self.settings.account(view.account_id) if view.account_id else None
        if account is None:
            return view
        try:
            return replace(view, route=self.services.route(account, view.model))
        except (RouteError, ValueError) as exc:
            return replace(view, problem=str(exc))

    def set_chat_route(self, session_id: str, account_id: str, model: str | None) -> ChatRouteView:
        """Send the chat's next requests to this account and model (the conversation carries
        over); it becomes the route used last, too."""
        self.account_id, self.model = account_id, model
        self._remember_route(session_id, account_id, model)
        view = self.chat_route(session_id)
        self.publish()
        return view

    def _remember_route(self, session_id: str, account_id: str, model: str | None) -> None:
        """Keep the route a chat goes to with the chat, unless it already says exactly that."""
        wanted = ChatRoute(account_id=account_id, model=model)
        remembered, stored = remembered_route(self.writer.model_order(session_id), [])
        if not (stored and remembered == wanted) and not self.journal.read_only:
            self.writer.append_meta(session_id, wanted)

    def _chat_route(self, session_id: str) -> tuple[ResolvedRoute, Account]:
        """The route the chat's next request goes to, kept with the chat from now on."""
        view = self.chat_route(session_id)
        account = self.settings.account(view.account_id) if view.account_id else None
        if account is None:
            raise NoRoute("Add an account in Settings to start chatting.")
        if view.route is None:
            raise RouteError(view.problem or "This chat's route cannot be used; choose another above the chat.")
        if not view.stored:
            self._remember_route(session_id, account.id, view.model)
        return view.route, account

    # -- each chat's own settings, and assistants (desktop.session.chat_settings, desktop.app.assistants) --

    def chat_settings(self, session_id: str) -> ChatSettingsView:
        """The chat's own settings and what each inherits, on the chat's route."""
        own = chat_settings_of(self.writer.model_order(session_id))
        return settings_view(own, self.settings.custom_instructions, self.chat_route(session_id).route)

    def set_chat_settings(
        self,
        session_id: str,
        *,
        system_prompt: str | None,
        temperature: float | None,
        max_output: int | None,
        reasoning_effort: ReasoningEffort | None,
    ) -> ChatSettingsView:
        """Keep the chat's own settings (a row; ``None`` inherits); ``ChatSettingsError`` says
        what cannot be used. A new system prompt reaches the model with the next message."""
        wanted = make_chat_settings(
            self.chat_route(session_id).route, system_prompt=system_prompt, temperature=temperature,
            max_output=max_output, reasoning_effort=reasoning_effort,
        )  # fmt: skip
        if chat_settings_of(self.writer.model_order(session_id)) != wanted:
            self.writer.append_meta(session_id, wanted)
        return self.chat_settings(session_id)

    def save_assistant(self, assistant_id: str | None, **values: Any) -> Assistant:
        """Add or change an assistant from a form's values; ``SettingsError`` says what is wrong."""
        assistant = make_assistant(self.services.load_settings(), assistant_id=assistant_id, **values)
        self._save_settings(assistants=with_assistant(self.services.load_settings(), assistant))
        return assistant

    def remove_assistant(self, assistant_id: str) -> None:
        self._save_settings(assistants=without_assistant(self.services.load_settings(), assistant_id))

    def new_session_from(self, assistant_id: str) -> SessionRecord:
        """A new chat with the assistant's settings and route as its own."""
        assistant = self.settings.assistant(assistant_id)
        if assistant is None:
            raise SettingsError("That assistant is not in Settings any more; choose another.")
        session = self.journal.create_session()
        start_from(self.writer, session, assistant, self.settings)
        return session

    def api_key(self, account: Account) -> str | None:
        return self.services.api_key(account)

    # -- sessions ------------------------------------------------------------------------

    def sessions(self, query: str = "") -> list[tuple[SessionRecord, str]]:
        return self.journal.search_sessions(query) if query.strip() else [(s, "") for s in self.journal.sessions()]

    def new_session(self) -> SessionRecord:
        return self.journal.create_session()

    def page(self, session_id: str, before_seq: int | None = None, limit: int = 200) -> list[TranscriptRow]:
        return self.writer.display_page(session_id, before_seq=before_seq, limit=limit)

    def usage(self, session_id: str) -> tuple[UsageTotals, RequestUsage | None]:
        requests = self.ledger.requests(session_id)
        return self.ledger.totals(session_id), (requests[-1] if requests else None)

    def context_fill(self, session_id: str) -> ContextFill | None:
        """How full the chat's context is on the route chosen now (``None``: nothing counted
        yet, or no route)."""
        view = self.chat_route(session_id)
        if view.route is None:
            return None
        budget = self.services.budget(view.route)
        return context_fill(self.writer.model_order(session_id), self.ledger.requests(session_id), budget)

    def export(self, session_id: str, path: Path) -> None:
        """Write the session to ``path``: JSON for a .json name, Markdown otherwise."""
        session = self.journal.session(session_id)
        if session is None:
            raise KeyError(f"Session {session_id} is not in the journal; it may have been deleted.")
        rows = self.writer.rows(session_id)
        if path.suffix.lower() == ".json":
            text = to_json(session, rows, self.ledger.requests(session_id))
        else:
            text = to_markdown(session, rows)
        atomic_write_text(path, self.services.redactor.redact(text))

    # -- turns ---------------------------------------------------------------------------

    async def send(self, session_id: str, text: str, attachments: tuple[Attachment, ...] = ()) -> TurnOutcome:
        await self._supersede_waiting(session_id)
        session = self.journal.session(session_id)
        if session is not None and not session.title:
            named = text if text.strip() else ", ".join(a.name or "image" for a in attachments)
            self.journal.rename_session(session_id, first_message_title(named))
        return await self._turn(session_id, lambda runtime: runtime.send(session_id, text, attachments=attachments))

    # -- attachments (desktop/app/attachments.py) ------------------------------------------------

    def attach_file(self, path: Path) -> Attachment:
        """Read ``path`` once and keep it in the journal's folder; ``AttachmentRefused``."""
        return attach_path(path, self.attachments)

    def attach_data(self, data: bytes, name: str) -> Attachment:
        """Keep ``data`` (a pasted image, say) as an attachment; ``AttachmentRefused``."""
        return attach_bytes(data, name, self.attachments)

    def attachment_bytes(self, sha256: str, name: str = "") -> bytes:
        """A stored attachment's bytes, checked against its hash; ``AttachmentUnavailable``."""
        return self.attachments.get(sha256, name)

    def attachment_notice(self, session_id: str | None, attachments: tuple[Attachment, ...]) -> str | None:
        """Why the chat's model will not see the images attached, if it will not."""
        try:
            route = self.chat_route(session_id).route if session_id is not None else self.route()
        except (NoRoute, RouteError, ValueError):
            return None  # sending says what is wrong with the route
        return left_out_notice(route, attachments) if route is not None else None

    async def retry(self, session_id: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.retry(session_id))

    async def regenerate(self, session_id: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.regenerate(session_id))

    async def edit_last(self, session_id: str, text: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.edit_last(session_id, text))

    async def edit(self, session_id: str, row_id: str, text: str) -> TurnOutcome:
        """A new version of the user message ``row_id``, answered; the earlier one stays a switch away."""
        return await self._turn(session_id, lambda runtime: runtime.edit(session_id, row_id, text))

    async def auto_title(self, session_id: str) -> str | None:
        """After the chat's first exchange, a short title from its own route when the settings
        allow it there (see ``desktop.app.titles``); the new title, or ``None``."""
        view = self.chat_route(session_id)
        account = self.settings.account(view.account_id) if view.account_id else None
        if not self.titles or view.route is None or account is None:
            return None
        route = view.route
        return await auto_title(
            self.journal, session_id, setting=self.settings.auto_titles, route=route, redactor=self.services.redactor,
            client=lambda: self.services.client(route, self.api_key(account), account.first_token_timeout),
        )  # fmt: skip

    def versions(self, session_id: str) -> dict[str, tuple[str, ...]]:
        """Each message on screen that has other versions, and its versions in order."""
        return Versions.of(self.writer.version_entries(session_id)).shown()

    def branch(self, session_id: str, row_id: str) -> SessionRecord:
        """A new chat holding this chat's branch up to the answer ``row_id``; it starts with
        the same bytes, so the provider's cache still holds its beginning."""
        record = self.journal.session(session_id)
        title = f"{record.title or 'Chat'} (branch)" if record is not None else "Branch"
        return branch_session(self.journal, session_id, row_id, title[:200])

    def switch_version(self, session_id: str, row_id: str) -> None:
        """Show the version ``row_id`` and the branch it had; the next message continues it."""
        if self.busy(session_id):
            raise NotAVersion("This chat is still answering; wait for the reply or stop it, then switch versions.")
        switch_version(self.writer, session_id, row_id)

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

    # -- tools and approvals ---------------------------------------------------------------

    def parked(self, session_id: str) -> list[ParkedCall]:
        """The session's tool calls waiting on a person (also those parked before a restart)."""
        return parked_calls(self.writer.model_order(session_id))

    async def answer_approval(self, session_id: str, call_id: str, choice: Choice) -> TurnOutcome | None:
        """A person's answer to a parked call. In this run the waiting turn goes on; a call
        parked before a restart resumes its turn now."""
        if self.approvals.answer(session_id, call_id, Approval(choice)):
            return None
        return await self._turn(session_id, lambda runtime: runtime.resume(session_id, call_id, Approval(choice)))

    async def _supersede_waiting(self, session_id: str) -> None:
        """A new message denies the calls waiting in this run, ends their turn, then goes out."""
        waiting = self.approvals.waiting(session_id)
        for call_id in waiting:
            self.approvals.answer(session_id, call_id, Approval("deny", SUPERSEDED))
        task = self._running.get(session_id)
        if waiting and task is not None:
            with contextlib.suppress(asyncio.CancelledError, ProviderError):
                await task

    def mode(self, session_id: str) -> Mode:
        rows = self.writer.model_order(session_id)
        return Permissions.of_chat(rows, default_mode=self.settings.default_mode).mode

    def set_mode(self, session_id: str, mode: Mode) -> Mode:
        """Change the chat's permission mode from its next tool call on (a row, kept)."""
        if self.mode(session_id) != mode:
            self.writer.append_meta(session_id, PermissionMode(mode=mode))
        return mode

    def revoke_grant(self, target: ToolIdentity, session_id: str | None = None) -> None:
        """Withdraw an Always or Never answer, and the chat's own grant when ``session_id``."""
        if session_id is not None:
            self.writer.append_meta(session_id, ChatGrant(target=target, allow=False))
        self.settings = self.services.remember_grant(target, None)
        self.publish()

    def chat_grants(self, session_id: str) -> list[ToolIdentity]:
        rows = self.writer.model_order(session_id)
        return sorted(Permissions.of_chat(rows).chat, key=lambda t: (t.source, t.tool))

    def _policy(self) -> PermissionPolicy:
        return self.settings.permission_policy()  # the settings as they are now, not at turn start

    def _remember(self, target: ToolIdentity, allow: bool) -> None:
        self.settings = self.services.remember_grant(target, allow)
        self.publish()

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

    async def _turn(self, session_id: str, run: Callable[[ChatRuntime], Awaitable[TurnOutcome]]) -> TurnOutcome:
        if self.busy(session_id):
            raise RuntimeError("This session is already answering; stop it first.")
        route, account = self._chat_route(session_id)
        # A fresh runtime each turn: the key may have changed in Settings, and a tool whose
        # schema changed must never run from an idle runtime's copy.
        runtime = self.services.runtime(
            route,
            self.api_key(account),
            lambda: self.state,
            lambda event: self._on_event(SessionEvent(session_id, event)),
            first_token=account.first_token_timeout,
            policy=self._policy,
            remember=self._remember,
        )
        task = asyncio.ensure_future(run(runtime))
        self._running[session_id] = task
        self._on_event(TurnBusy(session_id, True))
        try:
            return await task
        except asyncio.CancelledError:
            if session_id not in self._stopped:
                raise  # the app itself is closing
            return TurnOutcome(False, (), Usage(), None, STOPPED)
        finally:
            self._running.pop(session_id, None)
            self._stopped.discard(session_id)
            self._on_event(TurnBusy(session_id, False))

    # -- accounts and settings -----------------------------------------------------------

    def save_account(self, account: Account, key: str | None, *, memory_only: bool = False) -> None:
        """Save the account; the key goes to the keychain. ``KeychainUnavailable`` (the account
        itself is saved) when there is none and ``memory_only`` was not asked for."""
        store = self.services.settings_store
        if self.settings.account(account.id) is None:
            self.settings = store.add_account(account)
        else:
            self.settings = store.replace_account(account)
        self.account_id = self.account_id or account.id
        try:
            if key:
                self.services.redactor.add(key)
                self.secrets.set(account.id, key, memory_only=memory_only)
        finally:
            self.publish()

    def remove_account(self, account_id: str) -> None:
        self.settings = self.services.settings_store.remove_account(account_id)
        self.secrets.delete(account_id)
        if self.account_id == account_id:
            self.account_id, self.model = self.settings.default_account, None
        self.publish()

    def _save_settings(self, **changes: object) -> None:
        """Change some settings: read the file afresh, change only these, save. A change made
        meanwhile by the command line (an account added, say) is kept, not overwritten by a
        copy this window loaded earlier."""
        settings = self.services.load_settings().model_copy(update=changes)
        self.services.settings_store.save(settings)
        self.settings = settings
        self.state = self.services.system_state(settings)
        self.publish()

    def reload_settings(self) -> None:
        """Take up changes made outside this window (another Cairn command, an edit by hand)."""
        self.settings = self.services.load_settings()
        self.state = self.services.system_state(self.settings)
        self.publish()

    def save_instructions(self, text: str) -> None:
        self._save_settings(custom_instructions=text)

    def save_default_mode(self, mode: Mode) -> None:
        self._save_settings(default_mode=mode)

    def save_context(
        self, reply_reserve: int | None, retained_tail: int | None, summary_account: str | None, summary_model: str
    ) -> None:
        """The reply reserve and the retained tail (``None``: automatic), and where summaries
        go (no account: the chat's own route; no model: the account's default). ``SettingsError``
        says what is wrong; nothing is saved then."""
        for name, value in (("room for the reply", reply_reserve), ("recent messages kept", retained_tail)):
            if value is not None and not MIN_TOKENS <= value <= MAX_TOKENS:
                raise SettingsError(
                    f"The {name} must be between {MIN_TOKENS:,} and {MAX_TOKENS:,} tokens, or Automatic."
                )
        summary = None
        if summary_account is not None:
            if self.services.load_settings().account(summary_account) is None:
                raise SettingsError("The account chosen for summaries is not in settings any more; choose another.")
            try:
                summary = SummaryRoute(account_id=summary_account, model=summary_model.strip() or None)
            except ValidationError as exc:
                raise SettingsError(f"The summary model cannot be used: {problem_text(exc)}.") from None
        self._save_settings(reply_reserve=reply_reserve, retained_tail=retained_tail, summary_route=summary)

    def save_auto_titles(self, choice: str) -> None:
        """Whether chats get titles from their model: "off", "free_routes" or "always"."""
        if choice not in get_args(AutoTitles):
            raise SettingsError(f"{choice!r} is not a choice for chat titles; choose off, free_routes or always.")
        self._save_settings(auto_titles=choice)

    def save_appearance(self, theme: str) -> None:
        self._save_settings(theme=theme)

    def save_text_size(self, points: int | None) -> None:
        """Keep the text size (``None``: Cairn's default); out of range is refused in words."""
        if points is not None and not TEXT_SIZE_MIN <= points <= TEXT_SIZE_MAX:
            raise SettingsError(f"Text size must be between {TEXT_SIZE_MIN} and {TEXT_SIZE_MAX} points.")
        self._save_settings(text_size=points)

    def set_workspace(self, folder: Path | None) -> SkillCatalog:
        """Use ``folder`` as the workspace (its .agents/skills too); return the new catalog."""
        self._save_settings(workspace=str(folder) if folder else None)
        return self.skills()

    def skills(self) -> SkillCatalog:
        return self.services.engine.skills(self.state)

    async def list_models(self, account: Account, key: str | None) -> list[str]:
        """The endpoint's models (``/models``); raises a ``ProviderError`` saying what is wrong."""
        route = self.services.route(account)
        self.services.redactor.add(key)
        client = OpenAICompatClient(self.services.http(), route.actual.base_url, api_key=key or self.api_key(account))
        try:
            return await client.list_models()
        except ProviderError as exc:
            exc.args = (self.services.redactor.redact(str(exc)),)  # an endpoint may quote the key back
            raise

    async def test_connection(self, account: Account, key: str | None) -> tuple[list[str], ServerReport]:
        """The endpoint's models, and, for a local server, whether its chat template has a
        system role (when it has none, the account should send instructions in the first
        message). Raises a ``ProviderError`` saying what is wrong."""
        models = await self.list_models(account, key)
        route = self.services.route(account)
        preset = self.services.transport.preset(account.provider)
        if not (is_local(route.actual.base_url) or (preset is not None and preset.local)):
            return models, ServerReport(None)
        report = await probe_server(self.services.http(), route.actual.base_url, route.actual.model)
        return models, report

    async def probe_local(self, ports: dict[str, int] | None = None) -> list[LocalServer]:
        """Local servers answering on loopback right now, with their models."""
        found = []
        async with httpx.AsyncClient(timeout=httpx.Timeout(0.6)) as http:
            for preset_id, port in (ports or LOCAL_PORTS).items():
                preset = self.services.transport.preset(preset_id)
                base = f"http://127.0.0.1:{port}/v1"
                try:
                    models = await OpenAICompatClient(http, base, api_key=None).list_models()
                except ProviderError:
                    continue  # nothing answering is the usual case
                found.append(LocalServer(preset_id, preset.name if preset else preset_id, base, tuple(models)))
        return found

    # -- MCP servers (Settings' MCP tab): each a delegation to the composition root ---------

    async def start(self) -> None:
        """Take up the route used last, then start the services' components: the MCP
        servers that start with Cairn."""
        self._resume_last_route()
        await self.services.start()

    def _resume_last_route(self) -> None:
        """New chats start on the route a chat was last given, also after a restart."""
        stored = self.journal.latest_meta("chat_route")
        meta = parse_model_system(json.loads(stored)) if stored else None
        known = isinstance(meta, ChatRoute) and self.settings.account(meta.account_id) is not None
        if isinstance(meta, ChatRoute) and known and (meta.account_id, meta.model) != (self.account_id, self.model):
            self.account_id, self.model = meta.account_id, meta.model
            self.publish()

    def watch_servers(self, listener: Callable[[ServerView], None]) -> tuple[list[ServerView], Callable[[], None]]:
        """The servers as they are now, and ``listener`` called (on the core) with each change
        from now on; with what unsubscribes it."""
        return self.services.mcp.views(), self.services.mcp.subscribe(listener)

    def server_views(self) -> list[ServerView]:
        return self.services.mcp.views()

    async def save_server(
        self,
        fields: Mapping[str, object],
        env: Mapping[str, str | None],
        headers: Mapping[str, str | None],
        replacing: str | None = None,
    ) -> McpServerSetting:
        return await self.services.save_server_fields(fields, env=env, headers=headers, replacing=replacing)

    async def remove_server(self, name: str) -> None:
        await self.services.remove_server(name)

    async def set_server_enabled(self, name: str, enabled: bool) -> McpServerSetting:
        return await self.services.set_server_enabled(name, enabled)

    async def restart_server(self, name: str) -> ServerView:
        return await self.services.restart_server(name)

    async def test_server(self, name: str) -> ServerStatus:
        status, _tools = await self.services.test_server(name)
        return status

    def import_preview(self, path: Path | None) -> ImportPlan:
        """What importing ``path`` (default: Claude Desktop's own file) would add; nothing is saved."""
        existing = [server.name for server in self.services.load_settings().servers().servers]
        return read_import(path, existing)

    async def import_servers(self, plan: ImportPlan) -> list[McpServerSetting]:
        return await self.services.import_servers(plan)

    async def close(self) -> None:
        """Stop every reply (what arrived is already kept, marked interrupted), remove the
        chats deleted for good, then stop the services."""
        for task in list(self._running.values()):
            task.cancel()
        for task in list(self._running.values()):
            with contextlib.suppress(asyncio.CancelledError, ProviderError):
                await task
        if not self.journal.read_only:
            self.journal.purge_deleted()
        await self.services.stop()
