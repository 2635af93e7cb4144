"""Screenshots of the first hour, for ``tools/screenshots.py``: the start page with a local
server it found, the Model box open on what a server serves, and a chat started from one of
the starter assistants."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

__all__ = ["first_hour_shots"]


def first_hour_shots(out: Path, *, settle: Any, wait_for: Any) -> None:
    from desktop.loopback import LoopbackProvider
    from host.paths import CairnPaths

    served = ("llama3.2:3b", "qwen3:8b", "gemma3:12b", "mistral-small3.2:24b", "deepseek-r1:14b")
    with tempfile.TemporaryDirectory() as home, LoopbackProvider(models=served) as server:
        paths = CairnPaths.under(Path(home))
        _start_page(paths, server, out, settle=settle, wait_for=wait_for)
        _model_box_and_assistant(paths, server, out, settle=settle, wait_for=wait_for)


def _start_page(paths: Any, server: Any, out: Path, *, settle: Any, wait_for: Any) -> None:
    from tests.ui_fixtures import running_cairn

    port = int(server.base_url.split(":")[2].split("/")[0])
    with running_cairn(paths) as run:
        window = run.window
        window.resize(1100, 760)
        window.show()
        page = window.start_page
        page.ports = {"ollama": port}  # where this machine's Ollama would answer
        page.rescan()
        wait_for(lambda: len(page.found) == 1)
        settle(500)
        window.grab().save(str(out / "start-page-server.png"))


def _model_box_and_assistant(paths: Any, server: Any, out: Path, *, settle: Any, wait_for: Any) -> None:
    from PySide6.QtGui import QGuiApplication

    from desktop.loopback import Reply
    from tests.ui_fixtures import add_loopback_account, running_cairn

    add_loopback_account(paths, server, "Ollama on this computer", "llama3.2:3b")
    with running_cairn(paths) as run:
        window = run.window
        window.resize(1280, 820)
        window.move(0, 0)
        window.show()
        box = window.route_bar.models
        wait_for(lambda: box.findData("qwen3:8b") >= 0)  # the server's list, asked in the background
        box.showPopup()
        settle(500)
        screen = QGuiApplication.primaryScreen()
        screen.grabWindow(0, 0, 0, 1280, 820).save(str(out / "model-box.png"))  # the list is a window of its own
        box.hidePopup()

        starter = next(a for a in window.snapshot.assistants if a.name == "Translator")
        menu = window.chat_settings.assistants
        menu.aboutToShow.emit()
        next(a for a in menu.actions() if a.text() == starter.name).trigger()
        wait_for(window.route_bar.assistant.isVisible)
        settle(400)
        window.grab().save(str(out / "assistant-chat.png"))
        server.script(Reply(text="Les cairns marquent le chemin."))
        window.controller.send("Cairns mark the way.")
        wait_for(lambda: not window.turns.busy and len(window.chat.model_rows().messages) >= 2)
        settle(400)
        window.grab().save(str(out / "assistant-chat-answered.png"))
