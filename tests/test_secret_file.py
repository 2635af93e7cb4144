"""The secret store's three places: the keychain, this run's memory, and the secrets file, only
once chosen. The file is made 0600 before it has its name, refused when anyone else may open
it or it is not this user's plain file, and never written unless chosen; turning it off moves
its secrets out. Real files in a temp folder; keychains at the keyring seam."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import keyring.backends.fail
import pytest

from desktop.settings.secret_file import SecretFile, SecretFileError
from desktop.settings.secrets import KeychainUnavailable, SecretStore
from tests.fake_keyring import BrokenKeyring, MemoryKeyring

SECRET = "sk-file-secret-8a41c2"


def no_keychain(path: Path) -> SecretStore:
    return SecretStore(keyring.backends.fail.Keyring(), file=SecretFile(path))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_without_a_keychain_nothing_is_written_until_the_file_is_chosen(tmp_path: Path) -> None:
    path = tmp_path / "config" / "secrets.json"
    secrets = no_keychain(path)
    assert secrets.place() == "memory"
    with pytest.raises(KeychainUnavailable, match="in memory for this run only"):
        secrets.set("acct", SECRET)
    secrets.set("acct", SECRET, memory_only=True)
    secrets.delete("other")
    assert not path.exists()  # neither a refused key nor a kept one reached a file
    assert not path.parent.exists()
    assert secrets.get("acct") == SECRET


def test_choosing_the_file_makes_it_owner_only_before_it_has_its_name_and_moves_this_runs_secrets_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config" / "secrets.json"
    secrets = no_keychain(path)
    secrets.set("acct", SECRET, memory_only=True)
    renamed: list[tuple[str, int]] = []
    real_replace = os.replace

    def replace(source: str, target: str) -> None:  # what the file was just before it got its name
        renamed.append((os.path.basename(target), mode(Path(source))))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    old_umask = os.umask(0)  # the loosest umask a person may have
    try:
        assert secrets.use_file() == ["acct"]
        secrets.set("hf", "hf_token_0123456789")
    finally:
        os.umask(old_umask)
    assert renamed == [("secrets.json", 0o600), ("secrets.json", 0o600)]
    assert mode(path) == 0o600
    assert secrets.place() == "file"
    assert json.loads(path.read_text())["secrets"] == {"acct": SECRET, "hf": "hf_token_0123456789"}
    # A new run reads them back from the file.
    again = no_keychain(path)
    assert again.get("acct") == SECRET
    again.delete("acct")
    assert json.loads(path.read_text())["secrets"] == {"hf": "hf_token_0123456789"}


@pytest.mark.parametrize("loose", [0o644, 0o640, 0o604, 0o660])
def test_a_file_others_may_open_is_refused_and_left_as_it_is(tmp_path: Path, loose: int) -> None:
    path = tmp_path / "secrets.json"
    secrets = no_keychain(path)
    secrets.use_file()
    secrets.set("acct", SECRET)
    path.chmod(loose)
    before = path.read_bytes()
    with pytest.raises(SecretFileError, match=rf"can be opened by other users \(its mode is {loose:04o}\)") as refused:
        secrets.get("acct")
    assert f"chmod 600 {path}" in str(refused.value)
    assert SECRET not in str(refused.value)
    assert not secrets.has("acct")
    view = secrets.view()
    assert view.place == "file"
    assert view.file_problem is not None
    assert "did not use it" in view.file_problem
    with pytest.raises(SecretFileError):
        secrets.set("acct", "sk-another-0000000")
    assert path.read_bytes() == before
    assert mode(path) == loose  # refused, not repaired behind the person's back


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_file_of_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    secrets = no_keychain(path)
    secrets.use_file()
    secrets.set("acct", SECRET)
    os.chown(path, 65534, 65534)
    with pytest.raises(SecretFileError, match="belongs to another user, so Cairn did not use it"):
        secrets.get("acct")


def test_a_link_a_pipe_a_folder_or_a_damaged_file_is_refused_without_a_hang(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"version": 1, "secrets": {"acct": SECRET}}))
    elsewhere.chmod(0o600)
    cases = {
        "link": (lambda p: p.symlink_to(elsewhere), "is a link to another file"),
        "pipe": (lambda p: os.mkfifo(p, 0o600), "is not a plain file"),
        "folder": (lambda p: p.mkdir(mode=0o700), "is not a plain file"),
        "damaged": (lambda p: p.write_text("{not json"), "is damaged"),
        "shape": (lambda p: p.write_text('{"version": 1, "secrets": {"a": 1}}'), "is damaged"),
        "newer": (lambda p: p.write_text('{"version": 9, "secrets": {}}'), "written by a newer Cairn"),
    }
    for name, (make, message) in cases.items():
        path = tmp_path / f"{name}.json"
        make(path)
        if path.is_file() and not path.is_symlink():
            path.chmod(0o600)
        secrets = no_keychain(path)
        assert secrets.place() == "file", name
        with pytest.raises(SecretFileError, match=message):
            secrets.get("acct")


def test_turning_the_file_off_moves_its_secrets_to_the_keychain_then_deletes_it(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    keychain = MemoryKeyring()
    secrets = SecretStore(keychain, file=SecretFile(path))
    assert secrets.place() == "keychain"
    secrets.use_file()
    secrets.set("acct", SECRET)
    assert keychain.entries == {}  # the file was chosen: new secrets go there
    assert secrets.leave_file() == {"acct": "keychain"}
    assert not path.exists()
    assert keychain.entries == {("Cairn", "acct"): SECRET}
    assert secrets.place() == "keychain"


def test_turning_the_file_off_without_a_keychain_keeps_its_secrets_for_this_run_only(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    for keychain in (keyring.backends.fail.Keyring(), BrokenKeyring()):
        secrets = SecretStore(keychain, file=SecretFile(path))
        secrets.use_file()
        secrets.set("acct", SECRET)
        assert secrets.leave_file() == {"acct": "memory"}
        assert not path.exists()
        assert secrets.get("acct") == SECRET  # for the rest of this run
        assert SecretStore(keychain, file=SecretFile(path)).get("acct") is None  # and gone with it
