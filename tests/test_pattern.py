"""The regex guard: what it lets through runs fast on the worst lines, what it refuses it names.

Python's re holds the GIL while it matches, so a slow match would freeze all of Cairn; the
guard is what stands between a model's pattern and that.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host.tools.pattern import PatternError, compile_matcher

WINDOW = 300  # what search_text feeds a regex at once (ToolLimits.search_line_chars)
# What passes costs about 0.1 s of CPU at worst here; what the guard refuses costs seconds to
# hours. Not a speed target: the bound only tells a linear match from a catastrophic one, ten
# times apart at least. Measured in the thread's CPU time, so a busy machine (other processes
# taking turns on the cores) does not make a fast match look slow.
SLOW = 1.0
UNITS = ("a", "ab", "a ", "aab", "a.", "a-", "foo", "xy", " ", "a=", "(")

ALLOWED = [
    r"def \w+\(",
    r"^\s*def\s+\w+\(.*\):",
    r"foo.*bar",
    r".*foo.*bar.*",
    r"class \w+\(.*\):",
    r"(\w+\.)+\w+",
    r"(foo|bar)+",
    r"import (os|sys)",
    r"TODO|FIXME",
    r"\w+\s*=\s*\w+",
    r'"[^"]*"',
    r"(?:[a-z]+-)*[a-z]+",
    r"\b(get|set)_\w+",
    r"\w+@\w+\.\w+",
    r"a*a*b",
    r"\s*\s*x",
    r"(a|b)+(a|b)+c",
    r"(?i)todo",
    r"^(\s*)(if|for)\b.*:$",
]

REFUSED = [
    (r"(a+)+$", "several ways"),
    (r"(a*)*b", "several ways"),
    (r"(a|aa)*b", "several ways"),
    (r"(ab|ab)+c", "several ways"),
    (r"(a|)+c", "several ways"),
    (r"(\w+\s?)+$", "several ways"),
    (r"(.*,)*x", "several ways"),
    (r"(?:x|y|xy)+z", "several ways"),
    (r"(?=(a+)+)b", "several ways"),
    (r"(a?){20}a{20}", "several ways"),
    (r"(?:a\s*[ab]*?\s)+c", "several ways"),  # found by the probe: one repetition can swallow the next
    (r"(?:x(?:[ab]*?)?)*c", "several ways"),  # found by the probe: nothing, matched two ways, each time
    (r"(?:a|a)(?:b|b)(?:c|c)x", "two ways"),
    (r"(?:a*)?(?:b*)?(?:c*)?x", "two ways"),
    (r"(?:a*a*,)+x", "several ways"),
    (r"(?:a+a+|a)(?:a+a+|a)c", "variable-length parts"),  # found by the probe: chains through alternatives
    (r"(?:\w*?\w*?[ab]\w*? ? ?)?c", "variable-length parts"),  # found by the probe: inside an optional part
    (r".*a.*b.*c", "3 variable-length parts"),
    (r"\w+\w+\w+x", "3 variable-length parts"),
    (r"a?a?a?aaa", "3 variable-length parts"),
    (r"[ab]*[bc]*[cd]*x", "3 variable-length parts"),
    (r"(\d+)\s+\1", "back-reference"),
    (r"(?P<q>['\"]).*(?P=q)", "back-reference"),
    (r"(a)?(?(1)b|c)", "back-reference"),
]


def worst_time(pattern: str, units: tuple[str, ...] = UNITS) -> float:
    matcher = compile_matcher(pattern, regex=True, ignore_case=False)
    worst = 0.0
    for unit in units:
        line = (unit * WINDOW)[:WINDOW]
        started = time.thread_time()
        matcher.search(line)
        worst = max(worst, time.thread_time() - started)
    return worst


@pytest.mark.parametrize("pattern", ALLOWED)
def test_common_patterns_pass_and_stay_fast_on_the_worst_lines(pattern: str) -> None:
    assert worst_time(pattern) < SLOW


@pytest.mark.parametrize(("pattern", "reason"), REFUSED)
def test_catastrophic_patterns_are_refused_with_the_reason(pattern: str, reason: str) -> None:
    with pytest.raises(PatternError, match=reason) as refused:
        compile_matcher(pattern, regex=True, ignore_case=False)
    assert "search for a plain part" in str(refused.value) or "check the matches" in str(refused.value)


def test_a_refused_pattern_really_is_slow() -> None:
    """The guard's reason is real: unguarded, this pattern takes long on a 24-character line."""
    import re

    started = time.thread_time()
    re.search(r"(a+)+$", "a" * 22 + "b")
    assert time.thread_time() - started > 0.05


def test_bad_regexes_and_empty_patterns_say_what_is_wrong() -> None:
    with pytest.raises(PatternError, match="not valid: unterminated character set"):
        compile_matcher("[abc", regex=True, ignore_case=False)
    with pytest.raises(PatternError, match="empty"):
        compile_matcher("", regex=False, ignore_case=False)


def test_plain_text_is_matched_literally_and_case_can_be_ignored() -> None:
    plain = compile_matcher("a.b(*", regex=False, ignore_case=False)
    assert plain.search("x a.b(* y")
    assert not plain.search("axb(*")
    assert compile_matcher("Hello", regex=False, ignore_case=True).search("say HELLO")
    assert compile_matcher("(a+)+$", regex=False, ignore_case=False).search("(a+)+$")  # plain text is never guarded


ATOMS = ["a", "b", "x", ".", r"\w", r"\s", r"\d", "[ab]", "[^b]", " "]
QUANTIFIERS = ["", "", "*", "+", "?", "{1,3}", "*?"]


def _regex() -> st.SearchStrategy[str]:
    atom = st.builds(lambda a, q: a + q, st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        sequence = st.lists(inner, min_size=1, max_size=4).map("".join)
        return st.one_of(
            sequence,
            st.builds(lambda s, q: f"(?:{s}){q}", sequence, st.sampled_from(QUANTIFIERS)),
            st.builds(lambda a, b, q: f"(?:{a}|{b}){q}", sequence, sequence, st.sampled_from(QUANTIFIERS)),
        )

    return st.recursive(atom, extend, max_leaves=8).map(lambda p: p + "c")  # a tail that fails: worst case


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(_regex())
def test_whatever_the_guard_lets_through_runs_fast(pattern: str) -> None:
    try:
        compile_matcher(pattern, regex=True, ignore_case=False)
    except PatternError:
        return
    assert worst_time(pattern, ("a", "ab", "a ", "ba", "xa", "a1")) < SLOW, pattern
