"""The loopback provider: a real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks."""

from tests.loopback.cache import PrefixCache, tokenize
from tests.loopback.script import Fault, RecordedRequest, Reply
from tests.loopback.server import LoopbackProvider

__all__ = ["Fault", "LoopbackProvider", "PrefixCache", "RecordedRequest", "Reply", "tokenize"]
