"""fetch_url's work: one web page as text, within the limits.

Only http and https, never with a user name or password in the address; every redirect
target is checked the same way, at most ``fetch_redirects`` of them. Only text is read
(text/*, JSON, XML, JavaScript, YAML; with no content type, a body that looks like text), at
most ``fetch_bytes`` of it, and the whole fetch has ``fetch_seconds``. HTML comes back as
text: scripts, styles and tags are dropped, headings become ``#`` lines, list items ``-``
lines, and links ``[text](address)``, with addresses made absolute. Nothing is stored.

The HTTP client is passed in. Whatever it carries, a fetch sends no credentials of its own:
no client auth, no Authorization or Cookie header, no header named like a key or a token.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from html.parser import HTMLParser

import httpx

from host.tools.catalog import ToolError, ToolOutput
from host.tools.limits import ToolLimits
from host.tools.textfile import looks_binary, size_text

__all__ = ["check_url", "fetch_url", "html_to_text"]

_TEXT_TYPES = frozenset({
    "application/json", "application/xml", "application/javascript", "application/x-javascript",
    "application/ecmascript", "application/xhtml+xml", "application/x-yaml", "application/yaml",
    "application/toml", "application/x-sh", "application/sql", "application/graphql", "application/x-ndjson",
})  # fmt: skip
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_SECRET_HEADER = re.compile(r"authorization|cookie|key|token|secret|session", re.IGNORECASE)
_ACCEPT = "text/html, text/plain;q=0.9, application/json;q=0.9, text/*;q=0.8, */*;q=0.1"
_ERROR_BODY_CHARS = 2_000


def check_url(url: str, *, via: str | None = None) -> httpx.URL:
    """``url`` if fetch_url may go there, else ``ToolError``; ``via`` names the page that
    redirected to it."""
    where = f"{via} redirected to {url!r}, which" if via else f"{url!r}"
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise ToolError(f"{where} is not a valid web address ({exc}).") from exc
    scheme = parsed.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"{scheme}:" if scheme else "an address without http:// or https://"
        raise ToolError(f"{where} uses {shown}; fetch_url reads only http and https addresses.")
    if parsed.userinfo:
        raise ToolError(
            f"{where} carries a user name or password, and fetch_url sends no credentials; "
            "use the address without them."
        )
    if not parsed.host:
        raise ToolError(f"{where} names no host; give a full address such as https://example.com/page.")
    return parsed


async def fetch_url(http: httpx.AsyncClient, url: str, limits: ToolLimits) -> ToolOutput:
    """The page at ``url`` as text, or an error output. Raises only cancellation."""
    try:
        async with asyncio.timeout(limits.fetch_seconds):
            return await _fetch(http, url, limits)
    except TimeoutError:
        return ToolOutput(
            f"Fetching {url} took longer than {limits.fetch_seconds:g} seconds, so it was stopped; "
            "try again later, or another address.",
            is_error=True,
        )
    except ToolError as exc:
        return ToolOutput(str(exc), is_error=True)
    except httpx.TimeoutException:
        return ToolOutput(f"The server of {url} did not answer in time; try again later.", is_error=True)
    except httpx.ConnectError as exc:
        return ToolOutput(f"Could not connect to the server of {url} ({exc}); check the address.", is_error=True)
    except httpx.HTTPError as exc:
        return ToolOutput(f"Fetching {url} failed ({type(exc).__name__}: {exc}).", is_error=True)


async def _fetch(http: httpx.AsyncClient, url: str, limits: ToolLimits) -> ToolOutput:
    current = check_url(url)
    for _ in range(limits.fetch_redirects + 1):
        request = http.build_request("GET", current, headers={"Accept": _ACCEPT})
        for name in [n for n in request.headers if _SECRET_HEADER.search(n)]:
            del request.headers[name]
        response = await http.send(request, stream=True, auth=None, follow_redirects=False)
        try:
            if response.has_redirect_location:
                location = response.headers["location"]
                current = check_url(str(current.join(location)), via=str(current))
                continue
            return await _read(response, str(current), limits)
        finally:
            await response.aclose()
    raise ToolError(
        f"{url} redirected more than {limits.fetch_redirects} times (last to {current}), so fetch_url stopped; "
        "try the final address directly."
    )


async def _read(response: httpx.Response, url: str, limits: ToolLimits) -> ToolOutput:
    content_type = response.headers.get("content-type", "")
    mime = content_type.split(";")[0].strip().lower()
    textual = mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(("+json", "+xml"))
    if mime and not textual:
        raise ToolError(
            f"{url} is {mime}, not text (HTTP {response.status_code}); fetch_url reads only text "
            "such as HTML, plain text, JSON or XML."
        )
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk[: limits.fetch_bytes - len(body)]
        if len(body) >= limits.fetch_bytes:
            break
    cut_bytes = len(body) >= limits.fetch_bytes
    if not mime and looks_binary(bytes(body[:8192])):
        raise ToolError(f"{url} has no content type and its body is binary; fetch_url reads only text.")
    text = bytes(body).decode(_codec(response.charset_encoding), errors="replace")
    if mime in _HTML_TYPES:
        text = await asyncio.to_thread(html_to_text, text, url)
    status = f"{response.status_code} {response.reason_phrase}".strip()
    if response.status_code >= 400:
        excerpt = text[:_ERROR_BODY_CHARS].strip()
        shown = f"\n\nThe page it sent:\n{excerpt}" if excerpt else ""
        return ToolOutput(f"The server answered {status} for {url}.{shown}", is_error=True)
    notes: list[str] = []
    if len(text) > limits.output_chars:
        text = text[: limits.output_chars]
        notes.append(f"[Only the first {limits.output_chars:,} characters of the page's text are shown.]")
    if cut_bytes:
        notes.append(f"[The page is larger than {size_text(limits.fetch_bytes)}; only that much of it was read.]")
    head = f"URL: {url}\nStatus: {status}\nContent-Type: {content_type or 'none given'}\n"
    return ToolOutput("\n".join([head, text.strip(), *notes]))


def _codec(name: str | None) -> str:
    if name:
        try:
            return codecs.lookup(name).name
        except LookupError:
            pass
    return "utf-8"


# -- HTML as text ---------------------------------------------------------------------------------

_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "canvas"})
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt", "fieldset", "figcaption",
    "figure", "footer", "form", "header", "hr", "main", "nav", "ol", "p", "section", "summary", "table", "tr", "ul",
})  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_PRE_OPEN, _PRE_CLOSE = "\ue000", "\ue001"  # private-use marks, removed from the page's own text
_PRE_BLOCK = re.compile(f"{_PRE_OPEN}(\\d+){_PRE_CLOSE}")
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"})


class _TextParser(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = httpx.URL(base)
        self.out: list[str] = []
        self.title: list[str] = []
        self.skip = 0
        self.pre = 0
        self.pre_text: list[str] = []
        self.pres: list[str] = []  # preformatted blocks, kept aside from whitespace tidying
        self.in_title = False
        self.links: list[tuple[str | None, int]] = []  # the open <a>s: address, where their text starts

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIPPED and tag not in _VOID:
            self.skip += 1
        if self.skip:
            return
        if tag == "pre":
            self.pre += 1
        elif tag in _HEADINGS:
            self.out.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "br":
            self.out.append("\n")
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag in _BLOCKS:
            self.out.append("\n\n")
        elif tag == "a":
            self.links.append((self._address(dict(attrs).get("href")), len(self.out)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIPPED:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag == "pre" and self.pre:
            self.pre -= 1
            if not self.pre:
                self.out.append(f"\n\n{_PRE_OPEN}{len(self.pres)}{_PRE_CLOSE}\n\n")
                self.pres.append("".join(self.pre_text).strip("\n"))
                self.pre_text = []
        elif tag in _HEADINGS or tag in _BLOCKS:
            self.out.append("\n\n")
        elif tag == "a" and self.links:
            address, start = self.links.pop()
            label = " ".join("".join(self.out[start:]).split())
            if address and label:
                del self.out[start:]
                self.out.append(f"[{label}]({address})")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skip:
            return
        data = data.replace(_PRE_OPEN, "").replace(_PRE_CLOSE, "")
        if self.pre:
            self.pre_text.append(data)
        else:
            self.out.append(re.sub(r"\s+", " ", data))

    def _address(self, href: str | None) -> str | None:
        if not href or href.startswith(("#", "javascript:", "mailto:", "data:")):
            return None
        try:
            return str(self.base.join(href.strip()))
        except (httpx.InvalidURL, UnicodeError, ValueError):
            return None


def html_to_text(html: str, base: str) -> str:
    """The readable text of an HTML page, its title first; links relative to ``base`` are
    made absolute."""
    parser = _TextParser(base)
    parser.feed(html)
    parser.close()
    text = "".join(parser.out)
    text = re.sub(r"[ \t]*\n[ \t]*", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    text = _PRE_BLOCK.sub(lambda m: parser.pres[int(m.group(1))], text)
    title = " ".join("".join(parser.title).split())
    return f"Title: {title}\n\n{text}" if title else text
