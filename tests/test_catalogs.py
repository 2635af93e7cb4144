"""The transport catalog, capability resolution, and the models.dev snapshot and refresh."""

import asyncio
import json
import re
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from desktop.catalog.modelsdev import BUNDLED_PATH, CACHE_NAME, load_models_dev, refresh_models_dev
from desktop.catalog.transport import CatalogError, TransportFlags, load_transport_catalog, normalize_base_url
from desktop.settings.routes import resolve_route
from desktop.settings.store import Account
from host.paths import CairnPaths

TRANSPORT = load_transport_catalog()


def route(paths: CairnPaths, **account: object):
    fields = {"name": "A", "provider": "deepseek", "default_model": "deepseek-flash", **account}
    return resolve_route(Account(**fields), None, TRANSPORT, load_models_dev(paths.cache_dir))


def test_the_official_deepseek_flash_binding_gets_its_flags(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths)
    assert r.flags == TransportFlags(mid_conversation_system=True)
    assert r.fixed_declarations_verified
    assert r.function_limit == 128
    assert r.published == r.actual
    assert "Exact published binding" in r.flags_reason
    assert r.model_info is not None
    assert r.model_info.limit.context == 128000


def test_deepseek_reasoner_rejects_later_system_messages(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, default_model="deepseek-reasoner")
    assert r.flags.mid_conversation_system is False
    assert not r.fixed_declarations_verified


def test_an_alias_model_name_gets_no_flags(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, default_model="deepseek-flash-latest")
    assert r.flags == TransportFlags()
    assert "not a published binding" in r.flags_reason


def test_a_relay_of_the_same_model_gets_no_flags(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, base_url="https://relay.example.com/v1")
    assert r.flags == TransportFlags()
    assert not r.fixed_declarations_verified
    assert r.published.base_url == "https://api.deepseek.com"
    assert r.actual.base_url == "https://relay.example.com/v1"
    assert "relay or override" in r.flags_reason


def test_a_header_only_override_keeps_the_published_identity_and_flags(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, headers={"X-Team": "research"})
    assert r.published == r.actual
    assert r.flags.mid_conversation_system
    assert r.headers == {"X-Team": "research"}


def test_an_unknown_model_gets_no_flags_and_no_prices(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, provider="openai", default_model="gpt-99-turbo")
    assert r.flags == TransportFlags()
    assert r.model_info is None


def test_a_custom_account_on_the_exact_official_endpoint_matches(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, provider="custom", base_url="https://API.deepseek.com/")
    assert r.flags.mid_conversation_system
    # Prices and limits follow the published identity too: the official endpoint's record.
    official = route(cairn_paths)
    assert r.model_info is not None
    assert r.model_info == official.model_info
    assert r.model_info.cost is not None


def test_a_custom_account_elsewhere_gets_no_prices(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, provider="custom", base_url="https://relay.example.com/v1")
    assert r.model_info is None


@pytest.mark.parametrize("grant", [{"flags": {"mid_conversation_system": True}}, {"fixed_declarations_verified": True}])
def test_a_generic_record_that_grants_anything_is_refused(tmp_path: Path, grant: dict) -> None:
    data = json.loads(TRANSPORT.model_dump_json())
    generic = next(b for b in data["bindings"] if b["model"] == "*")
    generic.update(grant)
    bad = tmp_path / "transport.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match="only an exact published binding may grant flags"):
        load_transport_catalog(bad)


def test_local_servers_have_generic_entries_with_every_flag_off(cairn_paths: CairnPaths) -> None:
    for preset in ("ollama", "lmstudio", "llamacpp", "vllm"):
        r = route(cairn_paths, provider=preset, default_model="qwen3:8b")
        assert r.flags == TransportFlags()
        assert "Generic entry" in r.flags_reason


def test_openai_models_use_the_developer_role(cairn_paths: CairnPaths) -> None:
    r = route(cairn_paths, provider="openai", default_model="gpt-5-mini")
    assert r.flags.developer_role
    assert r.model_info is not None
    assert r.model_info.accepts_images


