"""MCP servers nobody at Cairn wrote, as ``make public-mcp`` installs them into ``.mcp-public/``:
the reference ``everything``, ``filesystem`` and ``memory`` servers (npm), ``mcp-server-time``
and ``mcp-server-git`` (PyPI, in a venv of their own). Each function gives the server's config
as a person would write it; the tests start the real process."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from host.mcp import McpServerConfig

ROOT = Path(__file__).resolve().parents[2] / ".mcp-public"
NODE_BIN = ROOT / "node_modules" / ".bin"
PY_BIN = ROOT / "venv" / "bin"


def _program(folder: Path, name: str) -> str:
    path = folder / name
    if not path.exists():
        raise RuntimeError(f"{path} is missing: run `make public-mcp` (make test does it first)")
    return str(path)


def everything(name: str = "everything", **fields: object) -> McpServerConfig:
    return McpServerConfig(name=name, command=_program(NODE_BIN, "mcp-server-everything"), **fields)  # type: ignore[arg-type]


def filesystem(folder: Path, name: str = "files", **fields: object) -> McpServerConfig:
    return McpServerConfig(
        name=name,
        command=_program(NODE_BIN, "mcp-server-filesystem"),
        args=(str(folder),),
        **fields,  # type: ignore[arg-type]
    )


def memory(store: Path, name: str = "memory", **fields: object) -> McpServerConfig:
    return McpServerConfig(
        name=name,
        command=_program(NODE_BIN, "mcp-server-memory"),
        env={"MEMORY_FILE_PATH": str(store)},
        **fields,  # type: ignore[arg-type]
    )


def time_server(name: str = "time", **fields: object) -> McpServerConfig:
    return McpServerConfig(
        name=name,
        command=_program(PY_BIN, "mcp-server-time"),
        args=("--local-timezone", "UTC"),
        **fields,  # type: ignore[arg-type]
    )


def git_server(repository: Path, name: str = "git", **fields: object) -> McpServerConfig:
    return McpServerConfig(
        name=name,
        command=_program(PY_BIN, "mcp-server-git"),
        args=("--repository", str(repository)),
        **fields,  # type: ignore[arg-type]
    )


@contextmanager
def everything_over_http() -> Iterator[str]:
    """The everything server over streamable HTTP on a free loopback port; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    node = shutil.which("node") or "node"
    program = _program(NODE_BIN, "mcp-server-everything")
    process = subprocess.Popen(
        [node, program, "streamableHttp"],
        env={"PATH": str(Path(node).parent), "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("the everything server did not listen within 20 s")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
