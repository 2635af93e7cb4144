"""MCP servers as the person keeps them in the settings, with their secrets in the secret store.

Each entry of the settings file's ``mcp_servers`` list is read on its own: one bad entry (a
hand edit, a newer Cairn's) makes only that server unusable, with the reason, and is kept in
the file as it is. An ``env`` value or a header that looks like a secret (by its name, such as
``GITHUB_TOKEN`` or ``Authorization``, or by its value, such as ``sk-…``) is never written to
the settings: it goes to the secret store (``secrets.py``: the keychain, the secrets file once
chosen, or this run's memory when the person asks) under ``mcp:<server>:env:<NAME>`` (or
``header``), and the entry lists only its name. When the server starts, the values come back
from the store and join the redactor, so nothing the server says can show them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from desktop.settings.mcp_roots import folder_uris, offered_folders
from desktop.settings.problems import problem_text
from desktop.settings.secret_file import SecretFileError
from desktop.settings.secrets import KeychainUnavailable, SecretStore
from host.errors import CairnError
from host.mcp.config import SERVER_NAME_PATTERN, McpOAuth, McpServerConfig
from host.text import printable

__all__ = [
    "McpServerSetting",
    "McpSettingsError",
    "SecretsNotKept",
    "ServerEntries",
    "forget_secrets",
    "forget_sign_in",
    "looks_secret",
    "read_entries",
    "secret_id",
    "server_setting",
]

_SECRET_NAME = re.compile(r"(key|token|secret|password|passwd|pwd|auth|credential|cookie|session|pat$)", re.I)
_SECRET_VALUE = re.compile(r"^(sk-|sk_|ghp_|gho_|github_pat_|xox[abp]-|glpat-|AKIA|AIza|bearer\s|basic\s)", re.I)


class McpSettingsError(CairnError):
    """A server could not be saved as asked; the message says why and what to do."""


class SecretsNotKept(McpSettingsError):
    """A server's secret has nowhere to be kept (no keychain, no secrets file chosen): saved
    again with ``memory_only`` it is kept for this run. The message says what happened; the
    window and the commands each add their way out. ``problem`` is the keychain's own."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


def looks_secret(name: str, value: str) -> bool:
    """Whether an env variable or header is a secret, by its name or by its value."""
    return bool(_SECRET_NAME.search(name) or _SECRET_VALUE.match(value.strip()))


def secret_id(server: str, where: Literal["env", "header"], name: str) -> str:
    return f"mcp:{server}:{where}:{name}"


class McpServerSetting(BaseModel):
    """One server entry. ``env`` and ``headers`` hold only values that are not secrets;
    ``secret_env`` and ``secret_headers`` name the ones kept in the keychain. Fields a newer
    Cairn added are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str = Field(pattern=SERVER_NAME_PATTERN, max_length=32)
    description: str = Field(
        default="", max_length=300, description="What the server is for, in a line; the model is told."
    )
    enabled: bool = True
    transport: Literal["stdio", "http"] = "stdio"
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    secret_env: list[str] = Field(default_factory=list)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    secret_headers: list[str] = Field(default_factory=list)
    oauth: McpOAuth | None = Field(
        default=None, description="Sign-in for a remote server; its tokens are kept with the secrets, never here."
    )
    trusted: bool = False
    start_at_launch: bool = False
    start_timeout: float = Field(default=30.0, gt=0, le=600)
    call_timeout: float = Field(default=120.0, gt=0, le=3600)
    roots_enabled: bool = Field(
        default=False, description="Offer the server folders as its roots (it may then reach those instead)."
    )
    roots: list[str] = Field(
        default_factory=list, description="The folders offered; none: the existing folders among its arguments."
    )

    def offered_roots(self) -> list[str] | None:
        """The folders the server is offered as roots, or ``None`` when roots are off."""
        return offered_folders(self.roots_enabled, self.roots, self.args, self.cwd)

    def config(self, secrets: SecretStore) -> tuple[McpServerConfig, list[str]]:
        """The server's config with its secrets from the store, and the secret values (for
        the redactor). ``ValueError`` when the entry cannot run, or a secret is missing."""
        env, headers, values = dict(self.env), dict(self.headers), []
        places: tuple[tuple[Literal["env", "header"], list[str], dict[str, str]], ...] = (
            ("env", self.secret_env, env),
            ("header", self.secret_headers, headers),
        )
        for where, names, target in places:
            for name in names:
                try:
                    value = secrets.get(secret_id(self.name, where, name))
                except SecretFileError as exc:
                    raise ValueError(str(exc)) from None
                if value is None:
                    raise ValueError(
                        f"the secret {name} of the MCP server {self.name!r} is missing (without a keychain it was "
                        "kept for one run only); edit the server and enter it again"
                    )
                target[name] = value
                values.append(value)
        config = McpServerConfig(
            name=self.name,
            transport=self.transport,
            command=self.command,
            args=tuple(self.args),
            env=env,
            cwd=self.cwd,
            url=self.url,
            headers=headers,
            oauth=self.oauth,
            trusted=self.trusted,
            start_at_launch=self.start_at_launch,
            start_timeout=self.start_timeout,
            call_timeout=self.call_timeout,
            roots=folder_uris(offered) if (offered := self.offered_roots()) is not None else None,
        )
        return config, values


@dataclass(frozen=True)
class ServerEntries:
    """The settings' servers: the ones that read, and a problem for each entry that did not."""

    servers: tuple[McpServerSetting, ...] = ()
    problems: tuple[str, ...] = ()

    def get(self, name: str) -> McpServerSetting | None:
        return next((s for s in self.servers if s.name.casefold() == name.casefold()), None)


