"""`cairn models`: a person's GGUF files added, listed, tuned, chosen and removed from a terminal."""

from __future__ import annotations

import json
from pathlib import Path

from host.paths import CairnPaths
from tests.cli_fixtures import cairn
from tests.gguf_files import gemma_like


def test_a_model_is_added_listed_tuned_and_removed(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    source = gemma_like(tmp_path / "tiny.gguf", template="{% for m in messages %}{{ m.content }}{% endfor %}")
    added = cairn("models", "add", str(source), "--copy")
    assert added.returncode == 0, added.stderr
    assert "Added Tiny Test · gemma3 · " in added.stdout
    assert "offer no tools" in added.stdout
    listed = cairn("models", "list")
    assert "Tiny Test" in listed.stdout
    assert "in Cairn's folder" in listed.stdout
    assert "8,192-token context" in listed.stdout
    tuned = cairn("models", "set", "tiny", "--context", "2048", "--threads", "1")
    assert tuned.returncode == 0, tuned.stderr
    assert "2,048-token context · 1 thread · batch" in tuned.stdout
    index = json.loads((cairn_paths.data_dir / "models" / "models.json").read_text())
    assert (index["models"][0]["context"], index["models"][0]["threads"]) == (2048, 1)
    template = Path(__file__).with_name("engine_templates") / "chatml_tools.jinja"
    templated = cairn("models", "set", "tiny", "--template", str(template))
    assert "(renders tools)" in templated.stdout, templated.stderr
    assert "(renders no tools)" in cairn("models", "set", "tiny", "--template", "none").stdout
    used = cairn("models", "use", "tiny")
    assert "start the engine's cache again" in used.stdout
    settings = json.loads((cairn_paths.config_dir / "settings.json").read_text())
    [account] = settings["accounts"]
    assert (account["provider"], account["default_model"]) == ("built-in", index["models"][0]["sha256"])
    removed = cairn("models", "remove", "tiny")
    assert "MiB freed" in removed.stdout
    assert not list((cairn_paths.data_dir / "models").glob("*.gguf"))


def test_bad_files_and_names_get_a_sentence_and_change_nothing(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    (tmp_path / "notes.gguf").write_text("these are notes, not a model; " * 10)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(gemma_like(tmp_path / "whole.gguf").read_bytes()[:-64])
    for args, words in (
        (("add", str(tmp_path / "notes.gguf")), "not a GGUF model file"),
        (("add", str(cut)), "is truncated"),
        (("add", str(gemma_like(tmp_path / "odd.gguf", architecture="nosuch"))), "architecture"),
        (("use", "nothing-here"), "There is no model 'nothing-here'"),
        (("set", "x"), "There is no model"),
    ):
        answer = cairn("models", *args)
        assert answer.returncode == 2, answer
        assert words in answer.stderr
        assert "Traceback" not in answer.stderr
    assert not (cairn_paths.data_dir / "models" / "models.json").exists()
