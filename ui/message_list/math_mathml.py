"""A formula's MathML before ziamath lays it out: whether it reads as written, what its layout
costs, and two touches to how it looks.

latex2mathml (which ziamath reads TeX with) is lenient: an unknown command becomes a letter
"\\foo", ``x^^2`` an empty operand, ``\\frac{1}`` a fraction without a denominator, an unknown
environment vanishes. A person is better served by the TeX shown as code than by a wrong
picture of it, so :func:`readable` turns those away, and a character the math font has no glyph
for (a CJK word in ``\\text{}``, an emoji) too: the text's own font shows it as code.

ziamath lays out every child of a row twice (once to measure it without stretched operators,
then for real), so its work doubles with each row nested in a row: ``{{{{{{{{{{x}}}}}}}}}}``
takes seconds; and a long ``\\text{}`` costs by the character. :func:`layout_cost` counts
the work, which a caller bounds.

Matrices and cases get TeX's column gap (:func:`spaced_tables`), and a fraction in running
text keeps its parts at the text's size (:func:`full_size_fractions`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from xml.etree.ElementTree import Element

__all__ = ["balanced", "full_size_fractions", "known_environments", "layout_cost", "local", "readable", "spaced_tables"]

# Elements ziamath lays out as a row (a cell, an error, padding, a phantom): each builds its
# children twice. A fence builds a row of its children twice: four times.
_ROWS = frozenset({"math", "mrow", "mtd", "none", "merror", "mpadded", "mphantom"})
_KNOWN = frozenset(
    {
        *_ROWS,
        *("mi", "mn", "mo", "mtext", "ms", "mspace", "mstyle", "mtable", "mtr", "mfenced", "menclose"),
        *("mfrac", "msqrt", "mroot", "msub", "msup", "msubsup", "munder", "mover", "munderover"),
        "mmultiscripts",
        "mprescripts",
    }
)
# How many children each element must have (MathML 3, section 3.1.3.2).
_ARITY = {
    "mfrac": 2,
    "mroot": 2,
    "msub": 2,
    "msup": 2,
    "munder": 2,
    "mover": 2,
    "msubsup": 3,
    "munderover": 3,
}
_TOKENS = frozenset({"mi", "mn", "mo", "mtext", "ms"})
# What sets its children smaller: scripts and limits, roots' indices, fractions themselves.
_SMALLER = frozenset({"msub", "msup", "msubsup", "munder", "mover", "munderover", "mmultiscripts", "mroot", "mfrac"})
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{([^{}]*)\}")
# The gap between a matrix's columns, and between a case's value and its condition: TeX's
# 2 \arraycolsep and amsmath's \quad. ziamath's default (0.3em) runs the columns together.
_COLUMN_GAP = "1em"


def local(element: Element) -> str:
    """An element's tag without its namespace."""
    return element.tag.rpartition("}")[2]


def balanced(tex: str) -> bool:
    """Whether every ``{`` in ``tex`` is closed by a ``}`` (an escaped one, ``\\{``, is a brace
    character, not a group)."""
    depth = 0
    escaped = False
    for char in tex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def known_environments(tex: str, known: Collection[str]) -> bool:
    """Whether every ``\\begin{...}`` and ``\\end{...}`` in ``tex`` names an environment in
    ``known`` (latex2mathml drops the others without a word)."""
    return all(name.strip() in known for name in _ENVIRONMENT.findall(tex))


def readable(root: Element, has_glyph: Callable[[str], bool]) -> bool:
    """Whether ``root``, latex2mathml's reading of a formula, is the formula as written: no
    unknown command or element, no missing operand, every character in the math font."""
    for element in root.iter():
        tag = local(element)
        if tag not in _KNOWN:
            return False
        if tag in _ARITY and (len(element) != _ARITY[tag] or any(_empty(child) for child in element)):
            return False  # an operand that was never written: \frac{1}, x^^2
        if tag not in _TOKENS:
            continue
        text = element.text or ""
        if tag != "mtext" and len(text) > 1 and text.startswith("\\"):  # a command it did not know
            return False
        if not all(char.isspace() or has_glyph(char) for char in text):
            return False
    return True


def _empty(element: Element) -> bool:
    return local(element) in _TOKENS and not element.text and not len(element)


def layout_cost(root: Element) -> int:
    """How many nodes ziamath builds to lay out ``root``, a token's characters counted one by one
    (a glyph costs about what a node does): each once for every row it sits in, twice over (a
    row lays out its children twice)."""
    cost = 0
    stack = [(root, 1)]
    while stack:
        element, weight = stack.pop()
        tag = local(element)
        if tag in {"mstyle", "mtr"}:  # dissolved into its children, or never built itself
            stack.extend((child, weight) for child in element)
            continue
        cost += weight * max(1, len(element.text or "") if tag in _TOKENS else 1)
        # A square root or an enclosure of several children puts them in a row of its own.
        row = tag in _ROWS or (tag in {"msqrt", "menclose"} and len(element) > 1)
        factor = 4 if tag == "mfenced" else 2 if row else 1
        stack.extend((child, weight * factor) for child in element)
    return cost


def spaced_tables(root: Element) -> None:
    """Give tables that set no column gap TeX's (matrices and cases)."""
    for element in root.iter():
        if local(element) == "mtable" and "columnspacing" not in element.attrib:
            element.set("columnspacing", _COLUMN_GAP)


def full_size_fractions(root: Element) -> None:
    """Draw the fractions of an inline formula as a display formula's, their parts at full size
    (as ``\\dfrac``): TeX's inline fraction sets them a script size down, which at an interface's
    text size is too small to read. A fraction inside a script or another fraction stays small."""
    stack = [root]
    while stack:
        element = stack.pop()
        if local(element) == "mfrac":
            element.set("displaystyle", "true")
        if local(element) not in _SMALLER:
            stack.extend(element)
