"""Each chat's own settings: its system prompt and its request parameters.

A chat keeps them in ``ChatSettings`` rows (hidden metadata, like its route and permission
mode); the latest row wins and every ``None`` inherits. The chat's system prompt takes the
place of the custom instructions in that chat's ``instructions`` section, so a change is one
appended section update, never a rewrite. Temperature, the longest reply and the reasoning
effort only change the request's parameters, which no provider caches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from desktop.context.system_state import SystemState
from desktop.settings.routes import ResolvedRoute
from host.content import ChatSettings, ReasoningEffort
from host.errors import CairnError
from host.rows import TranscriptRow

__all__ = [
    "EFFORTS",
    "ChatSettingsError",
    "ChatSettingsView",
    "RequestParameters",
    "chat_settings_of",
    "chat_system",
    "inherited_words",
    "make_chat_settings",
    "output_limit",
    "request_parameters",
    "settings_view",
    "takes_effort",
]

EFFORTS: tuple[ReasoningEffort, ...] = ("low", "medium", "high")
TEMPERATURE_MAX = 2.0


class ChatSettingsError(CairnError, ValueError):
    """A chat setting that cannot be used; the message says what to do."""


@dataclass(frozen=True)
class RequestParameters:
    """What a request asks for besides its messages; ``None`` sends nothing for it."""

    temperature: float | None = None
    max_output: int | None = None
    reasoning_effort: ReasoningEffort | None = None


@dataclass(frozen=True)
class ChatSettingsView:
    """What the chat settings dialog shows: the chat's own settings, and what each inherits."""

    settings: ChatSettings
    custom_instructions: str  # from Settings, used while the chat has no system prompt of its own
    account_max_output: int | None  # the account's longest reply; None: the server decides
    model: str | None  # the chat's model, for the words; None: no route
    output_limit: int | None  # the model's longest reply, when the catalog knows it
    takes_effort: bool  # the model has a reasoning effort setting


def chat_settings_of(rows: Iterable[TranscriptRow]) -> ChatSettings:
    """The chat's settings: its latest ``ChatSettings`` row, else everything inherited."""
    found = ChatSettings()
    for row in rows:
        meta = row.meta()
        if isinstance(meta, ChatSettings):
            found = meta
    return found


def chat_system(state: SystemState, settings: ChatSettings) -> SystemState:
    """The system state of a chat: its own system prompt in place of the custom instructions."""
    if settings.system_prompt is None:
        return state
    return replace(state, custom_instructions=settings.system_prompt)


def takes_effort(route: ResolvedRoute | None) -> bool:
    """Whether the model has a reasoning effort: only a model the catalog says reasons. An
    unknown model is never sent one (a server may refuse the field)."""
    return route is not None and route.model_info is not None and route.model_info.reasoning


def output_limit(route: ResolvedRoute | None) -> int | None:
    if route is None or route.model_info is None:
        return None
    return route.model_info.limit.output


def make_chat_settings(
    route: ResolvedRoute | None,
    *,
    system_prompt: str | None = None,
    temperature: float | None = None,
    max_output: int | None = None,
    reasoning_effort: ReasoningEffort | None = None,
) -> ChatSettings:
    """The chat settings these values make, checked against ``route``; ``ChatSettingsError``
    says in one sentence what cannot be used."""
    if temperature is not None and not 0 <= temperature <= TEMPERATURE_MAX:
        raise ChatSettingsError(f"The temperature must be between 0 and 2; {temperature:g} is not.")
    if max_output is not None:
        limit = output_limit(route)
        if max_output < 1:
            raise ChatSettingsError("The longest reply must be at least 1 token; clear it to use the account's.")
        if route is not None and limit is not None and max_output > limit:
            raise ChatSettingsError(
                f"{route.actual.model} writes at most {limit:,} tokens in a reply; "
                f"set the longest reply to {limit:,} or less."
            )
    if reasoning_effort is not None and reasoning_effort not in EFFORTS:
        raise ChatSettingsError("The reasoning effort is low, medium or high; choose one of them.")
    return ChatSettings(
        system_prompt=system_prompt,
        temperature=temperature,
        max_output=max_output,
        reasoning_effort=reasoning_effort,
    )


def request_parameters(settings: ChatSettings, route: ResolvedRoute) -> tuple[RequestParameters, list[str]]:
    """The parameters a request on ``route`` goes out with, and notes for the inspector: the
    chat's own values where it has them, the account's longest reply otherwise; an effort only
    where the model has one; a longest reply above the model's limit is cut to it."""
    notes: list[str] = []
    max_output = settings.max_output if settings.max_output is not None else route.max_output_tokens
    limit = output_limit(route)
    if settings.max_output is not None and limit is not None and settings.max_output > limit:
        notes.append(
            f"The chat's longest reply ({settings.max_output:,} tokens) is more than {route.actual.model} writes; "
            f"{limit:,} was asked for."
        )
        max_output = limit
    effort = settings.reasoning_effort
    if effort is not None and not takes_effort(route):
        notes.append(f"The reasoning effort was not sent: {route.actual.model} has no such setting.")
        effort = None
    return RequestParameters(settings.temperature, max_output, effort), notes


def settings_view(settings: ChatSettings, custom_instructions: str, route: ResolvedRoute | None) -> ChatSettingsView:
    return ChatSettingsView(
        settings=settings,
        custom_instructions=custom_instructions,
        account_max_output=route.max_output_tokens if route is not None else None,
        model=route.actual.model if route is not None else None,
        output_limit=output_limit(route),
        takes_effort=takes_effort(route),
    )


def inherited_words(view: ChatSettingsView) -> dict[str, str]:
    """What each setting is while the chat inherits it, in plain words ("From Settings: …")."""
    custom = view.custom_instructions.strip()
    first = custom.splitlines()[0] if custom else ""
    cut = len(first) > 60 or len(custom) > len(first)
    instructions = (
        f"From Settings: your custom instructions (“{first[:60]}{'…' if cut else ''}”)."
        if custom
        else "From Settings: no custom instructions, only Cairn's own."
    )
    reply = (
        f"From Settings: the account's {view.account_max_output:,} tokens."
        if view.account_max_output
        else "From Settings: the server decides."
    )
    effort = (
        "The model's own default."
        if view.takes_effort
        else f"{view.model or 'This model'} has no reasoning effort setting, so none is sent."
    )
    return {
        "system_prompt": instructions,
        "temperature": "The server's default.",
        "max_output": reply,
        "reasoning_effort": effort,
    }
