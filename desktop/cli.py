"""Cairn's headless commands: `chat`, `sessions`, `accounts`, `catalog refresh`. No Qt here."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from collections.abc import Callable
from typing import TextIO

import httpx
from pydantic import ValidationError

from desktop.catalog.modelsdev import MODELS_DEV_URL, load_models_dev, refresh_models_dev
from desktop.catalog.transport import CatalogError, load_transport_catalog
from desktop.events import ReasoningDelta, Retrying, RuntimeEvent, TextDelta, TurnFailed
from desktop.provider.openai_compat import DEFAULT_TIMEOUT, OpenAICompatClient
from desktop.routes import ResolvedRoute, RouteError, resolve_route
from desktop.runtime import ChatRuntime, NothingToRetry, TurnOutcome
from desktop.secrets import KeychainUnavailable, SecretStore
from desktop.settings import Account, SettingsError, SettingsStore
from host.errors import JournalError
from host.journal import Journal
from host.paths import CairnPaths
from host.usage import UsageLedger

__all__ = ["add_commands", "run_command"]

KEY_ENV = "CAIRN_API_KEY"


class CommandError(Exception):
    """A command cannot go on; the message tells the person what to do."""


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser("sessions", help="list the journal's sessions, newest first")

    chat = commands.add_parser("chat", help="send a message and stream the answer")
    chat.add_argument("message", nargs="*", help="the message; read from stdin when omitted")
    chat.add_argument("--account", help="account name or id (default: the default account)")
    chat.add_argument("--model", help="model id (default: the account's default model)")
    chat.add_argument("--session", help="continue this session id (default: a new session)")
    chat.add_argument("--retry", action="store_true", help="ask again where the session's last turn failed")

    accounts = commands.add_parser("accounts", help="list, add, edit or remove accounts")
    verbs = accounts.add_subparsers(dest="verb", metavar="VERB", required=True)
    verbs.add_parser("list", help="list accounts")
    for verb in ("add", "edit"):
        p = verbs.add_parser(verb, help=f"{verb} an account")
        p.add_argument("name")
        p.add_argument("--provider", help="a preset (deepseek, openai, openrouter, ollama, ...) or 'custom'")
        p.add_argument("--base-url", help="a custom OpenAI-compatible endpoint, such as https://host/v1")
        p.add_argument("--model", help="the default model")
        p.add_argument("--header", action="append", default=[], metavar="NAME=VALUE", help="an extra header")
        if verb == "edit":
            p.add_argument("--rename", help="a new name")
        p.add_argument("--set-key", action="store_true", help="ask for the API key and keep it in the keychain")
    remove = verbs.add_parser("remove", help="remove an account and its key")
    remove.add_argument("name")

    catalog = commands.add_parser("catalog", help="the models.dev catalog")
    catalog_verbs = catalog.add_subparsers(dest="verb", metavar="VERB", required=True)
    refresh = catalog_verbs.add_parser("refresh", help="download a fresh models.dev catalog")
    refresh.add_argument("--url", default=MODELS_DEV_URL, help=argparse.SUPPRESS)


def run_command(args: argparse.Namespace, paths: CairnPaths, secrets: SecretStore | None = None) -> int:
    secrets = secrets or SecretStore()
    try:
        if args.command == "sessions":
            return _sessions(paths)
        if args.command == "chat":
            return _chat(args, paths, secrets)
        if args.command == "accounts":
            return _accounts(args, paths, secrets)
        if args.command == "catalog":
            return _refresh(args, paths)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors())
        print(f"cairn: {problems}", file=sys.stderr)
        return 2
    except (CommandError, JournalError, SettingsError, CatalogError, RouteError, ValueError) as exc:
        print(f"cairn: {exc}", file=sys.stderr)
        return 2
    raise AssertionError(f"unhandled command {args.command}")


# -- sessions --------------------------------------------------------------------------------


def _sessions(paths: CairnPaths) -> int:
    with Journal.open(paths.journal) as journal:
        sessions = journal.sessions()
    if not sessions:
        print("No sessions yet.")
    for record in sessions:
        print(f"{record.id}  {record.updated_at[:19].replace('T', ' ')}  {record.title or '(untitled)'}")
    return 0


# -- chat ------------------------------------------------------------------------------------


def _chat(args: argparse.Namespace, paths: CairnPaths, secrets: SecretStore) -> int:
    if args.retry and not args.session:
        raise CommandError("Say which session to retry with --session.")
    text = ""
    if not args.retry:
        text = " ".join(args.message).strip() if args.message else sys.stdin.read().strip()
        if not text:
            raise CommandError("There is no message to send: give it as an argument or on stdin.")
    settings = SettingsStore(paths.config_dir / "settings.json").load()
    key = args.account or settings.default_account
    account = settings.account(key) if key else None
    if account is None:
        raise CommandError(
            f"There is no account {key!r}; add one with `cairn accounts add NAME --provider PRESET`."
            if key
            else "There is no account yet; add one with `cairn accounts add NAME --provider PRESET`."
        )
    route = resolve_route(account, args.model, load_transport_catalog(), load_models_dev(paths.cache_dir))
    api_key = _api_key(account, route, secrets)
    with Journal.open(paths.journal) as journal:
        if args.session:
            if journal.session(args.session) is None:
                raise CommandError(f"There is no session {args.session}; `cairn sessions` lists them.")
            session_id = args.session
        else:
            session_id = journal.create_session(title=text.splitlines()[0][:60]).id
        try:
            outcome = asyncio.run(_turn(journal, route, api_key, session_id, text or None))
        except KeyboardInterrupt:
            print("\n[stopped; what arrived is kept]", file=sys.stderr)
            return 130
        totals = UsageLedger(journal).totals(session_id)
    if not outcome.ok:
        print(f"[the conversation is saved; retry with: cairn chat --session {session_id} --retry]", file=sys.stderr)
        return 1
    print(file=sys.stdout)
    print(_summary(outcome, totals.cost_usd, session_id), file=sys.stderr)
    return 0


async def _turn(
    journal: Journal, route: ResolvedRoute, api_key: str | None, session_id: str, text: str | None
) -> TurnOutcome:
    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        client = OpenAICompatClient(http, route.actual.base_url, api_key=api_key, headers=route.headers)
        runtime = ChatRuntime(journal, route, client, on_event=_printer(sys.stdout, sys.stderr))
        if text is None:
            try:
                return await runtime.retry(session_id)
            except NothingToRetry as exc:
                raise CommandError(str(exc)) from None
        return await runtime.send(session_id, text)


def _printer(out: TextIO, err: TextIO) -> Callable[[RuntimeEvent], None]:
    def show(event: RuntimeEvent) -> None:
        if isinstance(event, TextDelta):
            out.write(event.text)
            out.flush()
        elif isinstance(event, ReasoningDelta):
            err.write(f"\x1b[2m{event.text}\x1b[0m" if err.isatty() else event.text)
            err.flush()
        elif isinstance(event, Retrying):
            err.write(f"\n[retrying in {event.delay:.1f} s: {event.reason}]\n")
        elif isinstance(event, TurnFailed):
            err.write(f"\ncairn: {event.message}\n")

    return show


def _summary(outcome: TurnOutcome, session_cost: float | None, session_id: str) -> str:
    u = outcome.usage
    share = f"{u.cached_tokens / u.prompt_tokens:.0%}" if u.prompt_tokens else "0%"
    cost = f"${outcome.cost_usd:.4f}" if outcome.cost_usd is not None else "cost unknown"
    total = f"${session_cost:.4f}" if session_cost is not None else "unknown"
    return (
        f"[{u.prompt_tokens:,} prompt tokens ({u.cached_tokens:,} cached, {share}) · {u.output_tokens:,} output · "
        f"{cost} · session {session_id} total {total}]"
    )


def _api_key(account: Account, route: ResolvedRoute, secrets: SecretStore) -> str | None:
    key = secrets.get(account.id)
    if key:
        return key
    preset = load_transport_catalog().preset(account.provider)
    for name in [*(preset.key_env if preset else []), KEY_ENV]:
        if os.environ.get(name):
            return os.environ[name]
    if preset is not None and not preset.key_required:
        return None
    problem = secrets.keychain_problem()
    if sys.stdin.isatty():
        note = f"{problem} " if problem else ""
        print(
            f"{note}Enter the API key for {account.name} to use it for this run only (it is not saved).",
            file=sys.stderr,
        )
        return getpass.getpass("API key: ").strip() or None
    if route.actual.base_url.startswith(("http://127.", "http://localhost")):
        return None  # a local server usually needs no key
    raise CommandError(
        f"There is no API key for {account.name}. Run `cairn accounts edit {account.name!r} --set-key`, "
        f"or set {KEY_ENV} for this run."
    )


# -- accounts --------------------------------------------------------------------------------


def _accounts(args: argparse.Namespace, paths: CairnPaths, secrets: SecretStore) -> int:
    store = SettingsStore(paths.config_dir / "settings.json")
    verbs = {"list": _accounts_list, "add": _accounts_add, "edit": _accounts_edit, "remove": _accounts_remove}
    return verbs[args.verb](args, store, secrets)


def _accounts_list(_args: argparse.Namespace, store: SettingsStore, secrets: SecretStore) -> int:
    settings, transport = store.load(), load_transport_catalog()
    if not settings.accounts:
        print("No accounts yet; add one with `cairn accounts add NAME --provider PRESET`.")
    for a in settings.accounts:
        default = " (default)" if a.id == settings.default_account else ""
        where = a.base_url or (p.base_url if (p := transport.preset(a.provider)) else "")
        has_key = "key in keychain" if secrets.get(a.id) else "no key saved"
        print(f"{a.name}{default}: {a.provider}, {a.default_model} at {where}; {has_key}")
    return 0


def _accounts_remove(args: argparse.Namespace, store: SettingsStore, secrets: SecretStore) -> int:
    account = store.load().account(args.name)
    if account is None:
        raise CommandError(f"There is no account {args.name!r}.")
    store.remove_account(account.id)
    secrets.delete(account.id)
    print(f"Removed {account.name}.")
    return 0


def _accounts_add(args: argparse.Namespace, store: SettingsStore, secrets: SecretStore) -> int:
    transport = load_transport_catalog()
    provider = args.provider or ("custom" if args.base_url else None)
    if provider is None:
        raise CommandError("Say which provider with --provider (a preset) or --base-url (a custom endpoint).")
    preset = transport.preset(provider)
    if preset is None and provider != "custom":
        names = ", ".join(p.id for p in transport.providers)
        raise CommandError(f"Unknown provider {provider!r}; pick one of {names}, or custom with --base-url.")
    model = args.model or (preset.default_model if preset else None)
    if not model:
        raise CommandError("Say which model to use by default with --model.")
    headers = dict(_header(h) for h in args.header)
    account = Account(name=args.name, provider=provider, base_url=args.base_url, default_model=model, headers=headers)
    store.add_account(account)
    print(f"Saved account {account.name}.")
    if args.set_key or (preset.key_required if preset else True):
        _store_key(account, secrets)
    return 0


def _accounts_edit(args: argparse.Namespace, store: SettingsStore, secrets: SecretStore) -> int:
    found = store.load().account(args.name)
    if found is None:
        raise CommandError(f"There is no account {args.name!r}.")
    changes: dict[str, object] = {}
    if args.rename:
        changes["name"] = args.rename
    if args.provider:
        changes["provider"] = args.provider
    if args.base_url is not None:
        changes["base_url"] = args.base_url or None
    if args.model:
        changes["default_model"] = args.model
    if args.header:
        changes["headers"] = dict(_header(h) for h in args.header)
    account = Account.model_validate({**found.model_dump(), **changes})
    store.replace_account(account)
    print(f"Saved account {account.name}.")
    if args.set_key:
        _store_key(account, secrets)
    return 0


def _store_key(account: Account, secrets: SecretStore) -> None:
    key = getpass.getpass(f"API key for {account.name}: ") if sys.stdin.isatty() else sys.stdin.readline()
    key = key.strip()
    if not key:
        print("No key given; none was saved.", file=sys.stderr)
        return
    try:
        secrets.set(account.id, key)
        print("The key is in the system keychain.")
    except KeychainUnavailable as exc:
        print(
            f"{exc} It was not saved: `cairn chat` will ask for it each run, or read it from {KEY_ENV}.",
            file=sys.stderr,
        )


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise CommandError(f"Header {text!r} should look like NAME=VALUE.")
    return name.strip(), value.strip()


# -- catalog ---------------------------------------------------------------------------------


def _refresh(args: argparse.Namespace, paths: CairnPaths) -> int:
    async def fetch() -> tuple[bool, str]:
        async with httpx.AsyncClient(follow_redirects=True) as http:
            outcome = await refresh_models_dev(http, paths.cache_dir, args.url)
            return outcome.ok, outcome.message

    ok, message = asyncio.run(fetch())
    print(message, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1
