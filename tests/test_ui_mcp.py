"""The MCP servers tab of Settings, in the real window offscreen: real server processes (the
SDK's tools_server.py and a crashing one), the settings file on disk, a memory keychain at the
keyring seam, Claude Desktop files good and bad, and signing in to a remote server (a local
authorisation and MCP server built with the SDK's server auth; the browser played by httpx at
the opener seam)."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from desktop.settings.mcp_servers import McpServerSetting, secret_id
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Settings, SettingsStore
from host.paths import CairnPaths
from tests.fake_keyring import BrokenKeyring
from tests.mcp_servers import BAD_SERVER, TOOLS_SERVER
from tests.mcp_servers.oauth_server import SignInServer
from tests.ui_fixtures import Running, open_settings, running_cairn
from ui.settings_dialog.dialog import SettingsDialog
from ui.settings_dialog.keys_questions import NowhereQuestion
from ui.settings_dialog.mcp_tab import McpTab
from ui.settings_dialog.mcp_values import KEPT

WAIT = 30_000  # a server process starting Python and the SDK, on a loaded machine
TOKEN = "tok-7c1e9a4b2d5f8e30"


@pytest.fixture
def cairn(qtbot: QtBot, cairn_paths: CairnPaths) -> Iterator[tuple[Running, SettingsDialog, McpTab]]:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.mcp)
        yield run, dialog, dialog.mcp
        dialog.reject()


def click(button: QAbstractButton) -> None:
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def settings_file(paths: CairnPaths) -> Path:
    return paths.config_dir / "settings.json"


def servers_on_disk(paths: CairnPaths) -> list[dict]:
    path = settings_file(paths)
    return json.loads(path.read_text())["mcp_servers"] if path.exists() else []


def item_text(tab: McpTab, name: str) -> str:
    for row in range(tab.list.count()):
        item = tab.list.item(row)
        if item.data(Qt.ItemDataRole.UserRole) == name:
            return item.text()
    return ""


def select(tab: McpTab, name: str) -> None:
    names = [tab.list.item(r).data(Qt.ItemDataRole.UserRole) for r in range(tab.list.count())]
    tab.list.setCurrentRow(names.index(name))


def fill(tab: McpTab, name: str, *args: str, command: str = sys.executable, env: dict[str, str] | None = None) -> None:
    """A new stdio server in the form, started with Cairn so that it runs at once."""
    click(tab.new)
    form = tab.form
    form.name.setText(name)
    form.command.setText(command)
    form.args.setPlainText("\n".join(args))
    for key, value in (env or {}).items():
        form.env.add_row(key, value)
    form.start.setCurrentIndex(form.start.findData(True))


def save(qtbot: QtBot, tab: McpTab, expected: str) -> None:
    """Press Save and wait for ``expected``; a saved server is then selected in the list."""
    tab.say("")
    click(tab.save)
    qtbot.waitUntil(lambda: expected in tab.message.text(), timeout=WAIT)
    if expected.startswith("Saved "):
        name = expected.removeprefix("Saved ").removesuffix(".")
        qtbot.waitUntil(lambda: tab.selected_name() == name, timeout=WAIT)


def shown_text(widget: QWidget) -> str:
    """Every text the widget and its children show, placeholders aside."""
    parts = [w.text() for w in widget.findChildren(QLineEdit)]
    parts += [w.text() for w in widget.findChildren(QLabel)]
    parts += [w.toPlainText() for w in widget.findChildren(QPlainTextEdit)]
    parts += [tab.list.item(r).text() for tab in widget.findChildren(McpTab) for r in range(tab.list.count())]
    return "\n".join(parts)


def no_file_holds(secret: str) -> None:
    home = Path(os.environ["CAIRN_HOME"])
    assert [p for p in home.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []


def test_a_server_added_in_the_tab_shows_ready_with_its_tools_and_its_secret_stays_in_the_keychain(
    qtbot: QtBot, cairn_paths: CairnPaths, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    run, dialog, tab = cairn
    fill(tab, "lab", str(TOOLS_SERVER), env={"CAIRN_TEST_TOKEN": TOKEN, "LAB_COLOUR": "teal"})
    save(qtbot, tab, "Saved lab.")
    qtbot.waitUntil(lambda: item_text(tab, "lab") == "lab\nready with 12 tools", timeout=WAIT)
    assert tab.state.text() == "lab: ready with 12 tools"
    (entry,) = servers_on_disk(cairn_paths)
    assert entry["env"] == {"LAB_COLOUR": "teal"}
    assert entry["secret_env"] == ["CAIRN_TEST_TOKEN"]
    assert entry["start_at_launch"] is True
    assert run.keyring.entries[("Cairn", secret_id("lab", "env", "CAIRN_TEST_TOKEN"))] == TOKEN

    # Editing shows the secret's name, never its value; it is kept unless a new one is typed.
    tab.new_server()
    select(tab, "lab")
    rows = {name.text(): value for name, value in tab.form.env.rows()}
    assert rows["LAB_COLOUR"].text() == "teal"
    assert rows["CAIRN_TEST_TOKEN"].text() == ""
    assert rows["CAIRN_TEST_TOKEN"].placeholderText() == KEPT
    assert TOKEN not in shown_text(dialog)
    tab.form.trusted.setChecked(True)
    save(qtbot, tab, "Saved lab.")
    (entry,) = servers_on_disk(cairn_paths)
    assert entry["trusted"] is True
    assert entry["secret_env"] == ["CAIRN_TEST_TOKEN"]
    assert run.keyring.entries[("Cairn", secret_id("lab", "env", "CAIRN_TEST_TOKEN"))] == TOKEN
    qtbot.waitUntil(lambda: item_text(tab, "lab") == "lab\nready with 12 tools", timeout=WAIT)

    rows = {name.text(): value for name, value in tab.form.env.rows()}
    rows["CAIRN_TEST_TOKEN"].setText("tok-new-value-0001")
    assert rows["CAIRN_TEST_TOKEN"].echoMode() == QLineEdit.EchoMode.Password
    save(qtbot, tab, "Saved lab.")
    assert run.keyring.entries[("Cairn", secret_id("lab", "env", "CAIRN_TEST_TOKEN"))] == "tok-new-value-0001"
    assert TOKEN not in shown_text(dialog)
    assert "tok-new-value-0001" not in shown_text(dialog)  # once saved, a typed secret leaves the form
    no_file_holds(TOKEN)


def test_an_http_server_keeps_its_secret_header_in_the_keychain(
    qtbot: QtBot, cairn_paths: CairnPaths, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    run, dialog, tab = cairn
    click(tab.new)
    form = tab.form
    form.name.setText("remote")
    form.transport.setCurrentIndex(form.transport.findData("http"))
    assert form.env.isHidden()
    assert not form.headers.isHidden()
    form.url.setText("http://127.0.0.1:9/mcp")
    form.headers.add_row("Authorization", f"Bearer {TOKEN}")
    form.headers.add_row("X-Team", "trail")
    save(qtbot, tab, "Saved remote.")
    (entry,) = servers_on_disk(cairn_paths)
    assert (entry["transport"], entry["url"], entry["command"]) == ("http", "http://127.0.0.1:9/mcp", None)
    assert entry["headers"] == {"X-Team": "trail"}
    assert entry["secret_headers"] == ["Authorization"]
    assert run.keyring.entries[("Cairn", secret_id("remote", "header", "Authorization"))] == f"Bearer {TOKEN}"
    rows = {name.text(): value for name, value in tab.form.headers.rows()}
    assert rows["Authorization"].placeholderText() == KEPT
    assert TOKEN not in shown_text(dialog)
    no_file_holds(TOKEN)


def test_a_crashing_server_shows_failed_with_its_reason_and_the_end_of_its_stderr(
    qtbot: QtBot, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    _run, _dialog, tab = cairn
    fill(tab, "crash", str(BAD_SERVER), "exit")
    save(qtbot, tab, "Saved crash.")
    qtbot.waitUntil(lambda: "failed: the server exited with code 3" in item_text(tab, "crash"), timeout=WAIT)
    assert tab.state.text().startswith("crash: failed: the server exited with code 3")
    assert "RuntimeError: cannot open the database" in tab.stderr.toPlainText()
    assert not tab.stderr.isHidden()

    tab.say("")
    click(tab.restart)
    qtbot.waitUntil(lambda: tab.message.text().startswith("crash: failed:"), timeout=WAIT)
    click(tab.test)
    qtbot.waitUntil(lambda: tab.message.text().startswith("Test: crash failed: the server exited"), timeout=WAIT)


def test_what_a_failing_server_says_never_shows_its_secret(
    qtbot: QtBot, cairn_paths: CairnPaths, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    _run, dialog, tab = cairn
    script = "import os, sys; sys.stderr.write('my token is ' + os.environ['API_TOKEN'] + chr(10)); sys.exit(4)"
    fill(tab, "leaky", "-c", script, env={"API_TOKEN": TOKEN})
    save(qtbot, tab, "Saved leaky.")
    qtbot.waitUntil(lambda: "failed" in item_text(tab, "leaky"), timeout=WAIT)
    qtbot.waitUntil(lambda: "my token is" in tab.stderr.toPlainText(), timeout=WAIT)
    assert "my token is [redacted]" in tab.stderr.toPlainText()
    assert TOKEN not in shown_text(dialog)
    no_file_holds(TOKEN)


def test_disable_test_enable_and_remove_round_trip_through_the_settings_file(
    qtbot: QtBot, cairn_paths: CairnPaths, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    run, _dialog, tab = cairn
    fill(tab, "lab", str(TOOLS_SERVER), env={"CAIRN_TEST_TOKEN": TOKEN})
    tab.form.start.setCurrentIndex(tab.form.start.findData(False))
    save(qtbot, tab, "Saved lab.")
    qtbot.waitUntil(lambda: item_text(tab, "lab") == "lab\nstopped; starts when a chat needs its tools", timeout=WAIT)

    click(tab.toggle)
    qtbot.waitUntil(lambda: tab.message.text() == "lab is disabled.", timeout=WAIT)
    qtbot.waitUntil(lambda: item_text(tab, "lab") == "lab\ndisabled", timeout=WAIT)
    assert servers_on_disk(cairn_paths)[0]["enabled"] is False
    assert tab.toggle.text() == "Enable"
    assert not tab.restart.isEnabled()
    click(tab.test)  # a disabled server can still be tried
    qtbot.waitUntil(lambda: tab.message.text().startswith("Test: lab "), timeout=WAIT)
    assert tab.message.text() == "Test: lab started and is ready with 12 tools."

    click(tab.toggle)
    qtbot.waitUntil(lambda: tab.message.text() == "lab is enabled.", timeout=WAIT)
    assert servers_on_disk(cairn_paths)[0]["enabled"] is True
    click(tab.restart)
    qtbot.waitUntil(lambda: tab.message.text() == "lab: ready with 12 tools", timeout=WAIT)

    click(tab.remove)
    qtbot.waitUntil(lambda: tab.confirmation is not None and tab.confirmation.isVisible(), timeout=WAIT)
    assert "Remove the MCP server 'lab'?" in tab.confirmation.text()
    tab.confirmation.button(tab.confirmation.StandardButton.Cancel).click()
    assert [s["name"] for s in servers_on_disk(cairn_paths)] == ["lab"]
    click(tab.remove)
    tab.confirmation.button(tab.confirmation.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: tab.message.text() == "Removed lab.", timeout=WAIT)
    qtbot.waitUntil(lambda: tab.list.count() == 0, timeout=WAIT)
    assert servers_on_disk(cairn_paths) == []
    assert not any(key.startswith("mcp:lab:") for _service, key in run.keyring.entries)


def claude_file(folder: Path, servers: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


CLAUDE = {
    "lab": {"command": sys.executable, "args": [str(TOOLS_SERVER)], "env": {"LAB_COLOUR": "teal"}},
    "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_import0secret0123"}, "disabled": True},
    "old": {"type": "sse", "url": "https://mcp.example.com/sse"},
}


def test_an_import_is_shown_first_saves_nothing_on_cancel_and_everything_on_import(
    qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    run, _dialog, tab = cairn
    source = claude_file(tmp_path, CLAUDE)
    tab.import_from(source)
    qtbot.waitUntil(lambda: tab.preview is not None and tab.preview.isVisible(), timeout=WAIT)
    preview = tab.preview
    shown = preview.details.text()
    assert "Will be added" in shown
    assert f"lab: {sys.executable} {TOOLS_SERVER} [env LAB_COLOUR]" in shown
    assert "gh: gh-mcp [secrets: GITHUB_TOKEN; disabled]" in shown
    assert "Goes to the system keychain" in shown
    assert "gh: GITHUB_TOKEN" in shown
    assert "'old': it uses the older SSE transport" in shown
    assert "ghp_import0secret0123" not in shown + preview.summary.text()
    assert preview.import_button.text() == "Import 2 servers"
    click(preview.cancel_button)
    qtbot.waitUntil(lambda: tab.message.text() == "Nothing was imported.", timeout=WAIT)
    assert not settings_file(cairn_paths).exists()
    assert run.keyring.entries == {}

    tab.import_from(source)
    qtbot.waitUntil(lambda: tab.preview is not preview and tab.preview.isVisible(), timeout=WAIT)
    click(tab.preview.import_button)
    qtbot.waitUntil(lambda: tab.message.text() == "Imported 2 servers: lab, gh.", timeout=WAIT)
    assert [s["name"] for s in servers_on_disk(cairn_paths)] == ["lab", "gh"]
    assert run.keyring.entries[("Cairn", secret_id("gh", "env", "GITHUB_TOKEN"))] == "ghp_import0secret0123"
    qtbot.waitUntil(lambda: item_text(tab, "gh") == "gh\ndisabled", timeout=WAIT)
    assert item_text(tab, "lab") == "lab\nstopped; starts when a chat needs its tools"
    no_file_holds("ghp_import0secret0123")


def test_import_looks_for_claude_desktops_own_file(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    _run, _dialog, tab = cairn
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    click(tab.import_claude)
    qtbot.waitUntil(lambda: "Claude Desktop's configuration was not found at" in tab.message.text(), timeout=WAIT)
    assert tab.preview is None
    claude_file(tmp_path / "Claude", CLAUDE)
    click(tab.import_claude)
    qtbot.waitUntil(lambda: tab.preview is not None and tab.preview.isVisible(), timeout=WAIT)
    assert str(tmp_path / "Claude" / "claude_desktop_config.json") in tab.preview.summary.text()
    click(tab.preview.cancel_button)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "is not valid JSON"),
        (b'{"mcpServers": ["lab"]}', 'The "mcpServers" block of'),
        (b'{"mcpServers": {}, "pad": "' + b"x" * (1024 * 1024) + b'"}', "is larger than 1 MB"),
        (None, "does not exist; give the path of a claude_desktop_config.json"),
    ],
    ids=["not-json", "wrong-shape", "huge", "missing"],
)
def test_a_file_that_cannot_be_imported_says_why_and_changes_nothing(
    qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path, content: bytes | None, expected: str
) -> None:
    kept = keep_one_server(cairn_paths)
    path = tmp_path / "claude_desktop_config.json"
    if content is not None:
        path.write_bytes(content)
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.mcp)
        tab = dialog.mcp
        tab.import_from(path)
        qtbot.waitUntil(lambda: expected in tab.message.text(), timeout=WAIT)
        assert tab.preview is None
        assert "Traceback" not in tab.message.text()
        dialog.reject()
    assert settings_file(cairn_paths).read_bytes() == kept


def keep_one_server(paths: CairnPaths) -> bytes:
    """A saved server that every bad input must leave as it is; the settings file's bytes."""
    server = McpServerSetting(name="lab", command=sys.executable, args=[str(TOOLS_SERVER)], enabled=False)
    SettingsStore(settings_file(paths)).save(Settings().with_server(server))
    return settings_file(paths).read_bytes()


