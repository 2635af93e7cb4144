import json
import math

import pytest
from pydantic import BaseModel

from host.canonical import canonical_json_bytes, canonical_sorted, sha256_hex


def test_keys_are_sorted_and_separators_compact() -> None:
    assert canonical_json_bytes({"b": 1, "a": {"d": [1, 2], "c": None}}) == b'{"a":{"c":null,"d":[1,2]},"b":1}'


def test_text_is_utf8_not_escaped() -> None:
    assert canonical_json_bytes({"k": "café ☕"}) == '{"k":"café ☕"}'.encode()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_anywhere(bad: float) -> None:
    with pytest.raises(ValueError, match="NaN and infinities"):
        canonical_json_bytes({"outer": [1, {"inner": bad}]})


def test_sets_anywhere_become_sorted_arrays() -> None:
    value = {"scopes": {"email.write", "email.read", "calendar"}, "nested": [frozenset({"z", "a"})]}
    assert json.loads(canonical_json_bytes(value)) == {
        "nested": [["a", "z"]],
        "scopes": ["calendar", "email.read", "email.write"],
    }


def test_set_order_does_not_depend_on_insertion_order() -> None:
    forward = set()
    backward = set()
    words = [f"scope.{n}" for n in range(50)]
    for word in words:
        forward.add(word)
    for word in reversed(words):
        backward.add(word)
    assert canonical_json_bytes(forward) == canonical_json_bytes(backward)


def test_mixed_sets_have_one_order() -> None:
    assert canonical_sorted({2, "a", 1}) == canonical_sorted({"a", 1, 2})


def test_models_are_dumped_in_json_mode() -> None:
    class Point(BaseModel):
        y: int
        x: int

    assert canonical_json_bytes([Point(y=2, x=1)]) == b'[{"x":1,"y":2}]'


def test_non_string_keys_and_unknown_types_are_refused() -> None:
    with pytest.raises(TypeError, match="string object keys"):
        canonical_json_bytes({1: "one"})
    with pytest.raises(TypeError, match="bytes"):
        canonical_json_bytes({"raw": b"\x00"})


def test_lone_surrogates_are_refused() -> None:
    with pytest.raises(ValueError, match="not valid Unicode"):
        canonical_json_bytes({"text": "broken \ud800"})


def test_hash_is_sha256_of_the_canonical_bytes() -> None:
    assert sha256_hex({"b": 1, "a": 2}) == sha256_hex({"a": 2, "b": 1})
    assert len(sha256_hex([])) == 64
