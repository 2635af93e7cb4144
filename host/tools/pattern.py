"""Search patterns, and a guard against regexes that would take forever.

Python's ``re`` backtracks, cannot be given a time limit, and holds the GIL while it matches:
a catastrophic pattern in a worker thread would freeze every thread of Cairn, the window
included, until it finished. So a regex is looked at before it runs, on the parse tree ``re``
itself builds, and refused when its shape can take exponential or high-polynomial time:

- back-references (matching with them is NP-hard);
- repetition of something that can match the same text in more than one way (``(a+)+``,
  ``(a|aa)*``, ``(\\w+\\w)+``, ``(x(a*)?)*``): exponential;
- more than two places that can match the same text two ways (``(a|a)``, ``(a*)?``), even
  unrepeated: each doubles the work;
- a chain of three or more variable-length parts that can trade characters with one another
  (``.*a.*b.*c``, ``\\w+\\w+\\w+``): a line of n characters costs about n⁴ steps. Two are allowed;
  a part that cannot take the characters of what follows it (``\\s*def\\s+\\w+``) ends a chain.

What passes costs at most about n³ steps on a line of n characters, so the search feeds a regex
long lines in overlapping windows (``ToolLimits.search_line_chars``, 300) and stops if one call
still takes too long. The guard is a heuristic, checked by a property test that times what it
lets through on the worst lines; it works on a sample alphabet (Latin-1 and a few wider
characters) and errs toward refusing. A linear-time engine (RE2) or one with a timeout
(``regex``) would make it unnecessary; neither is a dependency today.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from host.tools.catalog import ToolError

if TYPE_CHECKING:  # typeshed types the parser under its deprecated public name only
    import sre_constants as _c
    import sre_parse as _parser
else:
    import re._constants as _c
    from re import _parser

__all__ = ["MAX_AMBIGUOUS", "MAX_CHAIN", "PatternError", "compile_matcher"]

MAX_CHAIN = 2
MAX_AMBIGUOUS = 2

_ALL = frozenset(chr(c) for c in range(384)) | frozenset(
    "\u2010\u2013\u2014\u201c\u201d\u2022\u2026\u20ac\u4e2d\u0663\u2003\u3000\U0001f600"
)
_EMPTY = ""  # not a character: stands for matching nothing in a set of first characters
_REPEATS = frozenset(
    {_c.MAX_REPEAT, _c.MIN_REPEAT, *([_c.POSSESSIVE_REPEAT] if hasattr(_c, "POSSESSIVE_REPEAT") else [])}
)
_GROUPS = frozenset({_c.SUBPATTERN, *([_c.ATOMIC_GROUP] if hasattr(_c, "ATOMIC_GROUP") else [])})
_ZERO_WIDTH = frozenset({_c.AT, _c.ASSERT, _c.ASSERT_NOT})
_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    _c.CATEGORY_DIGIT: str.isdecimal,
    _c.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdecimal(),
    _c.CATEGORY_SPACE: str.isspace,
    _c.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    _c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    _c.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
}


class PatternError(ToolError):
    """A pattern is invalid or refused; the message says why and what to do instead."""


def compile_matcher(pattern: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    """The compiled pattern: a plain text (escaped, so always linear) or a regex that passed
    the guard. Raises ``PatternError``."""
    if not pattern:
        raise PatternError("The pattern is empty; give the text to look for.")
    flags = re.IGNORECASE if ignore_case else 0
    if not regex:
        return re.compile(re.escape(pattern), flags)
    try:
        parsed = _parser.parse(pattern, flags)
        compiled = re.compile(pattern, flags)
    except re.error as exc:
        raise PatternError(f"The regex {pattern!r} is not valid: {exc}. Fix it, or search with regex=false.") from exc
    except RecursionError as exc:
        raise PatternError(f"The regex {pattern!r} is nested too deeply to use.") from exc
    if _has_backreference(parsed.data):
        raise PatternError(
            f"The regex {pattern!r} uses a back-reference, which can take exponential time; "
            "search without it and check the matches by reading the files."
        )
    _Guard(parsed.state, ignore_case=bool(parsed.state.flags & re.IGNORECASE)).check(pattern, parsed.data)
    return compiled


def _has_backreference(items: list[Any]) -> bool:
    for op, av in items:
        if op in (_c.GROUPREF, _c.GROUPREF_EXISTS):
            return True
        for part in av if isinstance(av, tuple) else (av,):
            if isinstance(part, _parser.SubPattern) and _has_backreference(part.data):
                return True
            if isinstance(part, list) and any(
                isinstance(b, _parser.SubPattern) and _has_backreference(b.data) for b in part
            ):
                return True
    return False


def _merged(runs: list[_Run]) -> list[_Run]:
    """One run per set of characters, the longest chain kept: the frontier stays small however
    many alternatives a pattern has."""
    longest: dict[frozenset[str], int] = {}
    for run in runs:
        longest[run.chars] = max(run.chain, longest.get(run.chars, 0))
    return [_Run(chars, chain) for chars, chain in longest.items()]


@dataclass(frozen=True)
class _Run:
    """A variable-length part of a pattern, and the longest chain of such parts ending in it."""

    chars: frozenset[str]
    chain: int


class _Guard:
    def __init__(self, state: _parser.State, *, ignore_case: bool) -> None:
        self.state = state
        self.ignore_case = ignore_case

    def check(self, pattern: str, items: list[Any]) -> None:
        flat = self._flat(items)
        if flat and flat[-1][0] in _REPEATS and self._single_char(list(flat[-1][1][2])):
            # A repeated character class with nothing after it never backtracks: it takes what
            # it can and the match is over.
            flat = flat[:-1]
        if self._ambiguities(flat) > MAX_AMBIGUOUS:
            raise PatternError(
                f"The regex {pattern!r} has more than {MAX_AMBIGUOUS} places that can match the same text two "
                "ways (alternatives that start alike, or optional parts that can match nothing, like (a*)?), "
                "and each doubles the time; simplify them, or search for a plain part of it."
            )
        chain, _ = self._flow(pattern, flat, [])
        if chain > MAX_CHAIN:
            raise PatternError(
                f"The regex {pattern!r} has {chain} variable-length parts in a row that can match the same "
                "characters (like .*a.*b.*c), which can take hours on one long line; use at most "
                f"{MAX_CHAIN}, make the parts narrower (such as [^,]* instead of .*), or search for a plain part of it."
            )

    # -- the chain of variable-length parts ------------------------------------------------------

    def _flow(self, pattern: str, items: list[Any], frontier: list[_Run]) -> tuple[int, list[_Run]]:
        """The longest chain of variable-length parts that can trade characters, through
        ``items`` entered with ``frontier`` (the parts the next one could trade with), and the
        frontier after them. Alternatives, optional parts and look-arounds are followed inside,
        entered with the same frontier; what leaves them is the union of what leaves each way."""
        worst = 0
        for op, av in self._flat(items):
            if op is _c.AT:
                continue
            if op in (_c.ASSERT, _c.ASSERT_NOT):
                inner, _ = self._flow(pattern, list(av[1]), frontier)
                worst = max(worst, inner)
                continue
            low, high = self._width(op, av)
            chars = self._chars([(op, av)])
            ways: list[list[Any]] = []
            if op is _c.BRANCH:
                ways = [list(branch) for branch in av[1]]
            elif op in _REPEATS and av[1] <= 1:
                ways = [list(av[2])] + ([[]] if av[0] == 0 else [])
            elif op in _REPEATS:
                self._repeated(pattern, av)
            if ways:
                after: list[_Run] = []
                for way in ways:
                    inner, out = self._flow(pattern, way, frontier)
                    worst = max(worst, inner)
                    after.extend(out)
            else:
                after = [run for run in frontier if run.chars & chars] if low > 0 else list(frontier)
            if low != high:
                chain = 1 + max((run.chain for run in frontier if run.chars & chars), default=0)
                worst = max(worst, chain)
                after.append(_Run(chars, chain))
                if low > 0 and not ways:
                    after = after[-1:]  # it takes at least one character: nothing before it touches what follows
            frontier = _merged(after)
        return worst, frontier

    def _repeated(self, pattern: str, av: Any) -> None:
        """A part repeated more than once must split its text into repetitions one way only,
        else the ways multiply with every repetition. That holds for a single character class;
        for a body of fixed width whose alternatives do not overlap; and for a body of varying
        width whose own variable parts cannot trade (a chain of one), whose alternatives do not
        overlap, and which starts or ends with a fixed part none of its variable parts can
        take, so each repetition's edge is where that part is (``(\\w+\\.)+``, ``(,\\s*\\w+)+``)."""
        body = self._flat(list(av[2]))
        if self._single_char(body):
            return
        sub = _parser.SubPattern(self.state, body)
        low, high = (int(w) for w in sub.getwidth())
        ambiguous = self._ambiguities(body) > 0
        if not ambiguous and low != high:
            chain, _ = self._flow(pattern, body, [])
            ambiguous = chain > 1 or not self._delimited(body)
        if ambiguous:
            raise PatternError(
                f"The regex {pattern!r} repeats a part that can match the same text in several ways "
                "(like (a+)+ or (a|aa)*), which can take exponential time; rewrite it without the nested "
                "repetition, or search for a plain part of it."
            )

    def _delimited(self, body: list[Any]) -> bool:
        """Whether ``body`` starts or ends with a fixed part that none of its variable parts can take."""
        consuming = [(op, av) for op, av in body if op not in _ZERO_WIDTH]
        variable: set[str] = set()
        for op, av in consuming:
            low, high = self._width(op, av)
            if low != high:
                variable |= self._chars([(op, av)])
        for op, av in (consuming[:1] + consuming[-1:]) if consuming else []:
            low, high = self._width(op, av)
            if low == high > 0 and not self._chars([(op, av)]) & variable:
                return True
        return False

    def _single_char(self, items: list[Any]) -> bool:
        flat = self._flat(items)
        return len(flat) == 1 and flat[0][0] in (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN)

    def _ambiguities(self, items: list[Any]) -> int:
        """How many places in ``items`` can match the same text two ways: alternatives that can
        start on the same character or both match nothing (``(a|a)``, ``(x|x?)``), and a
        repeated or optional part that can match nothing itself (``(a*)?``, ``(a?)*``). Each
        doubles the work; in a repeated part they double it with every repetition."""
        count = 0
        for op, av in self._flat(items):
            if op is _c.BRANCH:
                firsts = [self._first_chars(self._flat(list(b))) for b in av[1]]
                count += any(a & b for i, a in enumerate(firsts) for b in firsts[i + 1 :])
                count += sum(self._ambiguities(list(b)) for b in av[1])
            elif op in _REPEATS:
                body = list(av[2])
                if not self._single_char(body):
                    count += _parser.SubPattern(self.state, body).getwidth()[0] == 0
                count += self._ambiguities(body)
            elif op in (_c.ASSERT, _c.ASSERT_NOT):
                count += self._ambiguities(list(av[1]))
        return count

    def _first_chars(self, flat: list[Any]) -> frozenset[str]:
        """What the sequence can start with; ``_EMPTY`` among them when it can match nothing."""
        found: frozenset[str] = frozenset()
        for op, av in flat:
            if op in _ZERO_WIDTH:
                continue
            found |= self._chars([(op, av)])
            if self._width(op, av)[0] > 0:
                return found
        return found | {_EMPTY}

    # -- what a part can match ---------------------------------------------------------------------

    def _flat(self, items: list[Any]) -> list[Any]:
        """Groups opened up into their parts, so a sequence is seen as the matcher runs it."""
        flat: list[Any] = []
        for op, av in items:
            if op in _GROUPS:
                flat.extend(self._flat(list(av[-1] if op is _c.SUBPATTERN else av)))
            else:
                flat.append((op, av))
        return flat

    def _width(self, op: Any, av: Any) -> tuple[int, int]:
        sub = _parser.SubPattern(self.state, [(op, av)])
        low, high = sub.getwidth()
        return int(low), int(high)

    def _chars(self, items: list[Any]) -> frozenset[str]:
        """Every sample character any of ``items`` can consume, at any position."""
        found: set[str] = set()
        for op, av in items:
            if op is _c.LITERAL:
                found |= self._cased(chr(av))
            elif op is _c.NOT_LITERAL:
                found |= _ALL - self._cased(chr(av))
            elif op is _c.ANY:
                found |= _ALL - {"\n"}
            elif op is _c.IN:
                found |= self._class(av)
            elif op in _REPEATS:
                found |= self._chars(list(av[2]))
            elif op in _GROUPS:
                found |= self._chars(list(av[-1] if op is _c.SUBPATTERN else av))
            elif op is _c.BRANCH:
                for branch in av[1]:
                    found |= self._chars(list(branch))
            elif op not in _ZERO_WIDTH:
                return _ALL  # something this guard does not know: assume the worst
        return frozenset(found)

    def _class(self, items: Any) -> frozenset[str]:
        chars: set[str] = set()
        negate = False
        for op, av in items:
            if op is _c.NEGATE:
                negate = True
            elif op is _c.LITERAL:
                chars |= self._cased(chr(av))
            elif op is _c.RANGE:
                low, high = av
                chars |= {ch for ch in _ALL if any(low <= ord(v) <= high for v in self._cased(ch))}
            elif op is _c.CATEGORY and av in _CATEGORIES:
                test = _CATEGORIES[av]
                chars |= {ch for ch in _ALL if test(ch)}
            else:
                return _ALL
        return _ALL - chars if negate else frozenset(chars)

    def _cased(self, ch: str) -> frozenset[str]:
        return frozenset({ch, ch.lower(), ch.upper()}) if self.ignore_case else frozenset(ch)
