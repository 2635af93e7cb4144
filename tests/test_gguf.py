"""The GGUF header reader against files written byte by byte, sound and hostile."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from desktop.engine.gguf import GgufError, read_gguf
from tests.gguf_files import gemma_like, write_gguf


def test_the_header_says_what_the_model_is(tmp_path: Path) -> None:
    facts = read_gguf(gemma_like(tmp_path / "tiny.gguf", template="{{ messages }} {% if tools %}{% endif %}"))
    assert (facts.architecture, facts.name, facts.quantization) == ("gemma3", "Tiny Test", "Q4_K_M")
    assert (facts.parameters, facts.trained_context, facts.license) == (1280, 32768, "apache-2.0")
    assert facts.chat_template is not None
    assert "tools" in facts.chat_template
    assert facts.sliding_window == 512
    assert facts.kv_bytes_per_token() == 18 * 1 * (256 + 256) * 2  # layers x kv heads x (k + v) x f16
    assert "tokenizer.ggml.tokens" not in facts.metadata


def test_head_sizes_fall_back_to_the_embedding_over_the_heads(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "llama.gguf",
        {
            "general.architecture": "llama",
            "llama.block_count": 2,
            "llama.embedding_length": 512,
            "llama.attention.head_count": 8,
        },
    )
    facts = read_gguf(path)
    assert (facts.kv_heads, facts.key_length, facts.value_length) == (8, 64, 64)
    assert facts.kv_bytes_per_token() == 2 * 8 * 128 * 2
    assert (facts.name, facts.quantization, facts.chat_template) == ("llama", "F32", None)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.write_bytes(b"PK\3\4" + b"\0" * 100), "not a GGUF model file"),
        (lambda p: p.write_bytes(b"GGUF"), "too short to be a model"),
        (lambda p: gemma_like(p).write_bytes(gemma_like(p).read_bytes()[:-100]), "truncated"),
        (lambda p: p.write_bytes(gemma_like(p).read_bytes()[:200]), "ends early"),
        (lambda p: write_gguf(p, {"general.architecture": "x"}, version=9), "GGUF version 9"),
        (lambda p: write_gguf(p, {"general.name": "no architecture"}), "does not say which architecture"),
        (lambda p: p.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 10**12)), "claims 1,000,000,000,000"),
        (lambda p: p.write_bytes(b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 2**62) + b"\0" * 64), "claims"),
    ],
    ids=["zip", "four-bytes", "cut-tensors", "cut-header", "version", "no-arch", "key-count", "string-length"],
)
def test_hostile_files_get_a_sentence(tmp_path: Path, make: object, words: str) -> None:
    path = tmp_path / "model.gguf"
    make(path)  # type: ignore[operator]
    with pytest.raises(GgufError, match=words) as caught:
        read_gguf(path)
    assert "Traceback" not in str(caught.value)


def test_a_value_of_unknown_type_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "odd.gguf"
    key = b"general.architecture"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key + struct.pack("<I", 77))
    with pytest.raises(GgufError, match="unknown type 77"):
        read_gguf(path)


def test_an_unreadable_path_is_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(GgufError, match="could not read"):
        read_gguf(tmp_path / "missing.gguf")
