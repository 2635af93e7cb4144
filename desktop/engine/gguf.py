"""Reading a GGUF model file's header: what it is, before the engine is asked to load it.

A model file comes from anywhere, so the reader trusts nothing: every count and length is
bounded, every read is checked against the file's size, and the tensors' extents must fit
inside the file (a truncated download is caught here, not by the engine halfway through a
load). Any problem is a ``GgufError`` saying what is wrong and what to do.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path

from host.errors import CairnError

__all__ = ["GgufError", "ModelFacts", "read_gguf"]

MAGIC = b"GGUF"
MAX_KEYS = 100_000
MAX_TENSORS = 1_000_000
MAX_ARRAY = 50_000_000
MAX_STRING = 64 * 1024 * 1024
KEPT_STRING = 256 * 1024  # strings longer than this (a chat template is ~10 KB) are skipped
DEFAULT_ALIGNMENT = 32

# ggml type id -> (elements per block, bytes per block), from ggml.h.
_TYPE_SIZES: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 36), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
    15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18),
    21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4),
    27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66),
    39: (32, 17),
}  # fmt: skip

# llama.h's file types, as people name them.
_FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
    38: "MXFP4_MOE",
}  # fmt: skip

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9


class GgufError(CairnError):
    """The file is not a usable GGUF model; the message says why and what to do."""


@dataclass(frozen=True)
class ModelFacts:
    """What a GGUF header says of its model, and what the reader worked out from it."""

    path: Path
    size: int
    version: int
    architecture: str
    name: str
    parameters: int
    quantization: str
    trained_context: int | None
    chat_template: str | None
    license: str | None
    layers: int | None
    kv_heads: int | None
    key_length: int | None
    value_length: int | None
    sliding_window: int | None
    metadata: dict[str, object] = field(default_factory=dict, repr=False)

    def kv_bytes_per_token(self) -> int | None:
        """The f16 KV cache's bytes for one token of context, when the header says enough."""
        if not (self.layers and self.kv_heads and self.key_length and self.value_length):
            return None
        return self.layers * self.kv_heads * (self.key_length + self.value_length) * 2


class _Reader:
    def __init__(self, data: mmap.mmap | bytes, path: Path) -> None:
        self.data, self.pos, self.path = data, 0, path

    def take(self, count: int) -> bytes:
        end = self.pos + count
        if count < 0 or end > len(self.data):
            raise GgufError(
                f"{self.path.name} ends early (at byte {len(self.data):,}, while reading its header): the file is "
                "truncated, perhaps an unfinished download. Download it again."
            )
        chunk = self.data[self.pos : end]
        self.pos = end
        return bytes(chunk)

    def scalar(self, fmt: str) -> int | float | bool:
        value: int | float | bool = struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        return value

    def count(self, limit: int, what: str) -> int:
        value = int(self.scalar("<Q"))
        if value > limit:
            raise GgufError(f"{self.path.name} claims {value:,} {what}, more than any real model has: it is damaged.")
        return value

    def string(self) -> str | None:
        """A string; ``None`` when it is too long to keep (its bytes are skipped)."""
        length = self.count(MAX_STRING, "bytes in one string")
        raw = self.take(length)
        return raw.decode("utf-8", "replace") if length <= KEPT_STRING else None

    def value(self, kind: int, depth: int = 0) -> object:
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == STRING:
            return self.string()
        if kind == ARRAY and depth == 0:
            inner = int(self.scalar("<I"))
            length = self.count(MAX_ARRAY, "array entries")
            if inner in _SCALARS:  # skipped whole: nothing Cairn reads is a numeric array
                self.take(length * struct.calcsize(_SCALARS[inner]))
            else:
                for _ in range(length):
                    self.value(inner, depth + 1)
            return None
        raise GgufError(f"{self.path.name} has a value of unknown type {kind}: it is damaged or not a GGUF model.")


