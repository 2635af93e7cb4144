"""MCP servers the tests start as real processes: well-behaved ones written with the SDK's
``MCPServer``, and bad ones that do what real servers sometimes do."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from host.mcp import McpServerConfig

HERE = Path(__file__).resolve().parent
TOOLS_SERVER = HERE / "tools_server.py"
BAD_SERVER = HERE / "bad_server.py"
ASKING_SERVER = HERE / "asking_server.py"
PROMPTS_SERVER = HERE / "prompts_server.py"


def tools_server(name: str = "demo", *args: str, **options: Any) -> McpServerConfig:
    """A config that runs tools_server.py over stdio with ``args``."""
    options.setdefault("start_timeout", 20.0)
    options.setdefault("call_timeout", 10.0)
    options.setdefault("stop_timeout", 2.0)
    return McpServerConfig(name=name, command=sys.executable, args=(str(TOOLS_SERVER), *args), **options)


def bad_server(mode: str, name: str = "bad", **options: Any) -> McpServerConfig:
    options.setdefault("start_timeout", 10.0)
    options.setdefault("stop_timeout", 1.0)
    return McpServerConfig(name=name, command=sys.executable, args=(str(BAD_SERVER), mode), **options)


def asking_server(name: str = "asking", **options: Any) -> McpServerConfig:
    """A config that runs asking_server.py, whose tool asks the person for input."""
    options.setdefault("start_timeout", 20.0)
    options.setdefault("stop_timeout", 2.0)
    return McpServerConfig(name=name, command=sys.executable, args=(str(ASKING_SERVER),), **options)


def prompts_server(name: str = "notes", **options: Any) -> McpServerConfig:
    """A config that runs prompts_server.py over stdio."""
    options.setdefault("start_timeout", 20.0)
    options.setdefault("call_timeout", 10.0)
    options.setdefault("stop_timeout", 2.0)
    return McpServerConfig(name=name, command=sys.executable, args=(str(PROMPTS_SERVER),), **options)


RESOURCES_SERVER = HERE / "resources_server.py"


def resources_server(name: str = "shelf", mode: str = "normal", **options: Any) -> McpServerConfig:
    """A config that runs resources_server.py over stdio in ``mode``."""
    options.setdefault("start_timeout", 20.0)
    options.setdefault("call_timeout", 10.0)
    options.setdefault("stop_timeout", 2.0)
    return McpServerConfig(name=name, command=sys.executable, args=(str(RESOURCES_SERVER), mode), **options)
