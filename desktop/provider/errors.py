"""Provider errors, translated from httpx and from provider bodies at one boundary.

ProviderError                   anything that stopped a request; ``retryable`` says if a
│                               retry may help, and the message says what to do
├── ProviderConnectionError     the endpoint could not be reached, or it hung up before answering
├── ProviderTimeout             a time limit ran out; ``limit`` names which one
├── ProviderStatusError         it answered with an error (``status``, ``body``); also an
│   │                           error sent inside a 200 reply
│   ├── AuthenticationFailed    401 or 403: the key is wrong or lacks access
│   ├── RateLimited             429, with ``retry_after`` seconds when given
│   └── ContextOverflow         the conversation is longer than the model's context
└── MalformedResponse           not the protocol: HTML, broken JSON, a cut-off stream,
                                an unknown finish reason

Messages name the endpoint without credentials or query, never quote an HTML page, and never
contain a request header: the adapter checks its headers before sending, so no library error
can echo the Authorization header back. Whether what arrived of a reply was kept is for the
caller to say: the adapter does not know.
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from typing import Any, Literal

import httpx

from host.errors import CairnError

__all__ = [
    "AuthenticationFailed",
    "ContextOverflow",
    "Limit",
    "MalformedResponse",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStatusError",
    "ProviderTimeout",
    "RateLimited",
    "endpoint_label",
    "host_port",
    "human_seconds",
    "provider_message",
    "status_error",
    "stream_error",
    "transport_detail",
    "unreachable",
]

Limit = Literal["connect", "first_token", "idle", "total", "rate"]


class ProviderError(CairnError):
    retryable = False

    @property
    def kind(self) -> str:
        return type(self).__name__


class ProviderConnectionError(ProviderError):
    retryable = True


class ProviderTimeout(ProviderError):
    retryable = True

    def __init__(self, message: str, limit: Limit | None = None) -> None:
        super().__init__(message)
        self.limit = limit


class ProviderStatusError(ProviderError):
    def __init__(self, message: str, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.retryable = status >= 500 or status == 429


class AuthenticationFailed(ProviderStatusError):
    pass


class RateLimited(ProviderStatusError):
    def __init__(self, message: str, status: int, body: str, retry_after: float | None) -> None:
        super().__init__(message, status, body)
        self.retry_after = retry_after


class ContextOverflow(ProviderStatusError):
    pass


class MalformedResponse(ProviderError):
    retryable = True


_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|context window|prompt is too long|"
    r"too many tokens|exceeds the context|exceeds the available context|context size|input is too long|"
    r"reduce the length of the messages",
    re.IGNORECASE,
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_EXCERPT = 200

# What an error page's status means when the page itself (HTML from a proxy or a web
# server) says nothing Cairn may quote.
_MEANING = {
    400: "the server could not make sense of the request",
    404: "there is no API at this address",
    405: "this address does not take chat requests",
    408: "the server gave up waiting for the request",
    413: "the request is larger than the server accepts",
    500: "the server failed while handling the request",
    502: "the server in front of the model could not reach it",
    503: "the service is down or overloaded right now",
    504: "the server in front of the model gave up waiting for it",
}

# What went wrong when httpx's own message is empty (a reset connection often has none).
_TRANSPORT = {
    httpx.ConnectError: "the connection could not be opened",
    httpx.ReadError: "the connection was reset while reading",
    httpx.WriteError: "the connection was reset while sending",
    httpx.RemoteProtocolError: "the connection was closed by the server",
    httpx.LocalProtocolError: "the request could not be sent",
    httpx.ProxyError: "the proxy refused the connection",
    httpx.UnsupportedProtocol: "the base URL does not start with http:// or https://",
    httpx.DecodingError: "the response could not be decoded",
    httpx.TimeoutException: "the connection timed out",
}


def endpoint_label(url: httpx.URL | str) -> str:
    """``url`` as messages show it: without user, password or query, which may hold keys."""
    url = httpx.URL(url)
    return str(url.copy_with(username=None, password=None, query=None, fragment=None))


def human_seconds(seconds: float) -> str:
    """``600 s (10 minutes)``; plain seconds below two minutes."""
    text = f"{_number(seconds)} s"
    if seconds >= 7200:
        return f"{text} ({_number(seconds / 3600)} hours)"
    if seconds >= 3600:
        return f"{text} ({_number(seconds / 3600)} hour{'' if seconds == 3600 else 's'})"
    if seconds >= 120:
        return f"{text} ({_number(seconds / 60)} minutes)"
    return text


def host_port(url: httpx.URL) -> str:
    """Where a request went, as a person checks it: ``api.example.com:443``, ``127.0.0.1:8080``."""
    port = url.port or {"https": 443, "http": 80}.get(url.scheme)
    return f"{url.host}:{port}" if port else url.host


_NO_NAME = re.compile(
    r"name or service not known|temporary failure in name resolution|nodename nor servname|getaddrinfo failed|"
    r"no address associated with hostname|name resolution",
    re.IGNORECASE,
)


def unreachable(url: httpx.URL, exc: httpx.HTTPError) -> str:
    """Why ``url`` could not be reached, and what to check, in words: a name that cannot be
    looked up is most often no internet connection (or a mistyped address); a refused
    connection is a server that is not running there."""
    if _NO_NAME.search(str(exc)):
        return (
            f"Cairn could not look up {url.host}: this computer seems to have no internet connection, or the "
            "address is mistyped. Check the connection, then the base URL."
        )
    return (
        f"Could not reach {host_port(url)}: {transport_detail(exc)}. Is the server running there? "
        "Check the base URL and your connection."
    )


def transport_detail(exc: httpx.HTTPError) -> str:
    """What went wrong, in words, then httpx's class and message: never just ``()``."""
    said = " ".join(str(exc).split())
    what = next((words for kind, words in _TRANSPORT.items() if isinstance(exc, kind)), "the connection failed")
    return f"{what} ({type(exc).__name__}: {said})" if said else f"{what} ({type(exc).__name__})"


