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

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QFontInfo, QFontMetricsF, QGuiApplication, QImage

__all__ = ["MAX_TEX", "MathStyle", "formula_html", "prepare", "reset", "style_now"]

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
    half_x: float  # half the text's x-height: Qt aligns "middle" images by it
    engine: int = 0  # which load of mathtext drew it: a reset makes cached HTML stale


def style_now() -> MathStyle:
    """The style of the application's font on its primary screen (a default without a GUI)."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return MathStyle(13.0, 1.0, 12.0, 3.0, 3.5, _mathtext.generation)
    font = QGuiApplication.font()
    metrics = QFontMetricsF(font)
    return MathStyle(
        float(QFontInfo(font).pixelSize()),
        app.devicePixelRatio(),
        metrics.ascent(),
        metrics.descent(),
        metrics.xHeight() / 2,
        _mathtext.generation,
    )


@dataclass(frozen=True)
class _Engine:
    parser: Any
    font: Any
    numpy: Any


class _MathText:
    """The process's one mathtext: loaded once, on first use or by the warm-up thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # mathtext's parser is not thread-safe; the warm-up uses it too
        self.engine: _Engine | None = None
        self.loaded = False
        self.generation = 0
        self.warming: threading.Thread | None = None
        self.cache: OrderedDict[tuple[str, str, MathStyle, bool], str | None] = OrderedDict()

    def engine_locked(self) -> _Engine | None:
        if not self.loaded:
            self.engine = _load_engine()
            self.loaded = True
            if self.engine is not None:  # load the fonts now, not inside someone's first formula
                self.engine.parser.parse("$x$", dpi=72, prop=self.engine.font(size=10))
        return self.engine


_mathtext = _MathText()


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
        state.cache.clear()


def formula_html(tex: str, *, colour: str, style: MathStyle, display: bool) -> str | None:
    """An ``<img>`` of ``tex`` in ``colour``, or None when it cannot be drawn."""
    tex = tex.strip()
    if not tex or len(tex) > MAX_TEX:
        return None
    key = (tex, colour, style, display)
    state = _mathtext
    with state.lock:
        if key in state.cache:
            state.cache.move_to_end(key)
            return state.cache[key]
        engine = state.engine_locked()
        html = None if engine is None else _draw(engine, tex, colour, style, display)
        state.cache[key] = html
        if len(state.cache) > _CACHE_SIZE:
            state.cache.popitem(last=False)
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
    top, bottom = _padding(height, parsed.height - 1 - parsed.depth, style)
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


def _padding(rows: int, baseline: float, style: MathStyle) -> tuple[int, int]:
    """Rows to add above and below a formula image so that its baseline meets the text's.

    ``baseline`` is how many rows from the top the formula's baseline is (mathtext pads its
    ink by a pixel each side, which puts it at ``height - 1 - depth``). Qt lays a
    middle-aligned image out with a descent of (height - half an x-height) / 2, but draws it
    centred in its line's height; the two agree only when the image reaches at least as far
    above and below the baseline as the text does. So it is padded that far.
    """
    scale = style.dpr
    below = rows - baseline
    half_x = style.half_x * scale
    wanted = max(below, style.descent * scale, style.ascent * scale - half_x, baseline - half_x)
    bottom = math.ceil(wanted - below)
    top = max(round(half_x + 2 * (below + bottom) - rows - bottom), 0)
    return top, bottom
