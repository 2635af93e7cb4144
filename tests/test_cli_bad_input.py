"""Bad input to the headless commands: one clear message, a non-zero exit, no traceback, and
nothing already saved is lost. Run as a person would, in a child process.

CI runs as root, which can write into a read-only folder, so those children run as root
without its capabilities (``setpriv``): still the owner of the checkout, its interpreter and
the test's folders, so they reach them wherever the checkout is (a private 0700 folder
too), but held to their permission bits as any owner is, as a person running Cairn is. A full
disk is simulated with ``RLIMIT_FSIZE`` (tests/test_full_disk.py has a real one).
"""

from __future__ import annotations

import functools
import os
import resource
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop.loopback import Fault, LoopbackProvider, Reply
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter

REPO = Path(__file__).resolve().parents[1]
# Root's capabilities dropped for good: none inherited, none in the bounding set that an
# exec of a root-owned program would grant again. The uid stays 0, the owner of everything.
NO_OVERRIDE = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"]


@functools.cache
def _can_drop_capabilities() -> bool:
    try:
        probe = subprocess.run([*NO_OVERRIDE, "true"], capture_output=True, timeout=30, check=False)
    except OSError:  # no setpriv
        return False
    return probe.returncode == 0


UNPRIVILEGED = pytest.mark.skipif(
    os.geteuid() == 0 and not _can_drop_capabilities(),
    reason="runs as root, and setpriv cannot drop root's capabilities here (util-linux's setpriv is missing, "
    "or this container may not change its bounding set), so a read-only folder would not stop it",
)


