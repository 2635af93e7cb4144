"""Which Debian packages a frozen bundle needs: ``ldd`` on every ELF file in it, then
``dpkg -S`` on each library it finds outside the bundle.

    python packaging/linux_deps.py build/pyinstaller/dist/cairn

prints one package per line, and each library ldd could not find at all. Use it to keep
``linux/depends.txt`` right when Qt, PySide6 or the spec changes; the release check
(tests/test_package.py) does the same check on the built .deb.
"""

# ruff: noqa: S607 - dpkg, dpkg-deb and ldd are the build machine's own tools, found on PATH

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def elf_files(bundle: Path) -> list[Path]:
    def is_elf(path: Path) -> bool:
        with path.open("rb") as file:
            return file.read(4) == b"\x7fELF"

    return [p for p in sorted(bundle.rglob("*")) if p.is_file() and not p.is_symlink() and is_elf(p)]


def outside_libraries(bundle: Path) -> tuple[set[str], set[str]]:
    """The libraries ldd resolves outside ``bundle``, and the ones it cannot find.

    ``LD_LIBRARY_PATH`` is the bundle's ``_internal``, as the PyInstaller boot loader sets it.
    """
    env = {**os.environ, "LD_LIBRARY_PATH": str(bundle / "_internal")}
    found, missing = set(), set()
    for path in elf_files(bundle):
        lines = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env, check=False).stdout
        for line in lines.splitlines():
            name, _, target = line.strip().partition(" => ")
            if target.startswith("not found"):
                missing.add(f"{name} (for {path.relative_to(bundle)})")
            elif target.startswith("/") and not target.startswith(str(bundle)):
                found.add(target.split(" (")[0])
    return found, missing


def owner(library: str) -> str | None:
    """The package that installed ``library``, trying the merged-/usr spellings too."""
    real = os.path.realpath(library)
    for candidate in dict.fromkeys((library, real, "/usr" + library, real.removeprefix("/usr"))):
        done = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return done.stdout.split(":")[0].strip()
    return None


def main(bundle: Path) -> int:
    found, missing = outside_libraries(bundle.resolve())
    packages = {library: owner(library) for library in sorted(found)}
    for package in sorted({p for p in packages.values() if p}):
        print(package)
    for library, package in packages.items():
        if package is None:
            print(f"no package owns {library}", file=sys.stderr)
    for library in sorted(missing):
        print(f"not found: {library}", file=sys.stderr)
    return 1 if missing or None in packages.values() else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/pyinstaller/dist/cairn")))
