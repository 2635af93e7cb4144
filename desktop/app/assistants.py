"""Assistants: saved presets of a system prompt, a route and request parameters, to start a
chat from. A chat started from one gets them as its own settings (``ChatSettings``) and, when
the assistant names one, its route (``ChatRoute``); later edits of the assistant leave the
chats it started as they are."""

from __future__ import annotations

from pydantic import ValidationError

from desktop.session.chat_settings import ChatSettingsError, make_chat_settings
from desktop.settings.problems import problem_text
from desktop.settings.store import Assistant, Settings, SettingsError
from host.content import ChatRoute, ChatSettings, ReasoningEffort, StartedFrom
from host.journal import SessionRecord
from host.transcript import TranscriptWriter

__all__ = ["make_assistant", "start_from", "with_assistant", "without_assistant"]


def make_assistant(
    settings: Settings,
    *,
    name: str,
    system_prompt: str | None,
    account_id: str | None,
    model: str | None,
    temperature: float | None,
    max_output: int | None,
    reasoning_effort: ReasoningEffort | None,
    assistant_id: str | None = None,
) -> Assistant:
    """An assistant from a form's values; ``SettingsError`` says in one sentence what is wrong."""
    if not name.strip():
        raise SettingsError("The assistant needs a name; fill it in.")
    clash = next((a for a in settings.assistants if a.name.casefold() == name.strip().casefold()), None)
    if clash is not None and clash.id != assistant_id:
        raise SettingsError(f"An assistant named {name.strip()!r} already exists; pick another name.")
    if account_id is not None and settings.account(account_id) is None:
        raise SettingsError("The assistant's account is not in Settings any more; choose another.")
    try:
        make_chat_settings(None, temperature=temperature, max_output=max_output, reasoning_effort=reasoning_effort)
    except ChatSettingsError as exc:
        raise SettingsError(str(exc)) from None
    model = (model or "").strip() or None
    values = {
        "name": name,
        "system_prompt": system_prompt,
        "account_id": account_id,
        "model": model if account_id is not None else None,
        "temperature": temperature,
        "max_output": max_output,
        "reasoning_effort": reasoning_effort,
    }
    try:
        return Assistant(**values, **({"id": assistant_id} if assistant_id else {}))
    except ValidationError as exc:
        raise SettingsError(f"The assistant cannot be saved: {problem_text(exc)}.") from None


def with_assistant(settings: Settings, assistant: Assistant) -> list[Assistant]:
    """The assistants with ``assistant`` in place of the one with its id, else added at the end."""
    kept = [assistant if a.id == assistant.id else a for a in settings.assistants]
    return kept if any(a.id == assistant.id for a in settings.assistants) else [*kept, assistant]


def without_assistant(settings: Settings, assistant_id: str) -> list[Assistant]:
    return [a for a in settings.assistants if a.id != assistant_id]


def start_from(writer: TranscriptWriter, session: SessionRecord, assistant: Assistant, settings: Settings) -> None:
    """Mark the new chat ``session`` as started from the assistant, and give it the assistant's
    route (when it names one whose account is still there; else the chat starts on the route
    used last, as any new chat) and settings."""
    writer.append_meta(session.id, StartedFrom(assistant_id=assistant.id, name=assistant.name))
    if assistant.account_id is not None and settings.account(assistant.account_id) is not None:
        writer.append_meta(session.id, ChatRoute(account_id=assistant.account_id, model=assistant.model))
    own = ChatSettings(
        system_prompt=assistant.system_prompt,
        temperature=assistant.temperature,
        max_output=assistant.max_output,
        reasoning_effort=assistant.reasoning_effort,
    )
    if not own.inherits_all:
        writer.append_meta(session.id, own)
