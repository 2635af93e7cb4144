"""Time from a tool call arriving to its result being committed, beyond the tool's own work.

    .venv/bin/python -m benchmarks.tool_latency [--calls 200]

Each call goes through the whole path a turn takes: the gate (catalog, hooks, JSON Schema,
mode, scopes, grant), the run, the cap and redaction, the after-hooks and the committed tool
row in a real journal (WAL, synchronous=FULL). The tool is the built-in ``read_file`` on a
small file in a workspace; its own time (measured around its run) is subtracted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from desktop.settings.redaction import Redactor
from desktop.turn.approvals import DenyQuestions
from desktop.turn.tool_calls import ToolCalls
from host.content import ToolCallPart, ToolResultPart
from host.journal import Journal
from host.permissions import Permissions, ToolGate
from host.tools import Tool, ToolCatalog
from host.transcript import TranscriptWriter


def read_tool(workspace: Path) -> Tool:
    try:
        import httpx

        from host.tools.builtin import builtin_tools

        tools = builtin_tools(workspace, http=httpx.AsyncClient())
        return next(t for t in tools if t.name == "read_file")
    except ImportError:  # before the built-in tools existed: a read-only stand-in
        from host.tools import ToolOutput, ToolSpec

        spec = ToolSpec(name="read_file", description="Read.", read_only=True, required_scopes={"workspace.read"},
                        parameters={"type": "object", "properties": {"path": {"type": "string"}}})  # fmt: skip

        async def run(arguments: object) -> ToolOutput:
            return ToolOutput((workspace / "notes.txt").read_text())

        return Tool(spec, run)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(calls: int, folder: Path) -> tuple[list[float], list[float]]:
    workspace = folder / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("".join(f"line {n}: stones and trails\n" for n in range(200)))
    tool = read_tool(workspace)
    catalog = ToolCatalog([tool])
    with Journal.open(folder / "journal.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("latency")
        caller = ToolCalls(
            writer,
            gate=ToolGate(),
            approver=DenyQuestions(),
            redactor=Redactor(),
            emit=lambda _event: None,
            remember=lambda _target, _allow: None,
        )
        totals, own = [], []
        for n in range(calls + 10):
            call = ToolCallPart(call_id=f"c{n}", name="read_file", arguments={"path": "notes.txt"})
            started = time.perf_counter()
            await caller.answer_all(session.id, [call], catalog, Permissions())
            total = (time.perf_counter() - started) * 1000
            rows = writer.rows(session.id)
            result = rows[-1].body().parts[0]  # type: ignore[union-attr]
            assert isinstance(result, ToolResultPart)
            assert result.elapsed_ms is not None
            assert not result.is_error, result.content
            if n >= 10:  # the first calls warm the caches
                totals.append(total)
                own.append(result.elapsed_ms)
    return totals, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        totals, own = asyncio.run(measure(args.calls, Path(folder)))
    overhead = [t - o for t, o in zip(totals, own, strict=True)]
    print(f"tool call to committed result, built-in read_file, {args.calls} calls:")
    print(f"  total        median {statistics.median(totals):6.2f} ms   p99 {percentile(totals, 0.99):6.2f} ms")
    print(f"  tool's own   median {statistics.median(own):6.2f} ms   p99 {percentile(own, 0.99):6.2f} ms")
    print(f"  beyond it    median {statistics.median(overhead):6.2f} ms   p99 {percentile(overhead, 0.99):6.2f} ms")


if __name__ == "__main__":
    main()