@pytest.mark.parametrize("bad", ["not a url", "ftp://host/v1", "https://", ""])
def test_base_urls_must_be_http_urls(bad: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        normalize_base_url(bad)


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("http://localhost:99999/v1", "port 99999; a port is a number from 1 to 65535"),
        ("http://localhost:0/v1", "port 0"),
        ("http://my host/v1", "invalid host name"),
        ("http://exa$mple.com/v1", "invalid host name"),
        ("https://user:secret@api.example.com/v1", "API key field"),
        ("https://api.example.com/v1?api-version=2", "query or fragment"),
        ("https://api.example.com/v1#top", "query or fragment"),
    ],
)
def test_base_urls_that_cannot_work_are_refused_with_the_reason(bad: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        normalize_base_url(bad)
    with pytest.raises(ValidationError, match=re.escape(why)):
        Account(name="X", provider="custom", base_url=bad, default_model="m")


def test_base_urls_are_compared_in_one_spelling() -> None:
    assert normalize_base_url("HTTPS://Api.DeepSeek.com:443/") == "https://api.deepseek.com"
    assert normalize_base_url("http://127.0.0.1:11434/v1/") == "http://127.0.0.1:11434/v1"
    assert normalize_base_url("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    assert normalize_base_url("http://München.de/v1") == "http://xn--mnchen-3ya.de/v1"


# -- models.dev ------------------------------------------------------------------------------


def serve(handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def refresh(paths: CairnPaths, handler) -> tuple[bool, str]:
    async def go() -> tuple[bool, str]:
        async with serve(handler) as http:
            outcome = await refresh_models_dev(http, paths.cache_dir, "https://models.example/api.json")
            return outcome.ok, outcome.message

    return asyncio.run(go())


def full_catalog() -> dict:
    data = json.loads(BUNDLED_PATH.read_text())
    data["deepseek"]["models"]["deepseek-flash"]["limit"]["context"] = 256000
    data["302ai"] = {"id": "302ai", "models": {"claude-x": {"id": "claude-x"}}}  # no preset names it
    return data


def test_refresh_replaces_the_catalog_trimmed_to_offered_providers(cairn_paths: CairnPaths) -> None:
    ok, message = refresh(cairn_paths, lambda request: httpx.Response(200, json=full_catalog()))
    assert ok, message
    assert "refreshed" in message
    cached = json.loads((cairn_paths.cache_dir / CACHE_NAME).read_text())
    assert "302ai" not in cached
    assert "_snapshot" not in cached
    assert load_models_dev(cairn_paths.cache_dir).model("deepseek", "deepseek-flash").limit.context == 256000


@pytest.mark.parametrize(
    ("handler", "why"),
    [
        (lambda request: (_ for _ in ()).throw(httpx.ConnectError("no route", request=request)), "Could not reach"),
        (lambda request: httpx.Response(200, text='{"deepseek": {"models": '), "not valid JSON"),
        (lambda request: httpx.Response(200, json={"deepseek": full_catalog()["deepseek"]}), "partial"),
        (
            lambda request: httpx.Response(200, json={**full_catalog(), "openai": {"id": "openai", "models": {}}}),
            "partial",
        ),
        (lambda request: httpx.Response(200, json={**full_catalog(), "openai": {"models": 3}}), "shape"),
        (lambda request: httpx.Response(503, text="down"), "answered 503"),
    ],
    ids=["offline", "malformed", "missing-providers", "empty-provider", "wrong-shape", "server-error"],
)
def test_a_failed_refresh_keeps_the_previous_copy(cairn_paths: CairnPaths, handler, why: str) -> None:
    ok, _ = refresh(cairn_paths, lambda request: httpx.Response(200, json=full_catalog()))
    assert ok
    before = (cairn_paths.cache_dir / CACHE_NAME).read_bytes()
    ok, message = refresh(cairn_paths, handler)
    assert not ok
    assert why in message
    assert "kept the previous catalog" in message
    assert (cairn_paths.cache_dir / CACHE_NAME).read_bytes() == before
    assert not [p for p in Path(cairn_paths.cache_dir).iterdir() if p.name != CACHE_NAME]


def test_a_damaged_cache_falls_back_to_the_bundled_snapshot(cairn_paths: CairnPaths) -> None:
    cairn_paths.cache_dir.mkdir(parents=True)
    (cairn_paths.cache_dir / CACHE_NAME).write_text("{broken")
    catalog = load_models_dev(cairn_paths.cache_dir)
    assert catalog.model("openai", "gpt-4o") is not None


def test_models_dev_never_grants_flags(cairn_paths: CairnPaths) -> None:
    # openrouter serves known models, but no binding exists for it: no flags.
    r = route(cairn_paths, provider="openrouter", default_model="openai/gpt-5-mini")
    assert r.model_info is not None
    assert r.flags == TransportFlags()


def test_account_options_shape_the_route(cairn_paths: CairnPaths) -> None:
    official = route(cairn_paths, provider="openai", default_model="o3", max_output_tokens=800)
    assert (official.max_output_tokens, official.max_output_field) == (800, "max_completion_tokens")
    relay = route(cairn_paths, provider="openai", default_model="o3", base_url="https://relay.example.com/v1")
    assert relay.max_output_field == "max_tokens"
    assert route(cairn_paths, max_output_tokens=800).max_output_field == "max_tokens"  # DeepSeek
    folded = route(cairn_paths, instructions_in_first_message=True)
    assert folded.fold_opening
    assert not folded.flags.mid_conversation_system
    assert "instructions in the first message" in folded.flags_reason
    assert not route(cairn_paths, tools=False).accepts_tools
    assert route(cairn_paths).accepts_tools
    assert route(cairn_paths, provider="ollama", default_model="qwen3:8b").accepts_tools  # no record: capable
