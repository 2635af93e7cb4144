"""Screenshots of Cairn on a computer without a system keychain, for ``tools/screenshots.py``:
the notice at launch, the question that explains the secrets file before it is chosen, Settings
> Keys before and after, and an MCP import whose secrets have nowhere to go.

The keychain is keyring's own "fail" backend, given at the seam the tests use; the run has
its own folder, so the notice is due there whatever the other shots did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["secrets_shots"]


def secrets_shots(out: Path, *, settle: Any, wait_for: Any) -> None:
    import keyring.backends.fail

    from desktop.app import SECRETS_FILE, Account, CairnPaths, SecretFile, SecretStore
    from desktop.settings.store import SettingsStore
    from tests.ui_fixtures import running_cairn
    from ui.settings_dialog.dialog import SettingsDialog
    from ui.settings_dialog.keys_questions import UseFileQuestion

    home = Path(CairnPaths.from_env().data_dir).parent / "no-keychain"
    paths = CairnPaths.under(home)
    account = Account(name="DeepSeek", provider="deepseek", default_model="deepseek-chat")
    SettingsStore(paths.config_dir / "settings.json").add_account(account)
    store = SecretStore(keyring.backends.fail.Keyring(), file=SecretFile(paths.config_dir / SECRETS_FILE))
    with running_cairn(paths, secrets=store) as run:
        window = run.window
        window.resize(1180, 760)
        wait_for(window.secrets_notice.isVisible)
        settle(600)
        window.grab().save(str(out / "no-keychain-notice.png"))

        window.secrets_notice.use_file.click()
        question = window.secrets_notice.choice.question
        assert isinstance(question, UseFileQuestion)
        settle(400)
        question.grab().save(str(out / "keys-file-question.png"))
        question.reject()

        window.settings_dialog = None
        window.open_settings(None, tab="keys")
        wait_for(lambda: window.settings_dialog is not None)
        dialog = window.settings_dialog
        assert isinstance(dialog, SettingsDialog)
        settle(600)
        dialog.grab().save(str(out / "settings-keys.png"))
        _import_preview(dialog, home, out, settle=settle, wait_for=wait_for)
        dialog.tabs.setCurrentWidget(dialog.keys)
        dialog.keys.toggle.click()
        assert isinstance(dialog.keys.choice.question, UseFileQuestion)
        dialog.keys.choice.question.use.click()
        wait_for(lambda: dialog.keys.toggle.text().startswith("Stop"))
        settle(400)
        dialog.grab().save(str(out / "settings-keys-file.png"))
        dialog.accept()


def _import_preview(dialog: Any, home: Path, out: Path, *, settle: Any, wait_for: Any) -> None:
    """An import whose secret has nowhere to go: the preview says so and offers this run."""
    claude = home / "claude_desktop_config.json"
    github = {
        "command": "docker",
        "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example0000000000"},
    }
    notes = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/Notes"]}
    claude.write_text(json.dumps({"mcpServers": {"filesystem": notes, "github": github}}))
    dialog.tabs.setCurrentWidget(dialog.mcp)
    dialog.mcp.import_from(claude)
    wait_for(lambda: dialog.mcp.preview is not None and dialog.mcp.preview.isVisible())
    settle(600)
    dialog.mcp.preview.grab().save(str(out / "mcp-import-no-keychain.png"))
    dialog.mcp.preview.reject()
