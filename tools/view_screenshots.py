"""Screenshots of the chat view at any size, for ``tools/screenshots.py``: a reply continued
after a cut-off (one message), a long reply shown plain, and a failed request folded to one
line once the retry came through, and search results with their snippets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["view_shots"]


def view_shots(run: Any, provider: Any, out: Path, *, settle: Any, wait_for: Any) -> None:
    from desktop.loopback import Fault, Reply

    window = run.window

    def chat(*texts: str) -> None:
        window.new_session()
        wait_for(lambda: not window.chat.model_rows().messages)
        for text in texts:
            window.controller.send(text)
            wait_for(lambda: bool(window.chat.model_rows().messages) and not window.turns.busy)

    def save(name: str) -> None:
        settle()
        window.grab().save(str(out / f"{name}.png"))
        run.shell.set_theme("dark")
        settle()
        window.grab().save(str(out / f"{name}-dark.png"))
        run.shell.set_theme("light")

    cut = "A cairn is built in three steps.\n\n```python\ndef build(stones):\n    base = stones[:3]\n"
    provider.script(Reply(text=cut, finish_reason="length"), Reply(text="    return base + stones[3:]\n```\n\nDone."))
    chat("Show me how to build a cairn, in code.")
    head = window.chat.model_rows().last_of("assistant")
    window.controller.on_message_action(head.key, "continue")
    wait_for(lambda: not window.turns.busy and "Done." in window.chat.model_rows().last_of("assistant").text)
    save("continued")

    lines = "\n".join(f"{n:06d}  cairn {n % 7} marks the way over open ground" for n in range(3_000))
    provider.script(Reply(text=lines, chunk_chars=20_000))
    chat("Print the trail log.")
    window.chat.verticalScrollBar().setValue(0)  # its top: what it is, and Open whole and Save as…
    save("long-reply")

    provider.script(*[Reply(fault=Fault("server_error", status=503))] * 4)
    chat("Which cairn marks the pass?")
    error = next(m for m in window.chat.model_rows().messages if m.kind == "error")
    provider.script(Reply(text="The pass is marked by the tall one."))
    window.controller.on_message_action(error.key, "retry")
    wait_for(lambda: not window.turns.busy and window.chat.model_rows().messages[-1].kind == "assistant")
    save("retry-folded")

    window.sidebar.search.setText("cairn")  # results with their snippets, the match marked
    wait_for(lambda: window.sidebar.list.model().rowCount() > 0)
    settle(800)
    save("search")
    window.sidebar.search.clear()
