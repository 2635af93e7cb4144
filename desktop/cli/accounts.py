"""`cairn accounts`: list, add, edit and remove accounts; keys go to the keychain, or to the
secrets file once it is chosen (`cairn secrets file on`), never to the settings."""

from __future__ import annotations

import argparse
import getpass
import math
import sys

from desktop.app import KEY_ENV, Account, CairnApp, KeychainUnavailable, SecretFileError, decode_input
from desktop.cli.common import CommandError, printable

__all__ = ["run_accounts"]


def run_accounts(args: argparse.Namespace, app: CairnApp) -> int:
    verbs = {"list": _accounts_list, "add": _accounts_add, "edit": _accounts_edit, "remove": _accounts_remove}
    return verbs[args.verb](args, app)


def _accounts_list(_args: argparse.Namespace, app: CairnApp) -> int:
    accounts, default_id = app.accounts.listing()
    if not accounts:
        print("No accounts yet; add one with `cairn accounts add NAME --provider PRESET`.")
    for a in accounts:
        default = " (default)" if a.id == default_id else ""
        where = a.base_url or (p.base_url if (p := app.accounts.preset(a.provider)) else "")
        has_key = "key saved" if app.accounts.has_key(a.id) else "no key saved"
        print(printable(f"{a.name}{default}: {a.provider}, {a.default_model} at {where}; {has_key}{_options_text(a)}"))
    return 0


def _accounts_remove(args: argparse.Namespace, app: CairnApp) -> int:
    account = app.accounts.find(args.name)
    if account is None:
        raise CommandError(f"There is no account {args.name!r}.")
    app.accounts.remove(account.id)
    print(f"Removed {account.name}.")
    return 0


def _accounts_add(args: argparse.Namespace, app: CairnApp) -> int:
    provider = args.provider or ("custom" if args.base_url else None)
    if provider is None:
        raise CommandError("Say which provider with --provider (a preset) or --base-url (a custom endpoint).")
    preset = app.accounts.preset(provider)
    if preset is None and provider != "custom":
        names = ", ".join(p.id for p in app.accounts.presets())
        raise CommandError(f"Unknown provider {provider!r}; pick one of {names}, or custom with --base-url.")
    model = args.model or (preset.default_model if preset else None)
    if not model:
        raise CommandError("Say which model to use by default with --model.")
    headers = dict(_header(h) for h in args.header)
    account = Account(
        name=args.name,
        provider=provider,
        base_url=args.base_url,
        default_model=model,
        headers=headers,
        **_options(args),
    )
    app.accounts.add(account)
    print(f"Saved account {account.name}.")
    if args.set_key or (preset.key_required if preset else True):
        _store_key(account, app)
    return 0


def _accounts_edit(args: argparse.Namespace, app: CairnApp) -> int:
    found = app.accounts.find(args.name)
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
    changes.update(_options(args))
    account = Account.model_validate({**found.model_dump(), **changes})
    app.accounts.replace(account)
    print(f"Saved account {account.name}.")
    if args.set_key:
        _store_key(account, app)
    return 0


def _store_key(account: Account, app: CairnApp) -> None:
    if sys.stdin.isatty():
        key = getpass.getpass(f"API key for {account.name}: ").strip()
    else:
        try:
            key = decode_input(sys.stdin.buffer.readline(), "stdin").strip()
        except ValueError as exc:
            raise CommandError(f"{exc} No key was saved.") from None
    if not key:
        print("No key given; none was saved.", file=sys.stderr)
        return
    try:
        app.accounts.keep_key(account.id, key)
        where = app.secrets.view()
        print("The key is in the system keychain." if where.place == "keychain" else f"The key is in {where.file}.")
    except KeychainUnavailable as exc:
        print(
            f"{exc.problem} The key was not saved: `cairn chat` will ask for it each run, or read it from {KEY_ENV}; "
            "`cairn secrets file on` keeps keys in a file only you can read.",
            file=sys.stderr,
        )
    except SecretFileError as exc:
        raise CommandError(f"{exc} The key was not saved.") from exc


def _options_text(account: Account) -> str:
    said = []
    if account.context_limit:
        said.append(f"a {account.context_limit:,}-token context")
    if account.max_output_tokens:
        said.append(f"replies up to {account.max_output_tokens:,} tokens")
    if account.first_token_timeout:
        said.append(f"waits {account.first_token_timeout:g} s for the first token")
    if account.instructions_in_first_message:
        said.append("instructions in the first message")
    if not account.tools:
        said.append("no tools")
    if account.tool_declarations == "proxy":
        said.append("found tools described in the chat (proxy)")
    return f"; {', '.join(said)}" if said else ""


def _options(args: argparse.Namespace) -> dict[str, object]:
    """The request options given on the command line, as Account fields (0 unsets a number)."""
    options: dict[str, object] = {}
    if args.max_output is not None:
        if args.max_output < 0:
            raise CommandError("--max-output is a number of tokens: 0 unsets it, more sets it.")
        options["max_output_tokens"] = args.max_output or None
    if args.context is not None:
        if args.context != 0 and not 1_024 <= args.context <= 100_000_000:
            raise CommandError("--context is the model's context in tokens, from 1,024; 0 unsets it.")
        options["context_limit"] = args.context or None
    if args.first_token_timeout is not None:
        seconds = args.first_token_timeout
        if not math.isfinite(seconds) or seconds < 0:
            raise CommandError("--first-token-timeout is a number of seconds: 0 unsets it, more sets it.")
        options["first_token_timeout"] = seconds or None
    if args.instructions_in_first_message is not None:
        options["instructions_in_first_message"] = args.instructions_in_first_message
    if args.tools is not None:
        options["tools"] = args.tools
    if args.tool_declarations is not None:
        options["tool_declarations"] = args.tool_declarations
    return options


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise CommandError(f"Header {text!r} should look like NAME=VALUE.")
    return name.strip(), value.strip()
