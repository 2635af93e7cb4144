"""What search reads of a message and how it shows where a message matched.

The index (``host.schema.MESSAGE_TEXT``) holds a visible message's text parts and tool
results; ``message_text`` reads the same text from a row's content, so a snippet shows what
was searched. Words split and fold as the index's tokenizer (FTS5's ``unicode61``) cuts and
folds them: "don't" is "don" and "t", "Café" is "cafe".
"""

from __future__ import annotations

import json
import re
import unicodedata

__all__ = ["NO_SNIPPET", "Snippet", "fold", "message_text", "needed_words", "snippet", "tokens"]

SNIPPET_WORDS = 12
_TOKEN = re.compile(r"[^\W_]+")  # a word as the index's tokenizer cuts it
_WORD_CHAR = re.compile(r"[^\W_]")

Snippet = tuple[tuple[str, bool], ...]
"""Where a search matched: the text in pieces, each a word that matched (``True``) or not.
Pieces rather than marks in the text, so no message can forge a mark and the window marks
the words however it draws them."""
NO_SNIPPET: Snippet = ()


def fold(text: str) -> str:
    """Text as the index compares it: case and diacritics folded away."""
    if text.isascii():
        return text.lower()
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """The index's words in ``text``, folded."""
    return [fold(t) for t in _TOKEN.findall(text)]


def needed_words(query: str) -> list[str]:
    """The words of ``query`` a match must hold: a word that starts another one (or repeats
    it) is implied by that one, and would only make the full-text query slower."""
    words = list(dict.fromkeys(query.split()))
    return [w for w in words if not any(o != w and o.casefold().startswith(w.casefold()) for o in words)]


def message_text(content: str) -> str:
    """The searched text of a row's content (JSON): its text parts and tool results, joined
    by spaces as the index joins them; empty for anything else."""
    try:
        parts = json.loads(content).get("parts")
    except (ValueError, AttributeError):
        return ""
    found: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        text = part.get("text") if part.get("kind") == "text" else None
        text = part.get("content") if part.get("kind") == "tool_result" else text
        if isinstance(text, str):
            found.append(text)
    return " ".join(found)


def snippet(text: str, words: list[str], size: int = SNIPPET_WORDS) -> Snippet:
    """About ``size`` words of ``text`` around the first word that starts with one of ``words``,
    each such word a marked piece, with "…" where text was left out (as FTS5's ``snippet``).
    Only the text around the first match is cut into words, so a long tool result costs no
    more than a short message."""
    prefixes = tuple(part for word in words for part in tokens(word))
    at = _first_match(text, prefixes)
    low = _word_start(text, max(0, at - WINDOW))
    high = _word_end(text, min(len(text), at + 2 * WINDOW))
    pieces = _pieces(text[low:high], prefixes, size)
    if not pieces:
        return NO_SNIPPET
    if low > 0 and pieces[0] != ("…", False):
        pieces.insert(0, ("…", False))
    if high < len(text) and pieces[-1] != ("…", False):
        pieces.append(("…", False))
    return tuple(pieces)


WINDOW = 400  # characters before the first match that a snippet may show (and twice that after)


def _first_match(text: str, prefixes: tuple[str, ...]) -> int:
    """Where the first word starting with one of ``prefixes`` begins (0 when none does)."""
    if not prefixes:
        return 0
    if all(p.isascii() for p in prefixes):
        found = re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, prefixes)) + ")", re.IGNORECASE).search(text)
        if found is not None or text.isascii():
            return found.start() if found is not None else 0
    # Diacritics the index folds away ("café" for "cafe"): word by word.
    return next((m.start() for m in _TOKEN.finditer(text) if fold(m.group()).startswith(prefixes)), 0)


def _inside_word(text: str, at: int) -> bool:
    return 0 < at < len(text) and _WORD_CHAR.match(text, at - 1) is not None and _WORD_CHAR.match(text, at) is not None


def _word_start(text: str, at: int) -> int:
    """``at`` moved on past a word it falls inside of, so no word is shown cut."""
    while _inside_word(text, at):
        at += 1
    return at


def _word_end(text: str, at: int) -> int:
    while _inside_word(text, at):
        at -= 1
    return at


def _pieces(text: str, prefixes: tuple[str, ...], size: int) -> list[tuple[str, bool]]:
    pieces_of = re.findall(r"[^\W_]+|[\W_]+", text)
    marked = {i for i, t in enumerate(pieces_of) if prefixes and fold(t).startswith(prefixes)}
    spans = [i for i, t in enumerate(pieces_of) if _TOKEN.fullmatch(t)]
    first = next((n for n, i in enumerate(spans) if i in marked), 0)
    start = max(0, min(first - size // 4, len(spans) - size))
    shown = spans[start : start + size]
    if not shown:
        return []
    pieces: list[tuple[str, bool]] = [("…", False)] if start > 0 else []
    for i in range(shown[0], shown[-1] + 1):
        if pieces and not pieces[-1][1] and i not in marked:
            pieces[-1] = (pieces[-1][0] + pieces_of[i], False)  # plain text runs on in one piece
        else:
            pieces.append((pieces_of[i], i in marked))
    if start + size < len(spans):
        pieces.append(("…", False))
    return pieces
