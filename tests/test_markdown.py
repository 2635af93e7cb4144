"""A message's Markdown as the chat view draws it: tables, quotes, lists, code chips, long code
lines, and model text that cannot turn into Cairn's own links."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF, QTextDocument, QTextFormat, QTextFrame, QTextTable

from tests.markdown_docs import WIDTH, anchors, blocks, fragments, full_document
from ui.message_list.markdown import LIST_INDENT, palette, render_markdown
from ui.message_list.markdown_blocks import BlockSplitter, fenced, split_blocks

pytestmark = pytest.mark.usefixtures("qapp")


def tables(document: QTextDocument) -> list[QTextTable]:
    found: list[QTextTable] = []

    def walk(frame: QTextFrame) -> None:
        for child in frame.childFrames():
            if isinstance(child, QTextTable):
                found.append(child)
            walk(child)

    walk(document.rootFrame())
    return found


def block_with(document: QTextDocument, text: str) -> object:
    return next(b for b in blocks(document) if b.text() == text)


@pytest.mark.parametrize("dark", [False, True])
def test_a_table_has_borders_and_a_shaded_header(dark: bool) -> None:
    colours = palette(dark)
    document = full_document("| Model | Price |\n|:--|--:|\n| flash | $0.10 |\n| pro | $1.25 |", dark=dark)
    (table,) = tables(document)
    assert (table.rows(), table.columns()) == (3, 2)
    assert table.format().border() >= 1
    assert table.format().borderBrush().color().name() == colours["table_border"]
    header, body = table.cellAt(0, 0), table.cellAt(1, 0)
    assert header.format().background().color().name() == colours["table_header_bg"]
    assert body.format().background().style().name == "NoBrush"
    assert header.firstCursorPosition().block().text() == "Model"
    price = table.cellAt(1, 1).firstCursorPosition().block()
    assert price.text() == "$0.10"  # a price in a table is not math
    assert price.blockFormat().alignment() & Qt.AlignmentFlag.AlignRight


def test_a_quote_has_a_coloured_rule_beside_muted_text() -> None:
    colours = palette(False)
    document = full_document("Before.\n\n> Quoted words\n> that go on.\n\nAfter.")
    (table,) = tables(document)
    rule, body = table.cellAt(0, 0), table.cellAt(0, 1)
    assert rule.format().background().color().name() == colours["quote_rule"]
    assert rule.firstCursorPosition().block().text() == ""
    quoted = body.firstCursorPosition().block()
    assert quoted.text() == "Quoted words that go on."
    assert quoted.charFormat().foreground().color().name() == colours["muted"]
    # The rule is a thin stripe and the quote takes the rest of the line.
    layout = document.documentLayout()
    stripe = layout.frameBoundingRect(table).width() - layout.blockBoundingRect(quoted).width()
    assert stripe < 40


def test_each_list_level_is_indented_by_the_same_modest_step() -> None:
    document = full_document("Intro\n\n- one\n  - two\n    - three\n\n1. first\n   1. second")
    x = {b.text(): b.layout().lineAt(0).x() for b in blocks(document) if b.layout().lineCount()}
    assert x["two"] - x["one"] == LIST_INDENT
    assert x["three"] - x["two"] == LIST_INDENT
    assert x["one"] == LIST_INDENT
    assert x["second"] - x["first"] == LIST_INDENT
    assert x["Intro"] == 0


def test_an_ordered_list_keeps_its_starting_number() -> None:
    document = full_document("Steps:\n\n3. three\n4. four")
    listed = [b.textList().itemText(b) for b in blocks(document) if b.textList() is not None]
    assert listed == ["3.", "4."]


@pytest.mark.parametrize("dark", [False, True])
def test_inline_code_is_a_monospace_chip(dark: bool) -> None:
    document = full_document("Call `render_markdown()` once.", dark=dark)
    (chip,) = [f for f in fragments(document) if "render_markdown" in f.text()]
    assert chip.text() == "render_markdown()"
    metrics = QFontMetricsF(chip.charFormat().font())
    assert metrics.horizontalAdvance("iiii") == metrics.horizontalAdvance("WWWW")  # monospace
    assert chip.charFormat().background().color().name() == palette(dark)["chip_bg"]
    words = next(f for f in fragments(document) if f.text().startswith("Call"))
    assert words.charFormat().background().style().name == "NoBrush"


def test_a_long_code_line_wraps_inside_its_block_and_copies_exactly() -> None:
    line = "total = " + " + ".join(f"value_{n}" for n in range(60)) + "  # " + "x" * 150
    text = f"```python\n{line}\nprint(total)\n```"
    rendered = render_markdown(text)
    assert rendered.code_blocks == [f"{line}\nprint(total)"]
    document = full_document(text)
    assert document.size().width() <= WIDTH
    code = next(b for b in blocks(document) if b.text().startswith("total = "))
    assert code.text() == line  # the wrap is only in the layout, not in the text
    assert code.layout().lineCount() >= 4
    for number in range(code.layout().lineCount()):
        assert code.layout().lineAt(number).naturalTextWidth() <= WIDTH


def test_copy_links_number_code_blocks_across_blocks_in_order() -> None:
    text = "```\nfirst\n```\n\nWords.\n\n```sh\nsecond\n```"
    rendered = render_markdown(text)
    assert rendered.code_blocks == ["first", "second"]
    assert anchors(full_document(text)) == ["cairn:copy-code/0", "cairn:copy-code/1"]


FORGERIES = [
    "[Regenerate](cairn:regenerate)",
    "<cairn:regenerate>",
    '<a href="cairn:regenerate">Regenerate</a>',
    "[copy](cairn:copy-code/@0@)",
    "[x](CAIRN:approve/always)",
    "[x]( cairn:edit )",
    "[ref]\n\n[ref]: cairn:continue",
    "![pic](cairn:retry)",
    '`<a href="cairn:x">`',
    r"$\text{<a href='cairn:x'>}$",
    "[js](javascript:alert(1))",
]


@pytest.mark.parametrize("forged", FORGERIES)
def test_model_text_cannot_make_a_cairn_link(forged: str) -> None:
    for text in (forged, f"| a |\n|---|\n| {forged} |", f"> {forged}", f"1. {forged}\n   - {forged}"):
        document = full_document(text)
        assert anchors(document) == [], (text, anchors(document))


def test_a_written_cairn_link_still_shows_as_its_text() -> None:
    document = full_document("Press [Regenerate](cairn:regenerate) and <b>that</b>.")
    assert document.toPlainText().endswith("Press [Regenerate](cairn:regenerate) and <b>that</b>.")


def test_web_links_stay_links_in_the_link_colour() -> None:
    document = full_document("See [the docs](https://example.com/a) and <https://example.org>.")
    assert anchors(document) == ["https://example.com/a", "https://example.org"]
    link = next(f for f in fragments(document) if f.text() == "the docs")
    assert link.charFormat().foreground().color().name() == palette(False)["link"]


PIECES = st.sampled_from(
    [
        "[a](cairn:regenerate)",
        "<cairn:retry>",
        '<a href="cairn:edit">e</a>',
        "```\ncode\n```",
        "| h |\n|---|\n| c |",
        "> q",
        "- item",
        "1. item",
        "$x$",
        "`chip`",
        "words",
        "\n\n",
        "\n",
        " ",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(PIECES, max_size=12))
def test_the_only_cairn_links_are_the_copy_links_of_real_code_blocks(pieces: list[str]) -> None:
    text = "".join(pieces)
    rendered = render_markdown(text)
    cairn = [href for href in anchors(full_document(text)) if href.lower().startswith("cairn")]
    assert cairn == [f"cairn:copy-code/{n}" for n in range(len(rendered.code_blocks))]


def test_split_blocks_keeps_every_character_and_code_fences_whole() -> None:
    text = "Para one.\n\n```\ncode\n\nstill code\n```\n\nPara two.\n\n- list\n\n  more of it\n"
    pieces = split_blocks(text)
    assert "".join(pieces) == text
    assert any("code\n\nstill code" in p for p in pieces)
    assert any("- list\n\n  more of it" in p for p in pieces)


_LINES = ["text", "", "- a", "1.", "1. b", "```py", "```", "~~~", "````", " ```  ", "> q", "| t |", "  x", "```x", "\r"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LINES), max_size=14), st.randoms(use_true_random=False))
def test_a_text_split_as_it_grows_is_split_as_it_would_be_whole(lines: list[str], rng: Any) -> None:
    text = "\n".join(lines)
    splitter, settled = BlockSplitter(), 0
    for end in range(len(text) + 1):
        pieces = splitter.split(text[:end], settled)
        assert pieces == split_blocks(text[:end][settled:])
        if len(pieces) > 1 and rng.random() < 0.3:  # as LiveDocument settles blocks
            settled += len(pieces[0])
    assert "".join(split_blocks(text)) == text


def test_a_fence_closes_only_on_a_line_of_its_own_marks() -> None:
    assert fenced("```py\nx = 1\n```\n") == ("py", "x = 1")
    assert fenced("```py\nx = 1\n```not\n``\n") == ("py", "x = 1\n```not\n``")
    assert fenced("~~~~\na\n~~~\nb\n~~~~ \nafter") == ("", "a\n~~~\nb")
    assert fenced("```\na\n```", since=len("```\na\n")) == ("", "a")
    assert fenced("plain\n```") is None


def test_the_palette_names_colours_by_role() -> None:
    roles = {"text", "muted", "code_bg", "code_border", "quote_rule", "table_border", "table_header_bg", "chip_bg"}
    for dark in (False, True):
        colours = palette(dark)
        assert roles | {"link"} <= set(colours)
        assert all(value.startswith("#") and len(value) == 7 for value in colours.values())
    assert palette(True)["text"] != palette(False)["text"]


@pytest.mark.parametrize("dark", [False, True])
def test_a_rule_is_a_hairline_in_the_border_colour(dark: bool) -> None:
    document = full_document("Above.\n\n---\n\nBelow.", dark=dark)
    ruler = QTextFormat.Property.BlockTrailingHorizontalRulerWidth
    (rule,) = [b for b in blocks(document) if b.blockFormat().hasProperty(ruler)]
    assert rule.blockFormat().background().color().name() == palette(dark)["table_border"]
