"""What the built-in engine is built from, with which flags, and where the build lives.

One place for both sides: `tools/build_engine.py` builds what this names, and Cairn looks for
exactly that build, so a binary built from other sources or with other flags is never taken
for ours (architecture §9). The key changes whenever the source or a flag does.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# llama.cpp as vendored by llama-cpp-python's sdist (MIT, both): a registry package is the
# only way source reaches this machine, and its SHA-256 pins exactly which tree we build.
SOURCE_PACKAGE = "llama-cpp-python"
SOURCE_VERSION = "0.3.36"
SOURCE_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
SOURCE_TREE = "vendor/llama.cpp"

# One portable CPU build: every x86-64 variant, chosen at run time by the CPU it meets
# (GGML_NATIVE=OFF alone still assumes AVX2). No HTTPS (the engine listens on loopback and
# Cairn downloads models itself), no web UI, no tests or examples.
CMAKE_FLAGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DGGML_BACKEND_DL=ON",
    "-DGGML_CPU_ALL_VARIANTS=ON",
    "-DBUILD_SHARED_LIBS=ON",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    # The server and its libraries sit in one folder and find each other there, wherever the
    # folder is copied (macOS would say @loader_path).
    "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
    "-DCMAKE_INSTALL_RPATH=$ORIGIN",
)
TARGET = "llama-server"
MANIFEST = "build.json"


def build_key() -> str:
    """The source and the flags, hashed: the name of the one folder this build may live in."""
    text = json.dumps(
        {"source": [SOURCE_PACKAGE, SOURCE_VERSION, SOURCE_SHA256], "flags": CMAKE_FLAGS},
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def checkout_engine_root() -> Path:
    """The checkout's own `.engine` folder (a source checkout's build lives beside it)."""
    return Path(__file__).resolve().parents[2] / ".engine"


def user_cache_root() -> Path:
    """Where finished builds are kept between checkouts, keyed like the checkout's folder."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cairn" / "engine"


@dataclass(frozen=True)
class EngineBuild:
    """A finished build: the folder holding `llama-server` and its libraries."""

    folder: Path
    key: str
    manifest: dict[str, object]

    @property
    def server(self) -> Path:
        return self.folder / ("llama-server.exe" if sys.platform == "win32" else "llama-server")

    @property
    def label(self) -> str:
        """The build's identity in a saved state's key: a state is only as good as its engine."""
        return f"llama.cpp@{SOURCE_PACKAGE}-{SOURCE_VERSION}/{self.key}"


def read_build(folder: Path) -> EngineBuild | None:
    """The build in `folder`, if its manifest names exactly this key and its server is there."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("key") != build_key():
        return None
    build = EngineBuild(folder=folder, key=build_key(), manifest=manifest)
    return build if build.server.is_file() else None


def installed_build() -> EngineBuild | None:
    """The engine this Cairn runs: `CAIRN_ENGINE_DIR`, a frozen app's own, or the checkout's."""
    override = os.environ.get("CAIRN_ENGINE_DIR")
    if override:
        return read_build(Path(override))
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return read_build(Path(frozen) / "engine")
    return read_build(checkout_engine_root() / build_key())
