"""Routes: where a request goes, and which transport flags it may rely on.

The published identity is what the catalog publishes for the chosen provider and model,
before the account's overrides; the actual identity is after them. Flags come only from the
transport catalog, and only when the actual identity equals a published binding exactly
(model, API and endpoint). Aliases, relays, custom endpoints and unknown models get none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from desktop.catalog.modelsdev import ModelInfo, ModelsDevCatalog
from desktop.catalog.transport import ApiKind, TransportCatalog, TransportFlags, normalize_base_url
from desktop.settings.store import Account
from host.errors import CairnError

__all__ = ["CUSTOM", "ResolvedRoute", "RouteError", "RouteIdentity", "Routes", "resolve_route"]

CUSTOM = "custom"


class RouteError(CairnError):
    """The account cannot make a route (unknown preset, no endpoint)."""


class RouteIdentity(BaseModel):
    model_config = ConfigDict(frozen=True)

    provider: str
    model: str
    api: ApiKind
    base_url: str


class ResolvedRoute(BaseModel):
    """A route with everything a request needs to know about it."""

    model_config = ConfigDict(frozen=True)

    account_id: str
    published: RouteIdentity
    actual: RouteIdentity
    headers: dict[str, str]
    flags: TransportFlags
    flags_reason: str
    function_limit: int | None
    fixed_declarations_verified: bool
    model_info: ModelInfo | None
    # The account sends the opening system content as a tagged block in the first user
    # message (for chat templates that drop the system role); later updates fold too.
    fold_opening: bool = False
    # Whether requests declare tools: models.dev's tool_call where it has a record; a route
    # without one (most local servers) is taken as tool-capable unless the account says not.
    accepts_tools: bool = True
    # The context window and where the figure came from: the account's own setting, else
    # models.dev, else unknown (the budget then assumes a small default). What the server
    # states is added before the first request (desktop/context/budgets.py): for a server the
    # person runs (``self_hosted``: a local preset or a custom endpoint) it outranks models.dev,
    # for a cloud API it only fills a gap. ``context_note`` says how to give the model more.
    context_limit: int | None = None
    context_source: str = "unknown"
    context_note: str = ""
    self_hosted: bool = False
    max_output_tokens: int | None = None
    max_output_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    # The account chose the proxy declaration policy (architecture §1).
    proxy_declarations: bool = False
    # Fields the provider's preset adds to every request body for this model (architecture §8).
    extra_body: dict[str, JsonValue] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        """``provider/model``: names the model that produced a reply, for reasoning replay."""
        return f"{self.actual.provider}/{self.actual.model}"


def resolve_route(
    account: Account, model: str | None, transport: TransportCatalog, models_dev: ModelsDevCatalog
) -> ResolvedRoute:
    model = model or account.default_model
    preset = transport.preset(account.provider)
    if preset is None and account.provider != CUSTOM:
        raise RouteError(f"Account {account.name!r} names an unknown provider {account.provider!r}.")
    if preset is None:
        if account.base_url is None:
            raise RouteError(f"Account {account.name!r} is custom but has no base URL.")
        published_url, api = account.base_url, "openai-completions"
    else:
        published_url, api = normalize_base_url(preset.base_url), preset.api
    actual_url = account.base_url or published_url

    published = RouteIdentity(provider=account.provider, model=model, api=api, base_url=published_url)
    actual = RouteIdentity(provider=account.provider, model=model, api=api, base_url=actual_url)
    binding = transport.binding(published.model, published.api, published.base_url)

    granted = False
    if binding is None:
        flags, reason = (
            TransportFlags(),
            (
                f"{model} at {published.base_url} is not a published binding in Cairn's transport catalog; "
                "no transport flags are granted."
            ),
        )
    elif actual != published:
        flags, reason = (
            TransportFlags(),
            (
                f"The account sends {model} to {actual.base_url}, not the published endpoint "
                f"{published.base_url}; a relay or override gets no transport flags."
            ),
        )
    else:
        flags, granted = binding.flags, True
        reason = (
            f"Exact published binding {binding.provider}/{binding.model} at {binding.base_url}."
            if binding.model != "*"
            else f"Generic entry for {binding.provider}; every flag is off."
        )
    # Prices and limits follow the published identity: a custom account that points at an
    # official endpoint gets that endpoint's models.dev record.
    listed = preset or next(
        (p for p in transport.providers if normalize_base_url(p.base_url) == published.base_url), None
    )
    info = models_dev.model(listed.models_dev, model) if listed is not None and listed.models_dev else None
    official = listed is not None and normalize_base_url(listed.base_url) == actual.base_url
    flags, reason = _opening_fold(account, flags, reason)
    return ResolvedRoute(
        accepts_tools=account.tools and (info.tool_call if info is not None else True),
        fold_opening=account.instructions_in_first_message,
        proxy_declarations=account.tool_declarations == "proxy",
        extra_body={k: v for e in preset.extra_body if model.startswith(e.models) for k, v in e.fields.items()}
        if preset is not None
        else {},
        self_hosted=preset.local if preset is not None else True,
        context_limit=account.context_limit or (info.limit.context if info is not None else None),
        context_source="account"
        if account.context_limit
        else ("models.dev" if info and info.limit.context else "unknown"),
        max_output_tokens=account.max_output_tokens,
        max_output_field=listed.max_output_field if official and listed is not None else "max_tokens",
        account_id=account.id,
        published=published,
        actual=actual,
        headers=dict(account.headers),
        flags=flags,
        flags_reason=reason,
        function_limit=binding.function_limit if binding else None,
        fixed_declarations_verified=granted and binding is not None and binding.fixed_declarations_verified,
        model_info=info,
    )


def _opening_fold(account: Account, flags: TransportFlags, reason: str) -> tuple[TransportFlags, str]:
    """An account whose chat template has no system role sends the opening content in the first
    user message; later system messages would be dropped too, so no system role is used at all."""
    if not account.instructions_in_first_message:
        return flags, reason
    flags = flags.model_copy(update={"mid_conversation_system": False, "developer_role": False})
    return flags, f"{reason} The account sends Cairn's instructions in the first message, so no system role is used."


@dataclass(frozen=True)
class Routes:
    """The catalogs every route is resolved against, loaded once by the composition root."""

    transport: TransportCatalog
    models_dev: ModelsDevCatalog

    def resolve(self, account: Account, model: str | None = None) -> ResolvedRoute:
        return resolve_route(account, model, self.transport, self.models_dev)

    def catalog_models(self, provider: str) -> list[str]:
        """Models Cairn's catalogs know for a provider preset, for the model pickers."""
        preset = self.transport.preset(provider)
        known = {b.model for b in self.transport.bindings if b.provider == provider and b.model != "*"}
        if preset is not None and preset.models_dev and preset.models_dev in self.models_dev.root:
            known |= set(self.models_dev.root[preset.models_dev].models)
        return sorted(known)
