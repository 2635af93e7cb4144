"""TeX in a reply: drawn by ziamath as an image in the text, or shown as code when ziamath is
missing or cannot read it; prices with dollar signs stay text."""

from __future__ import annotations

import base64
import logging
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetricsF, QGuiApplication, QImage, QPainter, QTextDocument

from tests.markdown_docs import blocks, fragments, full_document
from ui.message_list import math_images
from ui.message_list.markdown import palette, render_markdown

pytestmark = pytest.mark.usefixtures("qapp")


@pytest.fixture(autouse=True)
def fresh_engine() -> Iterator[None]:
    math_images.reset()
    yield
    math_images.reset()


def images(document: QTextDocument) -> list[str]:
    return [f.charFormat().toImageFormat().name() for f in fragments(document) if f.charFormat().isImageFormat()]


def decoded(name: str) -> QImage:
    assert name.startswith("data:image/png;base64,")
    image = QImage.fromData(base64.b64decode(name.split(",", 1)[1]), "PNG")
    assert not image.isNull()
    return image


def inked(image: QImage) -> set[str]:
    """The colours of the pixels that are drawn at all."""
    colours = set()
    for y in range(image.height()):
        for x in range(image.width()):
            pixel = image.pixelColor(x, y)
            if pixel.alpha() > 0:
                colours.add(QColor(pixel.red(), pixel.green(), pixel.blue()).name())
    return colours


@pytest.mark.parametrize("dark", [False, True])
def test_inline_math_is_an_image_in_the_text_colour(dark: bool) -> None:
    document = full_document(r"The energy is $E = mc^2$ here.", dark=dark)
    (name,) = images(document)
    image = decoded(name)
    assert image.width() > image.height() > 5
    assert inked(image) == {palette(dark)["text"]}
    assert document.toPlainText().endswith("The energy is \ufffc here.")
    # Qt draws it from the data: URI itself; nothing else has to be added to the document.
    assert not document.resource(QTextDocument.ResourceType.ImageResource, name).isNull()


@pytest.mark.parametrize(
    ("text", "count"),
    [
        (r"Inline \(\alpha + \beta\) works.", 1),
        (r"Display in a line $$\sum_i x_i$$ works.", 1),
        ("$$\n\\int_0^1 x\\,dx\n$$", 1),
        (r"$$\frac{a}{b}$$", 1),
        ("\\[\nx^2 + y^2 = r^2\n\\]", 1),
        (r"Two: $a$ and $b$.", 2),
        ("> quoted $x_1$\n\n- listed $x_2$\n\n| $x_3$ |\n|---|\n| $x_4$ |", 4),
    ],
)
def test_every_delimiter_makes_an_image(text: str, count: int) -> None:
    assert len(images(full_document(text))) == count


def test_a_display_formula_is_centred_on_its_own_line() -> None:
    document = full_document("Before.\n\n$$\n\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}\n$$\n\nAfter.")
    (shown,) = [b for b in blocks(document) if b.text() == "\ufffc"]
    assert shown.blockFormat().alignment() & Qt.AlignmentFlag.AlignHCenter
    inline = decoded(images(full_document(r"$\sum_{i=1}^{n} i$"))[0])
    display = decoded(images(document)[0])
    assert display.height() > inline.height()  # display math is drawn a little larger


@pytest.mark.parametrize(
    "text",
    [
        "It costs $5 and $10.",
        "Between $5 and $6 only.",
        "A lone $ sign.",
        "$ x$ has a space after the opening sign.",
        "$x $ has a space before the closing sign.",
        "$x$5 is followed by a digit.",
        r"Escaped \$x\$ signs.",
        "`$x$` in code.",
        "```\n$x$\n```",
        "$$\n\nx\n$$",  # a blank line ends a display
    ],
)
def test_dollars_that_are_not_math_stay_text(text: str) -> None:
    document = full_document(text)
    assert images(document) == []
    assert "<img" not in render_markdown(text).html


def test_prices_keep_their_exact_text() -> None:
    document = full_document("It costs $5 and $10, or $7.50 with tax.")
    assert document.toPlainText().endswith("It costs $5 and $10, or $7.50 with tax.")


def chip_texts(document: QTextDocument) -> list[str]:
    return [f.text() for f in fragments(document) if f.charFormat().background().style() != Qt.BrushStyle.NoBrush]


