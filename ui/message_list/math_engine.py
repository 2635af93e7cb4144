"""ziamath, the ``math`` extra, behind one small seam: TeX in, an SVG and its measures out.

:func:`load_engine` imports ziamath (None when the extra is missing) and reads its font once;
:meth:`MathEngine.lay_out` turns one formula into an SVG, or None when the formula should be
shown as code instead: TeX latex2mathml cannot read or reads wrongly (math_mathml.readable),
or a layout that would cost more than :data:`LAYOUT_BUDGET` nodes. The engine holds no lock:
ziamath keeps its settings and fonts in globals, so its caller lets one thread at a time in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from ui.message_list.math_mathml import (
    balanced,
    full_size_fractions,
    known_environments,
    layout_cost,
    readable,
    spaced_tables,
)

__all__ = ["LAYOUT_BUDGET", "Laid", "MathEngine", "load_engine"]

# Nodes ziamath may build for one formula, about 170 ms on a quiet 2-core machine, once (then
# the image is cached). A typical formula builds 15 to 400, a three-line derivation in an
# aligned block about 1,100 (95 ms), a 197-character formula 791 (71 ms; benchmarks/math_render.py).
# A formula that needs more is shown as code.
LAYOUT_BUDGET = 2_000


@dataclass(frozen=True)
class Laid:
    """A formula laid out: its SVG and, in the formula's pixels, its size and baseline."""

    svg: str
    width: float  # the SVG's, margins included
    height: float
    baseline: float  # from the SVG's top
    depth: float  # how far its ink reaches below the baseline (0 when it does not)


@dataclass(frozen=True)
class MathEngine:
    """ziamath, loaded: what lays a formula out, and what its font draws."""

    to_mathml: Callable[[str, bool], str]  # TeX, inline: MathML, read as ziamath.Latex reads it
    layout: Callable[..., Any]  # ziamath.Math: MathML element, size, margin
    has_glyph: Callable[[str], bool]
    environments: frozenset[str]
    x_height: float  # the font's, as a fraction of its size

    def lay_out(self, tex: str, *, size: float, display: bool, margin: float) -> Laid | None:
        """``tex`` laid out at ``size`` pixels, or None when it should be shown as code."""
        if not balanced(tex) or not known_environments(tex, self.environments):
            return None
        try:
            # No DOCTYPE can reach the parser (latex2mathml writes the <math> element itself),
            # so no entity can be declared: nothing to expand.
            root = ElementTree.fromstring(self.to_mathml(tex, not display))  # noqa: S314
            if not readable(root, self.has_glyph) or layout_cost(root) > LAYOUT_BUDGET:
                return None
            spaced_tables(root)
            if not display:
                full_size_fractions(root)
            formula = self.layout(root, size=size, margin=margin)
            svg = str(formula.svg())
            width, height = formula.getsize()
            below = -float(formula.getyofst())
        except Exception:  # noqa: BLE001 - a model's TeX, read by a third party's parser: any failure means "show it as code"
            return None
        if not width > 0 < height:
            return None
        return Laid(svg, width + 2 * margin, height + 2 * margin, height - below + margin, max(below, 0.0))


def load_engine() -> MathEngine | None:
    """The import seam: ziamath, or None when the ``math`` extra is missing."""
    try:
        import latex2mathml.commands
        import ziamath.tex  # first: "import ziamath.x" fails when ziamath itself cannot be imported
        import ziamath.zmath
        from ziamath.config import config as settings
    except ImportError:
        return None
    # Glyphs as plain paths: Qt's SVG renderer reads SVG 1.1, not SVG 2's <use href>.
    settings.svg2 = False
    probe = ziamath.zmath.Math(ElementTree.fromstring(ziamath.tex.tex2mml("x", inline=True)), size=100, margin=0)  # noqa: S314
    font = probe.font
    environments = frozenset({name.removeprefix("\\") for name in latex2mathml.commands.MATRICES} | {"aligned"})
    return MathEngine(
        to_mathml=lambda tex, inline: str(ziamath.tex.tex2mml(tex, inline=inline)),
        layout=ziamath.zmath.Math,
        has_glyph=lambda char: bool(font.glyphindex(char)),
        environments=environments,
        x_height=float(probe.getsize()[1] + probe.getyofst()) / 100,
    )
