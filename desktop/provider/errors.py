"""Provider errors, translated from httpx and from provider bodies at one boundary.

ProviderError                   anything that stopped a request; ``retryable`` says if a
│                               retry may help, and the message says what to do
├── ProviderConnectionError     the endpoint could not be reached
├── ProviderTimeout             it did not answer in time
├── ProviderStatusError         it answered with an error (``status``, ``body``); also a
│   │                           200 whose body is an error
│   ├── AuthenticationFailed    401 or 403: the key is wrong or lacks access
│   ├── RateLimited             429, with ``retry_after`` seconds when given
│   └── ContextOverflow         the conversation is longer than the model's context
└── MalformedResponse           not the protocol: HTML, broken JSON, a cut-off stream,
                                an unknown finish reason
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "AuthenticationFailed",
    "ContextOverflow",
    "MalformedResponse",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStatusError",
    "ProviderTimeout",
    "RateLimited",
    "status_error",
]


class ProviderError(Exception):
    retryable = False

    @property
    def kind(self) -> str:
        return type(self).__name__


class ProviderConnectionError(ProviderError):
    retryable = True


class ProviderTimeout(ProviderError):
    retryable = True


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
    r"too many tokens|exceeds the context",
    re.IGNORECASE,
)


def provider_message(body: str) -> str:
    """The human part of a provider's error body, or a short excerpt of the body."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    text = " ".join(body.split())
    return text[:200] + ("…" if len(text) > 200 else "")


def status_error(status: int, body: str, endpoint: str, retry_after: float | None = None) -> ProviderStatusError:
    """The right ``ProviderStatusError`` for an error answer from ``endpoint``."""
    said = provider_message(body) or "no details"
    if status in (401, 403):
        return AuthenticationFailed(
            f"{endpoint} refused the API key ({status}: {said}). Check the account's key in Settings.", status, body
        )
    if status == 429:
        wait = f" It asked to wait {retry_after:g} s." if retry_after is not None else ""
        return RateLimited(
            f"{endpoint} is rate limiting requests ({said}).{wait} Try again shortly.", status, body, retry_after
        )
    if _OVERFLOW.search(body):
        return ContextOverflow(
            f"The conversation is longer than the model's context ({said}). Start a new session or compact this one.",
            status,
            body,
        )
    if status >= 500:
        return ProviderStatusError(f"{endpoint} had a server error ({status}: {said}). Try again.", status, body)
    if status == 404:
        return ProviderStatusError(
            f"{endpoint} answered 404 ({said}). Check the base URL and the model name.", status, body
        )
    return ProviderStatusError(f"{endpoint} refused the request ({status}: {said}).", status, body)
