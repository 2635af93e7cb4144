"""Cairn's settings: one versioned JSON file in the config folder. Never a secret in it.

Every option is declared once here, with its type and default. A file that cannot be read
is reported and left alone (it is never replaced by defaults behind a person's back).

A file written by a newer Cairn still loads: what this Cairn understands is used, and every
field it does not know (at the top level or in an account) is kept and written back as it
was, together with the file's own ``schema_version``. A value this Cairn cannot use in a
field it knows is still reported, with where it is.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator, model_validator

from desktop.catalog.transport import normalize_base_url
from desktop.settings.mcp_servers import McpServerSetting, ServerEntries, read_entries
from desktop.settings.starters import starter_entries, with_starters
from host.content import Mode, ReasoningEffort, ToolIdentity
from host.errors import CairnError
from host.files import atomic_write_text
from host.ids import new_id
from host.permissions import PermissionPolicy

__all__ = [
    "MAX_TOKENS",
    "MIN_TOKENS",
    "SETTINGS_VERSION",
    "Account",
    "Assistant",
    "AutoTitles",
    "Settings",
    "SettingsError",
    "SettingsStore",
    "SummaryRoute",
    "ToolGrant",
]

# The range a set reply reserve or retained tail may take.
# Where chat titles come from: never the model, only on routes that cost nothing, or always.
AutoTitles = Literal["off", "free_routes", "always"]
MIN_TOKENS, MAX_TOKENS = 256, 1_000_000
# The settings format this Cairn writes. A file of a newer version keeps its number.
SETTINGS_VERSION = 2  # 2: the starter assistants are in the file
# Header names that carry credentials belong in the keychain, as the account's API key.
_SECRET_HEADER = re.compile(r"(authorization|api[-_]?key|token|secret|cookie)", re.IGNORECASE)
# Values that are keys whatever the header is called: sk-... keys, bearer and basic credentials.
_SECRET_VALUE = re.compile(r"(sk-|sk_|bearer\s|basic\s)", re.IGNORECASE)


class SettingsError(CairnError):
    """The settings file or a setting is not usable; the message says what to do."""


class Account(BaseModel):
    """Provider credentials and overrides. The API key itself lives in the OS keychain.

    Fields a newer Cairn added are kept in ``model_extra`` and saved back unchanged.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str = Field(default_factory=new_id)
    name: str = Field(min_length=1, max_length=80)
    provider: str = Field(description="A preset id from the transport catalog, or 'custom'.")
    base_url: str | None = Field(default=None, description="Overrides the preset's endpoint.")
    default_model: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    max_output_tokens: int | None = Field(
        default=None, ge=1, le=10_000_000, description="The longest reply to ask for; unset lets the server decide."
    )
    first_token_timeout: float | None = Field(
        default=None,
        gt=0,
        le=86_400,
        description="Seconds to wait for the first token; unset uses 2 minutes, or 10 on a local server.",
    )
    instructions_in_first_message: bool = Field(
        default=False,
        description="Send Cairn's instructions at the start of the first message, for chat templates without a "
        "system role.",
    )
    tools: bool = Field(default=True, description="Offer tools to models on this account.")
    tool_declarations: Literal["automatic", "proxy"] = Field(
        default="automatic",
        description="How tools that a search activates reach the model: declared as tools (automatic), or described "
        "in the conversation and called through one use_tool tool (proxy), so the prompt is never re-read.",
    )
    context_limit: int | None = Field(
        default=None,
        ge=1_024,
        le=100_000_000,
        description="The model's context window in tokens, when the catalogs do not know it (local servers).",
    )

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the name is empty; fill it in")
        if any(not ch.isprintable() for ch in value):
            raise ValueError("the name holds control characters; use plain text")
        return value.strip()

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else normalize_base_url(value)

    @field_validator("headers")
    @classmethod
    def _no_secret_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, header in value.items():
            if not re.fullmatch(r"[A-Za-z0-9-]+", name):
                raise ValueError(f"{name!r} is not a valid HTTP header name")
            if _SECRET_HEADER.search(name) or _SECRET_VALUE.match(header.strip()):
                raise ValueError(
                    f"header {name!r} looks like it carries a credential; put the key in the account's API key "
                    "field, which is kept in the system keychain, not in the settings file"
                )
        return value


class ToolGrant(BaseModel):
    """An "Always" or "Never" answer for one tool, keyed on its source, name and spec pin: a
    tool whose spec changed is asked about again."""

    model_config = ConfigDict(frozen=True, extra="allow")

    source: str
    tool: str
    pin: str
    allow: bool

    @property
    def target(self) -> ToolIdentity:
        return ToolIdentity(source=self.source, tool=self.tool, pin=self.pin)


