"""Saved engine states: a chat's read prompt kept on disk, so it is never read again.

A state is what the engine's one slot holds after a request: the prompt's cache, saved by
the engine itself (``/slots/0?action=save``) into ``--slot-save-path``. It is named by what
it holds, never by a chat: the hash of the conversation prefix it read (the tools and the
first ``messages`` messages of the request, as canonical JSON) and everything the cache
depends on (the model file's SHA-256, the engine build, the context size, the cache type and
the attention mode). A state is handed back to the engine only when all of those match and
the file's SHA-256, recorded when it was saved, still does: a state from another model or
build, or a damaged file, would be garbage in the engine's cache.

The index (``states.json`` beside the files) is the only record; files it does not name are
removed, and the oldest states go first when the disk budget is exceeded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from desktop.engine.library import sha256_file
from host.files import atomic_write_text

__all__ = ["EngineFacts", "SavedState", "SavedStates", "prefix_hash"]

log = logging.getLogger(__name__)

INDEX = "states.json"
SUFFIX = ".state"


def prefix_hash(tools: Any, messages: list[Any]) -> str:
    """The hash of a conversation prefix as the engine reads it: its tools and messages."""
    text = json.dumps({"tools": tools or [], "messages": messages}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class EngineFacts:
    """What a saved cache depends on, besides the prompt: the same facts or no restore."""

    model: str  # the model file's SHA-256
    build: str  # the engine build's label
    context: int
    cache_type: str  # the KV cache's element type, f16 unless told otherwise
    attention: str  # "swa-full" or "full": a sliding-window cache holds less of the prompt

    def key(self) -> dict[str, object]:
        return {
            "model": self.model,
            "build": self.build,
            "context": self.context,
            "cache_type": self.cache_type,
            "attention": self.attention,
        }


class SavedState(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    file: str = Field(pattern=r"^[0-9a-f]{32}\.state$")  # a name of ours, never a path
    prefix: str  # prefix_hash of what it read
    messages: int  # how many messages that prefix holds
    model: str
    build: str
    context: int
    cache_type: str
    attention: str
    sha256: str
    size: int
    saved_at: float
    used_at: float

    def matches(self, facts: EngineFacts) -> bool:
        return all(getattr(self, name) == value for name, value in facts.key().items())


class _Index(BaseModel):
    version: int = 1
    states: list[SavedState] = Field(default_factory=list)


class SavedStates:
    """The saved states in ``folder`` (the engine's ``--slot-save-path``), within ``budget`` bytes."""

    def __init__(self, folder: Path, budget: int) -> None:
        self.folder, self.budget = folder, budget

    def _load(self) -> _Index:
        try:
            return _Index.model_validate_json((self.folder / INDEX).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return _Index()
        except (OSError, ValueError, ValidationError):
            log.warning("the saved states' index was unreadable; starting a new one")
            return _Index()

    def _save(self, index: _Index) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.folder / INDEX, index.model_dump_json(indent=1) + "\n")

    def states(self) -> list[SavedState]:
        return self._load().states

    def disk_use(self) -> int:
        return sum(s.size for s in self.states())

    @staticmethod
    def file_name(facts: EngineFacts, prefix: str) -> str:
        """The file a state is saved as: the same prefix on the same engine is the same file."""
        text = json.dumps({**facts.key(), "prefix": prefix}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32] + SUFFIX

    def best(self, facts: EngineFacts, tools: Any, messages: list[Any]) -> SavedState | None:
        """The state holding the longest prefix of this conversation, on this engine."""
        found: SavedState | None = None
        for state in self.states():
            if not state.matches(facts) or state.messages > len(messages):
                continue
            if found is not None and state.messages <= found.messages:
                continue
            if prefix_hash(tools, messages[: state.messages]) == state.prefix:
                found = state
        return found

    def checked(self, state: SavedState) -> Path | None:
        """The state's file, if it is still exactly what was saved; a damaged one is deleted."""
        path = self.folder / state.file
        try:
            intact = path.stat().st_size == state.size and sha256_file(path) == state.sha256
        except OSError:
            intact = False
        if not intact:
            log.warning("saved state %s is missing or damaged; deleted, the prompt will be read again", state.file)
            self.forget(state.file)
            return None
        return path

    def record(self, facts: EngineFacts, prefix: str, messages: int, name: str) -> SavedState | None:
        """Note a state the engine just wrote as ``name``; then keep the folder within budget."""
        path = self.folder / name
        try:
            size, digest = path.stat().st_size, sha256_file(path)
        except OSError:
            return None
        now = time.time()
        state = SavedState(
            file=name,
            prefix=prefix,
            messages=messages,
            **facts.key(),
            sha256=digest,
            size=size,
            saved_at=now,
            used_at=now,
        )
        index = self._load()
        index.states = [s for s in index.states if s.file != name] + [state]
        self._trim(index)
        self._save(index)
        return state if any(s.file == name for s in index.states) else None

    def used(self, state: SavedState) -> None:
        index = self._load()
        index.states = [
            s.model_copy(update={"used_at": time.time()}) if s.file == state.file else s for s in index.states
        ]
        self._save(index)

    def forget(self, name: str) -> None:
        with contextlib.suppress(OSError):
            (self.folder / name).unlink(missing_ok=True)
        index = self._load()
        index.states = [s for s in index.states if s.file != name]
        with contextlib.suppress(OSError):
            self._save(index)

    def set_budget(self, budget: int) -> None:
        self.budget = budget
        index = self._load()
        before = len(index.states)
        self._trim(index)
        if len(index.states) != before:
            self._save(index)

    def _trim(self, index: _Index) -> None:
        """Oldest first, until the states fit the budget; files no entry names go too."""
        index.states.sort(key=lambda s: s.used_at)
        while index.states and sum(s.size for s in index.states) > self.budget:
            gone = index.states.pop(0)
            with contextlib.suppress(OSError):
                (self.folder / gone.file).unlink(missing_ok=True)
        named = {s.file for s in index.states}
        with contextlib.suppress(OSError):
            for path in self.folder.glob(f"*{SUFFIX}"):
                if path.name not in named:
                    path.unlink(missing_ok=True)