LISTED = {
    "le": r"0 \le x \le 1",
    "ge": r"y \ge 0",
    "neq": r"x \neq y",
    "pmatrix": r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
    "bmatrix": r"\begin{bmatrix} a & b \\ c & d \end{bmatrix}",
    "cases": r"|x| = \begin{cases} x & \text{if } x \ge 0 \\ -x & \text{otherwise} \end{cases}",
    "aligned": "\\begin{aligned}\n(a+b)^2 &= a^2 + 2ab + b^2 \\\\\n&\\le 2(a^2 + b^2)\n\\end{aligned}",
}
TWO_ROWS = {"pmatrix", "bmatrix", "cases", "aligned"}


@pytest.mark.parametrize("name", sorted(LISTED))
@pytest.mark.parametrize("display", [True, False])
def test_symbols_and_environments_are_drawn(name: str, display: bool) -> None:
    tex = LISTED[name]
    one_line = " ".join(tex.split("\n"))
    document = full_document(f"$$\n{tex}\n$$" if display else f"Then ${one_line}$ holds.")
    (source,) = images(document)
    assert chip_texts(document) == []
    drawn = decoded(source)
    line = decoded(images(full_document("$$\nx + y\n$$" if display else "Then $x + y$ holds."))[0])
    if name in TWO_ROWS:  # two rows of math, one above the other
        assert drawn.height() > 1.6 * line.height()
    else:
        assert drawn.height() < 1.6 * line.height()