def read_entries(raw: Iterable[JsonValue]) -> ServerEntries:
    servers: list[McpServerSetting] = []
    problems: list[str] = []
    for number, entry in enumerate(raw, start=1):
        try:
            server = McpServerSetting.model_validate(entry)
            McpServerConfig.model_validate(  # can it run at all, secrets aside
                {k: getattr(server, k) for k in ("name", "transport", "command", "url")}
            )
        except ValidationError as exc:
            name = entry.get("name") if isinstance(entry, dict) else None
            which = f"{name!r}" if isinstance(name, str) else f"number {number}"
            problems.append(f"The MCP server {which} in the settings cannot be used: {problem_text(exc)}")
            continue
        if any(s.name.casefold() == server.name.casefold() for s in servers):
            problems.append(f"Two MCP servers in the settings are named {server.name!r}; only the first is used.")
            continue
        servers.append(server)
    return ServerEntries(tuple(servers), tuple(problems))


def server_setting(
    secrets: SecretStore,
    fields: Mapping[str, object],
    *,
    env: Mapping[str, str | None] | None = None,
    headers: Mapping[str, str | None] | None = None,
    kept: McpServerSetting | None = None,
    memory_only: bool = False,
) -> McpServerSetting:
    """A server entry from what a person (or an import) gave: ``fields`` (name, transport,
    command, args, url, trusted, …), and ``env`` and ``headers`` with their values, whose
    secrets go to the secret store (for this run only with ``memory_only``). A value of
    ``None`` keeps the secret ``kept`` (the entry being edited) has under that name.
    ``McpSettingsError`` says what is wrong (``SecretsNotKept`` when a secret has nowhere to
    go); nothing is saved then. Secrets the edited entry no longer has are forgotten."""
    name = str(fields.get("name", ""))
    _check_name(name)
    _validated(name, {**fields, "env": {}, "headers": {}})  # before any secret is stored
    given_env = _with_kept(secrets, name, "env", env or {}, kept)
    given_headers = _with_kept(secrets, name, "header", headers or {}, kept)
    plain_env, secret_env, plain_headers, secret_headers = store_secrets(
        secrets, name, given_env, given_headers, memory_only=memory_only
    )
    entry = {**fields, "env": plain_env, "secret_env": secret_env, "headers": plain_headers}
    server = _validated(name, {**entry, "secret_headers": secret_headers})
    if kept is not None:  # what the edited entry kept and this one does not
        for where, before, now in (
            ("env", kept.secret_env, secret_env),
            ("header", kept.secret_headers, secret_headers),
        ):
            for key in before:
                if kept.name != name or key not in now:
                    secrets.delete(secret_id(kept.name, where, key))  # type: ignore[arg-type]
    return server


