"""`cairn mcp`: import Claude Desktop's servers, list them, test one, enable, disable, remove.

`import` shows its plan and saves only after a yes (on a terminal) or with `--yes`; a secret in
the file goes to the keychain (or the secrets file, once chosen). Every server that can be is
saved; each that cannot (its secrets with nowhere to go) is named with why, and the command
then exits with 1.
`test NAME` starts the server, lists its tools and stops it, whatever its entry's
start-at-launch setting says.
`sign-in NAME` signs in to a remote server: it prints the address to open, opens the browser
when it can, and waits for the redirect on loopback; the tokens go to the keychain (or the
secrets file). `sign-out NAME` forgets them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import webbrowser
from pathlib import Path

from desktop.app import CairnApp, ConfigImportError, McpServerSetting, McpSettingsError
from desktop.cli.common import CommandError, printable

__all__ = ["add_mcp_commands", "run_mcp"]


def add_mcp_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser("mcp", help="MCP servers: import, list, test, sign in and out, enable, disable, remove")
    verbs = mcp.add_subparsers(dest="verb", metavar="VERB", required=True)
    imports = verbs.add_parser("import", help="import the servers of Claude Desktop's claude_desktop_config.json")
    imports.add_argument("file", nargs="?", type=Path, help="the file (default: Claude Desktop's own)")
    imports.add_argument("--yes", action="store_true", help="save without asking")
    verbs.add_parser("list", help="list the servers and whether each can run")
    test = verbs.add_parser("test", help="start a server, list its tools, stop it")
    test.add_argument("name")
    for verb, what in (("enable", "let a server run"), ("disable", "keep a server from running"),
                       ("remove", "remove a server and its secrets"),
                       ("sign-in", "sign in to a remote server in your browser"),
                       ("sign-out", "forget the sign-in of a remote server")):  # fmt: skip
        verbs.add_parser(verb, help=what).add_argument("name")


def run_mcp(args: argparse.Namespace, app: CairnApp) -> int:
    try:
        if args.verb == "import":
            return _import(args, app)
        if args.verb == "list":
            return _list(app)
        if args.verb == "test":
            return _test(args.name, app)
        if args.verb == "sign-in":
            return _sign_in(args.name, app)
        if args.verb == "sign-out":
            return _sign_out(args.name, app)
        return _change(args.verb, args.name, app)
    except (ConfigImportError, McpSettingsError) as exc:
        raise CommandError(str(exc)) from exc


def _import(args: argparse.Namespace, app: CairnApp) -> int:
    plan = app.mcp.import_preview(args.file)
    for line in plan.lines():
        print(printable(line))
    if not plan.servers:
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            raise CommandError("Nothing was saved: run it again with --yes to import these servers.")
        try:
            answer = input(f"Import {len(plan.servers)} server{'s' if len(plan.servers) != 1 else ''}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was saved.")
            return 0
    result = asyncio.run(app.mcp.import_servers(plan))
    saved = len(result.saved)
    print(f"Saved {saved} server{'s' if saved != 1 else ''}." + (" `cairn mcp test NAME` tries one." if saved else ""))
    for refused in result.not_saved:
        print(printable(refused.reason), file=sys.stderr)
    if any(refused.no_place for refused in result.not_saved):
        print("`cairn secrets file on` keeps secrets in a file only you can read; then import again.", file=sys.stderr)
    return 1 if result.not_saved else 0


def _list(app: CairnApp) -> int:
    entries = app.mcp.entries()
    if not entries.servers and not entries.problems:
        print("No MCP servers yet. `cairn mcp import` brings Claude Desktop's.")
    for server in entries.servers:
        what = server.url if server.transport == "http" else " ".join([server.command or "", *server.args])
        flags = [] if server.enabled else ["disabled"]
        flags += ["trusted"] if server.trusted else []
        flags += ["starts with Cairn"] if server.start_at_launch else []
        flags += [f"secrets: {', '.join([*server.secret_env, *server.secret_headers])}"] if (
            server.secret_env or server.secret_headers) else []  # fmt: skip
        print(printable(f"{server.name}: {what}" + (f" [{'; '.join(flags)}]" if flags else "")))
        print(printable(f"  {app.mcp.last_known(server)}"))
    for problem in entries.problems:
        print(printable(problem), file=sys.stderr)
    return 0


def _test(name: str, app: CairnApp) -> int:
    if app.mcp.entries().get(name) is None:
        raise CommandError(f"No MCP server is named {name!r}; `cairn mcp list` shows them.")
    try:
        status, tools = asyncio.run(app.mcp.test(name))
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    print(printable(status.describe()))
    for tool in tools:
        summary = tool.spec.description.strip().splitlines()[0] if tool.spec.description.strip() else ""
        print(printable(f"  {tool.name}: {summary}"))
    for skipped in status.skipped:
        print(printable(f"  left out {skipped.name}: {skipped.reason}"), file=sys.stderr)
    if status.stderr_tail and status.state.value == "failed":
        print("What it wrote on stderr:", file=sys.stderr)
        for line in status.stderr_tail.splitlines():  # line by line: printable() escapes a newline
            print(printable(f"  {line}"), file=sys.stderr)
    return 0 if status.state.value == "ready" else 1


def _sign_in(name: str, app: CairnApp) -> int:
    server = _entry(name, app)

    def open_url(url: str) -> None:  # on the core's loop, which must go on to catch the redirect
        print(f"Open this address to sign in to {printable(server.name)}:\n  {printable(url)}", flush=True)
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        print("Waiting for your browser to come back…", flush=True)

    view = asyncio.run(app.mcp.sign_in(server.name, open_url))
    assert view.status is not None
    print(printable(view.describe()))
    return 0 if view.status.state.value == "ready" else 1


def _sign_out(name: str, app: CairnApp) -> int:
    server = _entry(name, app)
    kept = asyncio.run(app.mcp.sign_out(server.name))
    print(f"{printable(server.name)}: {'signed out' if kept else 'was not signed in'}.")
    return 0


def _entry(name: str, app: CairnApp) -> McpServerSetting:
    server = app.mcp.entries().get(name)
    if server is None:
        raise CommandError(f"No MCP server is named {name!r}; `cairn mcp list` shows them.")
    return server


def _change(verb: str, name: str, app: CairnApp) -> int:
    server = app.mcp.entries().get(name)
    if server is None:
        raise CommandError(f"No MCP server is named {name!r}; `cairn mcp list` shows them.")

    async def change() -> None:
        if verb == "remove":
            await app.mcp.remove(server.name)
        else:
            await app.mcp.set_enabled(server.name, verb == "enable")

    asyncio.run(change())
    print(f"{server.name}: {'removed' if verb == 'remove' else verb + 'd'}.")
    return 0
