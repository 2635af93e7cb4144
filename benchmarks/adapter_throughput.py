"""Tokens per second through the OpenAI-compatible adapter, from the loopback provider.

    .venv/bin/python -m benchmarks.adapter_throughput [--tokens 50000] [--chunk-chars 4]

The loopback provider streams one long reply over real HTTP on 127.0.0.1 as fast as it
can; the adapter decodes SSE, parses every chunk and yields typed deltas. The figure is
the whole client path: HTTP, SSE decoding, JSON parsing, event objects.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import httpx

from desktop.loopback import LoopbackProvider, Reply
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import Finished, TextDelta


async def measure(provider: LoopbackProvider, words: int, chunk_chars: int) -> tuple[float, int, int]:
    provider.script(Reply(text="stone " * words, chunk_chars=chunk_chars))
    async with httpx.AsyncClient(timeout=60) as http:
        client = OpenAICompatClient(http, provider.base_url, api_key=None)
        deltas = 0
        output_tokens = 0
        start = time.perf_counter()
        async for event in client.stream(b'{"model":"loopback-chat","messages":[],"stream":true,'
                                         b'"stream_options":{"include_usage":true}}'):  # fmt: skip
            if isinstance(event, TextDelta):
                deltas += 1
            elif isinstance(event, Finished) and event.usage:
                output_tokens = event.usage.output_tokens
        return time.perf_counter() - start, deltas, output_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=50_000, help="words in the reply (one token each)")
    parser.add_argument("--chunk-chars", type=int, default=4, help="characters per streamed delta")
    args = parser.parse_args()
    with LoopbackProvider() as provider:
        asyncio.run(measure(provider, 2_000, args.chunk_chars))  # warm up
        seconds, deltas, tokens = asyncio.run(measure(provider, args.tokens, args.chunk_chars))
    print(f"adapter throughput, {tokens:,} tokens in {deltas:,} SSE deltas over loopback HTTP:")
    print(f"  {tokens / seconds:,.0f} tokens/s   {deltas / seconds:,.0f} deltas/s   ({seconds:.2f} s)")


if __name__ == "__main__":
    main()
