"""Screenshots of Cairn with a seeded conversation, on a virtual X display.

    .venv/bin/python -m tools.screenshots [--out screenshots]

Starts Xvfb (Debian's ``xvfb`` package) unless DISPLAY is already set, runs the real
window with the xcb platform against the loopback provider, and saves PNGs of the main
window in the light and the dark theme, the first start's page, an empty chat's welcome, the
versions of an answer, an error row, tool and approval cards, a narrow window, the Settings
dialog (light and dark) and the context inspector, the MCP servers tab with a ready and a
failed server and an import preview, attachments in the composer and in the chat, a chat's own
settings and the assistants list, the chat list grouped by day with pinned and archived
chats (light and dark), a reply with inline and display math (light and dark), the provider
presets' forms, the first hour (``shots_first_hour.py``) and Cairn without a system keychain
(``shots_secrets.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.shots_first_hour import first_hour_shots
from tools.shots_math import math_shots
from tools.shots_presets import preset_shots
from tools.shots_secrets import secrets_shots

REPLY = """A **cairn** is a pile of stones that people build to mark a trail, a summit or a memory.

Walkers add a stone as they pass, so a cairn grows with the path it marks:

1. Pick a flat, stable base stone.
2. Add stones from largest to smallest.
3. Leave it where it helps others find the way.

```python
def build(stones):
    for stone in sorted(stones, key=lambda s: s.weight, reverse=True):
        cairn.append(stone)
```

On well-kept trails, only add to cairns that already exist."""


def start_display() -> subprocess.Popen[bytes] | None:
    if os.environ.get("DISPLAY"):
        return None
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        sys.exit("Xvfb is not installed: on Debian or Ubuntu, sudo apt-get install xvfb")
    display = ":87"
    server = subprocess.Popen([xvfb, display, "-screen", "0", "1500x1000x24", "-nolisten", "tcp"])
    time.sleep(1.0)
    os.environ["DISPLAY"] = display
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    server = start_display()
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    try:
        with tempfile.TemporaryDirectory() as home:
            os.environ["CAIRN_HOME"] = home
            shoot(args.out.resolve())
    finally:
        if server is not None:
            server.terminate()


def settle(ms: int = 400) -> None:
    """Let Qt run for ``ms`` milliseconds, as the app's own loop would."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_for(done: object, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not done() and time.monotonic() < deadline:  # type: ignore[operator]
        settle(50)


