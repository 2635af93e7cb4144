"""Help > About Cairn names the version and the folders Cairn keeps its files in."""

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop.version import cairn_version
from host.paths import CairnPaths
from tests.ui_fixtures import running_cairn


def test_about_shows_the_version_and_where_files_live(qtbot: object, cairn_paths: CairnPaths) -> None:
    shown: list[str] = []

    def read_and_close() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        shown.append(box.text())
        box.accept()

    with running_cairn(cairn_paths) as run:
        help_menu = next(a.menu() for a in run.window.menuBar().actions() if a.text() == "&Help")
        about = next(a for a in help_menu.actions() if a.text() == "About Cairn")
        QTimer.singleShot(0, read_and_close)
        about.trigger()
    assert len(shown) == 1
    assert f"Cairn {cairn_version()}" in shown[0]
    assert str(cairn_paths.data_dir) in shown[0]
    assert str(cairn_paths.log_dir) in shown[0]
