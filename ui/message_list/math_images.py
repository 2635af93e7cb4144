"""TeX formulas drawn by matplotlib's mathtext, as ``<img>`` tags a QTextDocument can show.

matplotlib is optional (the ``math`` extra). Without it, or when mathtext cannot read a
formula, the caller shows the TeX itself as a code chip: :func:`formula_html` returns None.

A formula is parsed straight to a raster (no Figure, no canvas; about 7 ms for a typical one,
see benchmarks/math_render.py), then kept in small LRUs keyed by everything that changes its
pixels. The image travels as a ``data:`` URI, which QTextDocument decodes itself, so a document
needs no resources added and the HTML stays a plain string that can be cached and compared.

Formulas sit on the text's baseline. One with nothing below its baseline is cut off there and
aligned to the baseline. One that reaches below is aligned to the bottom of its line, which Qt
makes exact only if every such image on a line reaches equally far down: so the caller passes
the deepest :func:`reach` of the paragraph's formulas to each of them.

The first formula pays for importing matplotlib and loading its fonts (about half a second), so
:func:`prepare` starts that work on a background thread as soon as a formula's opening
delimiter is seen in a streaming reply; the closing one usually arrives later.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QFontInfo, QFontMetricsF, QGuiApplication, QImage

__all__ = ["MAX_TEX", "MathStyle", "formula_html", "prepare", "reach", "reset", "style_now"]

MAX_TEX = 200  # longer TeX is shown as code: parsing costs about a third of a ms per character
DISPLAY_SCALE = 1.2
_CACHE_SIZE = 512


@dataclass(frozen=True)
class MathStyle:
    """What a formula's pixels depend on besides its TeX and colour."""

    pixel_size: float  # the text's font size in logical pixels
    dpr: float  # device pixels per logical pixel
    ascent: float  # the text's ascent and descent, in logical pixels
    descent: float
    engine: int = 0  # which load of mathtext drew it: a reset makes cached HTML stale


def style_now() -> MathStyle:
    """The style of the application's font on its primary screen (a default without a GUI)."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return MathStyle(13.0, 1.0, 12.0, 3.0, _mathtext.generation)
    font = QGuiApplication.font()
    metrics = QFontMetricsF(font)
    return MathStyle(
        float(QFontInfo(font).pixelSize()),
        app.devicePixelRatio(),
        metrics.ascent(),
        metrics.descent(),
        _mathtext.generation,
    )


@dataclass(frozen=True)
class _Engine:
    parser: Any
    font: Any
    numpy: Any


@dataclass(frozen=True)
class _Raster:
    mask: Any  # rows x columns of ink coverage, 0..255
    baseline: float  # rows from the top to the formula's baseline
    deep: bool  # whether any ink lies below the baseline


_RasterKey = tuple[str, float, float, bool]
_HtmlKey = tuple[str, str, MathStyle, bool, float]


class _MathText:
    """The process's one mathtext: loaded once, on first use or by the warm-up thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # mathtext's parser is not thread-safe; the warm-up uses it too
        self.engine: _Engine | None = None
        self.loaded = False
        self.generation = 0
        self.warming: threading.Thread | None = None
        self.rasters: OrderedDict[_RasterKey, _Raster | None] = OrderedDict()
        self.html: OrderedDict[_HtmlKey, str | None] = OrderedDict()

    def engine_locked(self) -> _Engine | None:
        if not self.loaded:
            self.engine = _load_engine()
            self.loaded = True
            if self.engine is not None:  # load the fonts now, not inside someone's first formula
                self.engine.parser.parse("$x$", dpi=72, prop=self.engine.font(size=10))
        return self.engine

    def raster_locked(self, tex: str, style: MathStyle, display: bool) -> _Raster | None:
        key = (tex, style.pixel_size, style.dpr, display)
        if key in self.rasters:
            self.rasters.move_to_end(key)
            return self.rasters[key]
        engine = self.engine_locked()
        raster = None if engine is None else _raster(engine, tex, style, display)
        _remember(self.rasters, key, raster)
        return raster


_mathtext = _MathText()


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _load_engine() -> _Engine | None:
    """The import seam: matplotlib's mathtext, or None when the ``math`` extra is missing."""
    try:
        import numpy
        from matplotlib.font_manager import FontProperties
        from matplotlib.mathtext import MathTextParser
    except ImportError:
        return None
    return _Engine(MathTextParser("agg"), FontProperties, numpy)


def prepare() -> None:
    """Start loading mathtext in the background, once; a formula is probably on its way."""
    state = _mathtext
    if state.loaded or state.warming is not None:
        return

    def load() -> None:
        with state.lock:
            state.engine_locked()

    state.warming = threading.Thread(target=load, name="mathtext-warm-up", daemon=True)
    state.warming.start()