def shoot(out: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.loopback import LoopbackProvider, Reply
    from host.paths import CairnPaths
    from tests.cache_scenario import write_skill
    from tests.ui_fixtures import add_loopback_account, running_cairn
    from tools.view_screenshots import view_shots

    qt = QApplication.instance() or QApplication([])

    paths = CairnPaths.from_env()
    write_skill(paths.skills_dir, "trail-notes", "Keep short notes of routes, distances and landmarks.")
    write_skill(paths.skills_dir, "Bad Name", "An invalid skill, to show how Cairn reports it.")
    start_page_shots(paths, out)
    with LoopbackProvider() as provider:
        add_loopback_account(paths, provider, "Local loopback")
        provider.script(
            Reply(
                text="Cairns mark paths across open ground, where trails are hard to see.", reasoning="Short answer."
            ),
            Reply(text=REPLY, reasoning="They want the why and the how; give steps and a small example."),
        )
        with running_cairn(paths) as run:
            window = run.window
            window.resize(1280, 820)
            settle()
            window.grab().save(str(out / "welcome.png"))
            for text in ("What is a cairn for?", "How do I build one, and should I?"):
                window.controller.send(text)
                wait_for(lambda: not window.turns.busy and bool(window.chat.model_rows().messages))
                wait_for(lambda: not window.turns.busy)
            window.controller.on_message_action(window.chat.model_rows().messages[-1].key, "toggle-reasoning")
            settle()
            window.grab().save(str(out / "main-light.png"))

            run.shell.set_theme("dark")
            settle()
            window.grab().save(str(out / "main-dark.png"))
            run.shell.set_theme("light")

            inspector_shot(window, out)
            version_shots(run, provider, out)
            error_shot(run, provider, out)
            view_shots(run, provider, out, settle=settle, wait_for=wait_for)
            math_shots(run, provider, out, settle=settle, wait_for=wait_for)
            tool_shots(run, out)
            compaction_shots(run, provider, out)
            attachment_shots(run, out)

            settings_shots(window, out)
            run.shell.set_theme("dark")
            settings_shots(window, out, suffix="-dark", tabs=False)
            run.shell.set_theme("light")
            mcp_shots(run, out)
            chat_settings_shots(run, out)
        chat_list_shots(paths, out)
    extra_shots(out)
    qt.processEvents()
    for name in sorted(p.name for p in out.glob("*.png")):
        print(out / name)


def extra_shots(out: Path) -> None:
    """Each in a Cairn of its own: the presets, the first hour, Cairn without a keychain."""
    for shots in (preset_shots, first_hour_shots, secrets_shots):
        shots(out, settle=settle, wait_for=wait_for)


def inspector_shot(window: Any, out: Path) -> None:
    window.inspector.show()
    window.resize(1400, 860)
    settle()
    window.grab().save(str(out / "inspector.png"))
    window.inspector.hide()


def start_page_shots(paths: Any, out: Path) -> None:
    """No account yet: the first start's page, light and dark."""
    from tests.ui_fixtures import running_cairn

    with running_cairn(paths) as run:
        run.window.resize(1100, 720)
        settle(600)
        run.window.grab().save(str(out / "start-page.png"))
        run.shell.set_theme("dark")
        settle()
        run.window.grab().save(str(out / "start-page-dark.png"))
        run.shell.set_theme("light")


def hover(window: Any, message: Any) -> None:
    """Show the buttons under ``message`` as if the pointer were over it."""
    window.chat.message_delegate.hovered = message.key
    window.chat.viewport().update()


def version_shots(run: Any, provider: Any, out: Path) -> None:
    """An answer regenerated: its switcher, then the earlier version chosen; and a narrow window."""
    from desktop.loopback import Reply

    window = run.window
    window.resize(1280, 820)
    provider.script(Reply(text="Build it low and wide, with the heaviest stones at the bottom.\n\n" + REPLY))
    answer = window.chat.model_rows().messages[-1]
    window.controller.on_message_action(answer.key, "regenerate")
    wait_for(lambda: not window.turns.busy and window.chat.model_rows().messages[-1].versions == (2, 2))
    settle()
    window.chat.jump_to_bottom()
    hover(window, window.chat.model_rows().messages[-1])
    settle()
    window.grab().save(str(out / "versions.png"))
    window.resize(650, 760)
    settle(600)
    window.chat.jump_to_bottom()
    settle()
    window.grab().save(str(out / "narrow.png"))
    window.resize(1280, 820)
    settle()


def error_shot(run: Any, provider: Any, out: Path) -> None:
    """A reply that failed: the error row and its Retry."""
    from desktop.loopback import Fault, Reply

    window = run.window
    window.new_session()
    wait_for(lambda: not window.chat.model_rows().messages)
    provider.script(*[Reply(fault=Fault("server_error", status=503))] * 4)
    window.controller.send("Which cairn marks the pass?")
    wait_for(lambda: not window.turns.busy and any(m.kind == "error" for m in window.chat.model_rows().messages))
    settle()
    window.grab().save(str(out / "error.png"))
    run.shell.set_theme("dark")
    settle()
    window.grab().save(str(out / "error-dark.png"))
    run.shell.set_theme("light")


def tool_shots(run: Any, out: Path) -> None:
    """A tool card (a file read in the workspace) and an approval card (a write waiting)."""
    window = run.window
    workspace = Path(os.environ["CAIRN_HOME"]) / "project"
    workspace.mkdir(exist_ok=True)
    (workspace / "trail.md").write_text("# Trail\n\n- Cairn at the col\n- Cairn at the ford\n")
    window.core.submit(lambda: run.app.preferences.set_workspace(workspace))
    settle()
    window.new_session()
    wait_for(lambda: not window.chat.model_rows().messages)
    window.controller.send('Read my trail notes. [[call read_file {"path": "trail.md"}]]')
    wait_for(lambda: not window.turns.busy and len(window.chat.model_rows().messages) >= 4)
    window.controller.send('Add the summit. [[call write_file {"path": "trail.md", "content": "# Trail\\n- Summit"}]]')
    wait_for(lambda: any(m.kind == "approval" for m in window.chat.model_rows().messages))
    settle()
    window.grab().save(str(out / "tools.png"))
    run.shell.set_theme("dark")
    settle()
    window.grab().save(str(out / "tools-dark.png"))
    run.shell.set_theme("light")
    window.controller.stop()  # Esc: deny, so the run ends cleanly
    wait_for(lambda: not window.turns.busy)


SUMMARY = """- The person is walking a trail and asks about cairns 0 to 6 along it.
- For each: who built it, its height, the trail it marks, and the weather on the day they pass.
- Heights so far: between 1.2 m and 2.4 m; cairn 3 is the tallest.
- Still open: the weather for the day they reach cairn 7."""


def compaction_shots(run: Any, provider: Any, out: Path) -> None:
    """Compact chat: the focus dialog, then the marker opened with its summary, the context
    fill in the status bar and the summary request in the inspector."""
    from PySide6.QtWidgets import QInputDialog

    from tests.compaction_chat import message
    from ui.window.main_window import COMPACT_PROMPT

    window = run.window
    window.new_session()
    wait_for(lambda: not window.chat.model_rows().messages)
    for turn in range(8):
        count = len(window.chat.model_rows().messages)
        window.controller.send(message(turn))
        wait_for(lambda c=count: not window.turns.busy and len(window.chat.model_rows().messages) >= c + 2)
    dialog = QInputDialog(window)
    dialog.setWindowTitle("Compact chat")
    dialog.setLabelText(COMPACT_PROMPT)
    dialog.setOkButtonText("Compact")
    dialog.setTextValue("the heights of the cairns")
    dialog.show()
    settle()
    dialog.grab().save(str(out / "compact-dialog.png"))
    dialog.close()
    from desktop.loopback import Reply

    provider.script(Reply(text=SUMMARY))
    window.turns.compact(window.session_id, "the heights of the cairns")
    wait_for(lambda: any(m.kind == "summary" and m.status == "complete" for m in window.chat.model_rows().messages))
    wait_for(lambda: not window.turns.busy)
    marker = window.chat.model_rows().messages[-1]
    window.controller.on_message_action(marker.key, "toggle-summary")
    window.inspector.show()
    window.resize(1400, 860)
    settle(300)
    window.chat.jump_to_bottom()
    details = window.inspector.details
    details.verticalScrollBar().setValue(details.verticalScrollBar().maximum())
    settle(600)
    window.grab().save(str(out / "compaction.png"))
    window.inspector.hide()


def _landscape(path: Path) -> None:
    """A small picture to attach: a sky, a ridge and a cairn on it."""
    from PySide6.QtCore import QPointF, QRectF
    from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter, QPolygonF

    image = QImage(480, 320, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    sky = QLinearGradient(0, 0, 0, 320)
    sky.setColorAt(0, QColor("#8fb8de"))
    sky.setColorAt(1, QColor("#e8eef2"))
    painter.fillRect(image.rect(), sky)
    painter.setPen(QColor("#55624a"))
    painter.setBrush(QColor("#6b7d5c"))
    painter.drawPolygon(QPolygonF([QPointF(0, 320), QPointF(0, 230), QPointF(170, 150), QPointF(300, 210),
                                   QPointF(480, 170), QPointF(480, 320)]))  # fmt: skip
    painter.setBrush(QColor("#8a8580"))
    for width, y in ((54, 200), (42, 184), (30, 170), (18, 159)):
        painter.drawEllipse(QRectF(170 - width / 2, y - 150 + 130, width, 16))
    painter.end()
    image.save(str(path))


def attachment_shots(run: Any, out: Path) -> None:
    """A picture and a text file waiting as chips in the composer, then the message sent: the
    picture's thumbnail and the file's chip in your bubble."""
    window = run.window
    folder = Path(os.environ["CAIRN_HOME"]) / "to-attach"
    folder.mkdir(exist_ok=True)
    picture = folder / "ridge-cairn.png"
    _landscape(picture)
    notes = folder / "trail-notes.md"
    notes.write_text("# Trail notes\n\n- Cairn at the col, 2.1 m\n- Cairn at the ford, 1.4 m\n", encoding="utf-8")
    window.new_session()
    wait_for(lambda: not window.chat.model_rows().messages)
    window.intake.attach_files([str(picture), str(notes)])
    wait_for(lambda: len(window.composer.attachments()) == 2)
    window.composer.set_text("Which cairn is this, according to my notes?")
    settle(600)
    window.grab().save(str(out / "attachments-composer.png"))
    window.controller.send(window.composer.text())
    wait_for(lambda: not window.turns.busy and len(window.chat.model_rows().messages) == 2)
    settle(600)
    window.grab().save(str(out / "attachments-chat.png"))
    run.shell.set_theme("dark")
    settle(600)
    window.grab().save(str(out / "attachments-chat-dark.png"))
    run.shell.set_theme("light")


def settings_shots(window: Any, out: Path, *, suffix: str = "", tabs: bool = True) -> None:
    from ui.settings_dialog.dialog import SettingsDialog

    window.settings_dialog = None
    window.open_settings(None)
    wait_for(lambda: window.settings_dialog is not None)
    dialog = window.settings_dialog
    assert isinstance(dialog, SettingsDialog)
    settle(800)
    dialog.grab().save(str(out / f"settings{suffix}.png"))
    if tabs:
        for tab, name in (
            (dialog.skills_tab, "settings-skills"),
            (dialog.permissions, "settings-permissions"),
            (dialog.context, "settings-context"),
        ):
            dialog.tabs.setCurrentWidget(tab)
            settle(400)
            dialog.grab().save(str(out / f"{name}{suffix}.png"))
    dialog.accept()


def mcp_shots(run: Any, out: Path) -> None:
    """The MCP servers tab with one server ready and one failed, and an import's preview."""
    from desktop.tools.server_views import ServerView
    from tests.mcp_servers import BAD_SERVER, TOOLS_SERVER
    from ui.settings_dialog.dialog import SettingsDialog

    window = run.window
    servers = (
        {"name": "lab", "command": sys.executable, "args": [str(TOOLS_SERVER)], "start_at_launch": True},
        {"name": "notes-db", "command": sys.executable, "args": [str(BAD_SERVER), "exit"], "start_at_launch": True},
    )
    env = {"LAB_COLOUR": "teal", "LAB_API_TOKEN": "tok-screenshot-0000"}  # the token goes to the keychain
    for fields in servers:
        window.core.submit(lambda fields=fields: run.app.mcp.save(fields, env, {}))

    def settled() -> bool:
        views: list[ServerView] = window.core.submit(run.app.mcp.views).result(10)
        return len(views) == 2 and all(
            v.status is not None and v.status.state.value in ("ready", "failed") for v in views
        )

    wait_for(settled)
    window.settings_dialog = None
    window.open_settings(None)
    wait_for(lambda: window.settings_dialog is not None)
    dialog = window.settings_dialog
    assert isinstance(dialog, SettingsDialog)
    dialog.tabs.setCurrentWidget(dialog.mcp)
    tab = dialog.mcp
    wait_for(lambda: tab.list.count() == 2)
    tab.list.setCurrentRow(1)
    settle(600)
    dialog.grab().save(str(out / "settings-mcp.png"))
    tab.list.setCurrentRow(0)
    settle(400)
    dialog.grab().save(str(out / "settings-mcp-ready.png"))

    claude = Path(os.environ["CAIRN_HOME"]) / "claude_desktop_config.json"
    claude.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "filesystem": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/Notes"],
                    },
                    "github": {
                        "command": "docker",
                        "args": [
                            "run",
                            "-i",
                            "--rm",
                            "-e",
                            "GITHUB_PERSONAL_ACCESS_TOKEN",
                            "ghcr.io/github/github-mcp-server",
                        ],
                        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example0000000000", "GITHUB_HOST": "github.com"},
                    },
                    "lab": {"command": "uvx", "args": ["lab-server"]},
                    "weather": {"type": "sse", "url": "https://weather.example.com/sse"},
                }
            }
        )
    )
    tab.import_from(claude)
    wait_for(lambda: tab.preview is not None and tab.preview.isVisible())
    settle(600)
    assert tab.preview is not None
    tab.preview.grab().save(str(out / "mcp-import-preview.png"))
    tab.preview.reject()
    dialog.accept()


