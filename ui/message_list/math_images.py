"""TeX formulas drawn by ziamath, as ``<img>`` tags a QTextDocument can show.

ziamath (the ``math`` extra: pure Python, with its own STIX Two Math font, no TeX needed) reads
TeX through latex2mathml and lays out the MathML; Qt's SVG renderer draws the result. It was
chosen over matplotlib's mathtext, which drew formulas here before, because mathtext has no
environments (``pmatrix``, ``bmatrix``, ``cases``, ``aligned``) and no ``\\le`` or ``\\ge``, and
because it weighs a twentieth as much (about 4 MB against matplotlib's and numpy's 80).

Without ziamath, or for a formula it cannot read, :func:`formula_html` returns None and the
caller shows the TeX itself as a code chip; ui.message_list.math_mathml says which formulas
those are, and bounds the work one may cost.

A formula is drawn once per size, then kept in small LRUs keyed by everything that changes its
pixels (about 8 ms for a typical one, see benchmarks/math_render.py). The image travels as a
``data:`` URI, which QTextDocument decodes itself, so a document needs no resources added and
the HTML stays a plain string that can be cached and compared.

Formulas are drawn so that their x-height matches the text's: STIX at the text's pixel size
looks a size smaller than most interface fonts, and an inline fraction's figures, a script
size down, would be hard to read.

Formulas sit on the text's baseline. In a paragraph where none has ink below its baseline, each
is cut off there and aligned to the baseline. Once one reaches below, all of the paragraph's
are aligned to the bottom of their line, which Qt makes exact only if every image on a line
reaches equally far down: so the caller passes the paragraph's :func:`reach` to each of them.

The first formula pays for importing ziamath and reading its font (about a fifth of a second),
so :func:`prepare` starts that work on a background thread as soon as a formula's opening
delimiter is seen in a streaming reply; the closing one usually arrives later.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF
from PySide6.QtGui import QFontInfo, QFontMetricsF, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from ui.message_list.math_engine import MathEngine, load_engine

__all__ = ["MAX_TEX", "MathStyle", "formula_html", "prepare", "reach", "reset", "style_now"]

MAX_TEX = 400  # longer TeX is shown as code; math_engine.LAYOUT_BUDGET bounds the rest
DISPLAY_SCALE = 1.1
_CACHE_SIZE = 512
_MARGIN = 1.0  # around the ink, in the formula's pixels: room for antialiasing


@dataclass(frozen=True)
class MathStyle:
    """What a formula's pixels depend on besides its TeX and colour."""

    pixel_size: float  # the text's font size in logical pixels
    dpr: float  # device pixels per logical pixel
    ascent: float  # the text's ascent, descent and x-height, in logical pixels
    descent: float
    x_height: float
    engine: int = 0  # which load of ziamath drew it: a reset makes cached HTML stale


def style_now() -> MathStyle:
    """The style of the application's font on its primary screen (a default without a GUI)."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return MathStyle(13.0, 1.0, 12.0, 3.0, 7.0, _state.generation)
    font = QGuiApplication.font()
    metrics = QFontMetricsF(font)
    return MathStyle(
        float(QFontInfo(font).pixelSize()),
        app.devicePixelRatio(),
        metrics.ascent(),
        metrics.descent(),
        metrics.xHeight(),
        _state.generation,
    )


@dataclass(frozen=True)
class _Raster:
    alpha: bytes  # rows x width of ink coverage, 0..255, row after row
    width: int
    rows: int
    baseline: float  # rows from the top to the formula's baseline
    deep: bool  # whether any ink lies below the baseline


_RasterKey = tuple[str, float, float, bool]
_HtmlKey = tuple[str, str, MathStyle, bool, float]


class _Formulas:
    """The process's one ziamath and its images: loaded once, on first use or by the warm-up thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # ziamath keeps its settings and fonts in globals; the warm-up uses it too
        self.engine: MathEngine | None = None
        self.loaded = False
        self.generation = 0
        self.warming: threading.Thread | None = None
        self.rasters: OrderedDict[_RasterKey, _Raster | None] = OrderedDict()
        self.html: OrderedDict[_HtmlKey, str | None] = OrderedDict()

    def engine_locked(self) -> MathEngine | None:
        if not self.loaded:
            self.engine = load_engine()
            self.loaded = True
        return self.engine

    def raster_locked(self, tex: str, style: MathStyle, display: bool) -> _Raster | None:
        engine = self.engine_locked()
        if engine is None:
            return None
        size = _size(engine, style, display)
        key = (tex, size, style.dpr, display)
        if key in self.rasters:
            self.rasters.move_to_end(key)
            return self.rasters[key]
        raster = _raster(engine, tex, size, style.dpr, display)
        _remember(self.rasters, key, raster)
        return raster


_state = _Formulas()


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def prepare() -> None:
    """Start loading ziamath in the background, once; a formula is probably on its way."""
    state = _state
    if state.loaded or state.warming is not None:
        return

    def load() -> None:
        with state.lock:
            state.engine_locked()

    state.warming = threading.Thread(target=load, name="math-warm-up", daemon=True)
    state.warming.start()


