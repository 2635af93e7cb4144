"""MCP prompts for the composer: what the ready servers offer, and one prompt filled in as the
text of the person's next message, for them to read, edit and send (``host.mcp.prompts`` says
how a prompt's messages become that text). Nothing here sends anything to a model."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from host.errors import CairnError
from host.mcp import ServerPrompt

if TYPE_CHECKING:
    from host.mcp.server import McpServer

__all__ = ["FilledPrompt", "PromptChoices", "PromptImage", "PromptUnavailable", "fill_prompt", "prompt_choices"]

_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


class PromptUnavailable(CairnError):
    """A prompt could not be had; the message says why, in the server's words where it gave any."""


@dataclass(frozen=True)
class PromptChoices:
    """Every prompt of the ready servers, by server then name, and a line for each problem (a
    prompt left out, a listing that failed)."""

    prompts: tuple[ServerPrompt, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromptImage:
    """An image a prompt carries, for the composer to attach under ``name``."""

    name: str
    data: bytes


@dataclass(frozen=True)
class FilledPrompt:
    """A prompt as the person's message: its ``text`` (redacted) and the images to attach."""

    text: str
    images: tuple[PromptImage, ...] = ()


async def prompt_choices(servers: Mapping[str, McpServer]) -> PromptChoices:
    """The prompts of every ready server, asked of all at once (each listing is bounded)."""
    listings = await asyncio.gather(*(server.prompts.listing() for server in servers.values()))
    prompts = tuple(prompt for listed, _ in listings for prompt in listed)
    return PromptChoices(prompts, tuple(problem for _, problems in listings for problem in problems))


async def fill_prompt(
    servers: Mapping[str, McpServer], server: str, name: str, arguments: Mapping[str, str]
) -> FilledPrompt:
    """The prompt ``name`` of ``server`` with ``arguments``; ``PromptUnavailable`` in words."""
    running = servers.get(server)
    if running is None:
        raise PromptUnavailable(f"The MCP server {server!r} is not running now; its prompts cannot be used.")
    output = await running.get_prompt(name, dict(arguments))
    if output.is_error:
        raise PromptUnavailable(output.text)
    images = tuple(
        PromptImage(f"{name} {number}.{_EXTENSIONS.get(media.media_type, 'png')}", media.data)
        for number, media in enumerate(output.media, start=1)
        if media.kind == "image"
    )
    return FilledPrompt(output.text, images)
