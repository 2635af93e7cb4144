"""``make package``: Cairn's Linux packages, built into ``dist/``.

1. the icons, rendered from ``assets/cairn.svg`` into ``build/icons``;
2. the PyInstaller bundle (``packaging/cairn.spec``) in ``build/pyinstaller/dist/cairn``;
3. from it, ``dist/cairn_<version>_<arch>.deb``, ``dist/cairn-<version>-linux-<machine>.tar.gz``
   and ``build/appimage/Cairn.AppDir`` (the input for appimagetool; README: Packages).

The version is pyproject.toml's, in every file name. Windows and macOS build on their own
runners from the same spec (packaging/windows, packaging/macos).
"""

from __future__ import annotations

import platform
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from linux_packages import build_appdir, build_deb, build_tarball
from render_icons import render_all

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
DIST = ROOT / "dist"


def project_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def size(path: Path) -> str:
    total = path.stat().st_size if path.is_file() else sum(p.lstat().st_size for p in path.rglob("*"))
    return f"{total / 1_000_000:.1f} MB"


def freeze() -> Path:
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", str(ROOT / "packaging" / "cairn.spec"), "--noconfirm",
         "--log-level", "WARN", "--distpath", str(BUILD / "pyinstaller" / "dist"),
         "--workpath", str(BUILD / "pyinstaller" / "work")],
        cwd=ROOT, check=True,
    )  # fmt: skip
    return BUILD / "pyinstaller" / "dist" / "cairn"


def main() -> int:
    if not sys.platform.startswith("linux"):
        print("make package builds the Linux packages; see packaging/README.md for Windows and macOS.")
        return 2
    started = time.monotonic()
    version = project_version()
    icons = BUILD / "icons"
    render_all(icons)
    bundle = freeze()
    DIST.mkdir(exist_ok=True)
    for old in DIST.glob("cairn[_-]*"):
        old.unlink()
    machine = platform.machine()
    built = [
        build_deb(bundle, icons, version, BUILD / "deb", DIST),
        build_tarball(bundle, icons, version, machine, DIST),
        build_appdir(bundle, icons, BUILD / "appimage"),
    ]
    print(f"\nCairn {version}, built in {time.monotonic() - started:.0f} s:")
    print(f"  {size(bundle):>9}  {bundle.relative_to(ROOT)} (the bundle)")
    for path in built:
        print(f"  {size(path):>9}  {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
