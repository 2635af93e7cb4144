"""Tools on the built-in engine, by the engine's own template rendering (``/apply-template``):
a route offers tools exactly when the template the engine runs renders them. No tool-capable
model ships with Cairn, so the model's side of a call is not tested here (see the README)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.engine.build_spec import installed_build
from desktop.engine.engine import Engine
from desktop.engine.library import LibraryError, ModelEntry, ModelLibrary
from desktop.engine.routes import builtin_route
from desktop.settings.routes import resolve_route
from desktop.settings.store import Account

TEMPLATES = Path(__file__).with_name("engine_templates")
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CONVERSATION = [
    {"role": "user", "content": "Weather in Oslo?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Rain, 4 C"},
    {"role": "user", "content": "And in Paris?"},
]


class Rig:
    def __init__(self, home: Path) -> None:
        build = installed_build()
        if build is None:
            pytest.fail("the built-in engine is not built: run `make engine` (or `make test`, which builds it)")
        self.library = ModelLibrary(home / "models", frozenset({"gemma3"}))
        entry = self.library.default_model()
        assert entry is not None, "the default model's package is not installed (make test installs it)"
        self.model: ModelEntry = entry
        self.loop = asyncio.new_event_loop()
        self.http = httpx.AsyncClient()
        self.engine = Engine(
            build, self.library, state_dir=home / "engine", log_dir=home / "logs", http=lambda: self.http
        )

    def rendered(self, body: dict[str, object]) -> str:
        async def ask() -> str:
            await self.engine.unload()  # a template is read when the engine starts
            live = await self.engine.endpoint(self.model.sha256)
            answer = await self.http.post(
                f"{live.url}/apply-template", json=body, headers={"authorization": f"Bearer {live.key}"}
            )
            answer.raise_for_status()
            return str(answer.json()["prompt"])

        return self.loop.run_until_complete(ask())

    def route_takes_tools(self) -> bool:
        account = Account(name="Built-in", provider="built-in", default_model=self.model.sha256)
        route = resolve_route(account, None, load_transport_catalog(), load_models_dev(Path("/nonexistent")))
        return builtin_route(route, account, self.library).accepts_tools


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    made = Rig(tmp_path_factory.mktemp("engine-tools"))
    try:
        yield made
    finally:
        made.loop.run_until_complete(made.engine.stop())
        made.loop.run_until_complete(made.http.aclose())
        made.loop.close()


def test_the_shipped_template_renders_no_tools_so_the_route_offers_none(rig: Rig) -> None:
    prompt = rig.rendered({"messages": CONVERSATION[:1], "tools": [WEATHER]})
    assert prompt.startswith("<start_of_turn>user\nWeather in Oslo?<end_of_turn>\n<start_of_turn>model\n")
    assert "get_weather" not in prompt  # declared, and nowhere in what the model would read
    assert not rig.model.takes_tools
    assert not rig.route_takes_tools()


def test_a_tool_template_renders_declarations_calls_and_results_so_the_route_offers_tools(rig: Rig) -> None:
    rig.model = rig.library.set_template(rig.model.sha256, TEMPLATES / "chatml_tools.jinja")
    try:
        prompt = rig.rendered({"messages": CONVERSATION, "tools": [WEATHER]})
        declared = prompt[prompt.rindex("<tools>\n") + len("<tools>\n") : prompt.rindex("\n</tools>")]
        assert json.loads(declared) == WEATHER  # the declaration, exactly as sent
        assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>' in prompt
        assert "<tool_response>\nRain, 4 C\n</tool_response>" in prompt
        assert prompt.endswith("<|im_start|>user\nAnd in Paris?<|im_end|>\n<|im_start|>assistant\n")
        assert rig.model.takes_tools
        assert rig.route_takes_tools()
        without = rig.rendered({"messages": CONVERSATION[:1]})
        assert "<tools>" not in without
    finally:
        rig.model = rig.library.set_template(rig.model.sha256, None)
    assert not rig.route_takes_tools()


def test_a_template_that_cannot_be_read_is_refused(rig: Rig, tmp_path: Path) -> None:
    big = tmp_path / "big.jinja"
    big.write_bytes(b"x" * (2 * 1024 * 1024))
    for path, words in ((tmp_path / "missing.jinja", "could not read the template"), (big, "too large")):
        with pytest.raises(LibraryError, match=words):
            rig.library.set_template(rig.model.sha256, path)
    assert rig.library.find(rig.model.sha256).template_file is None  # type: ignore[union-attr]
