"""Ranking tools and skills against a model's words: BM25 over each one's name (counted twice)
and description, with common words left out and plurals folded, so that a search for "the
weather in a valley" ranks on what it asks for."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from host.tools import ToolSpec

__all__ = ["RELATIVE", "STOP_WORDS", "SUGGEST", "TOP", "best_matches", "meaningful", "rank", "rank_named"]

TOP = 5  # at most this many activated by one word search
SUGGEST = 5  # and this many more named as suggestions
# A match is activated when it scores at least this share of the best one's. Strict on purpose:
# a junk activation costs an on-demand chat a re-read of its whole prompt, a tool left as a
# suggestion one more search with select:.
RELATIVE = 0.7
STOP_WORDS = frozenset({  # words that say nothing about which tool is meant
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from",
    "get", "give", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "need", "of", "on", "or",
    "please", "show", "some", "that", "the", "their", "them", "there", "these", "this", "those", "to", "tool",
    "tools", "use", "using", "want", "was", "we", "what", "when", "where", "which", "while", "who", "will", "with",
    "would", "you", "your",
})  # fmt: skip

_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script: "für", "天気予報"


def _fold(word: str) -> str:
    """A plural folded to its singular, roughly: enough for "tickets" to find "ticket"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    words = _WORD.findall(text.lower().replace("_", " ").replace("-", " "))
    return [_fold(w) for w in words if w not in STOP_WORDS]


def meaningful(query: str) -> bool:
    """Whether ``query`` has a word that is not a common one."""
    return bool(_words(query))


def rank(query: str, specs: Sequence[ToolSpec]) -> list[tuple[float, ToolSpec]]:
    """``specs`` that match ``query`` and their scores, best first."""
    ranked = rank_named(query, [(s.name, s.description) for s in specs])
    return [(score, specs[index]) for score, index in ranked]


def rank_named(query: str, entries: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
    """The (name, description) ``entries`` that match ``query``: each one's score and index,
    best first, ties by name."""
    documents = [_words(f"{name} {name} {description}") for name, description in entries]
    terms = sorted(set(_words(query)))  # summed in one order, so ties break by name whatever the hash seed
    if not terms or not documents:
        return []
    average = sum(len(d) for d in documents) / len(documents)
    frequency = Counter(term for d in documents for term in set(d))
    scored = []
    for index, document in enumerate(documents):
        counts = Counter(document)
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (len(documents) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(document) / average))
        if score > 0:
            scored.append((-score, entries[index][0], index))
    return [(-negative, index) for negative, _, index in sorted(scored)]


def best_matches(query: str, specs: Sequence[ToolSpec]) -> tuple[list[ToolSpec], list[ToolSpec]]:
    """The matches a word search activates (those scoring at least ``RELATIVE`` of the best,
    ``TOP`` at most) and the ones it suggests (the next ``SUGGEST``)."""
    ranked = rank(query, specs)
    if not ranked:
        return [], []
    floor = ranked[0][0] * RELATIVE
    strong = [spec for score, spec in ranked if score >= floor][:TOP]
    rest = [spec for _, spec in ranked if spec not in strong][:SUGGEST]
    return strong, rest
