"""The machine the engine runs on, and what a model needs of it.

Threads, context and batch size start from the machine (physical cores, memory free now, the
model's trained context) and a person may set each per model. A model that cannot fit is
refused before the engine is asked to load it, with the figures.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_CONTEXT", "LoadPlan", "available_memory", "physical_cores", "plan_load"]

DEFAULT_CONTEXT = 8_192  # the most a default asks for: a longer context costs memory and time
MIN_CONTEXT = 512
DEFAULT_BATCH = 512
OVERHEAD = 160 * 1024 * 1024  # the engine itself, its compute buffers and its prompt cache
MIB = 1024 * 1024


def physical_cores() -> int:
    """Physical cores (not hyper-threads): more threads than cores slows llama.cpp down."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return max(1, (os.cpu_count() or 2) // 2)
    cores = set()
    physical = core = ""
    for line in [*text.splitlines(), ""]:
        name, _, value = line.partition(":")
        name = name.strip()
        if name == "physical id":
            physical = value.strip()
        elif name == "core id":
            core = value.strip()
        elif not line.strip() and core:
            cores.add((physical, core))
            physical = core = ""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(len(cores) or usable, usable))


def available_memory() -> int | None:
    """Bytes of memory free for a new process now (MemAvailable), ``None`` where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class LoadPlan:
    """How a model is started, and what it is expected to need."""

    threads: int
    context: int
    batch: int
    needed: int  # bytes: the weights, the KV cache at this context, and the engine's overhead
    available: int | None

    @property
    def fits(self) -> bool:
        return self.available is None or self.needed <= self.available

    def describe(self) -> str:
        threads = f"{self.threads} thread{'s' if self.threads != 1 else ''}"
        return f"{self.context:,}-token context · {threads} · batch {self.batch}"

    def refusal(self, name: str) -> str:
        return (
            f"{name} would need about {self.needed / MIB:,.0f} MiB of memory at a {self.context:,}-token context, and "
            f"this computer has {(self.available or 0) / MIB:,.0f} MiB free. Close other programs, choose a smaller "
            "context for it in Settings → Models, or choose a smaller model."
        )


def plan_load(
    size: int,
    kv_bytes_per_token: int | None,
    trained_context: int | None,
    *,
    threads: int | None = None,
    context: int | None = None,
    batch: int | None = None,
    available: int | None = None,
) -> LoadPlan:
    """The plan for a model file of ``size`` bytes on this machine; each given figure overrides
    the machine's choice."""
    trained = trained_context or DEFAULT_CONTEXT
    ctx = max(MIN_CONTEXT, min(context or min(DEFAULT_CONTEXT, trained), trained))
    needed = size + (kv_bytes_per_token or 0) * ctx + OVERHEAD
    return LoadPlan(
        threads=max(1, threads or physical_cores()),
        context=ctx,
        batch=max(32, min(batch or DEFAULT_BATCH, ctx)),
        needed=needed,
        available=available_memory() if available is None else available,
    )
