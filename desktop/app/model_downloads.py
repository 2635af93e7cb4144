"""Downloading models for the built-in engine: from a web address, a Hugging Face repository
and file, or the curated list; paused and resumed, across restarts too.

The Hugging Face token lives in the secret store (entry ``huggingface``; ``HF_TOKEN`` in
the environment also serves) and is registered for redaction the moment it is read. It goes
to Hugging Face alone: the downloader never sends it past a redirect to another host.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from desktop.app.shared import AppState
from desktop.engine.curated import CuratedModel, curated_models
from desktop.engine.downloads import Download, DownloadError, Progress, download
from desktop.engine.library import ModelEntry

__all__ = ["HUB_ENTRY", "DownloadPaused", "ModelDownloads"]

HUB_ENTRY = "huggingface"  # the secret store's entry of the Hugging Face token
HF_TOKEN_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


class DownloadPaused(DownloadError):
    """The person paused the download; what arrived is kept for the next try."""


class ModelDownloads:
    def __init__(self, shared: AppState) -> None:
        self._root = shared.root
        self._running: dict[str, asyncio.Task[ModelEntry]] = {}
        self._paused: set[str] = set()

    def curated(self) -> list[CuratedModel]:
        return curated_models()

    def request(self, source: str, *, file: str | None = None, sha256: str | None = None) -> Download:
        """What to fetch: ``source`` is a web address, or with ``file`` a Hugging Face repository."""
        if file is not None:
            return Download.from_hub(source.strip(), file.strip(), sha256=sha256)
        return Download.from_url(source.strip(), sha256=sha256)

    # -- the token -------------------------------------------------------------------------------

    def token(self) -> str | None:
        found = self._root.secrets.find(HUB_ENTRY, list(HF_TOKEN_ENV))
        self._root.redactor.add(found)
        return found

    def keep_token(self, token: str, *, memory_only: bool = False) -> None:
        """Keep the Hugging Face token in the secret store (``KeychainUnavailable`` where it
        has nowhere to go; ``memory_only`` keeps it for this run)."""
        self._root.redactor.add(token)
        self._root.secrets.set(HUB_ENTRY, token.strip(), memory_only=memory_only)

    # -- downloading -----------------------------------------------------------------------------

    async def fetch(self, request: Download, progress: Callable[[Progress], None] | None = None) -> ModelEntry:
        """Download into the library, resuming what an earlier try saved; ``DownloadPaused``
        when ``pause`` stops it. Only one download of a file at a time."""
        if request.file in self._running:
            raise DownloadError(f"{request.file} is already downloading.")
        token = self.token() if request.repo is not None or request.host == "huggingface.co" else None
        task = asyncio.ensure_future(download(replace(request, token=token), self._root.library, progress=progress))
        self._running[request.file] = task
        try:
            return await task
        except asyncio.CancelledError:
            if request.file not in self._paused:
                raise  # Cairn is closing: the partial stays for the next run all the same
            raise DownloadPaused(
                f"Paused {request.file}; what arrived is kept, and downloading it again goes on from there."
            ) from None
        finally:
            self._running.pop(request.file, None)
            self._paused.discard(request.file)

    def pause(self, file: str) -> bool:
        """Stop a download that is running; ``False`` when none of that file is."""
        task = self._running.get(file)
        if task is None or task.done():
            return False
        self._paused.add(file)
        return task.cancel()
