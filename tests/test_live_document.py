"""A streaming reply's document, grown block by block, shows at every moment what the finished
render of the same text shows: the same text, the same layout, the same list numbers."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QFont

from tests.markdown_docs import HEADER, WIDTH, full_document, ordered_markers, shape
from ui.message_list.live_document import LiveDocument

pytestmark = pytest.mark.usefixtures("qapp")


def live_document() -> LiveDocument:
    return LiveDocument(HEADER, font=QFont(), width=WIDTH, dark=False, owner=object())


def stream(text: str, cuts: list[int]) -> list[tuple[str, LiveDocument]]:
    """Feed ``text`` in the prefixes ending at ``cuts`` (and whole); check each one as it lands."""
    live = live_document()
    seen = []
    for version, end in enumerate([*sorted(set(cuts)), len(text)]):
        prefix = text[:end]
        live.update(prefix, version)
        full = full_document(prefix)
        assert live.document.toPlainText() == full.toPlainText(), prefix
        assert shape(live.document) == shape(full), prefix
        seen.append((prefix, live))
    return seen


def test_a_paragraph_after_a_list_is_not_its_next_item() -> None:
    text = "1. a\n2. b\n\nA paragraph.\n\n3. c\n4. d\n\n- x\n  - y\n\nEnd."
    stream(text, list(range(len(text))))
    live = live_document()
    live.update(text, 1)
    assert ordered_markers(live.document) == ["1.", "2.", "3.", "4."]
    assert live.document.toPlainText().endswith("a\nb\nA paragraph.\nc\nd\nx\ny\nEnd.")


def test_tables_quotes_and_code_stream_into_the_same_shape() -> None:
    text = (
        "Intro.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n> more\n\n```py\nx = 1\n\ny = 2\n```\n\n"
        "After $x^2$ and `chip`.\n\n1. one\n\n   still one\n2. two"
    )
    stream(text, list(range(0, len(text), 3)))


def test_code_blocks_are_numbered_while_streaming_as_when_finished() -> None:
    text = "```\nfirst\n```\n\nWords.\n\n```sh\nsecond\n```\n\n```\nthird"
    live = live_document()
    for end in range(len(text) + 1):
        live.update(text[:end], end)
    assert live.all_code_blocks() == ["first", "second", "third"]


# -- random Markdown made of paragraphs, lists and code ------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "`gamma`", "*delta*", "1.", "2)", "-", "x", "10"])


@st.composite
def paragraphs(draw: st.DrawFn) -> str:
    return " ".join(draw(st.lists(WORDS, min_size=1, max_size=5)))


@st.composite
def lists(draw: st.DrawFn) -> str:
    ordered = draw(st.booleans())
    start = draw(st.integers(min_value=0, max_value=12))
    loose = draw(st.booleans())
    lines = []
    for number in range(draw(st.integers(min_value=1, max_value=4))):
        marker = f"{start + number}{draw(st.sampled_from('.)'))} " if ordered else "- "
        lines.append(marker + draw(paragraphs()))
        if draw(st.booleans()):  # a nested list under this item
            inner = " " * len(marker)
            nested = draw(st.lists(st.sampled_from(["- ", "1. ", "2. "]), min_size=1, max_size=3))
            lines.extend(inner + m + draw(paragraphs()) for m in nested)
        if loose:
            lines.append("")
    return "\n".join(lines)


@st.composite
def code(draw: st.DrawFn) -> str:
    body = draw(st.lists(st.sampled_from(["x = 1", "", "1. not a list", "- nor this", "    indented"]), max_size=4))
    closed = draw(st.booleans())
    return "\n".join(["```" + draw(st.sampled_from(["", "python"])), *body, *(["```"] if closed else [])])


OTHERS = st.sampled_from(
    [
        "> quoted",
        "> - q\n> 1. r",
        "| a | b |\n|---|---|\n| 1 | |",
        "# head",
        "---",
        "$x^2$ costs $5",
        "$$\n\\frac{a}{b}\n$$",
    ]
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(paragraphs(), lists(), code(), OTHERS), min_size=1, max_size=5))
    gaps = draw(st.lists(st.sampled_from(["\n", "\n\n", "\n\n\n"]), min_size=len(parts), max_size=len(parts)))
    return "".join(part + gap for part, gap in zip(parts, gaps, strict=True))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_every_streamed_prefix_looks_like_its_final_render(data: st.DataObject) -> None:
    text = data.draw(documents())
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=25))
    stream(text, cuts)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_list_numbers_never_go_back_while_a_reply_streams(data: st.DataObject) -> None:
    text = data.draw(documents())
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=25))
    live = live_document()
    shown: list[list[str]] = []
    for version, end in enumerate([*sorted(set(cuts)), len(text)]):
        live.update(text[:end], version)
        shown.append(ordered_markers(live.document))
    for before, after in itertools.pairwise(shown):
        # Every item but the one still arriving keeps the number it was shown with.
        settled = before[:-1]
        assert after[: len(settled)] == settled, (before, after)
    assert shown[-1] == ordered_markers(full_document(text))


# -- long blocks: shown plain, grown a line at a time ---------------------------------------


HEADER_TEXT = "Assistant\n"


def grown_then_whole(text: str, step: int) -> LiveDocument:
    """A body alone (as the chat view grows one), fed in pieces of ``step``."""
    live = LiveDocument("", font=QFont(), width=WIDTH, dark=False, owner=object())
    for version, end in enumerate([*range(step, len(text), step), len(text)]):
        live.update(text[:end], version)
    return live


def test_a_long_code_block_grows_plain_and_copies_exactly() -> None:
    code = "\n".join(f"value_{n} = compute({n})  # line {n}" for n in range(600))
    text = f"Here it is.\n\n```python\n{code}\n```\n\nThat is all."
    live = grown_then_whole(text, 97)
    assert live.all_code_blocks() == [code]
    full = full_document(text)
    assert HEADER_TEXT + live.plain_text() == full.toPlainText()
    assert "value_599 = compute(599)" in live.plain_text()
    assert sum(part.blockCount() for part in live.parts) > 600  # a block a line: each line grows on its own


def test_a_closing_fence_that_arrives_in_pieces_leaves_no_marks() -> None:
    code = "\n".join(f"row {n}" for n in range(1500))
    text = f"```\n{code}\n```\n"
    live = LiveDocument("", font=QFont(), width=WIDTH, dark=False, owner=object())
    ends = [*range(1, len(text) - 12, 7), *range(len(text) - 12, len(text) + 1)]  # the fence a mark at a time
    for version, end in enumerate(ends):
        live.update(text[:end], version)
    assert live.all_code_blocks() == [code]
    assert not live.plain_text().rstrip().endswith("`")


def test_a_long_paragraph_is_shown_as_plain_lines() -> None:
    text = "\n".join(f"2026-12-03 13:53:{n % 60:02d} INFO request {n} served" for n in range(400)) + "\n\nDone."
    live = grown_then_whole(text, 333)
    full = full_document(text)
    assert HEADER_TEXT + live.plain_text() == full.toPlainText()
    assert live.plain_text().endswith("request 399 served\nDone.")
