"""Bringing a model file into the library from the web (``desktop.engine.curated`` names some).

A file streams into ``<name>.partial`` in the models folder beside a sidecar (``<name>.partial.json``:
address, expected SHA-256, validator), so a later attempt, in this process or the next, asks only
for the rest (``Range``, ``If-Range``). The bytes are hashed as they arrive and checked against the
SHA-256 when it is known (given, or named by Hugging Face); only a whole file that reads as a GGUF
gets its final name and joins the library as Cairn's own. A Hugging Face token goes to the hub's
origin alone: redirects are followed hop by hop, and a hop elsewhere (the CDN) goes without it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict

from desktop.engine.gguf import GgufError, read_gguf
from desktop.engine.library import LibraryError, ModelEntry, ModelLibrary, sha256_file
from host.errors import CairnError
from host.files import atomic_write_text

__all__ = ["Download", "DownloadError", "Progress", "discard", "download"]

HF_BASE = "https://huggingface.co"
STALL_SECONDS = 30.0
MAX_REDIRECTS = 10
SAVE_EVERY = 1.0  # seconds between sidecar updates while bytes arrive
REPORT_EVERY = 0.2  # seconds between progress reports
_SHA256 = re.compile(r"[0-9a-f]{64}")
_RANGE = re.compile(r"bytes (\d+)-\d+/(\d+|\*)")


class DownloadError(CairnError):
    """A model could not be downloaded; the message says what happened and what to do."""


class _Changed(DownloadError):
    """The server's copy is not the one the partial file holds the start of."""


@dataclass(frozen=True)
class Download:
    """What to download (see ``from_hub`` and ``from_url``) and the name it gets in the models
    folder. ``hub`` is Hugging Face's address: the one origin ``token`` is ever sent to."""

    url: str
    file: str
    sha256: str | None = None
    token: str | None = field(default=None, repr=False)
    repo: str | None = None
    revision: str = "main"
    hub: str = HF_BASE

    @classmethod
    def from_hub(
        cls,
        repo: str,
        file: str,
        *,
        revision: str = "main",
        sha256: str | None = None,
        token: str | None = None,
        hub: str = HF_BASE,
    ) -> Download:
        """A file of a Hugging Face repository (``owner/name``) at ``revision``."""
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise DownloadError(f"{repo!r} is not a Hugging Face repository; write it as owner/name.")
        url = f"{hub.rstrip('/')}/{repo}/resolve/{quote(revision, safe='')}/{quote(file)}"
        return cls(url, _local_name(file), _checked_sha(sha256), token, repo, revision, hub)

    @classmethod
    def from_url(cls, url: str, *, sha256: str | None = None, token: str | None = None) -> Download:
        """The file at a web address, named as the address's last part."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise DownloadError(f"{url} is not a web address; paste the http(s) link of a .gguf file.")
        return cls(url, _local_name(unquote(PurePosixPath(parts.path).name)), _checked_sha(sha256), token)

    @property
    def host(self) -> str:
        return httpx.URL(self.url).host


def _local_name(file: str) -> str:
    name = PurePosixPath(file).name
    if not name.lower().endswith(".gguf") or name.startswith("."):
        raise DownloadError(f"{file!r} is not a .gguf file; Cairn downloads GGUF model files only, so choose one.")
    return name


def _checked_sha(sha256: str | None) -> str | None:
    value = (sha256 or "").strip().lower()
    if value and not _SHA256.fullmatch(value):
        raise DownloadError(f"{sha256!r} is not a SHA-256 (64 hexadecimal digits); paste it again or leave it out.")
    return value or None


@dataclass(frozen=True)
class Progress:
    """Bytes saved, the file's size when known, the speed (bytes a second, smoothed), seconds left."""

    done: int
    total: int | None
    speed: float
    seconds_left: float | None