def cairn(
    *args: str,
    stdin: bytes = b"",
    home: Path | None = None,
    unprivileged: bool = False,
    file_limit: int | None = None,
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if home is not None:
        env["CAIRN_HOME"] = str(home)
    command = [sys.executable, "-m", "desktop", *args]
    if unprivileged and os.geteuid() == 0:
        command = [*NO_OVERRIDE, *command]
    limit: Callable[[], None] | None = None
    if file_limit is not None:

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    done = subprocess.run(
        command, cwd=REPO, env=env, input=stdin, capture_output=True, timeout=60, check=False, preexec_fn=limit
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    )


def clear_failure(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("cairn: "), done.stderr
    for text in expected:
        assert text in done.stderr, done.stderr


@pytest.fixture
def with_account(cairn_paths: CairnPaths) -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as provider:
        added = cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        assert added.returncode == 0, added.stderr
        yield provider


@UNPRIVILEGED
def test_a_read_only_cairn_home(tmp_path: Path) -> None:
    home = tmp_path / "home"  # in a private (0700) folder, as a checkout in a home folder is
    home.mkdir()
    home.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    done = cairn("sessions", home=home, unprivileged=True)
    clear_failure(done, "cannot create the folder for its journal", "CAIRN_HOME")
    done = cairn("chat", "hello", home=home, unprivileged=True)
    clear_failure(done)
    assert list(home.iterdir()) == []


@UNPRIVILEGED
def test_a_journal_in_a_read_only_folder_is_refused_clearly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    paths = CairnPaths.under(home)
    with Journal.open(paths.journal) as journal:
        journal.create_session("Kept safe")
    for path in [home, *home.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    before = paths.journal.read_bytes()
    done = cairn("sessions", home=home, unprivileged=True)
    # Cairn cannot take its lock in a folder it cannot write: a clear refusal, the file untouched.
    clear_failure(done, "cannot lock its journal", "writable folder")
    assert paths.journal.read_bytes() == before


def test_cairn_home_that_is_a_file(tmp_path: Path) -> None:
    home = tmp_path / "not-a-folder"
    home.write_text("I am a file")
    for command in (["sessions"], ["chat", "hi"], ["skills"], ["accounts", "list"]):
        done = cairn(*command, home=home)
        assert done.returncode != 0, command
        assert "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith("cairn: "), done.stderr
    assert home.read_text() == "I am a file"


def test_a_full_disk_fails_clearly_and_loses_nothing(cairn_paths: CairnPaths, with_account: LoopbackProvider) -> None:
    first = cairn("chat", "Remember this one.")
    assert first.returncode == 0, first.stderr
    session_id = first.stderr.split("session ")[1].split()[0]
    # Each file may grow to 40 KB: room for SQLite's 32 KB shared-memory index, not for a turn.
    for attempt in range(3):
        done = cairn("chat", f"Turn {attempt} that will not fit " * 50, file_limit=40_000)
        clear_failure(done, "could not save")
    listed = cairn("sessions", file_limit=40_000)
    assert listed.returncode == 0, listed.stderr
    assert session_id in listed.stdout
    with Journal.open(cairn_paths.journal) as journal, journal.read() as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = TranscriptWriter(journal).rows(session_id)
    assert [r.body().text() for r in rows if r.role == "user"] == ["Remember this one."]


@pytest.mark.parametrize(
    ("url", "why"),
    [("http://127.0.0.1:99999/v1", "port 99999"), ("http://local host:8080/v1", "invalid host name")],
)
def test_a_base_url_that_cannot_work_is_refused_when_saved(cairn_paths: CairnPaths, url: str, why: str) -> None:
    done = cairn("accounts", "add", "Bad", "--base-url", url, "--model", "m")
    clear_failure(done, why)
    assert "No accounts yet" in cairn("accounts", "list").stdout


def test_binary_or_invalid_utf8_input_is_refused(cairn_paths: CairnPaths, with_account: LoopbackProvider) -> None:
    invalid = cairn("chat", stdin=b"caf\xe9 au lait\n")
    clear_failure(invalid, "not UTF-8 text")
    binary = cairn("chat", stdin=b"\x7fELF\x02\x01\x01\x00\x00\x00binary")
    clear_failure(binary, "binary data")
    argument = subprocess.run(
        [sys.executable, "-m", "desktop", "chat", os.fsdecode(b"caf\xe9")],
        cwd=REPO, env=dict(os.environ), capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert argument.returncode == 2
    stderr = argument.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr
    assert "not UTF-8 text" in stderr
    assert with_account.requests == []
    assert "No sessions yet." in cairn("sessions").stdout  # nothing half-made was left behind


def test_retry_on_an_empty_session(cairn_paths: CairnPaths, with_account: LoopbackProvider) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        session = journal.create_session()
    done = cairn("chat", "--session", session.id, "--retry")
    clear_failure(done, "no messages yet")
    assert with_account.requests == []


@pytest.mark.parametrize(
    ("fault", "expected", "unwanted"),
    [
        (Fault("disconnect", after_chunks=0), "connection", "()"),
        (Fault("html"), "HTML page", "<html"),
    ],
)
def test_provider_failures_read_as_sentences(
    cairn_paths: CairnPaths, with_account: LoopbackProvider, fault: Fault, expected: str, unwanted: str
) -> None:
    with_account.script(Reply(text="never", fault=fault))
    done = cairn("chat", "hello")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert expected in done.stderr
    assert unwanted not in done.stderr
    assert "--retry" in done.stderr


def test_skill_text_cannot_drive_the_terminal(cairn_paths: CairnPaths) -> None:
    skills = cairn_paths.skills_dir
    (skills / "escape").mkdir(parents=True)
    (skills / "escape" / "SKILL.md").write_text(
        '---\nname: escape\ndescription: "Retitle \\e]0;pwned\\a and clear \\e[2J, \\u202eevil"\n---\nbody\n'
    )
    (skills / "\x1b[2Jbad").mkdir()
    done = cairn("skills")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert "\x07" not in done.stdout
    assert "\u202e" not in done.stdout
    assert "escape (user): Retitle \\x1b]0;pwned\\x07 and clear \\x1b[2J, \\u202eevil" in done.stdout
    assert "\\x1b[2Jbad" in done.stderr


def test_a_model_cannot_drive_the_terminal_even_through_a_pipe(
    cairn_paths: CairnPaths, with_account: LoopbackProvider
) -> None:
    with_account.script(Reply(text="hello \x1b]0;PWNED\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J red \u202e desrever"))
    done = cairn("chat", "x")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert "\u202e" not in done.stdout
    assert "hello \\x1b]0;PWNED\\x07" in done.stdout
    # What is saved is what the model said; only the showing is escaped.
    with Journal.open(cairn_paths.journal) as journal:
        (reply,) = [r for r in TranscriptWriter(journal).rows(journal.sessions()[0].id) if r.role == "assistant"]
    assert "\x1b]0;PWNED" in reply.body().text()


@pytest.mark.parametrize("how", ["pipe", "full", "closed"])
def test_output_that_goes_nowhere_loses_no_reply(
    cairn_paths: CairnPaths, with_account: LoopbackProvider, how: str
) -> None:
    with_account.script(Reply(text="line one\nline two\n" * 2000, chunk_chars=200))
    command = [sys.executable, "-m", "desktop", "chat", "a long answer please"]
    env = dict(os.environ)
    if how == "pipe":
        shell = f"{' '.join(command)} | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}"
        done = subprocess.run(
            ["bash", "-c", shell], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
        )
    else:
        redirect = "> /dev/full" if how == "full" else ">&-"
        shell = f"{' '.join(command)} {redirect}"
        done = subprocess.run(
            ["bash", "-c", shell], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
        )
    assert "Traceback" not in done.stderr
    assert "unexpected error" not in done.stderr
    with Journal.open(cairn_paths.journal) as journal:
        rows = TranscriptWriter(journal).rows(journal.sessions()[0].id)
    replies = [r for r in rows if r.role == "assistant" and not r.hidden]
    assert len(replies) == 1
    assert replies[0].body().text().startswith("line one\nline two")


def test_sigterm_keeps_what_arrived(cairn_paths: CairnPaths, with_account: LoopbackProvider) -> None:
    import signal
    import time

    with_account.script(Reply(text="word " * 2000, chunk_chars=5, chunk_delay=0.01))
    child = subprocess.Popen(
        [sys.executable, "-m", "desktop", "chat", "write a lot"],
        cwd=REPO, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    assert child.stdout.read(20)  # the reply is streaming
    time.sleep(0.2)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130
    assert err.count("[stopped") == 1
    assert "what arrived is kept" in err
    with Journal.open(cairn_paths.journal) as journal:
        rows = TranscriptWriter(journal).rows(journal.sessions()[0].id)
    (partial,) = [r for r in rows if r.role == "assistant"]
    assert partial.body().status == "interrupted"
    assert partial.body().text().startswith("word word")


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_workspace_that_is_not_a_folder_is_refused(
    cairn_paths: CairnPaths, with_account: LoopbackProvider, tmp_path: Path, kind: str
) -> None:
    target = tmp_path / "nowhere"
    if kind == "file":
        target.write_text("not a folder")
    for command in (["chat", "--workspace", str(target), "hi"], ["skills", "--workspace", str(target)]):
        done = cairn(*command)
        clear_failure(done, "is not a folder" if kind == "file" else "does not exist")
    assert with_account.requests == []
    assert "No sessions yet." in cairn("sessions").stdout
