"""Small GGUF files written byte by byte, for the header reader and the model library.

``write_gguf`` writes a version 3 file with the given metadata and F32 tensors of the given
element counts; ``cut`` leaves that many bytes off its end (a truncated download).
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["gemma_like", "write_gguf"]

_U32, _U64, _STRING, _ARRAY = 4, 10, 8, 9


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _value(value: object) -> tuple[int, bytes]:
    if isinstance(value, str):
        return _STRING, _string(value)
    if isinstance(value, list):
        body = b"".join(_string(str(v)) for v in value)
        return _ARRAY, struct.pack("<IQ", _STRING, len(value)) + body
    if isinstance(value, int) and value >= 1 << 32:
        return _U64, struct.pack("<Q", value)
    assert isinstance(value, int)
    return _U32, struct.pack("<I", value)


def write_gguf(
    path: Path,
    metadata: dict[str, object],
    tensors: tuple[int, ...] = (64,),
    *,
    cut: int = 0,
    magic: bytes = b"GGUF",
    version: int = 3,
) -> Path:
    head = magic + struct.pack("<IQQ", version, len(tensors), len(metadata))
    for key, value in metadata.items():
        kind, raw = _value(value)
        head += _string(key) + struct.pack("<I", kind) + raw
    offset = 0
    for index, elements in enumerate(tensors):
        head += _string(f"blk.{index}.weight") + struct.pack("<IQIQ", 1, elements, 0, offset)
        offset += elements * 4
    head += b"\0" * (-len(head) % 32)
    data = head + b"\1" * offset
    path.write_bytes(data[: len(data) - cut] if cut else data)
    return path


def gemma_like(path: Path, *, architecture: str = "gemma3", template: str | None = None, **extra: object) -> Path:
    """A file that says what the default model says of itself, with a few tensors."""
    metadata: dict[str, object] = {
        "general.architecture": architecture,
        "general.name": "Tiny Test",
        "general.file_type": 15,
        "general.license": "apache-2.0",
        f"{architecture}.context_length": 32768,
        f"{architecture}.block_count": 18,
        f"{architecture}.embedding_length": 640,
        f"{architecture}.attention.head_count": 4,
        f"{architecture}.attention.head_count_kv": 1,
        f"{architecture}.attention.key_length": 256,
        f"{architecture}.attention.value_length": 256,
        f"{architecture}.attention.sliding_window": 512,
        "tokenizer.ggml.tokens": ["<pad>", "<bos>", "hello"],
    }
    if template is not None:
        metadata["tokenizer.chat_template"] = template
    metadata.update(extra)
    return write_gguf(path, metadata, (256, 1024))