class _Sidecar(BaseModel):
    """What ``<name>.partial.json`` keeps of an unfinished download (never the token)."""

    model_config = ConfigDict(extra="ignore")

    version: int = 1
    url: str
    sha256: str | None = None
    done: int = 0
    total: int | None = None
    etag: str | None = None
    last_modified: str | None = None

    def validator(self) -> str | None:
        """What ``If-Range`` may carry: a strong ETag, else the modification date."""
        return self.etag if self.etag and not self.etag.startswith("W/") else self.last_modified


def _size(count: int) -> str:
    return f"{count / 2**20:,.1f} MiB" if count >= 2**20 else f"{count:,} bytes"


class _Partial:
    """The partial file, its sidecar and the progress told; a failed local write is a ``DownloadError``."""

    def __init__(self, folder: Path, request: Download, report: Callable[[Progress], None] | None = None) -> None:
        self.name, self.fd, self.digest, self.report = _local_name(request.file), -1, hashlib.sha256(), report
        self.path, self.sidecar = folder / f"{self.name}.partial", folder / f"{self.name}.partial.json"
        self.speed, self.saved_at, self.told_at, self.told = 0.0, 0.0, 0.0, 0
        self.state = _Sidecar(url=request.url, sha256=request.sha256)
        try:
            saved = _Sidecar.model_validate_json(self.sidecar.read_text(encoding="utf-8"))
            size = self.path.stat().st_size
        except (OSError, ValueError):  # no sidecar, or one nobody can read: the partial is nobody's
            return
        if saved.url == request.url and (not request.sha256 or saved.sha256 in (None, request.sha256)):
            # the partial's own length is what was saved: a killed process never updated the count
            self.state = saved.model_copy(update={"done": size, "sha256": request.sha256 or saved.sha256})

    def open(self, start: int) -> None:
        """Open for writing at ``start``; the bytes kept before it are hashed again."""
        self.digest, self.state.done = hashlib.sha256(), start
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
            os.ftruncate(self.fd, start)
            with self.path.open("rb") as kept:
                for block in iter(lambda: kept.read(4 << 20), b""):
                    self.digest.update(block)
            os.lseek(self.fd, start, os.SEEK_SET)
            atomic_write_text(self.sidecar, self.state.model_dump_json() + "\n")
        except OSError as exc:
            raise self.failed(exc) from exc
        self.saved_at = self.told_at = time.monotonic()
        self.told = start

    def write(self, chunk: bytes) -> None:
        view = memoryview(chunk)
        try:
            while view:
                written = os.write(self.fd, view)
                self.digest.update(view[:written])
                self.state.done += written
                view = view[written:]
        except OSError as exc:
            raise self.failed(exc) from exc
        if time.monotonic() - self.saved_at >= SAVE_EVERY:
            self.save()
        self.tell()

    def tell(self, *, final: bool = False) -> None:
        """Report progress, at most every ``REPORT_EVERY`` seconds."""
        now, done, total = time.monotonic(), self.state.done, self.state.total
        elapsed = now - self.told_at
        if self.report is None or (elapsed < REPORT_EVERY and not final):
            return
        if elapsed > 0:  # a slow or quick moment moves the estimate only part of the way
            recent = (done - self.told) / elapsed
            self.speed = recent if self.speed == 0 else 0.7 * self.speed + 0.3 * recent
        self.told_at, self.told = now, done
        left = None if total is None or self.speed <= 0 else max(total - done, 0) / self.speed
        self.report(Progress(done, total, self.speed, 0.0 if total == done else left))

    def save(self) -> None:
        self.saved_at = time.monotonic()
        with suppress(OSError):  # it only refreshes a count the partial's own length gives anyway
            atomic_write_text(self.sidecar, self.state.model_dump_json() + "\n")

    def close(self, *, delete: bool = False) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            self.save()
        if delete:
            self.path.unlink(missing_ok=True)
            self.sidecar.unlink(missing_ok=True)

    def failed(self, exc: OSError) -> DownloadError:
        folder, done, total = self.path.parent, self.state.done, self.state.total
        if exc.errno != errno.ENOSPC:
            return DownloadError(f"Cairn cannot write in {folder} ({exc.strerror or exc}): make the folder writable.")
        needed = f"{_size(total - done)} more" if total is not None else "more space"
        return DownloadError(
            f"The disk is full: {self.name} needs {needed} and {_size(shutil.disk_usage(folder).free)} is free in "
            f"{folder}. Free some space and download again; the {_size(done)} saved are kept and it goes on from there."
        )