def reset() -> None:
    """Forget the engine and every image (tests use this to load mathtext again)."""
    state = _mathtext
    if state.warming is not None:
        state.warming.join()
    with state.lock:
        state.engine, state.loaded, state.warming = None, False, None
        state.generation += 1
        state.rasters.clear()
        state.html.clear()


def _drawable(tex: str) -> str | None:
    tex = tex.strip()
    return tex if tex and len(tex) <= MAX_TEX else None


def reach(tex: str, *, style: MathStyle, display: bool) -> float:
    """How far below the baseline ``tex``'s image must reach, in logical pixels; 0 when the
    formula has no ink below its baseline or cannot be drawn."""
    checked = _drawable(tex)
    if checked is None:
        return 0.0
    with _mathtext.lock:
        raster = _mathtext.raster_locked(checked, style, display)
    return 0.0 if raster is None or not raster.deep else _below(raster, style, 0.0) / style.dpr


def formula_html(tex: str, *, colour: str, style: MathStyle, display: bool, reach: float = 0.0) -> str | None:
    """An ``<img>`` of ``tex`` in ``colour``, or None when it cannot be drawn. A formula with
    ink below its baseline reaches ``reach`` logical pixels down, if that is further than its own."""
    checked = _drawable(tex)
    if checked is None:
        return None
    key = (checked, colour, style, display, round(reach * style.dpr))
    state = _mathtext
    with state.lock:
        if key in state.html:
            state.html.move_to_end(key)
            return state.html[key]
        raster = state.raster_locked(checked, style, display)
        engine = state.engine
        html = None if raster is None or engine is None else _image(engine, raster, colour, style, reach)
        _remember(state.html, key, html)
        return html


def _raster(engine: _Engine, tex: str, style: MathStyle, display: bool) -> _Raster | None:
    size = style.pixel_size * (DISPLAY_SCALE if display else 1.0)
    try:  # at 72 dpi a point is a pixel, so the formula matches the text's pixel size
        parsed = engine.parser.parse(f"${tex}$", dpi=72 * style.dpr, prop=engine.font(size=size))
    except (ValueError, RuntimeError, KeyError, IndexError):  # mathtext's ways of saying "not TeX I know"
        return None
    mask = engine.numpy.asarray(parsed.image, dtype=engine.numpy.uint8)
    if mask.size == 0:
        return None
    # mathtext pads its ink by a pixel on each side, which puts the formula's baseline
    # (height - 1 - depth) rows from the top and its depth two rows below the ink.
    return _Raster(mask, parsed.height - 1 - parsed.depth, parsed.depth - 2 > 0.5 * style.dpr)


def _below(raster: _Raster, style: MathStyle, reach: float) -> float:
    """How many rows a deep formula's image reaches below the baseline: at least as far as its
    ink, as the text and as ``reach``, and far enough that its part above the baseline (that
    much plus the text's ascent minus descent) holds the formula."""
    skew = (style.ascent - style.descent) * style.dpr
    rows = raster.mask.shape[0]
    return float(max(rows - raster.baseline, raster.baseline - skew, style.descent * style.dpr, reach * style.dpr))


def _image(engine: _Engine, raster: _Raster, colour: str, style: MathStyle, reach: float) -> str:
    np = engine.numpy
    mask = raster.mask
    rows, width = mask.shape
    if raster.deep:
        # Qt gives a bottom-aligned image an ascent of height / 2 + m and a descent of
        # height / 2 - m (m: half the text's ascent minus its descent) and draws it at the
        # bottom of its line. Padded so that its part above the baseline is its part below
        # plus 2m, its descent is where its baseline is; images reaching equally far down
        # then agree with each other on the line.
        below = _below(raster, style, reach)
        skew = (style.ascent - style.descent) * style.dpr
        top, bottom, align = round(below + skew - raster.baseline), round(below - (rows - raster.baseline)), "bottom"
    else:  # cut at the baseline, and stand on it
        top, bottom, align = 0, math.ceil(raster.baseline) - rows, "baseline"
    mask = mask[: rows + min(bottom, 0)]
    rgba = np.zeros((top + mask.shape[0] + max(bottom, 0), width, 4), dtype=np.uint8)
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    rgba[:, :, 0], rgba[:, :, 1], rgba[:, :, 2] = red, green, blue
    rgba[top : top + mask.shape[0], :, 3] = mask
    height = rgba.shape[0]
    image = QImage(rgba.tobytes(), width, height, 4 * width, QImage.Format.Format_RGBA8888)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide wants str
    data = bytes(buffer.data().toBase64().data()).decode("ascii")
    return (
        f'<img src="data:image/png;base64,{data}" width="{width / style.dpr:.2f}" '
        f'height="{height / style.dpr:.2f}" style="vertical-align: {align};">'
    )