def read_gguf(path: Path) -> ModelFacts:
    """The facts of the GGUF model at ``path``; ``GgufError`` when it is not one, or is cut short."""
    try:
        with path.open("rb") as handle:
            size = path.stat().st_size
            if size < 24:
                raise GgufError(
                    f"{path.name} is {size} bytes long, too short to be a model. Choose a .gguf model file."
                )
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _parse(_Reader(data, path), size)
    except OSError as exc:
        raise GgufError(f"Cairn could not read {path}: {exc.strerror or exc}.") from exc


def _parse(reader: _Reader, size: int) -> ModelFacts:
    path = reader.path
    if reader.take(4) != MAGIC:
        raise GgufError(
            f"{path.name} is not a GGUF model file (it does not start with GGUF). Cairn's engine runs GGUF "
            "models; look for a .gguf download of the model."
        )
    version = int(reader.scalar("<I"))
    if version not in (2, 3):
        raise GgufError(f"{path.name} is GGUF version {version}, which this engine does not read (it reads 2 and 3).")
    tensors = reader.count(MAX_TENSORS, "tensors")
    keys = reader.count(MAX_KEYS, "metadata keys")
    metadata: dict[str, object] = {}
    for _ in range(keys):
        key = reader.string() or ""
        metadata[key] = reader.value(int(reader.scalar("<I")))
    parameters, data_end = _tensor_extent(reader, tensors)
    alignment = metadata.get("general.alignment")
    align = alignment if isinstance(alignment, int) and 0 < alignment <= 1 << 20 else DEFAULT_ALIGNMENT
    data_start = -(-reader.pos // align) * align
    if data_start + data_end > size:
        missing = data_start + data_end - size
        raise GgufError(
            f"{path.name} is truncated: its tensors need {data_start + data_end:,} bytes, the file has {size:,} "
            f"({missing:,} missing). Download it again."
        )
    return _facts(path, size, version, metadata, parameters)


def _tensor_extent(reader: _Reader, tensors: int) -> tuple[int, int]:
    """The parameter count and where the last tensor's data ends, relative to the data start."""
    parameters = end = 0
    for _ in range(tensors):
        reader.string()
        dims = int(reader.scalar("<I"))
        if dims > 8:
            raise GgufError(f"{reader.path.name} has a tensor of {dims} dimensions: it is damaged.")
        elements = 1
        for _ in range(dims):
            elements *= int(reader.scalar("<Q"))
        kind, offset = int(reader.scalar("<I")), int(reader.scalar("<Q"))
        parameters += elements
        block, nbytes = _TYPE_SIZES.get(kind, (0, 0))
        extent = offset + (elements // block) * nbytes if block else offset
        end = max(end, extent)
    return parameters, end


def _facts(path: Path, size: int, version: int, metadata: dict[str, object], parameters: int) -> ModelFacts:
    def text(key: str) -> str | None:
        value = metadata.get(key)
        return value if isinstance(value, str) else None

    def number(key: str) -> int | None:
        value = metadata.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    arch = text("general.architecture")
    if not arch:
        raise GgufError(f"{path.name} does not say which architecture it is (general.architecture): it is not a model.")
    heads = number(f"{arch}.attention.head_count")
    embedding = number(f"{arch}.embedding_length")
    head_dim = embedding // heads if embedding and heads else None
    file_type = number("general.file_type")
    return ModelFacts(
        path=path,
        size=size,
        version=version,
        architecture=arch,
        name=text("general.name") or path.stem,
        parameters=parameters,
        quantization=_FILE_TYPES.get(file_type or 0, f"type {file_type}") if file_type is not None else "F32",
        trained_context=number(f"{arch}.context_length"),
        chat_template=text("tokenizer.chat_template"),
        license=text("general.license"),
        layers=number(f"{arch}.block_count"),
        kv_heads=number(f"{arch}.attention.head_count_kv") or heads,
        key_length=number(f"{arch}.attention.key_length") or head_dim,
        value_length=number(f"{arch}.attention.value_length") or head_dim,
        sliding_window=number(f"{arch}.attention.sliding_window"),
        metadata={k: v for k, v in metadata.items() if v is not None and not k.startswith("tokenizer.ggml.")},
    )
