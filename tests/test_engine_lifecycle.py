"""The engine's lifecycle, with the stand-in server (tests/engine_stand_in.py) in place of
`llama-server`: Cairn's own process handling, ports, keys, records, restarts and refusals."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from desktop.engine.build_spec import MANIFEST, EngineBuild, build_key
from desktop.engine.engine import Engine, EngineError, EngineStatus
from desktop.engine.library import ModelEntry, ModelLibrary
from host.children import start_time as _start_time
from tests.gguf_files import gemma_like

STAND_IN = Path(__file__).with_name("engine_stand_in.py")


def stand_in_build(folder: Path, variants: tuple[str, ...] = ("amx", "haswell", "x64")) -> EngineBuild:
    folder.mkdir(parents=True)
    server = folder / "llama-server"
    server.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STAND_IN}" --folder "$(dirname "$0")" "$@"\n')
    server.chmod(0o755)
    for variant in variants:
        (folder / f"libggml-cpu-{variant}.so").write_bytes(b"\0" * 4096)
    (folder / "variants").write_text(" ".join(variants))
    manifest = {"key": build_key(), "architectures": ["gemma3"]}
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return EngineBuild(folder, build_key(), manifest)


class Rig:
    def __init__(self, tmp: Path, http: httpx.AsyncClient, available: Callable[[], int | None]) -> None:
        self.build = stand_in_build(tmp / "build")
        self.library = ModelLibrary(tmp / "models", frozenset({"gemma3"}))
        self.model: ModelEntry = self.library.add(gemma_like(tmp / "tiny.gguf"))
        self.args = tmp / "args.jsonl"
        self.changes: list[EngineStatus] = []
        self.engine = Engine(
            self.build,
            self.library,
            state_dir=tmp / "engine",
            log_dir=tmp / "logs",
            http=lambda: http,
            on_change=self.changes.append,
            available=available,
        )

    def starts(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.args.read_text().splitlines()]


@pytest.fixture
async def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Rig]:
    monkeypatch.setenv("STAND_IN_ARGS", str(tmp_path / "args.jsonl"))
    free = [8 * 2**30]
    async with httpx.AsyncClient() as http:
        rig = Rig(tmp_path, http, lambda: free[0])
        rig.free = free  # type: ignore[attr-defined]
        try:
            yield rig
        finally:
            await rig.engine.stop()


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


async def _died(engine: Engine, pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    for _ in range(200):
        await asyncio.sleep(0.05)
        process = engine.process
        if process is not None and process.pid != pid and engine.running:
            return
        if process is None and "stopped again" in engine.status().note:
            return


@pytest.mark.anyio
async def test_first_use_starts_a_private_server_and_unload_stops_it(rig: Rig) -> None:
    live = await rig.engine.endpoint(rig.model.sha256)
    assert live.url.startswith("http://127.0.0.1:")
    assert len(live.key) >= 32
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"{live.url}/v1/models")).status_code == 401  # no key, no service
        answer = await http.get(f"{live.url}/v1/models", headers={"authorization": f"Bearer {live.key}"})
        assert answer.status_code == 200
    [start] = rig.starts()
    argv = start["argv"]
    assert isinstance(argv, list)
    assert live.key not in " ".join(argv)
    assert start["key_in_env"]
    for pair in (
        ["--model", str(rig.model.file)],
        ["--ctx-size", "8192"],
        ["--parallel", "1"],
        ["--host", "127.0.0.1"],
    ):
        at = argv.index(pair[0])
        assert argv[at : at + 2] == pair
    assert "--swa-full" in argv
    assert "--jinja" in argv
    assert start["cwd"] == str(rig.engine.state_dir / "run")
    [kept] = rig.engine.children.folder.iterdir()
    record = json.loads(kept.read_text())
    assert record["pid"] == rig.engine.process.pid  # type: ignore[union-attr]
    assert record["start_time"] == _start_time(record["pid"])
    assert record["owner_pid"] == os.getpid()
    assert os.getpgid(record["pid"]) != os.getpgid(0)  # a Ctrl-C in Cairn's terminal does not reach it
    assert rig.engine.status().state == "ready"
    assert rig.engine.status().memory
    assert [c.state for c in rig.changes] == ["loading", "ready"]
    assert await rig.engine.endpoint(rig.model.sha256) == live  # the same server for the same model
    await rig.engine.unload()
    assert not rig.engine.running
    assert not kept.exists()
    assert _start_time(record["pid"]) is None or _start_time(record["pid"]) != record["start_time"]
    again = await rig.engine.endpoint(rig.model.sha256)
    assert (again.url, again.key) != (live.url, live.key)  # a new port and key for each start


def _recorded(rig: Rig, pid: int, start_time: str | None, owner_start_time: str | None) -> None:
    """A record of ``pid`` as a Cairn (this process, if ``owner_start_time`` is its own) left it."""
    rig.engine.children.folder.mkdir(parents=True, exist_ok=True)
    record = {"pid": pid, "start_time": start_time, "what": "the built-in engine", "owner_pid": os.getpid()}
    (rig.engine.children.folder / f"{pid}.json").write_text(
        json.dumps({**record, "owner_start_time": owner_start_time})
    )


@pytest.mark.anyio
async def test_a_leftover_engine_of_ours_is_ended_and_a_stranger_is_not(rig: Rig) -> None:
    leftover = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        gone = "1"  # the start time of a Cairn no longer running (this pid's is another)
        _recorded(rig, leftover.pid, _start_time(leftover.pid), owner_start_time=gone)
        await rig.engine.endpoint(rig.model.sha256)
        assert leftover.wait(timeout=10) == -signal.SIGTERM
        await rig.engine.unload()
        # A record whose pid is now someone else's (another start time) is left alone.
        _recorded(rig, stranger.pid, "1", owner_start_time=gone)
        await rig.engine.endpoint(rig.model.sha256)
        assert stranger.poll() is None
    finally:
        for child in (leftover, stranger):
            child.kill()
            child.wait()


@pytest.mark.anyio
async def test_the_engine_of_a_cairn_that_still_runs_is_left_alone(rig: Rig, tmp_path: Path) -> None:
    """Another Cairn of the same home (a command beside the window) starts its own engine:
    the window's engine is that Cairn's, not a leftover."""
    await rig.engine.endpoint(rig.model.sha256)
    window = rig.engine.process
    assert window is not None
    async with httpx.AsyncClient() as http:
        other = Engine(
            rig.build, rig.library, state_dir=rig.engine.state_dir, log_dir=tmp_path / "other", http=lambda: http
        )
        try:
            await other.endpoint(rig.model.sha256)
            assert window.returncode is None
            assert rig.engine.running
        finally:
            await other.stop()


@pytest.mark.anyio
async def test_a_crash_is_restarted_once_with_the_reason_then_left_stopped(rig: Rig) -> None:
    await rig.engine.endpoint(rig.model.sha256)
    first = rig.engine.process.pid  # type: ignore[union-attr]
    await _died(rig.engine, first)
    assert rig.engine.running
    assert rig.engine.restarts == 1
    assert "was stopped by SIGKILL" in rig.engine.status().note
    assert "Cairn restarted it" in rig.engine.status().note
    await _died(rig.engine, rig.engine.process.pid)  # type: ignore[union-attr]
    assert not rig.engine.running
    assert rig.engine.restarts == 1
    assert "stopped again soon after a restart" in rig.engine.status().note
    await rig.engine.endpoint(rig.model.sha256)  # the next message starts it again
    assert rig.engine.running


@pytest.mark.anyio
async def test_a_cpu_library_that_dies_of_sigill_is_left_out_and_remembered(rig: Rig) -> None:
    (rig.build.folder / "bad-variants").write_text("amx")
    await rig.engine.endpoint(rig.model.sha256)
    assert rig.engine.process.variant == "haswell"  # type: ignore[union-attr]
    assert "amx CPU code does not run on this machine" in rig.engine.status().note
    assert json.loads((rig.engine.state_dir / "cpu-excluded.json").read_text()) == ["amx"]
    server = rig.engine.process.launch.server  # type: ignore[union-attr]
    assert server.parent != rig.build.folder
    assert not list(server.parent.glob("libggml-cpu-amx*"))
    assert (rig.build.folder / "libggml-cpu-amx.so").exists()  # the build itself is untouched
    await rig.engine.unload()
    await rig.engine.endpoint(rig.model.sha256)  # the next start goes straight to the copy
    assert [s["argv"][1] for s in rig.starts()].count(str(rig.build.folder)) == 1  # type: ignore[index]


@pytest.mark.anyio
async def test_a_model_that_does_not_fit_is_refused_before_loading(rig: Rig) -> None:
    rig.free[0] = 100 * 2**20  # type: ignore[attr-defined]
    with pytest.raises(EngineError, match=r"would need about \d[\d,]* MiB .* 100 MiB free"):
        await rig.engine.endpoint(rig.model.sha256)
    assert not rig.args.exists()
    assert not rig.engine.running


@pytest.mark.anyio
async def test_a_missing_model_or_build_gets_a_sentence(rig: Rig, tmp_path: Path) -> None:
    with pytest.raises(EngineError, match=r"has no model '0+' in its library"):
        await rig.engine.endpoint("0" * 64)
    rig.model.file.unlink()
    with pytest.raises(EngineError, match="is gone"):
        await rig.engine.endpoint(rig.model.sha256)
    unbuilt = Engine(None, rig.library, state_dir=tmp_path / "e2", log_dir=tmp_path / "l2", http=httpx.AsyncClient)
    other = rig.library.add(gemma_like(tmp_path / "other.gguf", **{"general.name": "Other"}))
    with pytest.raises(EngineError, match=r"not built on this computer\. Run `make engine`"):
        await unbuilt.endpoint(other.sha256)


@pytest.mark.anyio
async def test_a_server_that_will_not_start_says_what_it_said(rig: Rig) -> None:
    rig.build.server.write_text("#!/bin/sh\necho 'error: unknown model architecture: foo' >&2\nexit 1\n")
    with pytest.raises(EngineError, match="exited with status 1: error: unknown model architecture: foo"):
        await rig.engine.endpoint(rig.model.sha256)


def test_the_engine_dies_with_cairn(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG: a Cairn killed outright takes its engine with it."""
    script = textwrap.dedent(
        f"""
        import asyncio, sys, httpx
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from tests.test_engine_lifecycle import stand_in_build
        from tests.gguf_files import gemma_like
        from desktop.engine.engine import Engine
        from desktop.engine.library import ModelLibrary
        from pathlib import Path
        tmp = Path({str(tmp_path)!r})
        library = ModelLibrary(tmp / "models")
        model = library.add(gemma_like(tmp / "tiny.gguf"))
        async def main():
            async with httpx.AsyncClient() as http:
                engine = Engine(stand_in_build(tmp / "build"), library, state_dir=tmp / "engine",
                                log_dir=tmp / "logs", http=lambda: http)
                await engine.endpoint(model.sha256)
                print(engine.process.pid, flush=True)
                await asyncio.sleep(60)
        asyncio.run(main())
        """
    )
    cairn = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert cairn.stdout is not None
    pid = int(cairn.stdout.readline())
    started = _start_time(pid)
    cairn.kill()
    cairn.wait()
    deadline = time.monotonic() + 10
    while _start_time(pid) == started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _start_time(pid) != started


def test_a_saved_states_index_naming_a_path_is_not_trusted(tmp_path: Path) -> None:
    from desktop.engine.states import SavedStates

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    folder = tmp_path / "slots"
    folder.mkdir()
    entry = {
        "file": "../victim.txt", "prefix": "p", "messages": 1, "model": "m", "build": "b", "context": 1,
        "cache_type": "f16", "attention": "full", "sha256": "0", "size": 7, "saved_at": 0, "used_at": 0,
    }  # fmt: skip
    (folder / "states.json").write_text(json.dumps({"version": 1, "states": [entry]}))
    states = SavedStates(folder, budget=0)
    assert states.states() == []  # the whole index is unreadable: a damaged index is started afresh
    states.set_budget(0)
    assert victim.read_text() == "keep me"
