"""The search index of an older journal, built in the background while Cairn runs
(``host.search_index``): a batch at a time on a worker thread, with a pause between batches
so the core's own use of the journal waits at most one batch. Progress is in the journal, so
a build cut short by quitting goes on at the next start. Then, and from time to time, the
index's segments are merged when there are many."""

from __future__ import annotations

import asyncio
import logging
import time

from host.errors import CairnError
from host.journal import Journal

__all__ = ["SearchIndexBuild"]

log = logging.getLogger(__name__)

PAUSE_S = 0.02  # between batches
# A search seeks in every segment of the index, and each message written makes one (FTS5
# merges them in fours, leaving a dozen or more after a few hundred messages); past this
# many, the index is merged into one, in steps: at start-up and every ``TIDY_EVERY_S`` while
# Cairn runs. At a million rows a merge rewrites about 190 MB (4.7 s of CPU in the
# background); a page of search results takes 2 to 2.5 times longer in ten segments than in one.
MOST_SEGMENTS = 8
TIDY_EVERY_S = 600


class SearchIndexBuild:
    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._task is None and not self._journal.read_only:
            self._task = asyncio.create_task(self._run(), name="search index build")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        began, batches = time.perf_counter(), 0
        try:
            while not await asyncio.to_thread(self._journal.build_search_index):
                batches += 1
                await asyncio.sleep(PAUSE_S)
            if batches:
                log.info("search index built: %d batches in %.1f s", batches, time.perf_counter() - began)
            while True:
                while not await asyncio.to_thread(self._journal.tidy_search_index, MOST_SEGMENTS):
                    await asyncio.sleep(PAUSE_S)
                await asyncio.sleep(TIDY_EVERY_S)
        except CairnError as exc:  # a full disk, say: search keeps answering as it did
            log.warning("the search index was not built or tidied this time: %s", exc)