def _check_name(name: str) -> None:
    """Say plainly what is wrong with a name; the pattern itself means nothing to a person."""
    if not name.strip():
        raise McpSettingsError("The MCP server cannot be saved without a name; give it one.")
    if re.fullmatch(SERVER_NAME_PATTERN, name) is None:
        raise McpSettingsError(
            f"The MCP server cannot be saved as {printable(name)!r}: a name holds only letters, digits and -, "
            "with single _ between them (no spaces, dots or __)."
        )


def _validated(name: str, entry: Mapping[str, object]) -> McpServerSetting:
    try:
        server = McpServerSetting.model_validate(entry)
        McpServerConfig.model_validate({k: getattr(server, k) for k in ("name", "transport", "command", "url")})
    except ValidationError as exc:
        problem = problem_text(exc)
        if not problem.startswith("The MCP server"):  # the config's own sentences name the server already
            problem = f"The MCP server {name!r} cannot be saved: {problem[:1].lower()}{problem[1:]}"
        raise McpSettingsError(problem) from exc
    return server


def _with_kept(
    secrets: SecretStore,
    name: str,
    where: Literal["env", "header"],
    values: Mapping[str, str | None],
    kept: McpServerSetting | None,
) -> dict[str, str]:
    """``values`` with each ``None`` replaced by the secret the edited entry keeps."""
    had = (kept.secret_env if where == "env" else kept.secret_headers) if kept else []
    resolved: dict[str, str] = {}
    for key, value in values.items():
        if value is None and kept is not None and key in had:
            value = secrets.get(secret_id(kept.name, where, key))  # noqa: PLW2901 - the kept secret
        if value is None:
            raise McpSettingsError(f"The MCP server {name!r} cannot be saved: give a value for {key}.")
        resolved[key] = value
    return resolved


def store_secrets(
    secrets: SecretStore,
    server: str,
    env: Mapping[str, str],
    headers: Mapping[str, str],
    *,
    memory_only: bool = False,
) -> tuple[dict[str, str], list[str], dict[str, str], list[str]]:
    """Put the secret-looking values in the secret store; returns the plain env, the secret
    env names, the plain headers and the secret header names. ``SecretsNotKept`` when they
    have nowhere to go (nothing is written to disk instead), ``McpSettingsError`` when the
    chosen secrets file cannot be used."""
    plain_env, secret_env = _split(secrets, server, "env", env, memory_only)
    plain_headers, secret_headers = _split(secrets, server, "header", headers, memory_only)
    return plain_env, secret_env, plain_headers, secret_headers


def _split(
    secrets: SecretStore,
    server: str,
    where: Literal["env", "header"],
    values: Mapping[str, str],
    memory_only: bool,
) -> tuple[dict[str, str], list[str]]:
    plain: dict[str, str] = {}
    secret: list[str] = []
    for name, value in values.items():
        if not looks_secret(name, value):
            plain[name] = value
            continue
        try:
            secrets.set(secret_id(server, where, name), value, memory_only=memory_only)
        except KeychainUnavailable as exc:
            why = "there is no system keychain here" if secrets.keychain_problem() else "the system keychain refused it"
            raise SecretsNotKept(
                f"{name} of the MCP server {server!r} looks like a secret, and {why}, so the server was not saved.",
                exc.problem,
            ) from exc
        except SecretFileError as exc:
            raise McpSettingsError(f"The MCP server {server!r} was not saved: {exc}") from exc
        secret.append(name)
    return plain, sorted(secret)


def forget_secrets(secrets: SecretStore, server: McpServerSetting) -> None:
    """Forget every secret kept for ``server``: its env and headers, and its sign-in (tokens
    and client registration), whether or not its entry still signs in."""
    forget_sign_in(secrets, server.name)
    for name in server.secret_env:
        secrets.delete(secret_id(server.name, "env", name))
    for name in server.secret_headers:
        secrets.delete(secret_id(server.name, "header", name))


def forget_sign_in(secrets: SecretStore, server: str) -> None:
    """Forget the sign-in kept under ``server``'s name: its tokens and client registration."""
    from desktop.settings.sign_in_tokens import SignInTokens  # the SDK's auth types: only here

    SignInTokens(secrets, server, redact_add=lambda _value: None).forget_all()
