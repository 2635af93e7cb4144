"""The model library: adding, finding, checking and removing GGUF files, on a real folder."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from desktop.engine.known import KnownModel
from desktop.engine.library import LibraryError, ModelLibrary, sha256_file
from desktop.engine.machine import plan_load
from tests.gguf_files import gemma_like


@pytest.fixture
def library(tmp_path: Path) -> ModelLibrary:
    return ModelLibrary(tmp_path / "models", frozenset({"gemma3", "llama"}))


def test_a_kept_file_stays_where_it_is_and_is_only_forgotten(library: ModelLibrary, tmp_path: Path) -> None:
    source = gemma_like(tmp_path / "mine.gguf", template="{% for m in messages %}{{ m.content }}{% endfor %}")
    entry = library.add(source)
    assert (entry.file, entry.owned, entry.sha256) == (source, False, sha256_file(source))
    assert (entry.architecture, entry.quantization, entry.has_template, entry.takes_tools) == (
        "gemma3",
        "Q4_K_M",
        True,
        False,
    )
    assert library.find(entry.sha256[:8]) == entry == library.find("tiny test")
    assert library.find(entry.sha256[:7]) is None  # too short a prefix to name a model
    assert library.remove(entry.sha256) == 0
    assert source.exists()
    assert library.models() == []


def test_a_copied_file_is_owned_and_its_space_freed(library: ModelLibrary, tmp_path: Path) -> None:
    source = gemma_like(tmp_path / "mine.gguf")
    entry = library.add(source, copy=True)
    assert entry.owned
    assert entry.file.parent == library.folder
    assert source.exists()
    again = library.add(source, copy=True)
    assert again == entry
    assert list(library.folder.glob("*.gguf")) == [entry.file]
    assert not list(library.folder.glob("*.partial"))
    assert library.remove(entry.sha256) == source.stat().st_size
    assert not entry.file.exists()


def test_an_unsupported_architecture_is_refused_by_name(library: ModelLibrary, tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="'mamba9' model, an architecture this build"):
        library.add(gemma_like(tmp_path / "odd.gguf", architecture="mamba9"))
    assert library.models() == []


def test_a_file_that_is_not_a_model_leaves_the_library_as_it_was(library: ModelLibrary, tmp_path: Path) -> None:
    kept = library.add(gemma_like(tmp_path / "good.gguf"))
    (tmp_path / "notes.gguf").write_text("just some text that is long enough to be read " * 3)
    with pytest.raises(LibraryError, match="not a GGUF model file"):
        library.add(tmp_path / "notes.gguf")
    with pytest.raises(LibraryError, match="is not a file"):
        library.add(tmp_path / "nowhere.gguf")
    assert library.models() == [kept]


def test_options_survive_adding_the_file_again(library: ModelLibrary, tmp_path: Path) -> None:
    entry = library.add(gemma_like(tmp_path / "m.gguf"))
    library.set_options(entry.sha256, threads=3, context=2048, batch=128)
    again = library.add(entry.file)
    assert (again.threads, again.context, again.batch) == (3, 2048, 128)
    plan = again.plan(available=10 * 2**30)
    assert (plan.threads, plan.context, plan.batch) == (3, 2048, 128)


def test_a_changed_file_is_another_model(library: ModelLibrary, tmp_path: Path) -> None:
    entry = library.add(gemma_like(tmp_path / "m.gguf"))
    os.utime(entry.file, ns=(entry.mtime_ns + 10**9, entry.mtime_ns + 10**9))
    assert library.verify(entry).sha256 == entry.sha256  # touched, not changed: still this model
    gemma_like(entry.file, **{"general.name": "Other"})
    with pytest.raises(LibraryError, match="changed since it was added"):
        library.verify(library.find(entry.sha256))  # type: ignore[arg-type]
    entry.file.unlink()
    with pytest.raises(LibraryError, match="is gone"):
        library.verify(entry)


def test_a_damaged_index_is_rebuilt_not_fatal(library: ModelLibrary, tmp_path: Path) -> None:
    library.folder.mkdir(parents=True)
    (library.folder / "models.json").write_text("{not json")
    assert library.models() == []
    assert library.add(gemma_like(tmp_path / "m.gguf")).title == "Tiny Test"


def test_a_read_only_models_folder_is_a_sentence_and_keeps_what_was_there(
    library: ModelLibrary, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = library.add(gemma_like(tmp_path / "kept.gguf"))

    def read_only(*_args: object, **_kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("desktop.engine.library.atomic_write_text", read_only)
    with pytest.raises(LibraryError, match=r"Read-only file system\. Free some space or make the folder writable"):
        library.add(gemma_like(tmp_path / "new.gguf", **{"general.name": "New"}), copy=True)
    assert library.models() == [kept]
    assert list(library.folder.glob("*.gguf")) == []  # the copy the index could not name is gone


def test_a_full_disk_while_copying_leaves_no_half_file(
    library: ModelLibrary, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(_source: object, target: object) -> None:
        Path(str(target)).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("desktop.engine.library.shutil.copyfile", full)
    with pytest.raises(LibraryError, match=r"No space left on device\. Free some space"):
        library.add(gemma_like(tmp_path / "m.gguf"), copy=True)
    assert list(library.folder.iterdir()) == []
    assert library.models() == []


def test_the_default_model_is_assembled_from_its_parts_once(
    library: ModelLibrary, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = gemma_like(tmp_path / "whole.gguf").read_bytes()
    parts = [tmp_path / "part0", tmp_path / "part1"]
    parts[0].write_bytes(whole[:100])
    parts[1].write_bytes(whole[100:])
    package = types.ModuleType("tiny_parts")
    package.chunk_paths = lambda: [str(p) for p in parts]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiny_parts", package)
    sha = sha256_file(tmp_path / "whole.gguf")
    known = KnownModel(sha256=sha, file="tiny.gguf", title="Tiny", package="tiny_parts")
    entry = library.assemble(known)
    assert entry is not None
    assert entry.owned
    assert entry.title == "Tiny"
    assert entry.file.read_bytes() == whole
    parts[1].write_bytes(whole[100:-1] + b"X")
    with pytest.raises(LibraryError, match="does not have the expected SHA-256"):
        library.assemble(known.model_copy(update={"file": "other.gguf"}))
    assert not (library.folder / "other.gguf").exists()
    assert not list(library.folder.glob("*.partial"))


def test_a_plan_that_does_not_fit_gives_its_figures() -> None:
    plan = plan_load(2 * 2**30, 18_432, 32_768, available=1 * 2**30)
    assert not plan.fits
    assert plan.context == 8192
    words = plan.refusal("Big")
    assert "Big would need about 2,352 MiB" in words
    assert "1,024 MiB free" in words
    assert plan_load(10, None, 1000, context=50_000, available=None).context == 1000


def test_an_index_that_claims_a_file_elsewhere_never_gets_it_deleted(library: ModelLibrary, tmp_path: Path) -> None:
    entry = library.add(gemma_like(tmp_path / "mine.gguf"), copy=True)
    precious = gemma_like(tmp_path / "precious.gguf", **{"general.name": "Precious"})
    index = library.folder / "models.json"
    index.write_text(index.read_text().replace(str(entry.file), str(precious)))
    library.remove(entry.sha256)
    assert precious.exists()