class SummaryRoute(BaseModel):
    """Where compaction summaries are asked for, when not on the chat's own route (a cheaper
    model, say). The chat's own route hits the provider's cache; another route does not."""

    model_config = ConfigDict(frozen=True, extra="allow")

    account_id: str = Field(min_length=1)
    model: str | None = Field(default=None, description="None: the account's default model.")

    @field_validator("model")
    @classmethod
    def _model_id(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > 200 or any(ch.isspace() or not ch.isprintable() for ch in value)):
            raise ValueError("a model id is one word of printable characters, such as deepseek-chat")
        return value


class Assistant(BaseModel):
    """A saved preset to start a chat from: a system prompt, a route and request parameters.
    Each unset value inherits, as a chat's own settings do."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str = Field(default_factory=new_id)
    name: str = Field(min_length=1, max_length=80)
    system_prompt: str | None = Field(default=None, description="Replaces the custom instructions in its chats.")
    account_id: str | None = Field(default=None, description="None: the route used last.")
    model: str | None = Field(default=None, description="None: the account's default model.")
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_output: int | None = Field(default=None, ge=1, le=10_000_000)
    reasoning_effort: ReasoningEffort | None = None

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        return Account._plain_name(value)

    @field_validator("model")
    @classmethod
    def _model_id(cls, value: str | None) -> str | None:
        return SummaryRoute._model_id(value)


TEXT_SIZE_MIN, TEXT_SIZE_MAX = 9, 22  # points
SKILLS_LISTED_MAX = 10_000  # skills a chat may list one by one in its prompt


class Settings(BaseModel):
    """The whole settings file. Fields a newer Cairn added are kept in ``model_extra``."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = Field(default=SETTINGS_VERSION, ge=1)
    accounts: list[Account] = Field(default_factory=list)
    default_account: str | None = None
    custom_instructions: str = ""
    theme: Literal["system", "light", "dark"] = "system"
    text_size: int | None = Field(
        default=None, ge=TEXT_SIZE_MIN, le=TEXT_SIZE_MAX, description="Text size in points; None: Cairn's default."
    )
    workspace: str | None = None
    default_mode: Mode = Field(default="ask", description="The permission mode a new chat starts in.")
    tool_grants: list[ToolGrant] = Field(default_factory=list, description="Always and Never answers.")
    reply_reserve: int | None = Field(
        default=None,
        ge=MIN_TOKENS,
        le=MAX_TOKENS,
        description="Tokens kept free for the reply below the context limit; by default the smaller of 16,000 and a "
        "quarter of the context.",
    )
    retained_tail: int | None = Field(
        default=None,
        ge=MIN_TOKENS,
        le=MAX_TOKENS,
        description="Tokens of recent conversation kept word for word when a chat is compacted; by default the smaller "
        "of 20,000 and 35% of the context.",
    )
    summary_route: SummaryRoute | None = Field(
        default=None, description="Where compaction summaries go; None: the chat's own route."
    )
    auto_titles: AutoTitles = Field(
        default="free_routes",
        description="A short title from the chat's model after its first exchange: never, only on routes that cost "
        "nothing (local servers, free models), or always.",
    )
    skills_listed: int = Field(
        default=50, ge=0, le=SKILLS_LISTED_MAX, description="Skills a chat lists one by one; tool_search finds others."
    )

    engine_idle_minutes: float = Field(
        default=3.0,
        ge=0.1,
        le=1440,
        description="Minutes a chat on the built-in engine is idle before its read prompt is saved to disk.",
    )
    engine_states_gb: float = Field(
        default=4.0, ge=0, le=10_000, description="Disk space for the built-in engine's saved chats, in GB."
    )

    assistants: list[Assistant] = Field(
        default_factory=lambda: [Assistant.model_validate(e) for e in starter_entries()],
        description="Presets to start a chat from; a new Cairn starts with a few (desktop.settings.starters).",
    )
    mcp_servers: list[JsonValue] = Field(
        default_factory=list, description="MCP servers; each entry is read on its own (desktop.settings.mcp_servers)."
    )

    @model_validator(mode="before")
    @classmethod
    def _starters_once(cls, raw: Any) -> Any:
        return with_starters(raw)

    def servers(self) -> ServerEntries:
        """The MCP servers that read, and what is wrong with the entries that do not."""
        return read_entries(self.mcp_servers)

    def with_server(self, server: McpServerSetting, *, replacing: str | None = None) -> Settings:
        """These settings with ``server`` in place of the entry named ``replacing`` (or of its
        own name), else added at the end."""
        old = (replacing or server.name).casefold()
        entry: JsonValue = server.model_dump(mode="json")
        entries: list[JsonValue] = []
        placed = False
        for raw in self.mcp_servers:
            if isinstance(raw, dict) and str(raw.get("name", "")).casefold() == old and not placed:
                entries.append(entry)
                placed = True
            else:
                entries.append(raw)
        return self.model_copy(update={"mcp_servers": entries if placed else [*entries, entry]})

    def without_server(self, name: str) -> Settings:
        kept = [
            r
            for r in self.mcp_servers
            if not (isinstance(r, dict) and str(r.get("name", "")).casefold() == name.casefold())
        ]
        return self.model_copy(update={"mcp_servers": kept})

    def permission_policy(self) -> PermissionPolicy:
        grants = self.tool_grants
        return PermissionPolicy(
            default_mode=self.default_mode,
            always=frozenset(g.target for g in grants if g.allow),
            never=frozenset(g.target for g in grants if not g.allow),
        )

    def with_grant(self, target: ToolIdentity, allow: bool | None) -> Settings:
        """These settings with ``target``'s Always (``True``) or Never (``False``) answer, or
        without any (``None``: revoked)."""
        kept = [g for g in self.tool_grants if g.target != target]
        if allow is not None:
            kept.append(ToolGrant(source=target.source, tool=target.tool, pin=target.pin, allow=allow))
        return self.model_copy(update={"tool_grants": kept})

    def assistant(self, assistant_id: str) -> Assistant | None:
        return next((a for a in self.assistants if a.id == assistant_id), None)

    def account(self, key: str) -> Account | None:
        """An account by id or by name (case-insensitive)."""
        return next((a for a in self.accounts if a.id == key or a.name.casefold() == key.casefold()), None)