async def download(
    request: Download,
    library: ModelLibrary,
    *,
    progress: Callable[[Progress], None] | None = None,
    client: httpx.AsyncClient | None = None,
    stall_seconds: float = STALL_SECONDS,
) -> ModelEntry:
    """Download ``request`` into the library's folder and add it as Cairn's own, going on from
    whatever an earlier attempt saved. Cancelling pauses it: the next call resumes."""
    part = _Partial(library.folder, request, progress)
    http = client or httpx.AsyncClient()
    try:
        try:
            await _fetch(http, request, part, stall_seconds)
        except _Changed:  # the server's file is another one now: its bytes cannot be joined to these
            part.close(delete=True)
            part.state = _Sidecar(url=request.url, sha256=request.sha256)
            await _fetch(http, request, part, stall_seconds)
    finally:
        if client is None:
            await http.aclose()
    return _landed(request, library, part)


def discard(request: Download, library: ModelLibrary) -> None:
    """Give up a paused download: its partial file and sidecar are deleted."""
    _Partial(library.folder, request).close(delete=True)


async def _fetch(http: httpx.AsyncClient, request: Download, part: _Partial, stall: float) -> None:
    """Stream the rest of the file into the partial, from where it ends."""
    state, headers = part.state, {"Accept-Encoding": "identity"}  # ranges count the bytes as stored
    if state.done:
        headers["Range"] = f"bytes={state.done}-"
        if validator := state.validator():
            headers["If-Range"] = validator
    try:
        async with _followed(http, request, headers, httpx.Timeout(stall)) as (response, named_sha):
            start = _start(request, response, state)
            state.sha256 = request.sha256 or named_sha or state.sha256
            state.etag, state.last_modified = response.headers.get("etag"), response.headers.get("last-modified")
            try:
                part.open(start)
                if response.status_code != 416:  # 416: the partial already holds the whole file
                    async for chunk in response.aiter_raw():
                        part.write(chunk)
                part.tell(final=True)
            finally:
                part.close()
    except httpx.TransportError as exc:
        raise _broken(request, exc, state, stall) from exc
    if state.total is not None and state.done < state.total:
        raise _broken(request, None, state, stall)  # the body ended early without an error


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


@asynccontextmanager
async def _followed(
    http: httpx.AsyncClient, request: Download, headers: dict[str, str], timeout: httpx.Timeout
) -> AsyncIterator[tuple[httpx.Response, str | None]]:
    """The response at the end of the redirects, and the SHA-256 the hub named on the way."""
    url, hub, named = httpx.URL(request.url), _origin(httpx.URL(request.hub)), None
    for _ in range(MAX_REDIRECTS + 1):
        at_hub = _origin(url) == hub
        sent = {**headers, "Authorization": f"Bearer {request.token}"} if at_hub and request.token else headers
        built = http.build_request("GET", url, headers=sent, timeout=timeout)
        response = await http.send(built, stream=True, follow_redirects=False)
        named = named or (_named_sha(response) if at_hub else None)
        if not response.is_redirect:
            break
        await response.aclose()
        url = url.join(response.headers["location"])
    else:
        raise DownloadError(f"{request.host} redirects {request.file} more than {MAX_REDIRECTS} times; try later.")
    try:
        yield response, named
    finally:
        await response.aclose()


def _named_sha(response: httpx.Response) -> str | None:
    """Hugging Face names a large file's SHA-256 in ``X-Linked-Etag`` (or ``ETag``), in quotes."""
    for header in ("x-linked-etag", "etag"):
        value = str(response.headers.get(header, "")).removeprefix("W/").strip('"').lower()
        if _SHA256.fullmatch(value):
            return value
    return None


