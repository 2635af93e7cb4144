"""The loopback provider: a real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks."""

from desktop.loopback.cache import PrefixCache, tokenize
from desktop.loopback.script import Fault, RecordedRequest, Reply
from desktop.loopback.server import CALL, LoopbackProvider

__all__ = ["CALL", "Fault", "LoopbackProvider", "PrefixCache", "RecordedRequest", "Reply", "tokenize"]
