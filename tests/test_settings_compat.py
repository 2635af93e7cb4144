"""settings.json written by a newer Cairn: what this Cairn knows is used, the rest is kept."""

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.context.estimate import budget_for
from desktop.settings.store import SETTINGS_VERSION, Account, SettingsError, SettingsStore
from host.paths import CairnPaths

# What a future Cairn (settings version 99) might write: fields this Cairn has never heard
# of at the top level and inside an account, next to the ones it knows.
FUTURE_ACCOUNT: dict[str, Any] = {
    "id": "0190a0f0-1234-7abc-8def-0123456789ab",
    "name": "DeepSeek",
    "provider": "deepseek",
    "base_url": None,
    "default_model": "deepseek-flash",
    "headers": {"X-Team": "blue"},
    "rate_limit": {"rpm": 60, "burst": [1, 2, 3]},
    "pinned": True,
}
FUTURE: dict[str, Any] = {
    "schema_version": 99,
    "accounts": [FUTURE_ACCOUNT],
    "default_account": FUTURE_ACCOUNT["id"],
    "custom_instructions": "Answer in French.",
    "theme": "dark",
    "workspace": None,
    "mcp_servers": [{"name": "files", "command": ["mcp-files", "--root", "~"]}],
    "telemetry": None,
    "font": {"family": "Inter", "size": 13.5},
}


@pytest.fixture
def settings_path(cairn_paths: CairnPaths) -> Path:
    path = cairn_paths.config_dir / "settings.json"
    path.parent.mkdir(parents=True)
    return path


def test_a_newer_file_loads_and_keeps_what_this_cairn_does_not_know(settings_path: Path) -> None:
    settings_path.write_text(json.dumps(FUTURE, indent=2))
    store = SettingsStore(settings_path)

    loaded = store.load()
    assert loaded.schema_version == 99
    assert loaded.theme == "dark"
    assert loaded.custom_instructions == "Answer in French."
    known = loaded.account("deepseek")
    assert known is not None
    assert known.default_model == "deepseek-flash"
    assert known.model_extra == {"rate_limit": {"rpm": 60, "burst": [1, 2, 3]}, "pinned": True}

    added = Account(name="Local", provider="ollama", default_model="qwen3:8b")
    store.add_account(added)
    store.replace_account(added.model_copy(update={"default_model": "llama3.2"}))
    # An account edited from a form is built afresh and knows nothing of the unknown fields.
    edited = Account(
        id=FUTURE_ACCOUNT["id"], name="DeepSeek", provider="deepseek", default_model="deepseek-pro", headers={}
    )
    store.replace_account(edited)

    saved = json.loads(settings_path.read_text())
    assert saved["schema_version"] == 99
    for key in ("mcp_servers", "telemetry", "font", "default_account", "custom_instructions", "theme"):
        assert saved[key] == FUTURE[key], key
    assert "telemetry" in saved  # a null unknown field is kept, not dropped
    first, second = saved["accounts"]
    # This Cairn's own options are written with their defaults beside the fields it keeps.
    options = Account(name="x", provider="p", default_model="m").model_dump(
        exclude={"id", "name", "provider", "base_url", "default_model", "headers"}
    )
    assert options == {
        "max_output_tokens": None,
        "first_token_timeout": None,
        "instructions_in_first_message": False,
        "tools": True,
        "tool_declarations": "automatic",
        "context_limit": None,
    }
    assert first == {**FUTURE_ACCOUNT, "default_model": "deepseek-pro", "headers": {}, **options}
    assert second["name"] == "Local"
    assert second["default_model"] == "llama3.2"
    assert set(second) == {"id", "name", "provider", "base_url", "default_model", "headers", *options}

    # And it loads again, the same.
    again = store.load()
    assert again.model_dump() == saved


def test_a_file_of_this_version_keeps_its_version_and_unknown_fields_too(settings_path: Path) -> None:
    settings_path.write_text(json.dumps({"schema_version": SETTINGS_VERSION, "experimental": {"a": 1}}))
    store = SettingsStore(settings_path)
    settings = store.load()
    settings.custom_instructions = "Be brief."
    store.save(settings)
    assert json.loads(settings_path.read_text())["experimental"] == {"a": 1}
    assert json.loads(settings_path.read_text())["schema_version"] == SETTINGS_VERSION


def test_a_new_file_is_written_at_this_version(settings_path: Path) -> None:
    store = SettingsStore(settings_path)
    store.add_account(Account(name="A", provider="openai", default_model="gpt-5"))
    assert json.loads(settings_path.read_text())["schema_version"] == SETTINGS_VERSION


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"theme": "solarized"}, "theme"),
        ({"accounts": [{**FUTURE_ACCOUNT, "base_url": "nope"}]}, r"accounts\.0\.base_url"),
        ({"accounts": [{**FUTURE_ACCOUNT, "headers": {"Authorization": "x"}}]}, r"accounts\.0\.headers"),
    ],
    ids=["theme", "base_url", "secret-header"],
)
def test_a_bad_value_in_a_known_field_of_a_newer_file_is_reported_and_kept(
    settings_path: Path, change: dict[str, Any], where: str
) -> None:
    text = json.dumps({**FUTURE, **change})
    settings_path.write_text(text)
    with pytest.raises(SettingsError, match=rf"newer Cairn \(version 99\).* at {where}: .*update Cairn") as caught:
        SettingsStore(settings_path).load()
    assert str(settings_path) in str(caught.value)
    assert settings_path.read_text() == text


def test_a_bad_value_in_a_file_of_this_version_is_reported_as_before(settings_path: Path) -> None:
    settings_path.write_text(json.dumps({"schema_version": 1, "theme": "solarized"}))
    with pytest.raises(SettingsError, match=r"has a bad value at theme: .*fix it or move it aside"):
        SettingsStore(settings_path).load()


@pytest.mark.parametrize("version", [0, -3, "two", None])
def test_a_schema_version_that_is_not_a_version_is_a_bad_value(settings_path: Path, version: object) -> None:
    settings_path.write_text(json.dumps({"schema_version": version}))
    with pytest.raises(SettingsError, match="bad value at schema_version"):
        SettingsStore(settings_path).load()


def test_a_file_that_is_not_an_object_says_so(settings_path: Path) -> None:
    settings_path.write_text("[1, 2]")
    with pytest.raises(SettingsError, match="bad value at the top level"):
        SettingsStore(settings_path).load()


@pytest.mark.parametrize(("field", "value"), [("reply_reserve", -5), ("retained_tail", "lots"), ("reply_reserve", 10)])
def test_a_bad_context_budget_setting_is_reported(settings_path: Path, field: str, value: object) -> None:
    settings_path.write_text(json.dumps({"schema_version": SETTINGS_VERSION, field: value}))
    with pytest.raises(SettingsError, match=rf"has a bad value at {field}: .*fix it or move it aside"):
        SettingsStore(settings_path).load()
    assert json.loads(settings_path.read_text())[field] == value  # left as it was


def test_the_context_budget_settings_apply_to_every_route() -> None:
    from desktop.settings.routes import ResolvedRoute
    from desktop.settings.store import Settings

    route = ResolvedRoute.model_construct(context_limit=100_000, context_source="models.dev")
    assert budget_for(route, Settings()).threshold == 100_000 - 16_000
    custom = budget_for(route, Settings(reply_reserve=4_000, retained_tail=9_000))
    assert (custom.threshold, custom.tail, custom.source) == (96_000, 9_000, "models.dev")
    unknown = budget_for(ResolvedRoute.model_construct(context_limit=None, context_source="unknown"), Settings())
    assert (unknown.limit, unknown.source) == (8_192, "default")
