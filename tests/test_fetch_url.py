"""fetch_url over real HTTP on 127.0.0.1: the loopback provider, and a small site whose pages
each try something (binary, huge, slow, redirect chains and redirects to other schemes)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from desktop.loopback import LoopbackProvider
from host.tools.catalog import ToolOutput
from host.tools.fetch import check_url, fetch_url
from host.tools.limits import DEFAULT_LIMITS, ToolLimits

PAGE = b"""<!DOCTYPE html><html><head><title>Cairn &amp; tools</title><style>body{color:red}</style>
<script>var secret = "do not show";</script></head><body><nav><a href="/docs">Docs</a></nav>
<h1>Heading</h1><p>Some <b>bold</b>   text and <a href="guide.html#part">a guide</a>.</p>
<ul><li>one</li><li>two</li></ul><pre>  indented
    code</pre></body></html>"""


class Site:
    """A local web site; ``hits`` counts requests per path, ``headers`` keeps what each sent."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.headers: list[dict[str, str]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                site.hits[self.path] = site.hits.get(self.path, 0) + 1
                site.headers.append({k.lower(): v for k, v in self.headers.items()})
                site.answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path
        if path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            target = f"/redirect/{n - 1}" if n > 0 else "/text"
            return self.send(h, 302, b"", None, Location=target)
        if path == "/to-ftp":
            return self.send(h, 301, b"", None, Location="ftp://127.0.0.1/file")
        if path == "/to-file":
            return self.send(h, 307, b"", None, Location="file:///etc/passwd")
        if path == "/to-credentials":
            return self.send(
                h, 302, b"", None, Location=f"http://user:pw@127.0.0.1:{self.server.server_address[1]}/text"
            )
        if path == "/slow":
            time.sleep(2)
        pages: dict[str, tuple[int, bytes, str | None]] = {
            "/text": (200, b"plain words\n", "text/plain; charset=utf-8"),
            "/slow": (200, b"late", "text/plain"),
            "/page": (200, PAGE, "text/html; charset=utf-8"),
            "/json": (200, b'{"answer": 42}', "application/json"),
            "/png": (200, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 100, "image/png"),
            "/unlabelled-binary": (200, b"\x7fELF\x02\x01\x01\0\0\0\0\0" * 50, None),
            "/unlabelled-text": (200, b"just text without a type", None),
            "/big": (200, b"y" * 3_000_000, "text/plain"),
            "/latin1": (200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1"),
            "/missing": (404, b"<html><body><h1>Not here</h1><p>Try /text.</p></body></html>", "text/html"),
        }
        status, body, kind = pages.get(path, (404, b"unknown", "text/plain"))
        return self.send(h, status, body, kind)

    @staticmethod
    def send(h: BaseHTTPRequestHandler, status: int, body: bytes, kind: str | None, **headers: str) -> None:
        h.send_response(status)
        if kind:
            h.send_header("Content-Type", kind)
        for name, value in headers.items():
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client stopped at its limit
            h.wfile.write(body)


@pytest.fixture
def site() -> Iterator[Site]:
    running = Site()
    running.thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()


def fetch(url: str, limits: ToolLimits = DEFAULT_LIMITS, **client: Any) -> ToolOutput:
    async def go() -> ToolOutput:
        async with httpx.AsyncClient(**client) as http:
            return await fetch_url(http, url, limits)

    return asyncio.run(go())


def test_plain_text_json_and_a_charset_come_back_as_text(site: Site) -> None:
    text = fetch(f"{site.base}/text")
    assert not text.is_error
    assert text.text.startswith(f"URL: {site.base}/text\nStatus: 200 OK\nContent-Type: text/plain; charset=utf-8\n")
    assert text.text.endswith("plain words")
    assert fetch(f"{site.base}/json").text.endswith('{"answer": 42}')
    assert fetch(f"{site.base}/latin1").text.endswith("café")
    assert fetch(f"{site.base}/unlabelled-text").text.endswith("just text without a type")


def test_html_comes_back_as_readable_text_with_absolute_links(site: Site) -> None:
    page = fetch(f"{site.base}/page").text
    assert "Title: Cairn & tools" in page
    assert "# Heading" in page
    assert "Some bold text and [a guide](" + site.base + "/guide.html#part)." in page
    assert f"[Docs]({site.base}/docs)" in page
    assert "- one\n- two" in page
    assert "  indented\n    code" in page
    assert "secret" not in page
    assert "color:red" not in page
    assert "<" not in page.split("\n", 3)[3]


def test_binary_content_is_refused_without_reading_it(site: Site) -> None:
    png = fetch(f"{site.base}/png")
    assert png.is_error
    assert "is image/png, not text" in png.text
    unlabelled = fetch(f"{site.base}/unlabelled-binary")
    assert unlabelled.is_error
    assert "no content type and its body is binary" in unlabelled.text


def test_a_big_body_is_read_only_to_the_limit_and_marked(site: Site) -> None:
    started = time.monotonic()
    big = fetch(f"{site.base}/big")
    assert not big.is_error
    assert "[Only the first 100,000 characters of the page's text are shown.]" in big.text
    assert "[The page is larger than 2.0 MB; only that much of it was read.]" in big.text
    assert max(map(len, re.findall("y+", big.text))) == 100_000
    small = fetch(f"{site.base}/big", replace(DEFAULT_LIMITS, fetch_bytes=1000))
    assert max(map(len, re.findall("y+", small.text))) == 1000
    assert time.monotonic() - started < 5


def test_redirects_are_followed_up_to_the_limit_and_each_target_is_checked(site: Site) -> None:
    landed = fetch(f"{site.base}/redirect/4")  # 4, 3, 2, 1, 0, then /text: five redirects
    assert not landed.is_error
    assert landed.text.startswith(f"URL: {site.base}/text\n")
    too_many = fetch(f"{site.base}/redirect/5")
    assert too_many.is_error
    assert "redirected more than 5 times" in too_many.text
    assert site.hits.get("/text", 0) == 1  # the sixth hop was never taken
    for path, reason in (
        ("/to-ftp", "uses ftp:"),
        ("/to-file", "uses file:"),
        ("/to-credentials", "user name or password"),
    ):
        refused = fetch(f"{site.base}{path}")
        assert refused.is_error
        assert f"{site.base}{path} redirected to" in refused.text
        assert reason in refused.text
    assert site.hits.get("/text", 0) == 1


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "uses file:"),
        ("data:text/plain,hello", "uses data:"),
        ("ftp://127.0.0.1/x", "uses ftp:"),
        ("javascript:alert(1)", "uses javascript:"),
        ("example.com/page", "without http:// or https://"),
        ("http://user:secret@127.0.0.1:1/x", "user name or password"),
        ("http://:pw@127.0.0.1:1/x", "user name or password"),
        ("http:///nohost", "names no host"),
        ("http://[::1/x", "not a valid web address"),
    ],
)
def test_other_schemes_credentials_and_bad_addresses_are_refused_before_any_request(url: str, reason: str) -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text="should not be reached")

    refused = fetch(url, transport=httpx.MockTransport(handler))
    assert refused.is_error
    assert reason in refused.text
    assert sent == []


