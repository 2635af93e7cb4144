"""Messages and routes for the projection tests: a short chat with instructions changed midway,
and a route whose transport flags a test sets itself."""

from __future__ import annotations

from pathlib import Path

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import TransportFlags, load_transport_catalog
from desktop.context.messages import Message, SystemUpdatePart, TextPart
from desktop.settings.routes import ResolvedRoute, resolve_route
from desktop.settings.store import Account


def make_route(provider: str = "deepseek", model: str = "deepseek-flash", **flags: bool) -> ResolvedRoute:
    account = Account(name="A", provider=provider, default_model=model)
    route = resolve_route(account, None, load_transport_catalog(), load_models_dev(Path("/nonexistent")))
    # The flags under test are set explicitly; catalog grants are covered in test_catalogs.
    return route.model_copy(update={"flags": TransportFlags(**flags)})


def system(section: str, content: object) -> Message:
    return Message(role="system", parts=[SystemUpdatePart(section=section, content=content)])


def user(text: str) -> Message:
    return Message(role="user", parts=[TextPart(text=text)])


def assistant(*parts) -> Message:
    return Message(role="assistant", parts=list(parts))


CHAT = [
    system("instructions", "You are Cairn."),
    system("guidance:os", "Linux"),
    user("hi"),
    assistant(TextPart(text="hello")),
    system("instructions", "You are Cairn. Be brief."),
    user("again"),
]
