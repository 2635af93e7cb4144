"""The release check: the built .deb, unpacked into a temporary root, runs as a person would run it.

It runs only with ``CAIRN_PACKAGE_TEST=1``, after ``make package`` has built ``dist/`` (minutes);
``make package-test`` does both. The .deb is unpacked with ``dpkg-deb -x``, never installed with
``dpkg -i``: CI runs as root, and installing would change the machine.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import struct
import subprocess
import tarfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.engine.library import ModelLibrary
from desktop.loopback import LoopbackProvider, Reply
from host.paths import CairnPaths

pytestmark = pytest.mark.skipif(
    os.environ.get("CAIRN_PACKAGE_TEST") != "1",
    reason="the package release check needs the packages built first (minutes): run `make package-test`",
)

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-package-check"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def project_version() -> str:
    with (REPO / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def built(pattern: str) -> Path:
    found = sorted((REPO / "dist").glob(pattern))
    assert len(found) == 1, f"expected one dist/{pattern}, found {[p.name for p in found]}; run `make package`"
    return found[0]


@pytest.fixture(scope="module")
def deb() -> Path:
    return built(f"cairn_{project_version()}_*.deb")


@pytest.fixture(scope="module")
def root(deb: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The .deb's files under a temporary root, as ``dpkg -i`` would put them under /."""
    target = tmp_path_factory.mktemp("root")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(target)], check=True)
    return target


def control(deb: Path, field: str) -> str:
    return subprocess.run(
        ["dpkg-deb", "-f", str(deb), field], capture_output=True, text=True, check=True
    ).stdout.strip()


