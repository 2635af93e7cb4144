"""Where secrets are kept, and the person's choice of the secrets file (Settings > Keys, the
launch notice, ``cairn secrets``).

The secret store decides where a secret goes (``desktop/settings/secrets.py``); this use case
says it in words, tells at launch, once for the window and once for the commands, that no
keychain was found (remembered in ``notices.json``; a refused secrets file is told at every
launch, as it holds the keys), and turns the file on and off. Turning it on moves this run's
secrets into it; turning it off moves them to the keychain, or says which will be forgotten
when Cairn closes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from desktop.app.model_downloads import HUB_ENTRY
from desktop.app.shared import AppState
from desktop.settings.notices import NOTICES_FILE, Notices
from desktop.settings.secrets import SecretPlace, SecretsView

__all__ = ["LaunchNotice", "LeavingFile", "Secrets"]

Surface = Literal["window", "commands"]


@dataclass(frozen=True)
class LaunchNotice:
    """What to tell at launch: ``no_keychain`` (once) or ``file_refused`` (``text`` says why)."""

    kind: Literal["no_keychain", "file_refused"]
    text: str


@dataclass(frozen=True)
class LeavingFile:
    """What turning the file off would do: each secret in it, in words, and whether they move
    to the keychain (else they are kept only until Cairn closes)."""

    secrets: tuple[str, ...]
    to_keychain: bool

    def words(self) -> str:
        if not self.secrets:
            return "The secrets file holds nothing; it is deleted."
        listed = "; ".join(self.secrets)
        if self.to_keychain:
            return f"These move to the system keychain, and the file is deleted: {listed}."
        return (
            "There is no system keychain, so these are kept only until Cairn closes, then forgotten; the file is "
            f"deleted now: {listed}."
        )


class Secrets:
    """Where secrets are kept, the launch notice, and the secrets file turned on and off."""

    def __init__(self, shared: AppState) -> None:
        self._shared = shared
        self._store = shared.root.secrets
        self._notices = Notices(shared.paths.config_dir / NOTICES_FILE)

    def view(self) -> SecretsView:
        return self._store.view()

    def launch_notice(self, surface: Surface) -> LaunchNotice | None:
        """What to tell at launch on ``surface``, if anything; the no-keychain notice is told
        once, and remembered as told."""
        view = self._store.view()
        if view.file_problem is not None:
            return LaunchNotice("file_refused", view.file_problem)
        if view.place != "memory" or not self._notices.tell_once(f"no_keychain_{surface}"):
            return None
        return LaunchNotice("no_keychain", view.words())

    def use_file(self) -> list[str]:
        """Keep secrets in the file from now on; this run's move into it. Returns them in
        words. ``SecretFileError``."""
        moved = self._store.use_file()
        self._shared.publish()
        return [self.describe(secret_id) for secret_id in moved]

    def leaving_file(self) -> LeavingFile:
        """What ``leave_file`` would do now; ``SecretFileError`` when the file is refused."""
        described = tuple(self.describe(secret_id) for secret_id in self._store.in_file())
        return LeavingFile(described, self._store.keychain_problem() is None)

    def leave_file(self) -> dict[str, SecretPlace]:
        """Stop using the file: its secrets go to the keychain, else to this run's memory, and
        it is deleted. Returns where each went, by its description."""
        went = self._store.leave_file()
        self._shared.publish()
        return {self.describe(secret_id): place for secret_id, place in went.items()}

    def describe(self, secret_id: str) -> str:
        """A secret's id in words: whose key it is."""
        if secret_id == HUB_ENTRY:
            return "the Hugging Face token"
        if secret_id.startswith("mcp:"):
            _mcp, server, _where, name = [*secret_id.split(":", 3), "", "", ""][:4]
            return f"{name} of the MCP server {server}"
        account = next((a for a in self._shared.settings.accounts if a.id == secret_id), None)
        return f"the API key of {account.name}" if account is not None else "a secret no account uses any more"