class SettingsStore:
    """Loads and saves ``settings.json``; every change is written atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Settings:
        if not self.path.exists():
            return Settings()
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SettingsError(
                f"Cairn's settings file {self.path} cannot be read ({exc}). It was left as it is: "
                "fix it or move it aside to start with default settings."
            ) from exc
        try:
            return Settings.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the top level"
            version = raw.get("schema_version") if isinstance(raw, dict) else None
            if isinstance(version, int) and not isinstance(version, bool) and version > SETTINGS_VERSION:
                raise SettingsError(
                    f"Cairn's settings file {self.path}, written by a newer Cairn (version {version}), has a "
                    f"value this Cairn cannot use at {where}: {first['msg']}. It was left as it is: update "
                    "Cairn, or fix that value."
                ) from exc
            raise SettingsError(
                f"Cairn's settings file {self.path} has a bad value at {where}: {first['msg']}. "
                "It was left as it is: fix it or move it aside."
            ) from exc

    def save(self, settings: Settings) -> None:
        try:
            atomic_write_text(self.path, settings.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            raise SettingsError(f"Cairn could not save its settings to {self.path}: {exc.strerror}.") from exc

    def add_account(self, account: Account) -> Settings:
        settings = self.load()
        if settings.account(account.name) is not None:
            raise SettingsError(f"An account named {account.name!r} already exists; pick another name.")
        settings.accounts.append(account)
        settings.default_account = settings.default_account or account.id
        self.save(settings)
        return settings

    def replace_account(self, account: Account) -> Settings:
        settings = self.load()
        index = next((i for i, a in enumerate(settings.accounts) if a.id == account.id), None)
        if index is None:
            raise SettingsError(f"There is no account {account.id}; it may have been removed.")
        clash = settings.account(account.name)
        if clash is not None and clash.id != account.id:
            raise SettingsError(f"An account named {account.name!r} already exists; pick another name.")
        settings.accounts[index] = _keeping_unknown_fields(settings.accounts[index], account)
        self.save(settings)
        return settings

    def remove_account(self, account_id: str) -> Settings:
        settings = self.load()
        settings.accounts = [a for a in settings.accounts if a.id != account_id]
        if settings.default_account == account_id:
            settings.default_account = settings.accounts[0].id if settings.accounts else None
        self.save(settings)
        return settings

    def remember_grant(self, target: ToolIdentity, allow: bool | None) -> Settings:
        """Save an Always (``True``) or Never (``False``) answer for a tool, or revoke it
        (``None``); the settings as saved."""
        settings = self.load().with_grant(target, allow)
        self.save(settings)
        return settings

    def change(self, **changes: object) -> Settings:
        """Change some settings: read the file afresh, change only these, save. A change made
        meanwhile by another Cairn (an account added by the command line, say) is kept, not
        overwritten by a copy loaded earlier."""
        settings = self.load().model_copy(update=changes)
        self.save(settings)
        return settings


def _keeping_unknown_fields(stored: Account, edited: Account) -> Account:
    """``edited``, with the fields a newer Cairn stored on the account that ``edited`` lacks
    (an account built afresh from a form has none)."""
    kept = {k: v for k, v in (stored.model_extra or {}).items() if k not in (edited.model_extra or {})}
    if not kept:
        return edited
    merged: dict[str, Any] = {**kept, **edited.model_dump()}
    return Account.model_validate(merged)
