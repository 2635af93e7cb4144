"""Each chat's own choices, kept as hidden rows of the chat: the account and model it sends to
(``desktop.session.chat_route``), its own system prompt and request parameters
(``desktop.session.chat_settings``), its permission mode and its "This chat" grants. A change
is one appended row, and only when it changes something."""

from __future__ import annotations

from dataclasses import replace

from desktop.app.shared import AppState, NoRoute
from desktop.session.chat_route import ChatRouteView, remembered_route, resolve_chat_route
from desktop.session.chat_settings import ChatSettingsView, make_chat_settings, settings_view
from desktop.settings.routes import ResolvedRoute, RouteError
from desktop.settings.store import Account
from host.content import ChatRoute, Mode, PermissionMode, ReasoningEffort, ToolIdentity

__all__ = ["ChatOptions"]


class ChatOptions:
    def __init__(self, shared: AppState) -> None:
        self._shared = shared

    # -- the route -------------------------------------------------------------------------

    def route(self, session_id: str) -> ChatRouteView:
        """The chat's own account and model, resolved (see ``desktop.session.chat_route``)."""
        shared = self._shared
        state = shared.states.get(session_id)
        requests = [] if state.chat_route is not None else shared.ledger.requests(session_id)
        remembered, stored = remembered_route(state.chat_route, requests)
        view = resolve_chat_route(remembered, stored, shared.settings, (shared.account_id, shared.model))
        if state.started_from is not None:
            view = replace(view, assistant=state.started_from.name)
        account = shared.settings.account(view.account_id) if view.account_id else None
        if account is None:
            return view
        try:
            return replace(view, route=shared.root.route(account, view.model))
        except (RouteError, ValueError) as exc:
            return replace(view, problem=str(exc))

    def last_request_account(self, session_id: str) -> Account | None:
        """The account the chat's latest request went to, while it is still in the settings."""
        shared = self._shared
        requests = shared.ledger.requests(session_id)
        account_id = next((r.account_id for r in reversed(requests) if r.kind == "chat"), None)
        return shared.root.load_settings().account(account_id) if account_id else None

    def set_route(self, session_id: str, account_id: str, model: str | None) -> ChatRouteView:
        """Send the chat's next requests to this account and model (the conversation carries
        over); it becomes the route used last, too."""
        shared = self._shared
        shared.account_id, shared.model = account_id, model
        self._remember(session_id, account_id, model)
        view = self.route(session_id)
        shared.publish()
        return view

    def next_route(self, session_id: str) -> tuple[ResolvedRoute, Account]:
        """The route the chat's next request goes to, kept with the chat from now on;
        ``NoRoute`` or ``RouteError`` say why there is none."""
        view = self.route(session_id)
        settings = self._shared.settings
        account = settings.account(view.account_id) if view.account_id else None
        if account is None:
            raise NoRoute("Add an account in Settings to start chatting.")
        if view.route is None:
            raise RouteError(view.problem or "This chat's route cannot be used; choose another above the chat.")
        if not view.stored:
            self._remember(session_id, account.id, view.model)
        return view.route, account

    def _remember(self, session_id: str, account_id: str, model: str | None) -> None:
        """Keep the route a chat goes to with the chat, unless it already says exactly that."""
        wanted = ChatRoute(account_id=account_id, model=model)
        shared = self._shared
        if shared.states.get(session_id).chat_route != wanted and not shared.journal.read_only:
            shared.writer.append_meta(session_id, wanted)

    # -- its own settings ------------------------------------------------------------------

    def settings(self, session_id: str) -> ChatSettingsView:
        """The chat's own settings and what each inherits, on the chat's route."""
        own = self._shared.states.get(session_id).chat_settings
        return settings_view(own, self._shared.settings.custom_instructions, self.route(session_id).route)

    def set_settings(
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
            self.route(session_id).route, system_prompt=system_prompt, temperature=temperature,
            max_output=max_output, reasoning_effort=reasoning_effort,
        )  # fmt: skip
        if self._shared.states.get(session_id).chat_settings != wanted:
            self._shared.writer.append_meta(session_id, wanted)
        return self.settings(session_id)

    # -- permissions -----------------------------------------------------------------------

    def mode(self, session_id: str) -> Mode:
        return self._shared.states.get(session_id).mode(self._shared.settings.default_mode)

    def set_mode(self, session_id: str, mode: Mode) -> Mode:
        """Change the chat's permission mode from its next tool call on (a row, kept)."""
        if self.mode(session_id) != mode:
            self._shared.writer.append_meta(session_id, PermissionMode(mode=mode))
        return mode

    def grants(self, session_id: str) -> list[ToolIdentity]:
        """The tools allowed for this chat, by source and name."""
        return sorted(self._shared.states.get(session_id).grants, key=lambda t: (t.source, t.tool))
