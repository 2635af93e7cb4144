"""What every command shares: its error, text made safe to print on a terminal
(``printable``), the account and key a command runs with, and SIGTERM handled as Ctrl+C."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import signal
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

from desktop.app import KEY_ENV, Account, CairnApp, CairnError, ResolvedRoute, printable

__all__ = ["CommandError", "account_for", "api_key_for", "printable", "run_stoppable", "session_account"]


T = TypeVar("T")


class CommandError(CairnError):
    """A command cannot go on; the message tells the person what to do."""


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGTERM stops it as Ctrl+C does: the running task is
    cancelled at its next ``await`` (so a reply keeps what arrived, and says so), then
    ``KeyboardInterrupt`` is raised. An exception raised from a signal handler instead could
    land anywhere, even between a reply's cancellation and its saving."""
    stopped = False

    async def guarded() -> T:
        task = asyncio.current_task()
        assert task is not None

        def stop() -> None:
            nonlocal stopped
            stopped = True
            task.cancel()

        # Not on Windows, nor outside the main thread: SIGTERM keeps its default there.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop)
        return await main

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if stopped:
            raise KeyboardInterrupt from None
        raise


def session_account(app: CairnApp, session_id: str | None) -> str | None:
    """The account a chat's latest request went to, while it is still in settings: continuing
    a chat keeps its account (and its provider's cache) unless another is asked for."""
    if session_id is None:
        return None
    account = app.options.last_request_account(session_id)
    return account.id if account is not None else None


def account_for(app: CairnApp, key: str | None) -> Account:
    """The account named (or with the id) ``key``, else the default one; ``CommandError``.
    ``built-in`` is made on first use, with the default model."""
    account = app.accounts.find(key)
    if account is None and key is not None and key.casefold() in ("built-in", "builtin"):
        try:
            account = app.local.ensure_account()
        except CairnError as exc:
            raise CommandError(str(exc)) from exc
    if account is None:
        raise CommandError(
            f"There is no account {key!r}; add one with `cairn accounts add NAME --provider PRESET`."
            if key
            else "There is no account yet; add one with `cairn accounts add NAME --provider PRESET`."
        )
    return account


def api_key_for(app: CairnApp, account: Account, route: ResolvedRoute) -> str | None:
    key = app.accounts.api_key(account)
    if key:
        return key
    preset = app.accounts.preset(account.provider)
    if preset is not None and not preset.key_required:
        return None
    problem = app.accounts.keychain_problem()
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
