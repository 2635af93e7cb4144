"""Cairn's services on a temporary home with MCP servers from tests/mcp_servers, chatting with
the loopback provider in auto mode (``Cairn``), and the lab server's entry and messages."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from desktop.app.cairn import CairnApp
from desktop.loopback import LoopbackProvider
from desktop.root import Root
from desktop.settings.mcp_servers import McpServerSetting, server_setting
from desktop.settings.secrets import SecretStore
from desktop.turn.events import RuntimeEvent
from host.content import MessageContent, PlanRecord, ToolResultPart
from host.paths import CairnPaths
from host.permissions import PermissionPolicy
from host.transcript import TranscriptWriter
from tests.chat_fixtures import loopback_account
from tests.fake_keyring import MemoryKeyring
from tests.mcp_servers import TOOLS_SERVER

__all__ = ["TOKEN", "Cairn", "call", "lab", "search"]

TOKEN = "tok-4f9a1c2e8b7d6a5f"


def lab(secrets: SecretStore, name: str = "lab", *args: str, **fields: Any) -> McpServerSetting:
    return server_setting(
        secrets,
        {"name": name, "command": sys.executable, "args": [str(TOOLS_SERVER), *args], "start_timeout": 20, **fields},
        env={"CAIRN_TEST_TOKEN": TOKEN, "LAB_COLOUR": "teal"},
    )


def search(query: str) -> str:
    return f'[[call tool_search {{"query": "{query}"}}]]'


def call(name: str, arguments: str = "{}") -> str:
    return f"[[call {name} {arguments}]]"


class Cairn:
    """Cairn's services on a temporary home, chatting with the loopback provider in auto mode."""

    def __init__(
        self, paths: CairnPaths, provider: LoopbackProvider, keyring: MemoryKeyring, *, servers_on_demand: bool = False
    ) -> None:
        """``servers_on_demand``: as ``cairn chat`` runs them (``McpHub``)."""
        self.paths, self.provider = paths, provider
        self.services = Root(paths, secrets=SecretStore(keyring), servers_on_demand=servers_on_demand)
        self.journal = self.services.open_journal()
        self.mcp = CairnApp(self.services, titles=False).mcp
        self.session = self.journal.create_session().id
        self.events: list[RuntimeEvent] = []
        self.account = loopback_account(provider)  # the route the chat takes; a test may choose another

    def run(self, before: Callable[[Cairn], Any] | None = None, *texts: str | Callable[[Cairn], Any]) -> list:
        """Start Cairn, run ``before``, send each text (or await each step between them) and
        stop Cairn; the turns' errors."""

        async def go() -> list[str | None]:
            async with self.services.running():
                if before is not None:
                    await before(self)
                route = self.services.route(self.account)
                settings = self.services.load_settings()
                runtime = self.services.runtime(
                    route, None, lambda: self.services.system_state(settings), self.events.append,
                    policy=lambda: PermissionPolicy(default_mode="auto"),
                )  # fmt: skip
                errors = []
                for text in texts:
                    if isinstance(text, str):
                        errors.append((await runtime.send(self.session, text)).error)
                    else:
                        await text(self)
                return errors

        return asyncio.run(go())

    def results(self) -> list[ToolResultPart]:
        rows = TranscriptWriter(self.journal).rows(self.session)
        return [p for r in rows if r.role == "tool" and isinstance(b := r.body(), MessageContent)
                for p in b.parts if isinstance(p, ToolResultPart)]  # fmt: skip

    def plans(self) -> list[PlanRecord]:
        rows = TranscriptWriter(self.journal).rows(self.session)
        return [m for r in rows if isinstance(m := r.meta(), PlanRecord)]
