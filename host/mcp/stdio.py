"""The stdio transport: a server as a child process, newline-delimited JSON-RPC on its pipes.

The SDK's ``stdio_client`` buffers a line without limit and passes stderr to a file. Cairn
needs both capped: a server that writes a gigabyte without a newline must not take the
app's memory, and stderr is kept only as a short tail for the status. So this transport
frames lines itself, with a cap, and hands the SDK's own message types to the SDK's
session; everything above framing (handshake, requests, notifications) is the SDK's.

A message over the size cap is not a fault: its line is read on to its end, only its head and
tail held (``host.mcp.lines``), and the request it answers is told it was too large while the
server runs on (``host.mcp.oversize``). What the process does wrong is a *fault*, reported once
through ``ProcessWatch``: it exited, wrote something that is not JSON-RPC on stdout, sent a
line with no end in sight (``max_line_bytes``), or flooded stderr. A fault on stdout closes the
session's stream, so every pending request ends at once.

Stopping follows the MCP lifecycle: close stdin, give the server ``stop_timeout`` seconds to
exit, then SIGTERM its process group, then SIGKILL. It runs shielded, so a cancelled owner
never leaves a live process behind. And if Cairn dies without stopping it (SIGKILL, a crash),
on Linux the server gets SIGTERM from the kernel (``PR_SET_PDEATHSIG``, set by util-linux's
``setpriv`` just before it becomes the server: the process is the same, and so is its pid);
and, for one that outlives that, its pid is in the record of children (``host.children``), so
the next Cairn ends it.
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types as mcp_types
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from host.children import ChildRecord
from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.lines import LineFramer, LongLine, in_words
from host.mcp.oversize import InFlight, judge

__all__ = ["ProcessWatch", "open_stdio"]

log = logging.getLogger(__name__)

_CHUNK = 65_536


def _dies_with_cairn(argv: list[str], env: dict[str, str]) -> list[str]:
    """``argv`` run through ``setpriv --pdeathsig TERM`` on Linux where both it and the command
    can be found (a command that cannot is started as it is, so its error stays "no such
    program" rather than setpriv's exit code)."""
    setpriv = _setpriv()
    if setpriv is None or shutil.which(argv[0], path=env.get("PATH")) is None:
        return argv
    return [setpriv, "--pdeathsig", "TERM", "--", *argv]


@functools.cache
def _setpriv() -> str | None:
    """util-linux's ``setpriv``, if this is Linux and it knows ``--pdeathsig`` (2.33 and on)."""
    found = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if found is None:
        return None
    try:
        told = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return found if "--pdeathsig" in told.stdout else None


_QUOTE = 200  # characters of a bad line quoted in the fault


class ProcessWatch:
    """How one run of a server went wrong, if it did, and what its process said on stderr.

    ``fault`` is set at most once per run, with a sentence a person can read; ``on_fault`` is
    then called (on the event loop) so the server's owner task can wind the run down. The
    HTTP transport uses it for faults too; its stderr stays empty.
    """

    def __init__(self, limits: McpLimits, redact: Callable[[str], str], on_fault: Callable[[str], None]) -> None:
        self._limits, self._redact, self._on_fault = limits, redact, on_fault
        self._tail = bytearray()
        self._recent: deque[tuple[float, int]] = deque()
        self._recent_bytes = 0
        self.stderr_bytes = 0
        self.fault: str | None = None
        self.stopping = False
        self.exit_code: int | None = None
        self.pid: int | None = None

    def report(self, fault: str) -> None:
        if self.fault is None and not self.stopping:
            self.fault = self._redact(fault)
            self._on_fault(self.fault)

    def stderr_tail(self) -> str:
        """The end of stderr, decoded and redacted, at most ``stderr_tail_chars`` long."""
        text = self._redact(self._tail.decode("utf-8", "replace"))
        limit = self._limits.stderr_tail_chars
        if len(text) <= limit:
            return text.strip()
        text = text[-limit:]
        # Start on a line boundary when there is one close by; a half line reads as noise.
        newline = text.find("\n")
        return ("…" + text[newline + 1 :] if 0 <= newline < limit // 4 else "…" + text).strip()

    def took_stderr(self, chunk: bytes) -> None:
        self.stderr_bytes += len(chunk)
        self._tail += chunk
        if len(self._tail) > self._limits.stderr_kept_bytes:
            del self._tail[: len(self._tail) - self._limits.stderr_kept_bytes]
        now = time.monotonic()
        self._recent.append((now, len(chunk)))
        self._recent_bytes += len(chunk)
        while self._recent and self._recent[0][0] < now - self._limits.stderr_flood_window:
            self._recent_bytes -= self._recent.popleft()[1]
        if self._recent_bytes > self._limits.stderr_flood_bytes:
            self.report(
                f"it flooded its error output (over {in_words(self._limits.stderr_flood_bytes)} "
                f"in {self._limits.stderr_flood_window:g} s)"
            )


@asynccontextmanager
async def open_stdio(
    config: McpServerConfig, watch: ProcessWatch, limits: McpLimits, children: ChildRecord | None = None
) -> AsyncIterator[TransportStreams]:
    """Start the server's process and yield the session's streams; stop it on exit. While it
    runs, its pid is in ``children``.

    Raises ``OSError`` if the process cannot be started (no such program, not executable).
    """
    assert config.command is not None
    command = config.command
    if sys.platform == "win32":  # pragma: no cover - npx.cmd and friends
        from mcp.os.win32.utilities import get_windows_executable_command

        command = get_windows_executable_command(command)
    env = get_default_environment() | config.env
    process = await anyio.open_process(
        _dies_with_cairn([command, *config.args], env),
        env=env,
        cwd=config.cwd,
        start_new_session=sys.platform != "win32",  # its own group, so stopping reaches its children
    )
    watch.pid = process.pid
    if children is not None:
        children.started(process.pid, f"the MCP server {config.name}")
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    stderr_done = anyio.Event()

    async with anyio.create_task_group() as tasks:
        in_flight = InFlight()
        tasks.start_soon(_read_stdout, process, to_session, watch, limits, (config.name, in_flight))
        tasks.start_soon(_write_stdin, process, from_session, in_flight)
        tasks.start_soon(_read_stderr, process, watch, stderr_done)
        try:
            yield read_stream, write_stream
        finally:
            watch.stopping = True
            with anyio.CancelScope(shield=True):
                read_stream.close()  # the stdout reader now drains and drops, so the server can exit
                write_stream.close()
                await _stop(process, config.stop_timeout, limits.kill_grace)
                watch.exit_code = process.returncode
                if children is not None and process.returncode is not None:
                    children.ended(process.pid)
                # A crash's traceback is the last thing on stderr: read it before the pipe closes.
                with anyio.move_on_after(limits.kill_grace):
                    await stderr_done.wait()
                with anyio.move_on_after(limits.kill_grace):
                    await process.aclose()
            tasks.cancel_scope.cancel()


async def _read_stdout(
    process: anyio.abc.Process,
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
    watch: ProcessWatch,
    limits: McpLimits,
    requests: tuple[str, InFlight],
) -> None:
    """Read the server's lines into the session. ``requests``: the server's name, for
    ``cairn.log``, and the requests in flight, which a line over the cap may answer."""
    assert process.stdout is not None
    framer = LineFramer(limits)
    delivering = True
    try:
        while True:
            chunk = await process.stdout.receive(_CHUNK)
            if not delivering:
                continue  # drain, so a server blocked on a full pipe can still exit
            for line in framer.feed(chunk):
                problem = await _deliver(line, to_session, requests, limits)
                if problem is not None:
                    watch.report(problem)
                    delivering = False
                    break
            if delivering and framer.flooding:
                watch.report(
                    f"it sent a message over {in_words(limits.max_line_bytes)} on stdout, more than Cairn will read"
                )
                delivering = False
            if not delivering:
                framer = LineFramer(limits)  # what it held is let go
                await to_session.aclose()  # pending requests end now
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        pass
    finally:
        if not watch.stopping:
            # Say how it ended before the session hears of it, so a pending call can tell.
            with anyio.CancelScope(shield=True):
                code = await _exit_code(process)
            watch.report(f"the server exited with code {code}" if code is not None else "the server closed its output")
        await to_session.aclose()


async def _deliver(
    line: bytes | LongLine,
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
    requests: tuple[str, InFlight],
    limits: McpLimits,
) -> str | None:
    """Pass one line to the session; say what is wrong with it if it is not JSON-RPC. A line
    over the cap is judged (``host.mcp.oversize``): the request it answers is told so."""
    name, in_flight = requests
    if isinstance(line, LongLine):
        verdict = judge(line, in_flight, limits.max_message_bytes)
        if verdict.dropped is not None:
            log.warning("the MCP server %s sent more than Cairn reads of one message: %s", name, verdict.dropped)
        if verdict.answer is None:
            return verdict.fault
        message = verdict.answer
    else:
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except (ValidationError, ValueError):
            shown = line[:_QUOTE].decode("utf-8", "replace")
            more = "…" if len(line) > _QUOTE else ""
            return f"it wrote something that is not JSON-RPC on stdout: {shown!r}{more} (logs belong on stderr)"
        in_flight.answered(message)
    with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        await to_session.send(SessionMessage(message))
    return None


async def _write_stdin(
    process: anyio.abc.Process, from_session: MemoryObjectReceiveStream[SessionMessage], in_flight: InFlight
) -> None:
    assert process.stdin is not None
    try:
        async with from_session:
            async for item in from_session:
                in_flight.sent(item.message)  # before it is written: its answer can come at once
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await process.stdin.send(data.encode("utf-8"))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        pass  # the server is gone; its stdout reader reports how
    finally:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()


async def _read_stderr(process: anyio.abc.Process, watch: ProcessWatch, done: anyio.Event) -> None:
    assert process.stderr is not None
    try:
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            while True:
                watch.took_stderr(await process.stderr.receive(_CHUNK))
    finally:
        done.set()


async def _exit_code(process: anyio.abc.Process, wait: float = 0.5) -> int | None:
    """The exit code, if the process ends within ``wait`` seconds of closing its stdout."""
    with anyio.move_on_after(wait):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode


async def _stop(process: anyio.abc.Process, grace: float, kill_grace: float) -> None:
    """Close stdin, wait ``grace`` seconds, SIGTERM the group, wait ``kill_grace``, SIGKILL."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if await _exited(process, grace):
        return
    if sys.platform == "win32":  # pragma: no cover
        with suppress(ProcessLookupError, OSError):
            process.kill()
    else:
        from mcp.os.posix.utilities import terminate_posix_process_tree

        await terminate_posix_process_tree(process, kill_grace)
    await _exited(process, kill_grace)


async def _exited(process: anyio.abc.Process, timeout: float) -> bool:
    deadline = anyio.current_time() + timeout
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.01)
    return True
