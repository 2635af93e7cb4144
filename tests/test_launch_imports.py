"""What launching the window imports: modules that only some later action needs stay out of
the launch, where each costs a person a visible fraction of a second (``benchmarks.ui_speed``
measures the launch)."""

from __future__ import annotations

import os
import subprocess
import sys

# Each with what it would cost and where it is used instead.
KEPT_OUT = {
    "qtawesome": "icons are drawn from its font by ui/widgets/icons.py; qtawesome and qtpy cost 150 ms",
    "qtpy": "comes only with qtawesome",
    "click": "httpx's command-line client, never run by Cairn",
    "rich": "httpx's command-line client, never run by Cairn",
    "jsonschema": "imported at the first tool call or MCP server, 50 ms",
}


def test_launching_the_window_leaves_out_what_only_later_actions_need() -> None:
    code = (
        "import sys\n"
        "import desktop.__main__, ui.window.shell\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from ui.widgets.icons import icon\n"
        "app = QApplication([])\n"
        "assert not icon('copy', '#000000').isNull()\n"
        f"print(' '.join(name for name in {sorted(KEPT_OUT)!r} if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert not loaded, {name: KEPT_OUT[name] for name in loaded}