def chat_settings_shots(run: Any, out: Path) -> None:
    """A chat's own settings (its system prompt, a temperature; the rest inherited), and the
    Assistants tab with two assistants."""
    window, app = run.window, run.app
    for name, prompt, temperature in (
        ("Trail guide", "Answer as a mountain guide: routes, distances, daylight and safety first.", 0.4),
        (
            "French pen pal",
            "Write back in simple French, as a friend would; correct one mistake of mine each time.",
            None,
        ),
    ):
        values = {"system_prompt": prompt, "account_id": None, "model": None, "temperature": temperature,
                  "max_output": 2048, "reasoning_effort": None}  # fmt: skip
        window.core.submit(lambda n=name, v=values: app.preferences.save_assistant(None, name=n, **v)).result(
            timeout=10
        )
    session_id = window.session_id
    assert session_id is not None
    window.core.submit(
        lambda: app.options.set_settings(session_id, system_prompt="Answer as a mountain guide; be brief.",
                                      temperature=0.4, max_output=None, reasoning_effort=None)
    ).result(timeout=10)  # fmt: skip
    actions = window.chat_settings
    actions.dialog = None
    actions.open()
    wait_for(lambda: actions.dialog is not None and actions.dialog.isVisible())
    settle(600)
    actions.dialog.grab().save(str(out / "chat-settings.png"))
    actions.dialog.reject()

    window.settings_dialog = None
    actions.manage_requested.emit()
    wait_for(lambda: window.settings_dialog is not None)
    dialog = window.settings_dialog
    wait_for(lambda: dialog.assistants.list.count() == 2)
    settle(600)
    dialog.grab().save(str(out / "settings-assistants.png"))
    dialog.accept()