@pytest.mark.parametrize(
    ("name", "transport", "where", "env", "expected"),
    [
        ("", "stdio", sys.executable, {}, "cannot be saved without a name"),
        ("my server", "stdio", sys.executable, {}, "a name holds only letters, digits and -"),
        ("LAB", "stdio", sys.executable, {}, "An MCP server named 'LAB' already exists; pick another name."),
        ("web", "http", "ftp://mcp.example.com", {}, "runs over HTTP, so it needs an http(s) url"),
        ("web", "http", "mcp.example.com/mcp", {}, "runs over HTTP, so it needs an http(s) url"),
        ("tool", "stdio", "", {}, "runs over stdio, so it needs a command"),
        ("tool", "stdio", sys.executable, {"": "value"}, "An environment variable has a value but no name"),
        ("tool", "stdio", sys.executable, {"MY VAR": "1"}, "cannot be an environment variable name"),
    ],
    ids=["empty-name", "bad-name", "duplicate", "ftp-url", "no-scheme", "no-command", "nameless", "spaced-env"],
)
def test_bad_input_gets_a_plain_message_and_loses_nothing(
    qtbot: QtBot, cairn_paths: CairnPaths, name: str, transport: str, where: str, env: dict, expected: str
) -> None:
    kept = keep_one_server(cairn_paths)
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.mcp)
        tab = dialog.mcp
        qtbot.waitUntil(lambda: tab.list.count() == 1, timeout=WAIT)
        click(tab.new)
        form = tab.form
        form.name.setText(name)
        form.transport.setCurrentIndex(form.transport.findData(transport))
        (form.command if transport == "stdio" else form.url).setText(where)
        for key, value in env.items():
            form.env.add_row(key, value)
        click(tab.save)
        qtbot.waitUntil(lambda: expected in tab.message.text(), timeout=WAIT)
        assert "Traceback" not in tab.message.text()
        assert form.name.text() == name  # what was typed is still there to fix
        assert item_text(tab, "lab") == "lab\ndisabled"
        dialog.reject()
    assert settings_file(cairn_paths).read_bytes() == kept


