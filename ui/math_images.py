"""TeX formulas drawn by matplotlib's mathtext, as ``<img>`` tags a QTextDocument can show.

matplotlib is optional (the ``math`` extra). Without it, or when mathtext cannot read a
formula, the caller shows the TeX itself as a code chip: :func:`formula_html` returns None.

A formula is parsed straight to a raster (no Figure, no canvas): a few milliseconds each,
then kept in a small LRU keyed by everything that changes its pixels. The image travels as a
``data:`` URI, which QTextDocument decodes itself, so a document needs no resources added
and the HTML stays a plain string that can be cached and compared.

The first formula pays for importing matplotlib and loading its fonts (a few hundred ms), so
:func:`prepare` starts that work on a background thread as soon as a formula's opening
delimiter is seen in a streaming reply; the closing one usually arrives later.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QFontInfo, QFontMetricsF, QGuiApplication, QImage

__all__ = ["MAX_TEX", "MathStyle", "formula_html", "prepare", "reset", "style_now"]

MAX_TEX = 600  # longer TeX is shown as text: parsing cost grows with it
DISPLAY_SCALE = 1.2
_CACHE_SIZE = 512


@dataclass(frozen=True)
class MathStyle:
    """What a formula's pixels depend on besides its TeX and colour."""

    pixel_size: float  # the text's font size in logical pixels
    dpr: float  # device pixels per logical pixel
    half_x: float  # half the x-height: Qt centres a middle-aligned image on it


def style_now() -> MathStyle:
    """The style of the application's font on its primary screen (a default without a GUI)."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return MathStyle(13.0, 1.0, 3.5)
    font = QGuiApplication.font()
    return MathStyle(float(QFontInfo(font).pixelSize()), app.devicePixelRatio(), QFontMetricsF(font).xHeight() / 2)


@dataclass(frozen=True)
class _Engine:
    parser: Any
    font: Any
    numpy: Any


_lock = threading.Lock()  # mathtext's parser is not thread-safe; the warm-up uses it too
_engine: _Engine | None = None
_loaded = False
_warming: threading.Thread | None = None
_cache: OrderedDict[tuple[str, float, str, float, float, bool], str | None] = OrderedDict()


def _load_engine() -> _Engine | None:
    """The import seam: matplotlib's mathtext, or None when the ``math`` extra is missing."""
    try:
        import numpy
        from matplotlib.font_manager import FontProperties
        from matplotlib.mathtext import MathTextParser
    except ImportError:
        return None
    return _Engine(MathTextParser("agg"), FontProperties, numpy)


def _engine_locked() -> _Engine | None:
    global _engine, _loaded  # noqa: PLW0603 - one engine per process, loaded once
    if not _loaded:
        _engine = _load_engine()
        _loaded = True
        if _engine is not None:  # load the fonts now, not inside someone's first formula
            _engine.parser.parse("$x$", dpi=72, prop=_engine.font(size=10))
    return _engine


def prepare() -> None:
    """Start loading mathtext in the background, once; a formula is probably on its way."""
    global _warming  # noqa: PLW0603
    if _loaded or _warming is not None:
        return

    def load() -> None:
        with _lock:
            _engine_locked()

    _warming = threading.Thread(target=load, name="mathtext-warm-up", daemon=True)
    _warming.start()


def reset() -> None:
    """Forget the engine and every image (tests use this to load mathtext again)."""
    global _engine, _loaded, _warming
    if _warming is not None:
        _warming.join()
    with _lock:
        _engine, _loaded, _warming = None, False, None
        _cache.clear()


def formula_html(tex: str, *, colour: str, style: MathStyle, display: bool) -> str | None:
    """An ``<img>`` of ``tex`` in ``colour``, or None when it cannot be drawn."""
    tex = tex.strip()
    if not tex or len(tex) > MAX_TEX:
        return None
    key = (tex, style.pixel_size, colour, style.dpr, style.half_x, display)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        engine = _engine_locked()
        html = None if engine is None else _draw(engine, tex, colour, style, display)
        _cache[key] = html
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
        return html


def _draw(engine: _Engine, tex: str, colour: str, style: MathStyle, display: bool) -> str | None:
    size = style.pixel_size * (DISPLAY_SCALE if display else 1.0)
    try:  # at 72 dpi a point is a pixel, so the formula matches the text's pixel size
        parsed = engine.parser.parse(f"${tex}$", dpi=72 * style.dpr, prop=engine.font(size=size))
    except (ValueError, RuntimeError, KeyError, IndexError):  # mathtext's ways of saying "not TeX I know"
        return None
    np = engine.numpy
    mask = np.asarray(parsed.image, dtype=np.uint8)
    if mask.size == 0:
        return None
    height, width = mask.shape
    # Qt gives a middle-aligned image a descent of (height - half an x-height) / 2. Pad it
    # above or below so that this descent is the formula's own depth below its baseline.
    shift = round(style.half_x * style.dpr - height + 2 * parsed.depth)
    top, bottom = max(shift, 0), max(-shift, 0)
    rgba = np.zeros((top + height + bottom, width, 4), dtype=np.uint8)
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    rgba[:, :, 0], rgba[:, :, 1], rgba[:, :, 2] = red, green, blue
    rgba[top : top + height, :, 3] = mask
    rows, columns = rgba.shape[:2]
    image = QImage(rgba.tobytes(), columns, rows, 4 * columns, QImage.Format.Format_RGBA8888)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide wants str
    data = bytes(buffer.data().toBase64().data()).decode("ascii")
    logical_w, logical_h = columns / style.dpr, rows / style.dpr
    return (
        f'<img src="data:image/png;base64,{data}" width="{logical_w:.2f}" height="{logical_h:.2f}" '
        'style="vertical-align: middle;">'
    )