def cairn(
    root: Path, *args: str, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """The frozen ``cairn``, through the launcher the .deb puts on PATH."""
    return subprocess.run(
        [str(root / "usr" / "bin" / "cairn"), *args],
        env=env or dict(os.environ), input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


# -- the command line --------------------------------------------------------------------


def test_version_is_pyprojects_everywhere(root: Path, deb: Path) -> None:
    version = project_version()
    shown = cairn(root, "--version")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == f"cairn {version}"
    assert control(deb, "Version") == version
    assert deb.name.startswith(f"cairn_{version}_")
    assert built(f"cairn-{version}-linux-*.tar.gz").exists()


def test_sessions_runs_on_an_empty_home(root: Path, cairn_paths: CairnPaths) -> None:
    listed = cairn(root, "sessions")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == "No sessions yet."
    assert cairn_paths.journal.exists()  # the frozen SQLite made the journal


def test_a_chat_through_the_frozen_cli_streams_a_reply(root: Path) -> None:
    env = {**os.environ, "CAIRN_API_KEY": KEY}
    with LoopbackProvider(api_key=KEY) as provider:
        added = cairn(
            root, "accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat", env=env
        )
        assert added.returncode == 0, added.stderr
        provider.script(Reply(text="Stacked stones mark the way."))
        chat = cairn(root, "chat", "What", "is", "a", "cairn?", env=env)
        assert chat.returncode == 0, chat.stderr
        assert chat.stdout.strip() == "Stacked stones mark the way."
        assert provider.requests[-1].body["stream"] is True
        assert provider.requests[-1].body["messages"][-1]["content"] == "What is a cairn?"


def test_the_frozen_cairn_carries_the_built_in_engine_and_chats_on_it(root: Path, tmp_path: Path) -> None:
    """The .deb's Cairn runs its own engine: no compiler, no checkout. The model is not carried
    (an installer would download it): the default one is added from a file, as a person would."""
    model = ModelLibrary(tmp_path / "models").default_model()
    assert model is not None, "the default model's package is not installed (make test installs it)"
    added = cairn(root, "models", "add", str(model.file))
    assert added.returncode == 0, added.stderr
    listed = cairn(root, "models", "list")
    assert listed.returncode == 0, listed.stderr
    assert "not built" not in listed.stdout
    engine = root / "opt" / "cairn" / "_internal" / "engine"
    assert (engine / "llama-server").stat().st_mode & 0o111  # still a program after the copy
    chat = cairn(root, "chat", "--account", "built-in", "Hello")
    assert chat.returncode == 0, chat.stderr
    assert chat.stdout.strip()


# -- the keychain ------------------------------------------------------------------------

KEYRING_SCRIPT = """
set -e
printf 'release-check' | gnome-keyring-daemon --unlock --components=secrets >/dev/null
printf '%s\\n' "$KEY" | "$CAIRN" accounts add Keyed --base-url "$BASE_URL" --model loopback-chat --set-key
"$CAIRN" chat 'Is the key there?'
"""


def test_the_frozen_keyring_keeps_a_key_in_secret_service(root: Path, tmp_path: Path) -> None:
    for tool in ("dbus-run-session", "gnome-keyring-daemon"):
        assert shutil.which(tool), (
            f"{tool} is missing; `make package-test` installs it as root (dbus-daemon, gnome-keyring)"
        )
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    with LoopbackProvider(api_key=KEY) as provider:
        provider.script(Reply(text="Read from the keychain."))
        # A private session bus and a keyring made for this test under tmp_path: the
        # person's own keychain is out of reach, so the test may use the real backend.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHON_KEYRING_BACKEND", "CAIRN_API_KEY")}
        env |= {
            "HOME": str(tmp_path / "home"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_RUNTIME_DIR": str(runtime),
            "CAIRN": str(root / "usr" / "bin" / "cairn"),
            "KEY": KEY,
            "BASE_URL": provider.base_url,
        }
        done = subprocess.run(
            ["dbus-run-session", "--", "sh", "-c", KEYRING_SCRIPT],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # Added in one process, read back by another: the key came from Secret Service.
        assert done.stdout.strip().endswith("Read from the keychain.")
        assert "memory" not in done.stderr
        assert provider.requests[-1].authorization == f"Bearer {KEY}"
    assert KEY not in done.stdout + done.stderr


# -- the window ----------------------------------------------------------------------------


def run_window(root: Path, log: Path, env: dict[str, str]) -> None:
    """Start the frozen window, wait for its start page, ask it to quit: all within 10 s."""
    started = time.monotonic()
    app = subprocess.Popen(
        [str(root / "usr" / "bin" / "cairn")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        while "main window shown" not in (log.read_text() if log.exists() else ""):
            assert app.poll() is None, app.communicate()
            assert time.monotonic() - started < 10, "the window did not open within 10 s"
            time.sleep(0.05)
        app.send_signal(signal.SIGTERM)
        _, stderr = app.communicate(timeout=max(0.1, 10 - (time.monotonic() - started)))
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    assert app.returncode == 0, stderr
    text = log.read_text()
    assert "main window shown (start page)" in text
    assert "main window closed" in text
    assert "Traceback" not in stderr + text
    assert "without icons" not in text  # the frozen window found the icon font in the bundle
    assert "Could not load the Qt platform plugin" not in stderr


def test_the_window_starts_offscreen_shows_its_start_page_and_quits(root: Path, cairn_paths: CairnPaths) -> None:
    run_window(root, cairn_paths.log_dir / "cairn.log", {**os.environ, "QT_QPA_PLATFORM": "offscreen"})


@pytest.fixture
def x_display() -> Iterator[str]:
    """A private Xvfb server on a display it picks itself."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb (package xvfb) runs the X11 check")
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    with os.fdopen(read) as announced:
        display = announced.readline().strip()
    try:
        assert display, "Xvfb did not start"
        yield f":{display}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_window_starts_on_x11_through_the_xcb_plugin(root: Path, cairn_paths: CairnPaths, x_display: str) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": x_display}
    env.pop("WAYLAND_DISPLAY", None)
    run_window(root, cairn_paths.log_dir / "cairn.log", env)


# -- what the package declares ---------------------------------------------------------------


def _depends(deb: Path) -> set[str]:
    """Every package name ``Depends`` allows, alternatives included, versions dropped."""
    names = set()
    for clause in control(deb, "Depends").split(","):
        for alternative in clause.split("|"):
            names.add(re.sub(r"\(.*?\)|:\w+$", "", alternative).strip())
    return names


def _elf_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as file:
                if file.read(4) == b"\x7fELF":
                    yield path


def _owner(library: str) -> str | None:
    real = os.path.realpath(library)
    for candidate in dict.fromkeys((library, real, "/usr" + library, real.removeprefix("/usr"))):
        done = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return done.stdout.split(":")[0].strip()
    return None


def test_every_system_library_belongs_to_a_declared_dependency(root: Path, deb: Path) -> None:
    bundle = root / "opt" / "cairn"
    env = {**os.environ, "LD_LIBRARY_PATH": str(bundle / "_internal")}  # as the boot loader sets it
    outside: dict[str, str] = {}
    missing = []
    for path in _elf_files(bundle):
        listing = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env, check=False).stdout
        for line in listing.splitlines():
            name, _, target = line.strip().partition(" => ")
            if target.startswith("not found"):
                missing.append(f"{name} (for {path.relative_to(bundle)})")
            elif target.startswith("/") and not target.startswith(str(bundle)):
                outside.setdefault(target.split(" (")[0], str(path.relative_to(bundle)))
    assert not missing, f"ldd finds no {missing}; install the .deb's Depends on this machine, or add them"
    assert outside, "ldd found no system library at all; the check is not looking"
    declared = _depends(deb)
    undeclared = {lib: _owner(lib) for lib in outside if _owner(lib) not in declared}
    assert not undeclared, f"libraries whose packages Depends lacks: {undeclared} (packaging/linux/depends.txt)"
    for xcb in ("libxcb-cursor0", "libxkbcommon-x11-0", "libxcb-icccm4", "libegl1", "libfontconfig1"):
        assert xcb in declared


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_menu_entry_launcher_and_icons(root: Path) -> None:
    entry = root / "usr" / "share" / "applications" / "cairn.desktop"
    fields = dict(line.split("=", 1) for line in entry.read_text().splitlines() if "=" in line)
    assert (fields["Name"], fields["Exec"], fields["Icon"], fields["Type"]) == (
        "Cairn",
        "cairn",
        "cairn",
        "Application",
    )
    if shutil.which("desktop-file-validate"):
        checked = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    launcher = root / "usr" / "bin" / "cairn"
    assert launcher.is_symlink()
    assert launcher.resolve() == (root / "opt" / "cairn" / "cairn").resolve()
    for size in ICON_SIZES:
        assert _png_size(root / f"usr/share/icons/hicolor/{size}x{size}/apps/cairn.png") == (size, size)
    assert (root / "usr/share/icons/hicolor/scalable/apps/cairn.svg").read_bytes() == (
        REPO / "assets/cairn.svg"
    ).read_bytes()


def test_the_portable_archive_installs_for_the_current_user(tmp_path: Path) -> None:
    archive = built(f"cairn-{project_version()}-linux-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="tar")
    (folder,) = (tmp_path / "unpacked").iterdir()
    home = tmp_path / "person"
    env = {k: v for k, v in os.environ.items() if k != "XDG_DATA_HOME"} | {"HOME": str(home)}
    installed = subprocess.run([str(folder / "install.sh")], env=env, capture_output=True, text=True, check=False)
    assert installed.returncode == 0, installed.stderr
    entry = home / ".local/share/applications/cairn.desktop"
    assert f'Exec="{folder}/cairn"' in entry.read_text()
    assert _png_size(home / ".local/share/icons/hicolor/256x256/apps/cairn.png") == (256, 256)
    linked = subprocess.run([str(home / ".local/bin/cairn"), "--version"], capture_output=True, text=True, check=False)
    assert linked.stdout.strip() == f"cairn {project_version()}", linked.stderr
    removed = subprocess.run(
        [str(folder / "install.sh"), "--uninstall"], env=env, capture_output=True, text=True, check=False
    )
    assert removed.returncode == 0, removed.stderr
    assert not entry.exists()
    assert not (home / ".local/bin/cairn").exists()


def test_the_bundle_carries_the_icon_fonts_and_the_math_extra(root: Path) -> None:
    """The window's buttons are drawn from qtawesome's fonts, and TeX in replies by ziamath (the
    ``math`` extra, which the installers bundle) in its own font, read through latex2mathml's
    table of symbols. matplotlib, which drew formulas before, stays out."""
    bundle = root / "opt" / "cairn" / "_internal"
    assert list((bundle / "qtawesome" / "fonts").glob("[Pp]hosphor*.ttf")), "qtawesome's Phosphor font is missing"
    assert (bundle / "ziamath" / "fonts" / "STIXTwoMath-Regular.ttf").is_file(), "ziamath's math font is missing"
    assert (bundle / "latex2mathml" / "unimathsymbols.txt").is_file(), "latex2mathml's symbols are missing"
    assert not (bundle / "matplotlib").exists()
