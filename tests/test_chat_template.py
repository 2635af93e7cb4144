"""Whether a local server's chat template has a system role, read from the server itself."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from desktop.chat_template import probe_system_role, template_has_system_role
from tests.loopback import LoopbackProvider

GEMMA_JINJA = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
    "{% endif %}{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] "
    "| trim + '<end_of_turn>\\n' }}{% endfor %}"
)
CHATML_JINJA = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>system\\n' }}{% endif %}"
)
LLAMA3_GO = (
    "{{ if .System }}<|start_header_id|>system<|end_header_id|>\n\n{{ .System }}<|eot_id|>{{ end }}"
    "{{ if .Prompt }}<|start_header_id|>user<|end_header_id|>\n\n{{ .Prompt }}<|eot_id|>{{ end }}"
)
BARE_GO = "<start_of_turn>user\n{{ .Prompt }}<end_of_turn>\n<start_of_turn>model\n{{ .Response }}<end_of_turn>\n"


@pytest.mark.parametrize(
    ("template", "has"), [(GEMMA_JINJA, False), (CHATML_JINJA, True), (LLAMA3_GO, True), (BARE_GO, False)]
)
def test_templates_are_read_for_a_system_role(template: str, has: bool) -> None:
    assert template_has_system_role(template) is has


@pytest.mark.parametrize(
    ("api", "template", "supported"), [("llama.cpp", GEMMA_JINJA, False), ("ollama", LLAMA3_GO, True)]
)
def test_the_server_is_asked_for_its_template(api: str, template: str, supported: bool) -> None:
    async def probe(base_url: str, model: str):
        async with httpx.AsyncClient() as http:
            return await probe_system_role(http, base_url, model)

    with LoopbackProvider(chat_template=template, template_api=api, models=("gemma3:1b",)) as server:
        report = asyncio.run(probe(server.base_url, "gemma3:1b"))
    assert report.supported is supported
    assert report.source == {"llama.cpp": "llama.cpp /props", "ollama": "Ollama /api/show"}[api]
    if not supported:
        assert "Send Cairn's instructions in the first message" in report.advice


def test_a_server_that_does_not_say_gives_no_verdict() -> None:
    async def probe(base_url: str):
        async with httpx.AsyncClient() as http:
            return await probe_system_role(http, base_url, "m")

    with LoopbackProvider() as server:
        report = asyncio.run(probe(server.base_url))
    assert report.supported is None
    assert report.advice == ""
