"""`cairn models download` and `suggested`, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from host.paths import CairnPaths
from tests.cli_fixtures import cairn
from tests.gguf_files import gemma_like
from tests.model_server import ModelServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    running = ModelServer(gemma_like(tmp_path / "source.gguf").read_bytes())
    yield running
    running.close()


def test_a_cut_download_is_resumed_by_the_same_command(cairn_paths: CairnPaths, server: ModelServer) -> None:
    url = f"{server.base}/models/tiny.gguf"
    server.cuts = [500]
    first = cairn("models", "download", url)
    assert first.returncode == 2
    assert "Traceback" not in first.stderr
    assert (cairn_paths.data_dir / "models" / "tiny.gguf.partial").stat().st_size == 500
    again = cairn("models", "download", url)
    assert again.returncode == 0, again.stderr
    assert "Added Tiny Test" in again.stdout
    assert server.requests[-1]["range"] == "bytes=500-"
    assert "MiB" in again.stderr or "bytes" in again.stderr  # progress was shown
    assert not list((cairn_paths.data_dir / "models").glob("*.partial*"))
    assert "Tiny Test" in cairn("models", "list").stdout


def test_suggestions_are_listed_and_a_vague_name_gets_a_sentence(cairn_paths: CairnPaths) -> None:
    listed = cairn("models", "suggested")
    assert listed.returncode == 0
    assert "cairn models download Qwen/" in listed.stdout
    vague = cairn("models", "download", "nothing-like-this")
    assert vague.returncode == 2
    assert "is not a web address" in vague.stderr
    bad = cairn("models", "download", "https://example.invalid/notes.txt")
    assert bad.returncode == 2
    assert "not a .gguf file" in bad.stderr
