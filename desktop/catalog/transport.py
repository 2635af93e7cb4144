"""Cairn's transport catalog: exact published bindings and their transcript transport flags.

One JSON file (``assets/catalog/transport.json``) lists provider presets and bindings of
(provider, model, API kind, endpoint) to the five flags. A flag is only ever granted from
here, and only when a route's actual identity equals a binding exactly; corrections belong
in that file and nowhere else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator, model_validator

from assets import ASSETS_DIR
from host.errors import CairnError

__all__ = [
    "BUILTIN_ENDPOINT",
    "BUILTIN_PROVIDER",
    "ApiKind",
    "CatalogError",
    "ExtraBody",
    "ProviderPreset",
    "TransportBinding",
    "TransportCatalog",
    "TransportFlags",
    "load_transport_catalog",
    "normalize_base_url",
]

ApiKind = Literal["openai-completions"]
# The built-in engine's fixed logical endpoint: its port and key change with every start and
# are no part of any route (desktop/engine/transport.py puts them on each request).
BUILTIN_ENDPOINT = "builtin://engine"
BUILTIN_PROVIDER = "built-in"  # the preset whose endpoint it is
ANY_MODEL = "*"
RESERVED_FIELDS = frozenset(
    {"model", "messages", "stream", "stream_options", "tools", "tool_choice", "max_tokens", "max_completion_tokens",
     "temperature", "reasoning_effort"}
)  # fmt: skip
TRANSPORT_CATALOG_PATH = ASSETS_DIR / "catalog" / "transport.json"


class CatalogError(CairnError):
    """A catalog file is missing or malformed; the message names the file."""


class TransportFlags(BaseModel):
    """The five transcript transport flags (architecture §1). All false is the fallback."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mid_conversation_system: bool = False
    tool_addition: bool = False
    tool_change: bool = False
    developer_role: bool = False
    reasoning_replay: bool = False


class ExtraBody(BaseModel):
    """Fields a provider needs in the request body for models whose id starts with ``models``
    (OpenRouter caches Claude only when asked). Never one Cairn sets itself: a request's
    messages, tools and limits stay Cairn's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    models: str
    fields: dict[str, JsonValue]
    why: str = ""

    @field_validator("fields")
    @classmethod
    def _not_cairns_own(cls, fields: dict[str, JsonValue]) -> dict[str, JsonValue]:
        taken = sorted(set(fields) & RESERVED_FIELDS)
        if taken:
            raise ValueError(f"extra body fields may not set {', '.join(taken)}, which Cairn sets itself")
        return fields


class ProviderPreset(BaseModel):
    """A provider a person can pick when adding an account: data only, never a flag (flags
    come from ``bindings``). ``key_url`` is where the provider hands out keys; ``note`` is
    what a person should know before choosing it (that its endpoint caches no prompts, say)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    base_url: str
    api: ApiKind = "openai-completions"
    key_required: bool = True
    key_env: list[str] = Field(default_factory=list)
    models_dev: str | None = None
    default_model: str | None = None
    local: bool = False
    # The request field for the longest reply at this endpoint: OpenAI's reasoning models
    # accept only max_completion_tokens; Groq and Cerebras document it; the rest know max_tokens.
    max_output_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    key_url: str | None = None
    note: str = ""
    extra_body: list[ExtraBody] = Field(default_factory=list)

    @field_validator("key_url")
    @classmethod
    def _key_pages_are_https(cls, url: str | None) -> str | None:
        """The window opens it in the browser: only an https page, never a file or a program."""
        if url is not None and not url.startswith("https://"):
            raise ValueError(f"a key page must be an https:// address, not {url!r}")
        return url


class TransportBinding(BaseModel):
    """One exact published binding. ``model == "*"`` covers any model at a local endpoint."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    model: str
    api: ApiKind = "openai-completions"
    base_url: str
    flags: TransportFlags = TransportFlags()
    function_limit: int | None = None
    fixed_declarations_verified: bool = False
    note: str = ""


class TransportCatalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1]
    providers: list[ProviderPreset]
    bindings: list[TransportBinding]

    @model_validator(mode="after")
    def _generic_records_grant_nothing(self) -> TransportCatalog:
        """A generic record (any model at a local endpoint) proves nothing about a model's
        template, so it may carry no transport flag and no verified fixed declarations."""
        for binding in self.bindings:
            if binding.model != ANY_MODEL:
                continue
            granted = [name for name, on in binding.flags.model_dump().items() if on]
            if binding.fixed_declarations_verified:
                granted.append("fixed_declarations_verified")
            if granted:
                raise ValueError(
                    f"the generic record for {binding.provider} at {binding.base_url} grants {', '.join(granted)}; "
                    "only an exact published binding may grant flags"
                )
        return self

    def preset(self, provider_id: str) -> ProviderPreset | None:
        return next((p for p in self.providers if p.id == provider_id), None)

    @property
    def models_dev_providers(self) -> tuple[str, ...]:
        """The models.dev providers the presets name: what a models.dev snapshot must cover."""
        return tuple(dict.fromkeys(p.models_dev for p in self.providers if p.models_dev))

    def binding(self, model: str, api: str, base_url: str) -> TransportBinding | None:
        """The binding for exactly this model, API and endpoint, else the endpoint's generic one."""
        endpoint = normalize_base_url(base_url)
        candidates = [b for b in self.bindings if b.api == api and normalize_base_url(b.base_url) == endpoint]
        exact = next((b for b in candidates if b.model == model), None)
        return exact or next((b for b in candidates if b.model == ANY_MODEL), None)


_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?$")


def normalize_base_url(url: str) -> str:
    """An endpoint in one spelling: lower-case scheme and host, no default port, no trailing slash.

    Raises ``ValueError`` with a person-readable message for anything that is not a usable
    http(s) base URL: another scheme, a bad host or port, credentials, a query or a fragment.
    """
    text = url.strip()
    if text == BUILTIN_ENDPOINT:
        return text
    example = "a base URL looks like https://api.example.com/v1"
    try:
        parsed = httpx.URL(text)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ValueError(f"{url!r} is not a URL ({exc}); {example}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"{url!r} is not an http:// or https:// URL; {example}")
    host = parsed.raw_host.decode("ascii", "replace").lower()  # an international name as punycode
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address, already checked by the parser
    elif not _HOST.match(host):
        raise ValueError(f"{url!r} has an invalid host name {parsed.host!r} (spaces or symbols?); {example}")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ValueError(f"{url!r} has port {parsed.port}; a port is a number from 1 to 65535")
    if parsed.userinfo:
        raise ValueError(f"{url!r} carries a user name or password; put the key in the account's API key field instead")
    if parsed.query or parsed.fragment:
        raise ValueError(f"{url!r} has a query or fragment (after ? or #), which a base URL cannot keep; {example}")
    default_port = {"http": 80, "https": 443}[parsed.scheme]
    port = "" if parsed.port in (None, default_port) else f":{parsed.port}"
    return f"{parsed.scheme}://{host}{port}{parsed.path.rstrip('/')}"


def load_transport_catalog(path: Path = TRANSPORT_CATALOG_PATH) -> TransportCatalog:
    try:
        return TransportCatalog.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        raise CatalogError(f"Cairn's transport catalog {path} cannot be read: {exc}. Reinstall Cairn.") from exc