def reset() -> None:
    """Forget the engine and every image (tests use this to load ziamath again)."""
    state = _state
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


def _size(engine: MathEngine, style: MathStyle, display: bool) -> float:
    """The formula's font size in logical pixels: its x-height the text's, within reason (a
    font may report no x-height at all)."""
    matched = style.x_height / engine.x_height if style.x_height > 0 else style.pixel_size
    size = min(max(matched, style.pixel_size), 1.5 * style.pixel_size)
    return round(size * (DISPLAY_SCALE if display else 1.0), 2)


def reach(formulas: Iterable[tuple[str, bool]], *, style: MathStyle) -> float:
    """How far below the baseline the images of a paragraph's formulas (TeX, display) must all
    reach, in logical pixels, to sit on the text's baseline together; 0 when none has ink below
    its baseline (then each stands on the baseline as it is)."""
    rasters = []
    with _state.lock:
        for tex, display in formulas:
            checked = _drawable(tex)
            raster = None if checked is None else _state.raster_locked(checked, style, display)
            if raster is not None:
                rasters.append(raster)
    if not any(raster.deep for raster in rasters):
        return 0.0
    return max(_below(raster, style, 0.0) for raster in rasters) / style.dpr


def formula_html(tex: str, *, colour: str, style: MathStyle, display: bool, reach: float = 0.0) -> str | None:
    """An ``<img>`` of ``tex`` in ``colour``, or None when it cannot be drawn. Given a paragraph's
    :func:`reach`, the image reaches that far below the baseline, or further if it must."""
    checked = _drawable(tex)
    if checked is None:
        return None
    key = (checked, colour, style, display, round(reach * style.dpr))
    state = _state
    with state.lock:
        if key in state.html:
            state.html.move_to_end(key)
            return state.html[key]
        raster = state.raster_locked(checked, style, display)
        html = None if raster is None else _image(raster, colour, style, reach)
        _remember(state.html, key, html)
        return html


def _raster(engine: MathEngine, tex: str, size: float, dpr: float, display: bool) -> _Raster | None:
    laid = engine.lay_out(tex, size=size, display=display, margin=_MARGIN)
    if laid is None:
        return None
    renderer = QSvgRenderer(QByteArray(laid.svg.encode("utf-8")))
    if not renderer.isValid():
        return None
    width, height = laid.width * dpr, laid.height * dpr
    image = QImage(max(1, math.ceil(width)), max(1, math.ceil(height)), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    renderer.render(painter, QRectF(0.0, 0.0, width, height))
    painter.end()
    coverage = image.convertToFormat(QImage.Format.Format_Alpha8)
    line, columns = coverage.bytesPerLine(), coverage.width()
    data = bytes(coverage.constBits())
    alpha = b"".join(data[row * line : row * line + columns] for row in range(coverage.height()))
    return _Raster(alpha, columns, coverage.height(), laid.baseline * dpr, laid.depth * dpr > 0.5 * dpr)


def _below(raster: _Raster, style: MathStyle, reach: float) -> float:
    """How many rows a deep formula's image reaches below the baseline: at least as far as its
    ink, as the text and as ``reach``, and far enough that its part above the baseline (that
    much plus the text's ascent minus descent) holds the formula."""
    skew = (style.ascent - style.descent) * style.dpr
    rows = raster.rows
    return float(max(rows - raster.baseline, raster.baseline - skew, style.descent * style.dpr, reach * style.dpr))


def _image(raster: _Raster, colour: str, style: MathStyle, reach: float) -> str:
    rows, width = raster.rows, raster.width
    if raster.deep or reach > 0:
        # Qt gives a bottom-aligned image an ascent of height / 2 + m and a descent of
        # height / 2 - m (m: half the ascent minus the descent of the line's other items) and
        # draws it at the bottom of its line. Padded so that its part above the baseline is its
        # part below plus 2m, its descent is where its baseline is; images reaching equally far
        # down then agree with each other on the line. A paragraph's formulas are all aligned
        # so once one reaches below: an image standing on the baseline that rose above the
        # text would change m.
        below = _below(raster, style, reach)
        skew = (style.ascent - style.descent) * style.dpr
        top, bottom, align = round(below + skew - raster.baseline), round(below - (rows - raster.baseline)), "bottom"
    else:  # cut at the baseline, and stand on it
        top, bottom, align = 0, math.ceil(raster.baseline) - rows, "baseline"
    kept = raster.alpha[: width * (rows + min(bottom, 0))]
    alpha = bytes(width * max(top, 0)) + kept + bytes(width * max(bottom, 0))
    height = len(alpha) // width
    # Straight (not premultiplied) alpha, so every drawn pixel is exactly the text's colour.
    rgba = bytearray(bytes.fromhex(colour[1:7]) + b"\0") * (width * height)
    rgba[3::4] = alpha
    image = QImage(bytes(rgba), width, height, 4 * width, QImage.Format.Format_RGBA8888)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide wants str
    data = bytes(buffer.data().toBase64().data()).decode("ascii")
    return (
        f'<img src="data:image/png;base64,{data}" width="{width / style.dpr:.2f}" '
        f'height="{height / style.dpr:.2f}" style="vertical-align: {align};">'
    )
