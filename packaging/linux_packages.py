"""Cairn's Linux packages, made from the PyInstaller bundle: a ``.deb``, a portable
``.tar.gz`` and an AppDir ready for ``appimagetool``.

``build.py`` calls these; each returns the path it wrote.
"""

# ruff: noqa: S607 - dpkg, dpkg-deb and ldd are the build machine's own tools, found on PATH

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

LINUX = Path(__file__).resolve().parent / "linux"
# A font for Qt to draw with, and a Secret Service keychain for the API keys.
RECOMMENDS = "fonts-dejavu-core | fonts-freefont-ttf, gnome-keyring | keepassxc | kwalletmanager"
SUMMARY = "desktop chat host for OpenAI-compatible models"
DESCRIPTION = """\
 Cairn is a desktop chat app for any OpenAI-compatible endpoint (DeepSeek,
 OpenAI, OpenRouter, Ollama, a server of your own). Its conversations are
 append-only and byte-stable, so the provider's prompt cache stays warm.
 .
 The window and the `cairn` command line come from the same bundle in
 /opt/cairn."""


def depends() -> str:
    """The ``Depends`` field from ``linux/depends.txt`` (one package, or ``a | b``, per line)."""
    lines = (line.split("#")[0].strip() for line in (LINUX / "depends.txt").read_text().splitlines())
    return ", ".join(line for line in lines if line)


def deb_architecture() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()


def _tidy_modes(root: Path) -> None:
    """Directories 0755; files 0755 when anyone may run them, else 0644."""
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            (Path(folder) / name).chmod(0o755)
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(0o755 if path.stat().st_mode & 0o111 else 0o644)


def _copy_tree(source: Path, target: Path) -> None:
    """A copy made of hard links where the file system allows it: fast, and no extra space."""

    def link_or_copy(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link_or_copy)


def _share(root: Path, icons: Path) -> None:
    """The freedesktop menu entry and the icons, under ``root/share``."""
    (root / "share" / "applications").mkdir(parents=True)
    shutil.copy(LINUX / "cairn.desktop", root / "share" / "applications" / "cairn.desktop")
    shutil.copytree(icons / "hicolor", root / "share" / "icons" / "hicolor")


def build_deb(bundle: Path, icons: Path, version: str, work: Path, out: Path) -> Path:
    """``cairn_<version>_<arch>.deb``: the bundle in /opt/cairn, ``/usr/bin/cairn`` linking to
    it, the menu entry and the icons; its shared-library packages in ``Depends``."""
    arch = deb_architecture()
    root = work / f"cairn_{version}_{arch}"
    shutil.rmtree(root, ignore_errors=True)
    _copy_tree(bundle, root / "opt" / "cairn")
    (root / "usr" / "bin").mkdir(parents=True)
    # Relative, so the link also works in a tree unpacked with `dpkg-deb -x` (the release check).
    (root / "usr" / "bin" / "cairn").symlink_to("../../opt/cairn/cairn")
    _share(root / "usr", icons)
    _tidy_modes(root)
    installed_kib = sum(p.lstat().st_size for p in root.rglob("*")) // 1024 + 1
    control = root / "DEBIAN" / "control"
    control.parent.mkdir()
    control.write_text(
        f"Package: cairn\n"
        f"Version: {version}\n"
        f"Architecture: {arch}\n"
        f"Maintainer: Cairn maintainers <maintainers@cairn.invalid>\n"
        f"Installed-Size: {installed_kib}\n"
        f"Depends: {depends()}\n"
        f"Recommends: {RECOMMENDS}\n"
        f"Section: net\n"
        f"Priority: optional\n"
        f"Description: {SUMMARY}\n{DESCRIPTION}\n"
    )
    _tidy_modes(root / "DEBIAN")
    target = out / f"cairn_{version}_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(root), str(target)], check=True)
    return target


def build_tarball(bundle: Path, icons: Path, version: str, machine: str, out: Path) -> Path:
    """``cairn-<version>-linux-<machine>.tar.gz``: the bundle to unpack anywhere, with
    ``install.sh`` to put it in the person's own application menu."""
    name = f"cairn-{version}-linux-{machine}"

    def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    target = out / f"{name}.tar.gz"
    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=name, filter=owned_by_root)
        tar.add(icons / "hicolor", arcname=f"{name}/icons/hicolor", filter=owned_by_root)
        tar.add(LINUX / "cairn.desktop", arcname=f"{name}/cairn.desktop", filter=owned_by_root)
        tar.add(LINUX / "install.sh", arcname=f"{name}/install.sh", filter=owned_by_root)
    return target


def build_appdir(bundle: Path, icons: Path, work: Path) -> Path:
    """``Cairn.AppDir``, the input ``appimagetool`` turns into an AppImage (README: Packages)."""
    root = work / "Cairn.AppDir"
    shutil.rmtree(root, ignore_errors=True)
    _copy_tree(bundle, root / "usr" / "lib" / "cairn")
    _share(root / "usr", icons)
    shutil.copy(LINUX / "cairn.desktop", root / "cairn.desktop")
    shutil.copy(icons / "hicolor" / "256x256" / "apps" / "cairn.png", root / "cairn.png")
    (root / ".DirIcon").symlink_to("cairn.png")
    shutil.copy(LINUX / "AppRun", root / "AppRun")
    _tidy_modes(root)
    return root