@pytest.mark.parametrize("store", [BrokenKeyring, keyring.backends.fail.Keyring], ids=["refuses", "none"])
def test_without_a_keychain_a_server_with_a_secret_asks_where_its_secrets_go(
    qtbot: QtBot, cairn_paths: CairnPaths, store: type
) -> None:
    with running_cairn(cairn_paths, secrets=SecretStore(store())) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.mcp)
        tab = dialog.mcp
        fill(tab, "gh", "--version", command="gh-mcp", env={"GITHUB_TOKEN": "ghp_nowhere0to0go0123"})
        click(tab.save)
        qtbot.waitUntil(lambda: isinstance(tab.confirmation, NowhereQuestion), timeout=WAIT)
        question = tab.confirmation
        assert isinstance(question, NowhereQuestion)
        assert "GITHUB_TOKEN of the MCP server 'gh' looks like a secret" in question.text()
        assert "in memory until it closes" in question.informativeText()
        assert "ghp_nowhere0to0go0123" not in question.text() + question.informativeText()
        click(question.back)
        qtbot.waitUntil(lambda: "what you typed is still in the form" in tab.message.text(), timeout=WAIT)
        assert servers_on_disk(cairn_paths) == []  # nothing saved while the person decides
        assert tab.form.env.rows()[0][1].echoMode() == QLineEdit.EchoMode.Password  # typed, and masked
        assert tab.form.name.text() == "gh"

        click(tab.save)
        qtbot.waitUntil(lambda: isinstance(tab.confirmation, NowhereQuestion), timeout=WAIT)
        click(tab.confirmation.keep)
        kept = "Saved gh. Its secrets are kept until Cairn closes."
        qtbot.waitUntil(lambda: kept in tab.message.text(), timeout=WAIT)
        (saved,) = servers_on_disk(cairn_paths)
        assert saved["secret_env"] == ["GITHUB_TOKEN"]
        secret = secret_id("gh", "env", "GITHUB_TOKEN")
        found = run.window.core.submit(lambda: run.app.root.secrets.get(secret)).result(timeout=10)
        assert found == "ghp_nowhere0to0go0123"
        dialog.reject()
    assert not (cairn_paths.config_dir / "secrets.json").exists()
    no_file_holds("ghp_nowhere0to0go0123")


