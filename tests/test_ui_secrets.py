"""The window without a system keychain, offscreen on the real core: the launch notice (once),
the secrets file chosen from it or from Settings > Keys (asked first, with its path) and left
again (saying what is forgotten), a refused file told at launch, Help > Where your data lives
telling where the keys are, and an import that saves each server it can. No keychain at the
keyring seam; real files."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import keyring.backends.fail
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QApplication
from pytestqt.qtbot import QtBot

from desktop.settings.mcp_servers import secret_id
from desktop.settings.secret_file import SECRETS_FILE, SecretFile
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account
from host.paths import CairnPaths
from tests.mcp_servers import TOOLS_SERVER
from tests.ui_fixtures import Running, open_settings, running_cairn
from ui.settings_dialog.keys_questions import LeaveFileQuestion, UseFileQuestion
from ui.settings_dialog.model_download_box import keep_hub_token
from ui.window.help_dialogs import DataFolders
from ui.window.secrets_notice import NO_KEYCHAIN

WAIT = 10_000
SECRET = "sk-ui-file-4f0a77"


def no_keychain(paths: CairnPaths) -> SecretStore:
    return SecretStore(keyring.backends.fail.Keyring(), file=SecretFile(paths.config_dir / SECRETS_FILE))


def click(button: QAbstractButton) -> None:
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def on_core(run: Running, work):  # type: ignore[no-untyped-def]
    return run.window.core.submit(lambda: work(run.app)).result(timeout=10)


def test_the_launch_notice_says_once_that_there_is_no_keychain(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
        notice = run.window.secrets_notice
        qtbot.waitUntil(notice.isVisible, timeout=WAIT)
        assert notice.text.text() == NO_KEYCHAIN
        assert notice.use_file.isVisible()
        click(notice.this_run)
        assert not notice.isVisible()
    with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
        on_core(run, lambda app: None)  # the core has answered the window's check by now
        QApplication.processEvents()  # and its answer has reached the window
        assert not run.window.secrets_notice.isVisible()  # told once, remembered
        assert on_core(run, lambda app: app.secrets.view().place) == "memory"
    assert not (cairn_paths.config_dir / SECRETS_FILE).exists()


def test_the_notice_offers_the_file_asks_first_and_keeps_this_runs_keys_in_it(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    path = cairn_paths.config_dir / SECRETS_FILE
    with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
        notice = run.window.secrets_notice
        qtbot.waitUntil(notice.isVisible, timeout=WAIT)
        on_core(run, lambda app: app.downloads.keep_token("hf_windowtoken0123", memory_only=True))
        click(notice.use_file)
        question = notice.choice.question
        assert isinstance(question, UseFileQuestion)
        assert str(path) in question.text()
        assert "not encrypted" in question.informativeText()
        click(question.cancel)
        qtbot.waitUntil(lambda: notice.choice.question is None, timeout=WAIT)
        assert not path.exists()  # nothing written on Cancel

        click(notice.use_file)
        click(notice.choice.question.use)  # type: ignore[union-attr]
        qtbot.waitUntil(lambda: "from now on" in notice.text.text(), timeout=WAIT)
        assert notice.text.text() == f"Secrets are kept in {path} from now on. Moved into it: the Hugging Face token."
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert json.loads(path.read_text())["secrets"] == {"huggingface": "hf_windowtoken0123"}
        assert run.window.snapshot.secrets.place == "file"
        assert run.window.snapshot.keychain_problem is None  # a key saved now lasts: the forms ask nothing


def test_settings_keys_shows_the_file_and_leaving_it_says_what_is_forgotten(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    path = cairn_paths.config_dir / SECRETS_FILE
    with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
        account = Account(name="Loop", provider="custom", base_url="http://127.0.0.1:9/v1", default_model="m")
        on_core(run, lambda app: app.secrets.use_file())
        on_core(run, lambda app: app.accounts.save(account, SECRET))
        assert json.loads(path.read_text())["secrets"] == {account.id: SECRET}
        dialog = open_settings(qtbot, run.window)
        tab = dialog.keys
        dialog.tabs.setCurrentWidget(tab)
        assert tab.where.text() == f"API keys and other secrets are kept in a file only you can read: {path}."
        assert tab.file_path.text() == f"The secrets file: {path}"
        assert tab.toggle.text() == "Stop keeping secrets in the file…"
        click(tab.toggle)
        qtbot.waitUntil(lambda: isinstance(tab.choice.question, LeaveFileQuestion), timeout=WAIT)
        question = tab.choice.question
        assert isinstance(question, LeaveFileQuestion)
        assert "kept only until Cairn closes, then forgotten" in question.informativeText()
        assert "the API key of Loop" in question.informativeText()
        assert SECRET not in question.informativeText()
        click(question.leave)
        qtbot.waitUntil(lambda: "no longer kept in a file" in tab.result.text(), timeout=WAIT)
        qtbot.waitUntil(lambda: tab.toggle.text() == "Keep secrets in this file…", timeout=WAIT)
        assert not path.exists()
        assert tab.where.text().startswith("No system keychain was found")
        assert on_core(run, lambda app: app.accounts.has_key(account.id))  # for the rest of this run
        click(tab.toggle)  # and back: asked first again
        assert isinstance(tab.choice.question, UseFileQuestion)
        assert str(path) in tab.choice.question.text()
        dialog.reject()  # closes the question with it: nothing is written
        assert tab.choice.question is None
        assert not path.exists()


def test_where_your_data_lives_tells_where_the_keys_are(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
        run.window.data_action.trigger()
        dialog = run.window.findChild(DataFolders)
        assert isinstance(dialog, DataFolders)
        assert "only in memory until Cairn closes (no system keychain)" in dialog.texts["Keys"].text()
        assert "Keys" not in dialog.buttons  # no folder of Cairn's to open
        assert "never a key" in dialog.texts["Settings"].text()
        dialog.reject()
        on_core(run, lambda app: app.secrets.use_file())
        qtbot.waitUntil(lambda: run.window.snapshot.secrets.place == "file", timeout=WAIT)
        run.window.data_action.trigger()
        dialog = next(d for d in run.window.findChildren(DataFolders) if d.isVisible())
        assert dialog.texts["Keys"].text() == (
            f"API keys and other secrets, in {SECRETS_FILE}, which only you can read\n{cairn_paths.config_dir}"
        )
        assert dialog.buttons["Keys"].isEnabled()
        dialog.reject()
    with running_cairn(cairn_paths) as run:  # a keychain
        run.window.data_action.trigger()
        dialog = run.window.findChild(DataFolders)
        assert isinstance(dialog, DataFolders)
        assert "in the system keychain" in dialog.texts["Keys"].text()
        dialog.reject()


def test_a_refused_file_is_told_at_launch(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    path = cairn_paths.config_dir / SECRETS_FILE
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "secrets": {"acct": SECRET}}))
    path.chmod(0o644)
    for _ in range(2):
        with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
            notice = run.window.secrets_notice
            qtbot.waitUntil(notice.isVisible, timeout=WAIT)
            assert "can be opened by other users (its mode is 0644), so Cairn did not use it" in notice.text.text()
            assert SECRET not in notice.text.text()
            assert not notice.use_file.isVisible()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # told, not repaired


def test_an_import_without_a_keychain_saves_each_server_it_can(
    qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path
) -> None:
    source = tmp_path / "claude_desktop_config.json"
    lab = {"command": sys.executable, "args": [str(TOOLS_SERVER)]}
    gh = {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_importnowhere0123"}}
    source.write_text(json.dumps({"mcpServers": {"lab": lab, "gh": gh}}))
    with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.mcp
        dialog.tabs.setCurrentWidget(tab)
        tab.import_from(Path(source))
        qtbot.waitUntil(lambda: tab.preview is not None and tab.preview.isVisible(), timeout=WAIT)
        preview = tab.preview
        assert "Secrets with nowhere to go" in preview.details.text()
        assert preview.keep_in_memory.isVisibleTo(preview)
        assert not preview.keep_in_memory.isChecked()
        assert preview.import_button.text() == "Import 1 server"  # gh's secret has nowhere to go
        preview.keep_in_memory.setChecked(True)
        assert preview.import_button.text() == "Import 2 servers"
        preview.keep_in_memory.setChecked(False)
        click(preview.import_button)
        qtbot.waitUntil(lambda: tab.message.text().startswith("Imported 1 server: lab."), timeout=WAIT)
        assert "Not imported: gh. GITHUB_TOKEN of the MCP server 'gh' looks like a secret" in tab.message.text()
        assert "Keep their secrets for this run, or in a file (Settings > Keys)" in tab.message.text()
        settings = json.loads((cairn_paths.config_dir / "settings.json").read_text())
        assert [s["name"] for s in settings["mcp_servers"]] == ["lab"]

        tab.import_from(Path(source))
        qtbot.waitUntil(lambda: tab.preview is not preview and tab.preview.isVisible(), timeout=WAIT)
        tab.preview.keep_in_memory.setChecked(True)
        click(tab.preview.import_button)
        qtbot.waitUntil(lambda: tab.message.text() == "Imported 1 server: gh.", timeout=WAIT)
        secret = secret_id("gh", "env", "GITHUB_TOKEN")
        assert on_core(run, lambda app: app.root.secrets.get(secret)) == "ghp_importnowhere0123"
        dialog.reject()
    home = cairn_paths.data_dir.parent
    assert [p for p in home.rglob("*") if p.is_file() and b"ghp_importnowhere0123" in p.read_bytes()] == []


def test_a_hugging_face_token_goes_where_secrets_go(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    path = cairn_paths.config_dir / SECRETS_FILE
    with running_cairn(cairn_paths, secrets=no_keychain(cairn_paths)) as run:
        said = on_core(run, lambda app: keep_hub_token(app, "hf_memorytoken0123"))
        assert (
            said == "The token is kept until Cairn closes, as there is no system keychain; Settings > Keys can keep it."
        )
        assert on_core(run, lambda app: app.downloads.token()) == "hf_memorytoken0123"
        assert not path.exists()
        on_core(run, lambda app: app.secrets.use_file())
        assert on_core(run, lambda app: keep_hub_token(app, "hf_filetoken0123")) == (
            "The token is kept with your other secrets."
        )
        assert json.loads(path.read_text())["secrets"] == {"huggingface": "hf_filetoken0123"}