def test_a_slow_server_is_cut_off_at_the_time_limit(site: Site) -> None:
    started = time.monotonic()
    slow = fetch(f"{site.base}/slow", replace(DEFAULT_LIMITS, fetch_seconds=0.3))
    assert slow.is_error
    assert "took longer than 0.3 seconds" in slow.text
    assert time.monotonic() - started < 1.5


def test_an_error_status_is_an_error_output_with_what_the_page_said(site: Site) -> None:
    missing = fetch(f"{site.base}/missing")
    assert missing.is_error
    assert missing.text.startswith(f"The server answered 404 Not Found for {site.base}/missing.")
    assert "Not here" in missing.text


def test_a_closed_port_is_named_plainly() -> None:
    refused = fetch("http://127.0.0.1:9/nothing")
    assert refused.is_error
    assert "Could not connect" in refused.text


def test_no_credential_the_client_carries_is_sent(site: Site) -> None:
    fetch(
        f"{site.base}/text",
        headers={"Authorization": "Bearer canary-key", "X-Api-Key": "canary-key", "X-Session-Token": "canary"},
        cookies={"session": "canary-cookie"},
        auth=("user", "canary-password"),
    )
    sent = site.headers[-1]
    assert not [name for name, value in sent.items() if "canary" in value], sent
    assert "authorization" not in sent
    assert "cookie" not in sent


def test_the_loopback_provider_answers_json_and_html() -> None:
    with LoopbackProvider() as provider:
        models = fetch(f"{provider.base_url}/models")
        assert not models.is_error
        assert '"loopback-chat"' in models.text
    with LoopbackProvider(models_as_html=True) as provider:
        page = fetch(f"{provider.base_url}/models")
        assert page.text.endswith("# Welcome")


def test_urls_are_checked_alone_too() -> None:
    assert str(check_url("https://example.com/a?b=1")) == "https://example.com/a?b=1"