def test_closing_settings_stops_listening_to_the_servers(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        hub = run.app.root.mcp

        def listeners() -> int:
            return run.window.core.submit(lambda: len(hub._listeners)).result(timeout=10)

        dialog = open_settings(qtbot, run.window)
        qtbot.waitUntil(lambda: dialog.mcp._unsubscribe is not None, timeout=WAIT)
        assert listeners() == 1
        dialog.accept()
        qtbot.waitUntil(lambda: listeners() == 0, timeout=WAIT)


def test_an_entry_that_cannot_be_read_is_listed_with_the_reason_and_left_alone(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    settings_file(cairn_paths).parent.mkdir(parents=True, exist_ok=True)
    settings_file(cairn_paths).write_text(json.dumps({"schema_version": 1, "mcp_servers": [{"name": "no command"}]}))
    kept = settings_file(cairn_paths).read_bytes()
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.mcp)
        tab = dialog.mcp
        qtbot.waitUntil(lambda: tab.list.count() == 1, timeout=WAIT)
        select(tab, "entry 1")
        assert "cannot run: The MCP server 'no command' in the settings cannot be used" in item_text(tab, "entry 1")
        assert not tab.form.isEnabled()
        assert not tab.save.isEnabled()
        assert not tab.remove.isEnabled()
        dialog.reject()
    assert settings_file(cairn_paths).read_bytes() == kept


def test_each_state_reads_in_plain_words(qtbot: QtBot) -> None:
    from desktop.tools.server_views import ServerView
    from host.mcp import ServerState, ServerStatus, SkippedTool
    from ui.settings_dialog.mcp_phrases import status_dot, status_phrase

    lazy = McpServerSetting(name="lab", command="x")
    eager = lazy.model_copy(update={"start_at_launch": True})
    skipped = (SkippedTool("listy", "its input schema is not an object"),)

    def view(setting: McpServerSetting, state: ServerState, tools: int = 0, **more: object) -> ServerView:
        return ServerView("lab", setting, ServerStatus("lab", state, tools, **more))  # type: ignore[arg-type]

    cases = [
        (view(eager, ServerState.STARTING), "starting…"),
        (view(eager, ServerState.READY, 1), "ready with 1 tool"),
        (view(eager, ServerState.READY, 3, skipped=skipped), "ready with 3 tools (1 left out)"),
        (view(eager, ServerState.FAILED, reason="it hung"), "failed: it hung"),
        (
            view(eager, ServerState.SIGN_IN, reason="sign in again to lab"),
            "waiting for you to sign in (Sign in… below)",
        ),
        (view(eager, ServerState.STOPPED), "stopped"),
        (view(lazy, ServerState.STOPPED), "stopped; starts when a chat needs its tools"),
        (ServerView("lab", lazy.model_copy(update={"enabled": False})), "disabled"),
        (ServerView("lab", lazy, problem="a secret is missing"), "cannot run: a secret is missing"),
    ]
    assert [status_phrase(view) for view, _ in cases] == [phrase for _, phrase in cases]
    assert not status_dot(view(eager, ServerState.SIGN_IN)).isNull()  # a state every dot knows


def test_a_server_typed_and_not_saved_is_named_before_settings_closes(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.mcp
        dialog.tabs.setCurrentWidget(tab)
        assert tab.guard.unsaved() is None
        tab.form.name.setText("notes")
        tab.form.command.setText(sys.executable)
        dialog.reject()
        qtbot.waitUntil(lambda: tab.guard.question is not None and tab.guard.question.isVisible(), timeout=10_000)
        assert "the MCP server “notes”" in tab.guard.question.text()
        tab.guard.question.keep.click()
        qtbot.waitUntil(lambda: tab.guard.question is None, timeout=10_000)
        assert dialog.isVisible()
        assert tab.form.name.text() == "notes"  # still there to save
        dialog.reject()
        qtbot.waitUntil(lambda: tab.guard.question is not None and tab.guard.question.isVisible(), timeout=10_000)
        tab.guard.question.discard.click()
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)


def test_a_remote_server_is_signed_in_to_from_its_status(
    qtbot: QtBot, cairn_paths: CairnPaths, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    _run, _dialog, tab = cairn
    opened: list[str] = []

    def browser(url: QUrl) -> bool:  # the person's browser, at the seam
        opened.append(url.toString())
        threading.Thread(
            target=lambda: httpx.get(url.toString(), follow_redirects=True, timeout=10), daemon=True
        ).start()
        return True

    tab.signing.opener = browser
    with SignInServer() as remote:
        QTest.mouseClick(tab.new, Qt.MouseButton.LeftButton)
        form = tab.form
        form.name.setText("tracker")
        form.transport.setCurrentIndex(form.transport.findData("http"))
        assert not form.signs_in.isHidden()
        assert not form.client_id.isEnabled()  # only with sign-in
        form.url.setText(remote.url)
        form.signs_in.setChecked(True)
        form.start.setCurrentIndex(form.start.findData(True))
        save(qtbot, tab, "Saved tracker.")
        (entry,) = servers_on_disk(cairn_paths)
        assert entry["oauth"] == {"client_id": None, "scopes": [], "redirect_port": None}
        button = tab.signing.button
        qtbot.waitUntil(lambda: button.isVisible() and "waiting for you to sign in" in tab.state.text(), timeout=WAIT)
        assert button.text() == "Sign in…"
        assert opened == []  # never a browser unasked

        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "ready with" in tab.message.text(), timeout=WAIT)
        assert len(opened) == 1
        assert button.text() == "Sign in…"
        assert "ready with" in tab.state.text()
        (access,) = remote.approver.access
    no_file_holds(access)


def test_a_stdio_server_has_no_sign_in(qtbot: QtBot, cairn: tuple[Running, SettingsDialog, McpTab]) -> None:
    _run, _dialog, tab = cairn
    QTest.mouseClick(tab.new, Qt.MouseButton.LeftButton)
    assert tab.form.signs_in.isHidden()
    assert tab.signing.button.isHidden()


def test_what_a_running_server_logged_shows_under_its_status(
    qtbot: QtBot, cairn: tuple[Running, SettingsDialog, McpTab]
) -> None:
    run, _dialog, tab = cairn
    fill(tab, "lab", str(TOOLS_SERVER), "logs")
    save(qtbot, tab, "Saved lab.")
    qtbot.waitUntil(lambda: "ready with 1 tool" in tab.state.text(), timeout=WAIT)

    async def say() -> None:  # as a chat would call it
        (tool,) = [t for t in run.app.mcp._hub.tools() if t.name == "lab__say"]
        await tool.run({"times": 3, "text": "indexed"})

    run.window.core.submit(say).result(timeout=20)
    tab.list.setCurrentRow(-1)
    select(tab, "lab")
    qtbot.waitUntil(lambda: "What it logged lately:" in tab.stderr.toPlainText(), timeout=WAIT)
    assert tab.stderr.toPlainText().splitlines()[-3:] == ["info: indexed 0", "info: indexed 1", "info: indexed 2"]