@pytest.mark.parametrize(
    "tex",
    [
        r"\frac{1}{",
        r"a + b}",
        r"\notacommand{x}",
        r"x^^2",
        r"\left( x",
        r"\frac{1}",
        r"\begin{pmatrix} a & b",
        r"\end{pmatrix}",
        r"\begin{foo} x \end{foo}",
        r"\text{<b>}",
        r"\text{汉字} = x",  # no glyphs for these in the math font: the text's font shows them
        "x = \U0001f600",
    ],
)
def test_tex_that_cannot_be_read_is_shown_as_code(
    tex: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    document = full_document(f"See ${tex}$ here.")
    assert images(document) == []
    assert f"${tex}$" in chip_texts(document)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize(
    "tex",
    [
        "{" * 14 + "x" + "}" * 14,  # each level doubles the layout's work: tens of seconds if drawn
        r"\frac{\text{" + "a" * 300 + "}}{2}",  # each character costs about what a node does
    ],
)
def test_a_formula_too_costly_to_lay_out_is_shown_as_code_at_once(tex: str) -> None:
    math_images.formula_html("x", colour="#000000", style=math_images.style_now(), display=False)  # loaded
    started = time.perf_counter()
    document = full_document(f"${tex}$")
    assert time.perf_counter() - started < 1.0
    assert images(document) == []
    assert f"${tex}$" in chip_texts(document)


def test_a_formula_within_the_layout_budget_is_drawn() -> None:
    assert len(images(full_document(r"$\frac{\frac{\frac{\frac{\frac{x}{y}}{y}}{y}}{y}}{y}$"))) == 1
    assert len(images(full_document(r"$\text{" + "a" * 150 + "}$"))) == 1


def ink_rows(image: QImage) -> list[int]:
    return [y for y in range(image.height()) if any(image.pixelColor(x, y).alpha() > 96 for x in range(image.width()))]


def test_an_inline_fraction_is_as_tall_as_the_text() -> None:
    # The fraction's bar is its widest row of ink; the numerator, above it, must be about as
    # tall as a digit of the text (TeX's inline fraction, a script size down, is a third shorter).
    image = decoded(images(full_document(r"Half is $\frac{1}{2}$ here."))[0])
    bar = max(ink_rows(image), key=lambda y: sum(image.pixelColor(x, y).alpha() > 96 for x in range(image.width())))
    numerator = [y for y in ink_rows(image) if y < bar - 1]
    digit = QFontMetricsF(QGuiApplication.font()).tightBoundingRect("1").height()
    assert max(numerator) - min(numerator) + 1 >= 0.9 * digit


def test_without_ziamath_tex_is_shown_as_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ziamath", None)  # "import" now raises ImportError
    math_images.reset()
    document = full_document("Inline $E = mc^2$ and display:\n\n\\[\na^2 + b^2\n\\]")
    assert images(document) == []
    chips = chip_texts(document)
    assert "$E = mc^2$" in chips
    assert "\\[ a^2 + b^2 \\]" in chips  # Qt shows the line breaks in code as spaces


def test_a_very_long_formula_is_shown_as_code() -> None:
    tex = "+".join(["x"] * (math_images.MAX_TEX // 2 + 1))
    document = full_document(f"${tex}$")
    assert images(document) == []
    assert f"${tex}$" in chip_texts(document)


def test_images_follow_the_colour_and_the_screen_density() -> None:
    style = math_images.style_now()
    light = math_images.formula_html("x^2", colour="#1f2328", style=style, display=False)
    again = math_images.formula_html("x^2", colour="#1f2328", style=style, display=False)
    dark = math_images.formula_html("x^2", colour="#e6e6e6", style=style, display=False)
    sharp = math_images.formula_html("x^2", colour="#1f2328", style=replace(style, dpr=2.0), display=False)
    assert light is not None
    assert dark is not None
    assert sharp is not None
    assert again == light
    assert dark != light
    one, two = decoded(light.split('"')[1]), decoded(sharp.split('"')[1])
    assert abs(two.width() - 2 * one.width()) <= 3  # twice the pixels for a 2x screen
    # ...shown at about the same size on the page: Qt scales it to the width and height given.
    width_one, width_two = (float(html.split('width="')[1].split('"')[0]) for html in (light, sharp))
    assert abs(width_one - width_two) <= 0.2 * width_one


def painted(document: QTextDocument) -> QImage:
    picture = QImage(document.size().toSize(), QImage.Format.Format_ARGB32)
    picture.fill(QColor("white"))
    painter = QPainter(picture)
    document.drawContents(painter)
    painter.end()
    return picture


def lowest_row(image: QImage, wanted: Callable[[QColor], bool], columns: range | None = None) -> int:
    xs = columns if columns is not None else range(image.width())
    return max(y for y in range(image.height()) for x in xs if wanted(image.pixelColor(x, y)))


def red(c: QColor) -> bool:
    return c.red() > 200 and max(c.green(), c.blue()) < 120


TALL = r"n \frac{\sum_i a_i}{b_{j_k}}"


@pytest.mark.parametrize(
    ("tex", "beside"),
    [
        ("x", None),
        ("mc^2", TALL),  # no ink below the baseline: a deep formula beside it does not move it
        (r"n + \alpha", "y"),
        ("n + y_p", None),  # ink below the baseline
        (r"n \frac{a}{b}", None),
        (r"n_{ij} g", "x^2"),  # a formula taller than the text beside one that reaches below
        (TALL, "x"),
        ("n + y_p", TALL),  # two formulas that reach below by different amounts
        (r"n_{i}", r"\frac{a}{b_j}"),
    ],
)
def test_a_formula_sits_on_the_baseline_of_its_line(tex: str, beside: str | None) -> None:
    # Each formula starts with a letter that stands on the baseline. Drawn in red between black
    # letters that have no descenders, next to another formula in blue, that first letter must
    # end where the black letters end.
    style = math_images.style_now()
    deepest = math_images.reach([(tex, False), (beside or "x", False)], style=style)
    formula = math_images.formula_html(tex, colour="#ff0000", style=style, display=False, reach=deepest)
    other = (
        math_images.formula_html(beside, colour="#0000ff", style=style, display=False, reach=deepest) if beside else ""
    )
    assert formula is not None
    assert other is not None
    document = QTextDocument()
    document.setDocumentMargin(4)
    document.setHtml(f"<p>nnn {formula} mmm {other} nnn</p>")
    picture = painted(document)
    text = lowest_row(picture, lambda c: max(c.red(), c.green(), c.blue()) < 90)
    left = min(x for x in range(picture.width()) for y in range(picture.height()) if red(picture.pixelColor(x, y)))
    first_letter = lowest_row(picture, red, range(left, left + 3))
    assert abs(first_letter - text) <= 1


def test_formulas_in_a_rendered_paragraph_share_the_text_baseline() -> None:
    # Through render_markdown: each formula starts with an n, so its first columns of ink must
    # end on the same row as the paragraph's own first letter.
    document = full_document(r"n then $n + y_p$ and $n \frac{a}{b_j}$ and $n^2$ and $n_{ij}$ end", width=900)
    picture = painted(document)

    def ink(c: QColor) -> bool:
        return c.lightness() < 160

    block = next(b for b in blocks(document) if b.text().startswith("n then"))
    line = block.layout().lineAt(0)
    origin = document.documentLayout().blockBoundingRect(block).topLeft()
    starts = [0] + [n for n, char in enumerate(block.text()) if char == "\ufffc"]
    bottoms = []
    for position in starts:
        x = int(origin.x() + line.cursorToX(position)[0])
        columns = range(x, x + 12)
        left = min(c for c in columns for y in range(picture.height()) if ink(picture.pixelColor(c, y)))
        bottoms.append(lowest_row(picture, ink, range(left, left + 3)))
    assert len(bottoms) == 5
    assert max(bottoms) - min(bottoms) <= 1, bottoms
