"""A server's prompts: listed for the composer, and one prompt made the text of the person's
own message.

A prompt becomes one message the person sees, edits and sends. Its user-role text is taken as
it is. An assistant-role message is never made a turn the model did not write: it is quoted
(each line after ``> ``) under a line that says the server's prompt brought it. An embedded
text resource is shown under its address; an image is kept as bytes (the composer attaches
it) and described; a sound or a binary resource is described. Everything the server wrote is
redacted; what is listed is capped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import anyio
from mcp import Client
from mcp import types as mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from host.mcp.config import McpLimits
from host.mcp.failures import Refused, leaf
from host.mcp.pages import all_pages, whole
from host.mcp.results import ContentReader, MediaLimits, cap_text
from host.mcp.status import PromptArgument, ServerPrompt
from host.tools import ToolOutput

__all__ = ["QUOTED", "PromptShelf", "build_prompts", "list_prompts", "prompt_output"]

QUOTED = "The server's prompt includes this reply as context:"
_SHOWN = 1_000  # characters kept of a prompt's or an argument's title and description
_NAME = 200  # a longer name is no name a person picks from a list
_MAX_ARGUMENTS = 32  # a form with more fields is no small form


async def list_prompts(client: Client, limits: McpLimits) -> list[mcp_types.Prompt]:
    """Every prompt the server lists, page by page, within ``limits``; ``Refused`` past them."""
    got = await all_pages(
        lambda cursor: client.list_prompts(cursor=cursor),
        lambda page: page.prompts,
        most=limits.max_prompts,
        pages=limits.max_list_pages,
    )
    return whole(got, "prompt", "lists", most=limits.max_prompts, pages=limits.max_list_pages)


def build_prompts(
    server: str, listing: Sequence[mcp_types.Prompt], redact: Callable[[str], str]
) -> tuple[list[ServerPrompt], list[str]]:
    """The prompts a person can pick, in name order, and a line for each one left out. A name
    is sent back to the server as it is, so a prompt whose name or argument names the redactor
    would change (or that are empty, too long or repeated) is left out rather than altered."""
    prompts: list[ServerPrompt] = []
    left_out: list[str] = []
    seen: set[str] = set()
    for listed in sorted(listing, key=lambda prompt: prompt.name):
        shown = cap_text(redact(listed.name), _NAME)
        problem = _name_problem(listed.name, redact, "its name")
        problem = problem or ("two prompts share its name" if listed.name in seen else "")
        arguments = listed.arguments or []
        names = [argument.name for argument in arguments]
        if not problem and len(arguments) > _MAX_ARGUMENTS:
            problem = f"it takes {len(arguments)} arguments, and Cairn's form holds at most {_MAX_ARGUMENTS}"
        if not problem and len(set(names)) < len(names):
            problem = "two of its arguments share a name"
        problem = problem or next((p for p in (_name_problem(n, redact, "an argument's name") for n in names) if p), "")
        seen.add(listed.name)
        if problem:
            left_out.append(f"{server}: the prompt {shown!r} is left out: {problem}")
            continue
        prompts.append(
            ServerPrompt(
                server=server,
                name=listed.name,
                title=_said(listed.title, redact),
                description=_said(listed.description, redact),
                arguments=tuple(
                    PromptArgument(
                        argument.name,
                        _said(argument.description or argument.title, redact),
                        argument.required is True,
                    )
                    for argument in arguments
                ),
            )
        )
    return prompts, left_out


def prompt_output(
    result: mcp_types.GetPromptResult,
    *,
    redact: Callable[[str], str],
    max_chars: int,
    server: str,
    prompt: str,
    media: MediaLimits | None = None,
) -> ToolOutput:
    """The prompt's messages as the text of one message of the person's, with the images it
    carries as ``media``; an error output when it has no messages."""
    reader = ContentReader(server, media or MediaLimits(sounds=0))  # a person's message carries no sound
    parts: list[str] = []
    replies: list[str] = []  # assistant-role messages in a row, quoted together
    for message in result.messages:
        text = reader.block(message.content)
        if message.role == "assistant":
            replies.append(text)
            continue
        if replies:
            parts.append(_quoted(replies))
            replies = []
        parts.append(text)
    if replies:
        parts.append(_quoted(replies))
    if not parts:
        said = f"The MCP server {server!r} sent the prompt {prompt!r} with no messages."
        return ToolOutput(redact(said), is_error=True)
    text = redact("\n\n".join(parts))
    if len(text) > max_chars:
        text = f"{text[:max_chars]}\n[cut: the prompt was {len(text):,} characters; Cairn keeps {max_chars:,}]"
    return ToolOutput(text, media=tuple(reader.kept))


class PromptShelf:
    """One server's prompts: listed when first asked for, and again after the server says they
    changed (``changed``, on ``notifications/prompts/list_changed``) or once it runs anew (a
    new ``Client``). A listing that fails leaves no prompts and a line that says why, and is
    tried again the next time."""

    def __init__(
        self, server: str, redact: Callable[[str], str], limits: McpLimits, client: Callable[[], Client | None]
    ) -> None:
        """``client``: the server's client while it is ready, else ``None``."""
        self._server, self._redact, self._limits, self._client = server, redact, limits, client
        self._prompts: tuple[ServerPrompt, ...] = ()
        self._problems: tuple[str, ...] = ()
        self._listed_from: Client | None = None
        self._stale = True
        self._lock = asyncio.Lock()

    def changed(self) -> None:
        self._stale = True

    async def listing(self) -> tuple[list[ServerPrompt], list[str]]:
        """The prompts while the server is ready, and a line for each problem (one left out,
        or the listing failed)."""
        client = self._client()
        if client is None or client.server_capabilities.prompts is None:
            return [], []
        async with self._lock:
            if self._stale or self._listed_from is not client:
                self._stale, self._listed_from = False, client  # a change said during the listing lists again
                self._prompts, self._problems = await self._list(client)
            return list(self._prompts), list(self._problems)

    async def _list(self, client: Client) -> tuple[tuple[ServerPrompt, ...], tuple[str, ...]]:
        timeout = self._limits.list_timeout
        try:
            with anyio.fail_after(timeout):
                listing = await list_prompts(client, self._limits)
        except TimeoutError:
            why = f"it did not list them within {timeout:g} s"
        except Refused as exc:
            why = str(exc)
        except MCPError as exc:
            why = f"it refused: {exc.error.message}"
        except ValidationError:
            why = "it listed them in a form that is not MCP"
        except Exception as exc:  # noqa: BLE001 - a broken server never breaks the composer
            why = str(leaf(exc)) or type(leaf(exc)).__name__
        else:
            prompts, left_out = build_prompts(self._server, listing, self._redact)
            return tuple(prompts), tuple(left_out)
        self._stale = True
        return (), (cap_text(self._redact(f"{self._server}: its prompts cannot be listed: {why}"), _SHOWN),)


def _name_problem(name: str, redact: Callable[[str], str], what: str) -> str:
    if not name.strip():
        return f"{what} is empty"
    if len(name) > _NAME:
        return f"{what} is longer than {_NAME} characters"
    if redact(name) != name:
        return f"{what} holds a secret"
    return ""


def _said(text: str | None, redact: Callable[[str], str]) -> str:
    return cap_text(redact(text.strip()), _SHOWN) if text else ""


def _quoted(replies: list[str]) -> str:
    """Assistant-role messages as context inside the person's message: each line after ``> ``,
    under a line that says where they come from; an empty line quoted between two replies."""
    lines = [QUOTED]
    for number, reply in enumerate(replies):
        if number:
            lines.append(">")
        lines.extend(f"> {line}" if line else ">" for line in reply.splitlines() or [""])
    return "\n".join(lines)
