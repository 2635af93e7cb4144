"""Screenshots of the provider presets, for ``tools/screenshots.py``: the account form as each
preset fills it in (its address as the base URL's placeholder, its "Get a key" link and its
note), one PNG each and a grid of all of them; and the context inspector saying where a chat's
context figure came from, for a chat on a server that answers as Ollama does."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

__all__ = ["preset_shots"]

COLUMNS = 3
SCALE = 0.6  # of each form in the grid


def preset_shots(out: Path, *, settle: Any, wait_for: Any) -> None:
    from host.paths import CairnPaths

    with tempfile.TemporaryDirectory() as home:
        paths = CairnPaths.under(Path(home))
        forms = _form_shots(paths, out, settle=settle, wait_for=wait_for)
        _grid(forms, out / "presets-grid.png")
        _inspector_shot(paths, out, settle=settle, wait_for=wait_for)


def _form_shots(paths: Any, out: Path, *, settle: Any, wait_for: Any) -> list[Path]:
    from tests.ui_fixtures import running_cairn
    from ui.settings_dialog.dialog import SettingsDialog

    saved = []
    with running_cairn(paths) as run:
        window = run.window
        window.resize(1280, 820)
        window.open_settings(None)
        wait_for(lambda: window.settings_dialog is not None)
        dialog = window.settings_dialog
        assert isinstance(dialog, SettingsDialog)
        dialog.resize(980, 640)
        tab = dialog.accounts
        for preset in tab.snapshot.transport.providers:
            if preset.id == "built-in":
                continue
            tab.new_account(preset.id)
            settle(250)
            path = out / f"preset-{preset.id}.png"
            tab.form_scroll.grab().save(str(path))
            saved.append(path)
        dialog.accept()
    return saved


def _grid(shots: list[Path], target: Path) -> None:
    """The forms side by side, ``COLUMNS`` to a row, scaled to ``SCALE``."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    images = [QImage(str(p)) for p in shots]
    width = max(i.width() for i in images) * SCALE
    height = max(i.height() for i in images) * SCALE
    rows = -(-len(images) // COLUMNS)
    grid = QImage(int(width * COLUMNS), int(height * rows), QImage.Format.Format_RGB32)
    grid.fill(QColor("white"))
    painter = QPainter(grid)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    for n, image in enumerate(images):
        scaled = image.scaled(
            int(width), int(height), Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
        painter.drawImage(int((n % COLUMNS) * width), int((n // COLUMNS) * height), scaled)
    painter.end()
    grid.save(str(target))


def _inspector_shot(paths: Any, out: Path, *, settle: Any, wait_for: Any) -> None:
    from desktop.loopback import LoopbackProvider
    from desktop.settings.store import Account, SettingsStore
    from tests.server_kinds import StatingServer
    from tests.ui_fixtures import running_cairn

    model = "qwen3:8b"
    with (
        LoopbackProvider(models=(model,)) as upstream,
        StatingServer("ollama", model, upstream, num_ctx=8_192, model_max=40_960, loaded=False) as server,
    ):
        account = Account(name="Ollama", provider="ollama", base_url=server.base_url, default_model=model)
        SettingsStore(paths.config_dir / "settings.json").add_account(account)
        with running_cairn(paths) as run:
            window = run.window
            window.resize(1400, 860)
            window.inspector.show()
            window.controller.send("Where does the trail above the lake go?")
            wait_for(lambda: not window.turns.busy and window.inspector.list.count() == 1)
            settle(600)
            window.grab().save(str(out / "inspector-context.png"))
