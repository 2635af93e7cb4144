"""The context inspector: for developers, what each request of this chat carried."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDockWidget,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import EngineStatus, SessionEvent, source_words
from desktop.turn.events import (
    AssistantCommitted,
    CompactionAbandoned,
    CompactionCommitted,
    RequestStarted,
    RouteFallbackRecorded,
    SectionsAppended,
    ToolResultCommitted,
    TurnCancelled,
    TurnFailed,
)
from host.content import MessageContent, ToolResultPart

__all__ = ["INSPECTOR_WIDTH", "Inspector", "RequestRecord"]

INSPECTOR_WIDTH = 420  # asked for when it opens; it takes less (down to 280) where the chat needs the room
KEEP = 50  # requests remembered per chat, bodies included
WAITING = "waiting for the reply"
NO_CHECKPOINT = "none (the context starts from the chat's first message)"
BUILTIN = "builtin://"  # the built-in engine's logical endpoint, in a request's actual route


@dataclass
class RequestRecord:
    started: RequestStarted
    at: str
    appended: list[str] = field(default_factory=list)
    outcome: str = WAITING
    calls: list[str] = field(default_factory=list)  # each tool call after this request: decision and reason
    engine: str = ""  # on the built-in engine: what it reused and read, by its own counters

    def title(self, number: int) -> str:
        what = "Summary request" if self.started.purpose == "summary" else "Request"
        return f"{what} {number} · {self.at} · {self.outcome.splitlines()[0]}"

    def details(self) -> str:
        s = self.started
        body = json.loads(s.body_bytes)
        lines = [
            f"Route: {s.route_key}",
            f"  published: {s.published}",
            f"  actual:    {s.actual}",
            f"  flags granted: {', '.join(s.flags) or 'none'}",
            f"  why: {s.flags_reason}",
            "",
            _epoch(s),
            f"  prefix_sha256:      {s.prefix_sha256 or 'none'}",
            f"  tool_schema_sha256: {s.tool_schema_sha256 or 'none'}",
            f"  body_sha256:        {hashlib.sha256(s.body_bytes).hexdigest()}",
            f"Declarations: {_policy(s.policy)} · {len(s.declared)} declared: {', '.join(s.declared) or 'none'}",
            *_context(s),
            "",
            f"Checkpoint: {s.checkpoint or NO_CHECKPOINT}",
            f"Sections in effect: {', '.join(s.sections) or 'none'}",
            f"System updates appended before this request: {', '.join(self.appended) or 'none'}",
            f"Messages: {len(body.get('messages', []))} · tools declared: {len(body.get('tools', []))}"
            f" · body {len(s.body_bytes):,} bytes",
        ]
        if s.servers:
            lines += ["MCP servers:", *(f"  {line}" for line in s.servers)]
        if s.notes:
            lines += ["Notes:", *(f"  {n}" for n in s.notes)]
        lines += ["", f"Outcome: {self.outcome}"]
        if self.engine:
            lines.append(f"Built-in engine: {self.engine}")
        if self.calls:
            lines += ["", "Tool calls it made:", *(f"  {c}" for c in self.calls)]
        return "\n".join(lines)


def _epoch(s: RequestStarted) -> str:
    if not s.epoch:
        return "Declaration epoch: none (this request has no tool plan)"
    return f"Declaration epoch {s.epoch} · began because: {s.epoch_reason.replace('_', ' ')}"


def _context(s: RequestStarted) -> list[str]:
    """The context's size and where the figure came from, and the prompt's estimate against it."""
    if not s.context_limit:
        return ["Estimated prompt: not known"]
    how = "from the provider's last count" if s.calibrated else "by size, at three bytes a token"
    return [
        f"Context: {s.context_limit:,} tokens, {source_words(s.context_source)}",
        *([f"  {s.context_note}"] if s.context_note else []),
        f"Estimated prompt: about {s.estimated_tokens:,} tokens ({how}); compaction from {s.threshold:,}",
    ]


def _policy(policy: str) -> str:
    return {
        "fixed": "fixed (the whole catalog)",
        "on_demand": "on demand (core and activated tools)",
        "proxy": "proxy (core tools and use_tool; found tools described in the chat)",
    }.get(policy, "none")


class Inspector(QDockWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Context inspector", parent)
        self.setObjectName("inspector")
        self.setAccessibleName("Context inspector")
        self.records: dict[str, list[RequestRecord]] = {}
        self._pending: dict[str, list[str]] = {}
        self._call_names: dict[str, str] = {}  # call id to tool name, from the replies seen
        self._on_engine: RequestRecord | None = None  # the last request sent to the built-in engine
        self._answers = 0  # the engine's answer count last seen
        self.session_id: str | None = None
        self.list = QListWidget()
        self.list.setAccessibleName("Requests")
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setMinimumWidth(280)  # beside the chat, which keeps its route bar whole
        self.details.setAccessibleName("Request details")
        self.copy_button = QPushButton("Copy request body")
        self.copy_button.setAccessibleName("Copy request body")
        self.copy_button.clicked.connect(self.copy_body)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.details, 2)
        layout.addWidget(self.copy_button)
        self.setWidget(body)
        self.list.currentRowChanged.connect(self._show)

    def show_session(self, session_id: str) -> None:
        self.session_id = session_id
        self._refill()

    def on_event(self, item: object) -> None:
        if isinstance(item, EngineStatus):
            self._engine_read(item)
        elif isinstance(item, SessionEvent):
            self._session_event(item)

    def _session_event(self, item: SessionEvent) -> None:
        event, session_id = item.event, item.session_id
        records = self.records.setdefault(session_id, [])
        if isinstance(event, SectionsAppended):
            names = [u.section for r in event.rows if (u := r.section_update()) is not None]
            self._pending.setdefault(session_id, []).extend(names)
        elif isinstance(event, RequestStarted):
            records.append(RequestRecord(event, time.strftime("%H:%M:%S"), self._pending.pop(session_id, [])))
            del records[:-KEEP]
            if BUILTIN in event.actual:
                self._on_engine = records[-1]
        elif isinstance(event, AssistantCommitted) and records:
            body = event.row.body()
            if isinstance(body, MessageContent):
                self._call_names.update((c.call_id, c.name) for c in body.tool_calls())
            usage = event.usage
            cost = "cost unknown" if event.cost_usd is None else f"${event.cost_usd:.5f}"
            records[-1].outcome = (
                f"{usage.prompt_tokens:,} prompt ({usage.cached_tokens:,} cached, {usage.uncached_tokens:,} uncached)"
                f" · {usage.output_tokens:,} output · {cost}"
                if usage
                else "answered · usage not reported"
            )
        elif isinstance(event, CompactionCommitted | CompactionAbandoned) and records:
            records[-1].outcome = _compaction_outcome(event, records[-1].outcome)
        elif isinstance(event, TurnFailed) and records:
            records[-1].outcome = f"failed: {event.message}"
        elif isinstance(event, ToolResultCommitted) and records:
            records[-1].calls.extend(_call_lines(event, self._call_names))
        elif isinstance(event, TurnCancelled) and records and records[-1].outcome == WAITING:
            kept = "what arrived is kept" if event.partial_row is not None else "nothing had arrived"
            records[-1].outcome = f"stopped; {kept}"
        elif isinstance(event, RouteFallbackRecorded) and records:
            records[-1].outcome = f"refused, asked again with system updates folded: {event.reason}"
        else:
            return
        if session_id == self.session_id:
            self._refill()

    def current(self) -> RequestRecord | None:
        records = self.records.get(self.session_id or "", [])
        row = self.list.currentRow()
        return records[row] if 0 <= row < len(records) else None

    def _engine_read(self, status: EngineStatus) -> None:
        """The engine serves one request at a time: its counters belong to the last one sent."""
        if status.read is None or status.answers == self._answers:
            return
        self._answers = status.answers
        record, self._on_engine = self._on_engine, None
        if record is not None:
            record.engine = status.read.words()
            self._refill()

    def copy_body(self) -> None:
        record = self.current()
        if record is not None:
            QGuiApplication.clipboard().setText(record.started.body_bytes.decode("utf-8"))

    def _refill(self) -> None:
        records = self.records.get(self.session_id or "", [])
        self.list.blockSignals(True)
        self.list.clear()
        for number, record in enumerate(records, start=1):
            self.list.addItem(record.title(number))
        self.list.blockSignals(False)
        if records:
            self.list.setCurrentRow(len(records) - 1)
            self._show(len(records) - 1)
        else:
            self.details.setPlainText("No requests in this chat since Cairn started.")

    def _show(self, row: int) -> None:
        records = self.records.get(self.session_id or "", [])
        if 0 <= row < len(records):
            self.details.setPlainText(records[row].details())
            self.details.moveCursor(self.details.textCursor().MoveOperation.Start)


def _compaction_outcome(event: CompactionCommitted | CompactionAbandoned, outcome: str) -> str:
    if isinstance(event, CompactionAbandoned):
        return f"no checkpoint: {event.reason}" if outcome == WAITING else outcome
    c = event.checkpoint
    return (
        f"checkpoint saved ({c.reason}) · epoch {c.epoch or 'none'} · about {c.tokens_before:,} → "
        f"{c.tokens_after:,} tokens · row {event.row.id}"
    )


def _call_lines(event: ToolResultCommitted, names: dict[str, str]) -> list[str]:
    body = event.row.body()
    if not isinstance(body, MessageContent):
        return []
    lines = []
    for part in body.parts:
        if isinstance(part, ToolResultPart):
            took = f" · {part.elapsed_ms:.1f} ms" if part.elapsed_ms is not None else ""
            name = names.get(part.call_id, part.call_id)
            if part.resolved is not None:
                name = f"{name} → {part.resolved.tool} (pin {part.resolved.pin[:12]})"
            lines.append(f"{name}: {part.decision or 'answered'} ({part.reason or 'no reason recorded'}){took}")
    return lines
