"""The assistants a new Cairn starts with (a writing editor, a code reviewer, a translator, a
summariser): data in ``assets/assistants/starters.json``, each an ordinary assistant that the
person can change or remove, and that Cairn never adds back once removed."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from assets import ASSETS_DIR

__all__ = ["STARTERS_PATH", "starter_entries", "with_starters"]

STARTERS_PATH = ASSETS_DIR / "assistants" / "starters.json"
STARTERS_SINCE = 2  # the settings version from which a file holds the starters it wants


@cache
def _read() -> tuple[dict[str, str], ...]:
    entries = json.loads(STARTERS_PATH.read_text(encoding="utf-8"))["assistants"]
    return tuple(dict(entry) for entry in entries)


def starter_entries() -> list[dict[str, str]]:
    """The starter assistants, as settings entries (fresh copies)."""
    return [dict(entry) for entry in _read()]


def with_starters(raw: Any) -> Any:
    """A settings file's contents, given the starters once if it was written before Cairn had
    them (below version ``STARTERS_SINCE``), leaving out any whose id or name is taken. A file
    written since keeps exactly the assistants it lists."""
    if not isinstance(raw, dict):
        return raw
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version < STARTERS_SINCE:
        return raw  # written since, or not a version at all (which validation reports)
    listed = raw.get("assistants", [])
    if not isinstance(listed, list):
        return raw  # not ours to mend: validation reports it
    kept = [a for a in listed if isinstance(a, dict)]
    ids = {a.get("id") for a in kept}
    names = {str(a.get("name", "")).casefold() for a in kept}
    added = [e for e in starter_entries() if e["id"] not in ids and e["name"].casefold() not in names]
    return {**raw, "assistants": [*listed, *added], "schema_version": STARTERS_SINCE}
