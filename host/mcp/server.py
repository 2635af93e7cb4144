"""One MCP server: its lifecycle, its tools, and calls to them, through the official SDK.

Each server has one owner task. It enters the transport and the SDK's ``Client`` and leaves
them again, always itself: the SDK's anyio cancel scopes break when they are left from
another task. ``stop()`` and a fault only *signal* that task (they cancel the cancel scope it
owns); the task unwinds its own context managers, and the transport stops the process in
order (stdin closed, a grace period, SIGTERM, SIGKILL).

Tool calls run on the caller's task: the SDK's requests are plain stream sends and waits, with
no task group of their own, so any task on the loop may make them.

Whatever a server does, the chat goes on: a server that fails is marked ``failed`` with a
reason and the tail of its stderr, and a call to it returns an error ``ToolOutput``;
``Tool.run`` raises nothing but cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import TypeVar

import anyio
import httpx2
from mcp import Client
from mcp import types as mcp_types
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from pydantic import JsonValue

import host.identity
from host.children import ChildRecord
from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.elicitation import Elicitations
from host.mcp.failures import Refused, WatchedAuth, explain, leaf, needs_sign_in, request_failed, unavailable
from host.mcp.names import tool_names
from host.mcp.prompts import PromptShelf, prompt_output
from host.mcp.rate import Rate
from host.mcp.remote import open_http
from host.mcp.resources import ServerResources
from host.mcp.results import cap_text, instructions_text, resource_output, tool_output
from host.mcp.roots import OfferedRoots
from host.mcp.server_log import ServerLog
from host.mcp.status import ServerState, ServerStatus
from host.mcp.stdio import ProcessWatch, open_stdio
from host.mcp.tools import build_tools, list_tools
from host.tools import Tool, ToolOutput, ToolSpec
from host.tools.progress import reporter

__all__ = ["McpServer"]

log = logging.getLogger(__name__)

_CLIENT_INFO = mcp_types.Implementation(name="cairn", version="0.1.0")
_R = TypeVar("_R")
_O = TypeVar("_O")


class McpServer:
    """One configured MCP server. Create it, ``await start()``, read ``status`` and ``tools()``,
    ``await stop()``. All methods run on the one event loop; ``on_change`` is called there,
    with the new status, whenever the state or the tools' specs change."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        redact: Callable[[str], str] | None = None,
        on_change: Callable[[ServerStatus], None] | None = None,
        limits: McpLimits | None = None,
        auth: httpx2.Auth | None = None,
        children: ChildRecord | None = None,  # where a stdio server's process is recorded while it runs
    ) -> None:
        self.config, self._children = config, children
        # Sign-in for a remote server: the caller builds the SDK's OAuthClientProvider with its
        # own token storage and browser; host/ only hands it to the HTTP client.
        self._auth = WatchedAuth(auth, self._refused) if auth is not None else None
        self._signed_out = False
        self._redact: Callable[[str], str] = redact or str  # str: the text itself
        self.roots = OfferedRoots(config.roots)
        self._on_change = on_change
        self._limits = limits or McpLimits()
        self._status = ServerStatus(config.name, ServerState.STOPPED)
        self._tools: tuple[Tool, ...] = ()
        self.resources = ServerResources(config, self._redact, self._limits, lambda: self._set(self._status))
        self.log = ServerLog(config.name, self._redact)  # what it logged, for its panel and cairn.log
        self._asks = Elicitations(config.name, self._redact)  # its requests for input; calls' time limits
        self._shaped: frozenset[str] = frozenset()  # the tools that declare an output schema
        self._theirs: dict[str, str] = {}  # each tool's name in Cairn: its name on the server
        self.prompts = PromptShelf(config.name, self._redact, self._limits, self._ready_client)  # for the composer
        self._instructions = ""
        self._client: Client | None = None
        self._watch: ProcessWatch | None = None
        self._task: asyncio.Task[None] | None = None
        self._life: anyio.CancelScope | None = None
        self._settled = asyncio.Event()
        self._relist = asyncio.Event()
        self._changes = Rate(self._limits.list_changed_max, self._limits.list_changed_window)
        self._stop_requested = False
        self._phase = ""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def status(self) -> ServerStatus:
        return self._status

    @property
    def pid(self) -> int | None:
        """The process of the current or last run of a stdio server."""
        return self._watch.pid if self._watch is not None else None

    def stderr_tail(self) -> str:
        """The end of what the current or last run wrote on stderr, as it is now (redacted)."""
        return self._watch.stderr_tail() if self._watch is not None else ""

    def tools(self) -> list[Tool]:
        """The server's tools while it is ready; none otherwise."""
        return list(self._tools) if self._status.state is ServerState.READY else []

    def listed(self) -> list[tuple[str, ToolSpec]]:
        """Each of ``tools()`` as the server names it, with its spec: what a host remembers."""
        return [(self._theirs[tool.spec.name], tool.spec) for tool in self.tools()]

    async def settled(self) -> ServerStatus:
        """Wait until the current start has ended, ready or not, and return the status."""
        await self._settled.wait()
        return self._status

    def _ready_client(self) -> Client | None:
        return self._client if self._status.state is ServerState.READY else None

    # -- lifecycle -----------------------------------------------------------------------------

    def launch(self) -> None:
        """Start the server's owner task unless it runs, and return at once; the status says
        how it goes (``on_change``). Call it on the event loop. A failed or stopped server
        starts anew."""
        if self._task is None or self._task.done():
            self._settled = asyncio.Event()
            self._stop_requested = self._signed_out = False
            self._changes.clear()
            self._relist.clear()
            self._task = asyncio.get_running_loop().create_task(self._own(), name=f"mcp server {self.name}")
            self._tools = ()
            self._set(ServerStatus(self.name, ServerState.STARTING))

    async def start(self) -> ServerStatus:
        """``launch()``, then wait until the server is ready or has failed (at most about
        ``start_timeout`` seconds), and return its status."""
        self.launch()
        await self._settled.wait()
        return self._status

    async def stop(self) -> None:
        """Stop the server in order and wait for it: stdin closed, ``stop_timeout`` seconds to
        exit, then SIGTERM and SIGKILL. Safe to call in any state, from any task on the loop."""
        task = self._task
        if task is not None and not task.done():
            self._stop_requested = True
            if self._life is not None:
                self._life.cancel()
            limit = self.config.stop_timeout + 5 * self._limits.kill_grace + 1.0
            done, _ = await asyncio.wait({task}, timeout=limit)
            if not done:  # pragma: no cover - the transport's shutdown is bounded; this is a backstop
                log.warning("the MCP server %s did not stop within %.0f s; abandoning its task", self.name, limit)
                task.cancel()
                await asyncio.wait({task}, timeout=1.0)
        self._task = None
        if self._status.state is not ServerState.STOPPED:
            self._set(ServerStatus(self.name, ServerState.STOPPED))

    async def _own(self) -> None:
        """The owner task: one run of the server, from spawn to exit."""
        watch = ProcessWatch(self._limits, self._redact, self._on_fault)
        self._watch = watch
        reason: str | None = None
        signed_out = False
        life = anyio.CancelScope(deadline=anyio.current_time() + self.config.start_timeout)
        try:
            with life:
                self._life = life
                if self._stop_requested:
                    life.cancel()
                self._phase = "waiting for its answer to initialize"
                async with self._connect(watch) as client:
                    self._instructions = instructions_text(client.instructions, self._redact, self._limits)
                    if client.server_capabilities.logging is not None:  # older servers: ask once
                        with contextlib.suppress(MCPError):  # a server that refuses it still runs
                            await client.set_logging_level("info")  # deprecated in 2026-07-28, not before
                    self._phase = "listing its tools"
                    listing = await list_tools(client, self._limits)
                    life.deadline = math.inf
                    self._client = client
                    self.resources.connected(client)
                    self._publish(listing)
                    await self._serve(client)
        except Exception as exc:  # noqa: BLE001 - whatever the server does, the chat goes on
            reason = explain(exc, self.config)
            signed_out = self._signed_out or needs_sign_in(exc)
        except asyncio.CancelledError:
            self._stop_requested = True  # the loop is closing: the task was cancelled from outside
            raise
        finally:
            self._client, self._life, self._tools = None, None, ()
            self.resources.connected(None)
            if self._stop_requested:
                self._set(ServerStatus(self.name, ServerState.STOPPED))
            else:
                if self._signed_out:
                    signed_out, reason = True, f"sign in again to {self.name}"
                elif watch.fault is not None:
                    reason = watch.fault
                elif reason is None and life.cancelled_caught:
                    reason = f"it did not finish starting within {self.config.start_timeout:g} s ({self._phase})"
                self._set(
                    ServerStatus(
                        self.name,
                        ServerState.SIGN_IN if signed_out else ServerState.FAILED,
                        reason=self._redact(reason or "it stopped without saying why"),
                        stderr_tail=watch.stderr_tail(),
                    )
                )
            self._settled.set()

    def _connect(self, watch: ProcessWatch) -> Client:
        transport = (
            open_stdio(self.config, watch, self._limits, self._children)
            if self.config.transport == "stdio"
            else open_http(self.config, self._auth, self._limits)
        )
        return Client(
            transport,
            mode="legacy",  # the initialize handshake: what every server in use today speaks
            cache=None,
            message_handler=self._on_message,
            elicitation_callback=self._asks.answer,  # declares the capability: some servers list more tools
            logging_callback=self.log.said,
            list_roots_callback=self.roots.callback(),  # None: roots off, no capability declared
            log_level="info",  # servers of the 2026-07-28 protocol log only what a request asks for
            client_info=_CLIENT_INFO,
        )

    async def offer_roots(self, roots: tuple[str, ...]) -> None:
        """Offer these roots from now on (roots on already), telling the server if it runs."""
        self.config = self.config.model_copy(update={"roots": roots})
        await self.roots.change(roots, self._client)

    def _on_fault(self, _reason: str) -> None:
        if self._life is not None:
            self._life.cancel()

    async def _on_message(self, message: IncomingMessage) -> None:
        """Notifications and transport errors, on the SDK's task."""
        watch = self._watch
        if watch is None:
            return
        if isinstance(message, Exception):
            watch.report(f"its connection failed: {leaf(message)}")
        elif self.resources.take(message):
            return
        elif isinstance(message, mcp_types.ToolListChangedNotification):
            if not self._changes.allow():
                watch.report(
                    f"it said its tools changed more than {self._limits.list_changed_max} times "
                    f"in {self._limits.list_changed_window:g} s"
                )
            else:
                self._relist.set()
        elif isinstance(message, mcp_types.PromptListChangedNotification):
            self.prompts.changed()

    async def _serve(self, client: Client) -> None:
        """Re-list the tools when the server says they changed, a little after it says so, so a
        burst of notifications costs one listing."""
        while True:
            await self._relist.wait()
            await anyio.sleep(self._limits.relist_debounce)
            self._relist.clear()
            try:
                with anyio.fail_after(self._limits.list_timeout):
                    listing = await list_tools(client, self._limits)
            except TimeoutError:
                raise Refused(
                    f"it did not list its tools within {self._limits.list_timeout:g} s after saying they changed"
                ) from None
            self._publish(listing)

    # -- tools ---------------------------------------------------------------------------------

    def _publish(self, listing: Sequence[mcp_types.Tool]) -> None:
        """Turn a listing into tools; change the status (and tell) only if something changed."""
        tools, skipped = build_tools(
            self.name,
            listing,
            trusted=self.config.trusted,
            redact=self._redact,
            max_description=self._limits.max_description_chars,
            runner=lambda tool: partial(self.call, tool),
        )
        identity = host.identity.tool_schema_sha256(tool.spec for tool in tools)
        status = ServerStatus(
            self.name,
            ServerState.READY,
            tool_count=len(tools),
            skipped=tuple(skipped),
            tools_sha256=identity,
            stderr_tail=self._watch.stderr_tail() if self._watch else "",
            instructions=self._instructions,
        )
        self._shaped = frozenset(tool.name for tool in listing if tool.output_schema is not None)
        self._theirs = {ours: own for own, ours in tool_names(self.name, (tool.name for tool in listing)).items()}
        current = self._status
        same = (current.tools_sha256, current.skipped, current.instructions)
        if current.state is ServerState.READY and same == (identity, status.skipped, status.instructions):
            return
        self._tools = tuple(tools)
        self._set(status)
        self._settled.set()

    async def call(self, tool: str, arguments: Mapping[str, JsonValue]) -> ToolOutput:
        """Call the server's tool ``tool`` (its own name, not Cairn's). Never raises, except
        cancellation: whatever goes wrong becomes an error output that says what."""
        limit = self._limits.max_result_chars
        report = reporter()  # read here: the request runs in the server's own task

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report(progress, total, self._redact(message) if isinstance(message, str) else None)

        told = progressed if report is not None else None  # no token asked for: the server need not say
        shaped = tool in self._shaped
        return await self._ask(
            ("the call", tool),
            lambda client: client.call_tool(tool, dict(arguments), progress_callback=told),
            partial(tool_output, redact=self._redact, max_chars=limit, server=self.name, declares_output=shaped),
        )

    async def read_resource(self, uri: str) -> ToolOutput:
        """Read the server's resource ``uri``: its text, or a description of binary content.
        Never raises, except cancellation."""
        limit = self._limits.max_result_chars
        return await self._ask(
            ("the read", uri),
            lambda client: client.read_resource(uri),
            lambda result: resource_output(result, redact=self._redact, max_chars=limit),
        )

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> ToolOutput:
        """The prompt ``name`` as the text of the person's message (``host.mcp.prompts``), its
        images as ``media``. Never raises, except cancellation."""
        limit = self._limits.max_result_chars
        made = partial(prompt_output, redact=self._redact, max_chars=limit, server=self.name, prompt=name)
        return await self._ask(("the request", name), lambda client: client.get_prompt(name, dict(arguments)), made)

    async def read_contents(self, uri: str) -> mcp_types.ReadResourceResult | str:
        """Read ``uri`` as it is (to attach it), or say why not. Never raises, except cancellation."""
        read = await self._ask(("the read", uri), lambda client: client.read_resource(uri), lambda result: result)
        return read.text if isinstance(read, ToolOutput) else read

    async def _ask(
        self,
        what: tuple[str, str],
        request: Callable[[Client], Awaitable[_R]],
        output: Callable[[_R], _O],
    ) -> _O | ToolOutput:
        """One request to the server, its failures in words. ``what``: the request ("the
        call", "the read", "the request" for a prompt) and the tool, URI or prompt it names."""
        client, watch = self._client, self._watch
        if client is None or watch is None or self._status.state is not ServerState.READY:
            return ToolOutput(unavailable(self._status), is_error=True)
        timeout = self.config.call_timeout
        try:
            with self._asks.limit(timeout):  # paused while a person answers the server
                result = await request(client)
        except Exception as exc:  # noqa: BLE001 - a broken server never breaks the turn
            if self._signed_out or needs_sign_in(exc):
                return ToolOutput(unavailable(self._status), is_error=True)
            text = request_failed(exc, self.name, what, timeout, fault=watch.fault, stopping=self._stop_requested)
            return ToolOutput(cap_text(self._redact(text), self._limits.max_result_chars), is_error=True)
        return output(result)

    def _refused(self) -> None:
        self._signed_out = True
        self._set(ServerStatus(self.name, ServerState.SIGN_IN, reason=f"sign in again to {self.name}"))

    def _set(self, status: ServerStatus) -> None:
        self._status = status
        if self._on_change is not None:
            try:
                self._on_change(status)
            except Exception:
                log.exception("an MCP status listener failed")
