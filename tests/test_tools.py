import json

import pytest
from pydantic import ValidationError

from host.identity import prefix_sha256, tool_schema_sha256
from host.tools import ToolSpec

SCOPES = ["email.write", "email.read", "contacts.read", "audit"]


def spec(scopes: list[str], name: str = "email_feedback") -> ToolSpec:
    return ToolSpec(
        name=name,
        description="Send feedback by email.",
        parameters={"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]},
        required_scopes=set(scopes),
    )


def test_scopes_stay_a_set_in_python_and_serialize_sorted_in_json() -> None:
    tool = spec(SCOPES)
    assert isinstance(tool.required_scopes, set)
    assert tool.required_scopes.issuperset({"email.read"})
    assert isinstance(tool.model_dump()["required_scopes"], set)
    assert tool.model_dump(mode="json")["required_scopes"] == sorted(SCOPES)
    assert json.loads(tool.model_dump_json())["required_scopes"] == sorted(SCOPES)


def test_json_round_trip_and_deep_copy_keep_identity() -> None:
    tool = spec(SCOPES)
    reloaded = ToolSpec.model_validate_json(tool.model_dump_json())
    assert reloaded == tool
    assert tool_schema_sha256([reloaded]) == tool_schema_sha256([tool.model_copy(deep=True)])


def test_validation_schema_is_unchanged() -> None:
    schema = ToolSpec.model_json_schema(mode="validation")["properties"]["required_scopes"]
    assert schema["type"] == "array"
    assert schema["items"] == {"type": "string"}
    assert schema["uniqueItems"] is True


def test_identity_ignores_scope_and_tool_insertion_order() -> None:
    a, b = spec(SCOPES, "alpha"), spec(SCOPES, "beta")
    b_reversed = spec(list(reversed(SCOPES)), "beta")
    assert tool_schema_sha256([a, b]) == tool_schema_sha256([b_reversed, a])
    assert prefix_sha256([{"role": "system", "content": "hi"}], [a, b]) == prefix_sha256(
        [{"content": "hi", "role": "system"}], [b_reversed, a]
    )


def test_identity_changes_with_what_matters() -> None:
    base = spec(SCOPES)
    assert tool_schema_sha256([base]) != tool_schema_sha256([spec([*SCOPES, "extra"])])
    assert prefix_sha256(["x"], [base]) != prefix_sha256(["y"], [base])


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        tool_schema_sha256([spec(SCOPES), spec(["other"])])


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "slash/name"])
def test_invalid_tool_names_are_refused(name: str) -> None:
    with pytest.raises(ValidationError):
        spec(SCOPES, name)