def provider_message(body: str) -> str:
    """The human part of a provider's error body, or a short excerpt of the body."""
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _excerpt(error["message"])
        if isinstance(error, str):
            return _excerpt(error)
    return _excerpt(body)


def status_error(
    status: int,
    body: str,
    endpoint: str,
    retry_after: float | None = None,
    *,
    content_type: str = "",
    max_wait: float | None = None,
) -> ProviderStatusError:
    """The right ``ProviderStatusError`` for an error answer from ``endpoint``.

    An HTML body is described by its status, never quoted. A 429 whose ``retry_after`` is
    beyond ``max_wait`` says so: the caller gives up at once instead of sleeping.
    """
    page = _is_html(body, content_type)
    said = _MEANING.get(status, "") if page else provider_message(body)
    detail = f"{_status_label(status)}: {said}" if said else _status_label(status)
    if status in (401, 403):
        return AuthenticationFailed(
            f"{endpoint} refused the API key ({detail}). Check the account's key in Settings.", status, body
        )
    if status == 429:
        if retry_after is not None and max_wait is not None and retry_after > max_wait:
            message = (
                f"{endpoint} is rate limiting requests ({detail}) and asked to wait {human_seconds(retry_after)}; "
                "Cairn does not wait that long. Try again after that."
            )
        else:
            wait = f" It asked to wait {human_seconds(retry_after)}." if retry_after is not None else ""
            message = f"{endpoint} is rate limiting requests ({detail}).{wait} Try again shortly."
        return RateLimited(message, status, body, retry_after)
    if not page and _OVERFLOW.search(body):
        return ContextOverflow(
            f"The conversation is longer than the model's context ({said}). Start a new chat, or send less: fewer "
            "skills, shorter instructions.",
            status,
            body,
        )
    if status >= 500:
        advice = "Try again in a minute; if it keeps happening, the provider or a proxy in between is down."
        return ProviderStatusError(f"{endpoint} had a server error ({detail}). {advice}", status, body)
    if status == 404:
        return ProviderStatusError(
            f"{endpoint} answered {detail}. Check the base URL and the model name.", status, body
        )
    return ProviderStatusError(
        f"{endpoint} refused the request ({detail}). Check the account's base URL and model in Settings.", status, body
    )


def stream_error(body: str, endpoint: str) -> ProviderStatusError:
    """An error the provider sent inside a 200 reply; its ``code``, when an HTTP status, decides the kind."""
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
        return status_error(code, body, endpoint)
    said = provider_message(body) or "no details"
    return ProviderStatusError(
        f"{endpoint} sent an error instead of a reply ({said}). Try again; if it keeps happening, "
        "check the account and the model in Settings.",
        200,
        body,
    )


def _status_label(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _is_html(body: str, content_type: str) -> bool:
    if "html" in content_type.lower():
        return True
    start = body.lstrip()[:15].lower()
    return start.startswith(("<!doctype", "<html"))


def _excerpt(text: str) -> str:
    """One line of at most 200 characters that encodes as UTF-8."""
    text = " ".join(text.split())
    if _SURROGATE.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text[:_EXCERPT] + ("…" if len(text) > _EXCERPT else "")


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")
