"""Render Cairn's icon, ``assets/cairn.svg``, into the files each platform's package wants.

    python packaging/render_icons.py build/icons

writes ``hicolor/<N>x<N>/apps/cairn.png`` (freedesktop), ``cairn.ico`` (Windows) and
``cairn.icns`` (macOS). The outputs are built, never committed: the SVG is the one source.
Both container formats are simple enough to write here: an ``.ico`` is a directory of PNG
images, an ``.icns`` a list of typed PNG chunks.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "assets" / "cairn.svg"
HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# The PNG-bearing icns types: 32, 64, 128, 256, 512 and 1024 pixels (the @2x ones included).
ICNS_TYPES = ((b"ic11", 32), (b"ic12", 64), (b"ic07", 128), (b"ic08", 256), (b"ic09", 512), (b"ic10", 1024))


def render_png(size: int) -> bytes:
    """The SVG drawn on a transparent ``size`` x ``size`` canvas, as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {SVG} is not an SVG Qt can draw.")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def ico(images: dict[int, bytes]) -> bytes:
    """A Windows icon: a 6-byte header, one 16-byte entry per image, then the PNGs."""
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    entries, blobs = b"", b""
    for size, png in sorted(images.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in an icon directory
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(blobs))
        blobs += png
    return header + entries + blobs


def icns(chunks: list[tuple[bytes, bytes]]) -> bytes:
    """A macOS icon: ``icns`` and the total length, then (type, length, PNG) chunks."""
    body = b"".join(kind + struct.pack(">I", 8 + len(png)) + png for kind, png in chunks)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def render_all(out: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication([])
    sizes = sorted({*HICOLOR_SIZES, *ICO_SIZES, *(size for _, size in ICNS_TYPES)})
    pngs = {size: render_png(size) for size in sizes}
    for size in HICOLOR_SIZES:
        target = out / "hicolor" / f"{size}x{size}" / "apps" / "cairn.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pngs[size])
    scalable = out / "hicolor" / "scalable" / "apps" / "cairn.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    scalable.write_bytes(SVG.read_bytes())
    (out / "cairn.ico").write_bytes(ico({size: pngs[size] for size in ICO_SIZES}))
    (out / "cairn.icns").write_bytes(icns([(kind, pngs[size]) for kind, size in ICNS_TYPES]))


if __name__ == "__main__":
    render_all(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "icons")
