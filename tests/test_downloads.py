"""Downloading a model over real HTTP on 127.0.0.1: a whole file, a cut one resumed (in this
process, and after the downloading process was killed), a server that ignores ranges or changes
its file, wrong checksums, refusals, a stall, a full disk, a file that is no model, a token that
stays with the hub, and the curated list."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.engine import downloads
from desktop.engine.curated import curated_models
from desktop.engine.downloads import Download, DownloadError, Progress, download
from desktop.engine.library import ModelEntry, ModelLibrary
from tests.gguf_files import gemma_like
from tests.model_server import ModelServer

REPO = Path(__file__).resolve().parents[1]
TOKEN = "hf_ThisTokenMustStayWithTheHub"
KILLED_DOWNLOAD = (  # a Cairn that downloads until it is killed
    "import asyncio, sys, pathlib; from desktop.engine.downloads import Download, download; "
    "from desktop.engine.library import ModelLibrary as L; "
    "asyncio.run(download(Download.from_url(sys.argv[1]), L(pathlib.Path(sys.argv[2]))))"
)


@pytest.fixture
def model(tmp_path: Path) -> bytes:
    return gemma_like(tmp_path / "source.gguf").read_bytes()


@pytest.fixture
def server(model: bytes) -> Iterator[ModelServer]:
    running = ModelServer(model)
    yield running
    running.close()


@pytest.fixture
def library(tmp_path: Path) -> ModelLibrary:
    return ModelLibrary(tmp_path / "models")


def fetch(request: Download, library: ModelLibrary, **options: Any) -> ModelEntry:
    return asyncio.run(download(request, library, **options))


def cut_halfway(server: ModelServer, library: ModelLibrary) -> Download:
    """A request whose first attempt the server hung up on halfway."""
    server.cuts = [len(server.body) // 2]
    request = Download.from_url(f"{server.base}/tiny.gguf")
    with pytest.raises(DownloadError, match=r"connection dropped .* Try again to go on where it stopped"):
        fetch(request, library)
    return request


def sha_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def files(library: ModelLibrary) -> list[str]:
    return sorted(p.name for p in library.folder.iterdir()) if library.folder.exists() else []


def test_a_whole_download_lands_in_the_library_as_cairns_own(
    server: ModelServer, library: ModelLibrary, model: bytes
) -> None:
    told: list[Progress] = []
    entry = fetch(Download.from_url(f"{server.base}/files/tiny.gguf"), library, progress=told.append)
    assert (entry.owned, entry.file, entry.sha256) == (True, library.folder / "tiny.gguf", sha_of(model))
    assert entry.file.read_bytes() == model
    assert [m.sha256 for m in library.models()] == [entry.sha256]
    assert files(library) == ["models.json", "tiny.gguf"]
    assert told[-1] == Progress(len(model), len(model), told[-1].speed, 0.0)
    assert "range" not in server.requests[0]


def test_progress_tells_the_speed_and_the_time_left_while_bytes_trickle_in(
    server: ModelServer, library: ModelLibrary, model: bytes
) -> None:
    server.trickle = 0.08
    told: list[Progress] = []
    fetch(Download.from_url(f"{server.base}/tiny.gguf"), library, progress=told.append)
    midway = [p for p in told if 0 < p.done < len(model)]
    assert len(midway) >= 2
    assert all(p.total == len(model) and p.speed > 0 and p.seconds_left is not None for p in midway)
    assert [p.done for p in told] == sorted(p.done for p in told)
    # about a tenth of the file every 0.08 s, so the estimate stays within a few times the truth
    assert all(len(model) / 20 < p.speed < len(model) * 50 for p in midway)
    assert all(0 < p.seconds_left < 20 for p in midway if p.seconds_left is not None)
    assert (told[-1].done, told[-1].seconds_left) == (len(model), 0)


def test_a_cut_download_resumes_with_a_range_and_ends_whole(
    server: ModelServer, library: ModelLibrary, model: bytes
) -> None:
    half, request = len(model) // 2, cut_halfway(server, library)
    assert (library.folder / "tiny.gguf.partial").read_bytes() == model[:half]
    assert files(library) == ["tiny.gguf.partial", "tiny.gguf.partial.json"]  # nothing under the model's name

    entry = fetch(request, library)
    assert (server.requests[-1]["range"], server.requests[-1]["if-range"]) == (f"bytes={half}-", '"v1"')
    assert (entry.file.read_bytes(), entry.sha256) == (model, sha_of(model))
    assert files(library) == ["models.json", "tiny.gguf"]


def test_a_paused_download_can_be_given_up(server: ModelServer, library: ModelLibrary) -> None:
    downloads.discard(cut_halfway(server, library), library)
    assert files(library) == []


def test_a_killed_download_resumes_from_what_it_left_on_disk(
    server: ModelServer, library: ModelLibrary, model: bytes
) -> None:
    half, url = len(model) // 2, f"{server.base}/tiny.gguf"
    server.stall_after = half
    child = subprocess.Popen([sys.executable, "-c", KILLED_DOWNLOAD, url, str(library.folder)], cwd=REPO)
    partial, deadline = library.folder / "tiny.gguf.partial", time.monotonic() + 30
    while not (partial.exists() and partial.stat().st_size == half):
        assert child.poll() is None, "the downloading child ended before it was killed"
        assert time.monotonic() < deadline, "the child never saved half the file"
        time.sleep(0.02)
    child.kill()
    child.wait()
    assert files(library) == ["tiny.gguf.partial", "tiny.gguf.partial.json"]

    server.stall_after = None
    entry = fetch(Download.from_url(url), ModelLibrary(library.folder))  # a new process knows only the disk
    assert server.requests[-1]["range"] == f"bytes={half}-"
    assert entry.file.read_bytes() == model


def test_a_partial_left_whole_is_checked_and_named_without_downloading_again(
    server: ModelServer, library: ModelLibrary, model: bytes
) -> None:
    url = f"{server.base}/tiny.gguf"
    library.folder.mkdir(parents=True)  # what a Cairn killed between the last byte and the rename leaves
    (library.folder / "tiny.gguf.partial").write_bytes(model)
    sidecar = {"version": 1, "url": url, "sha256": None, "done": 0, "total": None, "etag": '"v1"'}
    (library.folder / "tiny.gguf.partial.json").write_text(json.dumps(sidecar), encoding="utf-8")
    entry = fetch(Download.from_url(url), library)
    assert len(server.requests) == 1
    assert server.requests[0]["range"] == f"bytes={len(model)}-"  # answered 416: nothing is left
    assert entry.file.read_bytes() == model
    assert files(library) == ["models.json", "tiny.gguf"]


def test_a_server_that_ignores_the_range_is_downloaded_again_from_the_start(
    server: ModelServer, library: ModelLibrary, model: bytes
) -> None:
    request = cut_halfway(server, library)
    server.ranges = False
    entry = fetch(request, library)
    assert "range" in server.requests[-1]  # asked for the rest, was sent the whole file
    assert entry.file.read_bytes() == model


@pytest.mark.parametrize("honours_if_range", [True, False])
def test_a_file_changed_on_the_server_is_downloaded_again_from_the_start(
    server: ModelServer, library: ModelLibrary, tmp_path: Path, honours_if_range: bool
) -> None:
    request = cut_halfway(server, library)
    changed = gemma_like(tmp_path / "changed.gguf", **{"general.name": "Tiny Test, retrained"}).read_bytes()
    server.body, server.etag, server.if_range = changed, '"v2"', honours_if_range
    entry = fetch(request, library)
    assert (entry.file.read_bytes(), entry.title) == (changed, "Tiny Test, retrained")
    if not honours_if_range:  # the 206 carried the new ETag: its bytes were not joined to the old ones
        assert "range" not in server.requests[-1]


@pytest.mark.parametrize("named_by", ["the person", "the hub"])
def test_a_wrong_checksum_deletes_the_partial_and_nothing_lands(
    server: ModelServer, library: ModelLibrary, named_by: str
) -> None:
    wrong = "ab" * 32
    if named_by == "the person":
        request = Download.from_url(f"{server.base}/tiny.gguf", sha256=wrong.upper())
    else:
        server.linked_etag = f'"{wrong}"'
        request = Download.from_hub("org/tiny", "tiny.gguf", hub=server.base)
    with pytest.raises(DownloadError, match=r"arrived damaged .*not abababababab.*so it was deleted"):
        fetch(request, library)
    assert (files(library), library.models()) == ([], [])


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (404, r"Not found \(404\): org/tiny has no file tiny\.gguf at main\. Check the repository and file name"),
        (403, r"refused \(403\): org/tiny is gated or private\. Add a Hugging Face token .* accept the licence"),
        (401, r"refused \(401\): .*token.*licence on the model's page \(http://127\.0\.0\.1:\d+/org/tiny\)"),
    ],
)
def test_refusals_say_what_to_do(server: ModelServer, library: ModelLibrary, status: int, says: str) -> None:
    server.status = status
    with pytest.raises(DownloadError, match=says) as refused:
        fetch(Download.from_hub("org/tiny", "tiny.gguf", hub=server.base), library)
    assert "Traceback" not in str(refused.value)
    assert files(library) == []


def test_a_stalled_server_is_given_up_within_the_limit_and_the_partial_kept(
    server: ModelServer, library: ModelLibrary, model: bytes
) -> None:
    server.stall_after = 1000
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"sent nothing for 0\.5 seconds .*1,000 bytes of [\d,]+ bytes saved"):
        fetch(Download.from_url(f"{server.base}/tiny.gguf"), library, stall_seconds=0.5)
    assert time.monotonic() - started < 3
    assert (library.folder / "tiny.gguf.partial").read_bytes() == model[:1000]


def test_a_full_disk_says_what_is_needed_and_keeps_what_was_saved(
    server: ModelServer, library: ModelLibrary, model: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write, room = os.write, [1000]

    def write_until_full(fd: int, data: Any) -> int:
        if room[0] <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        written = real_write(fd, data[: room[0]])
        room[0] -= written
        return written

    monkeypatch.setattr(os, "write", write_until_full)  # the one call that writes the partial's bytes
    request = Download.from_url(f"{server.base}/tiny.gguf")
    with pytest.raises(DownloadError) as full:
        fetch(request, library)
    needed = f"{len(model) - 1000:,} bytes more"
    assert re.fullmatch(
        rf"The disk is full: tiny\.gguf needs {needed} and .+ is free in .+\. Free some space and download again; "
        r"the 1,000 bytes saved are kept and it goes on from there\.",
        str(full.value),
    )
    assert (library.folder / "tiny.gguf.partial").read_bytes() == model[:1000]

    monkeypatch.undo()  # space was freed
    entry = fetch(request, library)
    assert server.requests[-1]["range"] == "bytes=1000-"
    assert entry.file.read_bytes() == model


def test_a_file_that_is_not_a_gguf_is_refused_and_nothing_lands(library: ModelLibrary) -> None:
    page = ModelServer(b"<html><body>Sign in to continue</body></html>\n" * 40)
    try:
        with pytest.raises(DownloadError, match=r"not a GGUF model file .* so it was deleted"):
            fetch(Download.from_url(f"{page.base}/tiny.gguf"), library)
    finally:
        page.close()
    assert (files(library), library.models()) == ([], [])


def test_an_architecture_the_engine_does_not_run_is_refused_and_deleted(server: ModelServer, tmp_path: Path) -> None:
    library = ModelLibrary(tmp_path / "models", supported=frozenset({"llama"}))
    with pytest.raises(DownloadError, match="'gemma3' model, an architecture this build"):
        fetch(Download.from_url(f"{server.base}/tiny.gguf"), library)
    assert [name for name in files(library) if name.endswith((".gguf", ".partial"))] == []


def test_the_token_goes_to_the_hub_and_never_past_a_redirect_to_another_host(
    server: ModelServer, library: ModelLibrary, model: bytes, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    cdn, hub = server, ModelServer(b"")
    try:
        hub.redirect, hub.linked_etag = f"{cdn.base}/cdn/tiny.gguf", f'"{sha_of(model)}"'
        cdn.cuts = [len(model) // 2]
        request = Download.from_hub("org/tiny", "tiny.gguf", token=TOKEN, hub=hub.base)
        with pytest.raises(DownloadError) as cut:
            fetch(request, library)
        kept = (library.folder / "tiny.gguf.partial.json").read_text(encoding="utf-8")
        entry = fetch(request, library)
        fetch(Download.from_url(f"{cdn.base}/elsewhere/tiny.gguf", token=TOKEN), ModelLibrary(tmp_path / "other"))
    finally:
        hub.close()
    assert [r.get("authorization") for r in hub.requests] == [f"Bearer {TOKEN}"] * 2
    assert [r.get("authorization") for r in cdn.requests] == [None, None, None]
    assert cdn.requests[1]["range"] == f"bytes={len(model) // 2}-"
    assert entry.file.read_bytes() == model
    for text in (str(cut.value), kept, caplog.text, repr(request), (library.folder / "models.json").read_text()):
        assert TOKEN not in text


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: Download.from_hub("not a repo", "tiny.gguf"), "'not a repo' is not a Hugging Face repository"),
        (lambda: Download.from_hub("org/tiny", "README.md"), r"'README\.md' is not a \.gguf file"),
        (lambda: Download.from_hub("org/tiny", "tiny.gguf", sha256="not-a-sha"), "is not a SHA-256"),
        (lambda: Download.from_url("file:///etc/tiny.gguf"), "is not a web address"),
        (lambda: Download.from_url("https://example.com/models/"), r"'models' is not a \.gguf file"),
        (lambda: fetch(Download("http://127.0.0.1:9/", "models.json"), ModelLibrary(Path())), "'models.json' is not"),
    ],
)
def test_a_request_that_cannot_be_a_model_is_refused_before_anything_is_sent(make: Any, says: str) -> None:
    with pytest.raises(DownloadError, match=says):
        make()


def test_the_curated_models_are_a_short_list_of_hugging_face_files() -> None:
    models = curated_models()
    assert 4 <= len(models) <= 6
    assert [m.approx_size_bytes for m in models] == sorted(m.approx_size_bytes for m in models)
    assert any(m.tools_in_template for m in models)
    for m in models:
        assert all((m.title, m.good_at, m.license)), m
        assert m.approx_memory_bytes > m.approx_size_bytes > 100_000_000
        assert m.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", m.sha256)
        assert m.request().url == f"https://huggingface.co/{m.repo}/resolve/main/{m.file}"