def _start(request: Download, response: httpx.Response, state: _Sidecar) -> int:
    """Where this response's body goes in the file: 0 when the server sends it all again."""
    status, etag, length = response.status_code, response.headers.get("etag"), response.headers.get("content-length")
    if status == 200:
        state.total = int(length) if length and length.isdigit() else None
        return 0
    if status == 416 and state.done and response.headers.get("content-range") == f"bytes */{state.done}":
        state.total = state.done  # the partial holds the whole file already
        return state.done
    if status in (206, 416) and state.done:
        match = _RANGE.fullmatch(response.headers.get("content-range", ""))
        if status == 416 or not match or int(match[1]) != state.done or (etag and state.etag and etag != state.etag):
            raise _Changed(f"{request.file} changed on the server while it downloaded; download it again.")
        state.total = int(match[2]) if match[2] != "*" else None
        return state.done
    raise _refused(request, status)


def _refused(request: Download, status: int) -> DownloadError:
    host, name, repo = request.host, request.file, request.repo
    if status == 404:
        where = f"{repo} has no file {name} at {request.revision}" if repo else f"{host} has no {name} at that address"
        return DownloadError(f"Not found (404): {where}. Check the repository and file name; capitals count.")
    if status in (401, 403):
        where = f"{repo} is gated or private" if repo else f"{host} needs permission for {name}"
        page = f" ({request.hub.rstrip('/')}/{repo})" if repo else ""
        return DownloadError(
            f"The download was refused ({status}): {where}. Add a Hugging Face token in Settings and accept the "
            f"licence on the model's page{page}, then try again."
        )
    advice = "try again later; what was saved is kept" if status >= 500 or status == 429 else "check the address"
    return DownloadError(f"{host} answered {status} to the download of {name}: {advice}.")


def _broken(request: Download, exc: httpx.TransportError | None, state: _Sidecar, stall: float) -> DownloadError:
    saved = _size(state.done) + (f" of {_size(state.total)}" if state.total else "")
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return DownloadError(f"Cairn could not reach {request.host}: check the internet connection and try again.")
    if isinstance(exc, httpx.TimeoutException):
        return DownloadError(
            f"The server sent nothing for {stall:g} seconds while downloading {request.file} ({saved} saved). "
            "Try again to go on where it stopped; check the connection if it keeps stalling."
        )
    return DownloadError(
        f"The connection dropped while downloading {request.file} ({saved} saved). Try again to go on where it stopped."
    )


def _landed(request: Download, library: ModelLibrary, part: _Partial) -> ModelEntry:
    """Check the whole file, give it its final name and add it to the library."""
    sha, expected = part.digest.hexdigest(), part.state.sha256
    if expected is not None and sha != expected:
        part.close(delete=True)
        raise DownloadError(
            f"{request.file} arrived damaged (its SHA-256 is {sha[:12]}…, not {expected[:12]}…), so it was deleted. "
            "Download it again; if this repeats, check the expected checksum."
        )
    try:
        read_gguf(part.path)
    except GgufError as exc:
        part.close(delete=True)
        raise DownloadError(
            f"The downloaded {request.file} is not a GGUF model file (or is damaged), so it was deleted. Choose the "
            "model's .gguf file (on Hugging Face, under Files and versions)."
        ) from exc
    target = library.folder / request.file
    here = target.exists() and sha256_file(target) == sha  # these very bytes are here already
    if target.exists() and not here:  # another file has the name
        target = target.with_name(f"{target.stem}-{sha[:8]}{target.suffix}")
    try:
        os.replace(part.path, target)
    except OSError as exc:
        raise DownloadError(f"Cairn could not name {request.file}: {exc.strerror or exc}. Try again.") from exc
    part.sidecar.unlink(missing_ok=True)
    try:
        return library.add(target, sha256=sha)  # hashed as it arrived: not read again
    except LibraryError as exc:  # an architecture the engine does not run, or an index it cannot write
        if not here:
            target.unlink(missing_ok=True)  # a file the library does not name would only fill the disk
        raise DownloadError(str(exc)) from exc
