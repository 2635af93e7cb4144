"""A stand-in for `llama-server` in the engine's lifecycle tests: the loopback provider on the
port and with the key Cairn gives it, so the tests exercise Cairn's own process handling (ports,
keys, records, restarts, CPU variants) in a fraction of a second per start.

Started by the `llama-server` shell script a test writes into a build folder, with that
folder as ``--folder``. Like the real engine it maps the best CPU library it finds there (the
order is the folder's ``variants`` file), and dies of SIGILL when that library is listed in
the folder's ``bad-variants`` file. ``STAND_IN_ARGS`` names a file for its arguments.
"""

from __future__ import annotations

import json
import mmap
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop.loopback.server import LoopbackProvider


def _option(arguments: list[str], name: str) -> str:
    return arguments[arguments.index(name) + 1]


def _load_cpu_library(folder: Path) -> mmap.mmap | None:
    order = (folder / "variants").read_text().split() if (folder / "variants").exists() else []
    bad = (folder / "bad-variants").read_text().split() if (folder / "bad-variants").exists() else []
    for variant in order:
        library = folder / f"libggml-cpu-{variant}.so"
        if library.exists():
            with library.open("rb") as handle:
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            if variant in bad:
                time.sleep(0.3)  # long enough for Cairn to see which library it was
                os.kill(os.getpid(), signal.SIGILL)
            return mapped
    return None


def main() -> None:
    arguments = sys.argv[1:]
    folder = Path(_option(arguments, "--folder"))
    if os.environ.get("STAND_IN_ARGS"):
        record = {"argv": arguments, "key_in_env": bool(os.environ.get("LLAMA_API_KEY")), "cwd": os.getcwd()}
        with open(os.environ["STAND_IN_ARGS"], "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    mapped = _load_cpu_library(folder)
    print("main: model loaded", flush=True)
    provider = LoopbackProvider(api_key=os.environ["LLAMA_API_KEY"], port=int(_option(arguments, "--port")))
    provider.start()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    provider.stop()
    del mapped


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
