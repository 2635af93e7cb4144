"""What each account's endpoint serves (its ``/models``), remembered so that the window's Model
box lists it at once, and asked again in the background when it is old.

The lists are kept per account with the endpoint they came from (a changed address forgets
them) in ``served-models.json`` in the cache folder: model names only, nothing secret. A list
that cannot be read (a damaged file, a file from a stranger) is simply not known; asking the
endpoint again mends it.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from host.files import atomic_write_text

__all__ = ["FRESH_SECONDS", "MAX_MODELS", "ServedModels"]

log = logging.getLogger(__name__)

FRESH_SECONDS = 600.0  # a list younger than this is not asked for again
MAX_MODELS = 2_000  # an endpoint listing more is cut (some list every model of every provider)
MAX_NAME = 200  # characters of a model name kept


@dataclass(frozen=True)
class Served:
    base_url: str
    models: tuple[str, ...]
    fetched: float  # seconds since the epoch


class ServedModels:
    def __init__(self, cache_dir: Path) -> None:
        self._path = cache_dir / "served-models.json"
        self._lists: dict[str, Served] | None = None  # read when first needed

    def models(self, account_id: str, base_url: str) -> tuple[str, ...]:
        """The models the account's endpoint listed last (none when it never did, or the
        account's endpoint changed since)."""
        served = self._read().get(account_id)
        return served.models if served is not None and served.base_url == base_url else ()

    def fresh(self, account_id: str, base_url: str, max_age: float = FRESH_SECONDS) -> bool:
        served = self._read().get(account_id)
        return served is not None and served.base_url == base_url and time.time() - served.fetched < max_age

    def keep(self, account_id: str, base_url: str, models: list[str]) -> bool:
        """Remember what the endpoint lists now; whether that differs from what was known."""
        names = tuple(dict.fromkeys(m.strip()[:MAX_NAME] for m in models if isinstance(m, str) and m.strip()))
        names = names[:MAX_MODELS]
        changed = self.models(account_id, base_url) != names
        lists = self._read()
        lists[account_id] = Served(base_url, names, time.time())
        try:
            text = json.dumps(
                {k: {"base_url": v.base_url, "models": v.models, "fetched": v.fetched} for k, v in lists.items()}
            )
            atomic_write_text(self._path, text)
        except OSError as exc:  # a full disk costs the memory of the list at the next start, nothing more
            log.warning("the list of served models could not be saved: %s", exc)
        return changed

    def forget(self, account_id: str) -> None:
        self._read().pop(account_id, None)

    def _read(self) -> dict[str, Served]:
        if self._lists is None:
            self._lists = {}
            try:
                data = json.loads(self._path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            for account_id, entry in data.items() if isinstance(data, dict) else []:
                try:
                    models = tuple(str(m) for m in entry["models"][:MAX_MODELS])
                    self._lists[str(account_id)] = Served(str(entry["base_url"]), models, float(entry["fetched"]))
                except (KeyError, TypeError, ValueError):
                    continue  # one damaged entry costs only itself
        return self._lists