def chat_list_shots(paths: Any, out: Path) -> None:
    """The chat list in its groups: a pinned chat, chats of today, yesterday, last week and
    long ago, and the archive opened; light and dark. Seeded while no Cairn holds the journal."""
    import sqlite3
    from datetime import UTC, datetime, timedelta

    from host.journal import Journal
    from tests.ui_fixtures import running_cairn

    now = datetime.now(UTC)
    chats = [
        ("Packing list for the Cairngorms", timedelta(minutes=20)),
        ("Why are cairns built on summits?", timedelta(hours=2)),
        ("Sourdough starter is too runny", timedelta(days=1, hours=2)),
        ("Route from Braemar to Linn of Dee, with a detour by the old bridge", timedelta(days=3)),
        ("Translate a trail sign from Gaelic", timedelta(days=5)),
        ("Birthday dinner ideas", timedelta(days=40)),
        ("Tax return questions", timedelta(days=90)),
        ("Weekly meal plan", timedelta(days=12)),
        ("Old hiking club notes", timedelta(days=200)),
    ]
    with Journal.open(paths.journal) as journal:
        made = {title: journal.create_session(title).id for title, _ in chats}
        journal.pin_session(made["Weekly meal plan"], True)
        journal.archive_session(made["Old hiking club notes"], True)
        journal.archive_session(made["Tax return questions"], True)
    conn = sqlite3.connect(paths.journal)
    with conn:
        for title, ago in chats:
            when = (now - ago).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (when, made[title]))
    conn.close()
    with running_cairn(paths) as run:
        window = run.window
        window.resize(1100, 760)
        wait_for(lambda: "Pinned" in window.sidebar.list.headers())
        window.sidebar.list.toggle_archive()
        window.sidebar.list.setCurrentIndex(window.sidebar.list.index_of(made["Sourdough starter is too runny"]))
        settle(600)
        window.grab().save(str(out / "chat-list.png"))
        run.shell.set_theme("dark")
        settle()
        window.grab().save(str(out / "chat-list-dark.png"))
        run.shell.set_theme("light")


if __name__ == "__main__":
    main()
