"""What every command shares: its error, text made safe to print on a terminal
(``printable``), the account and key a command runs with, and SIGTERM handled as Ctrl+C."""

from __future__ import annotations

import getpass
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from desktop.app.message_checks import printable
from desktop.root import Services
from desktop.settings.routes import ResolvedRoute
from desktop.settings.secrets import KEY_ENV
from desktop.settings.store import Account, Settings
from host.usage import UsageLedger

__all__ = ["CommandError", "account_for", "api_key_for", "printable", "session_account", "sigterm_stops"]


class CommandError(Exception):
    """A command cannot go on; the message tells the person what to do."""


@contextmanager
def sigterm_stops() -> Iterator[None]:
    """SIGTERM stops a reply as Ctrl+C does, so what arrived is kept either way."""

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def session_account(services: Services, session_id: str | None) -> str | None:
    """The account a chat's latest request went to, while it is still in settings: continuing
    a chat keeps its account (and its provider's cache) unless another is asked for."""
    if session_id is None:
        return None
    requests = UsageLedger(services.open_journal()).requests(session_id)
    account_id = next((r.account_id for r in reversed(requests) if r.kind == "chat"), None)
    return account_id if account_id and services.load_settings().account(account_id) else None


def account_for(key: str | None, settings: Settings) -> Account:
    key = key or settings.default_account
    account = settings.account(key) if key else None
    if account is None:
        raise CommandError(
            f"There is no account {key!r}; add one with `cairn accounts add NAME --provider PRESET`."
            if key
            else "There is no account yet; add one with `cairn accounts add NAME --provider PRESET`."
        )
    return account


def api_key_for(account: Account, route: ResolvedRoute, services: Services) -> str | None:
    key = services.api_key(account)
    if key:
        return key
    preset = services.transport.preset(account.provider)
    if preset is not None and not preset.key_required:
        return None
    problem = services.secrets.keychain_problem()
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
