"""What the person prefers for every chat: custom instructions, the default permission mode,
Always and Never answers, the context budget and where summaries go, chat titles, the theme
and text size, the workspace and its skills (and how many a chat lists), and the assistants to
start chats from.

Each change reads the settings file afresh and changes only its own fields (a change made
meanwhile by the command line is kept), then publishes a new snapshot. A value that cannot
be used is a ``SettingsError`` that says what is wrong; nothing is saved then.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from desktop.app.assistants import make_assistant, with_assistant, without_assistant
from desktop.app.shared import AppState
from desktop.settings.problems import problem_text
from desktop.settings.store import (
    MAX_TOKENS,
    MIN_TOKENS,
    SKILLS_LISTED_MAX,
    TEXT_SIZE_MAX,
    TEXT_SIZE_MIN,
    Assistant,
    AutoTitles,
    SettingsError,
    SummaryRoute,
)
from host.content import ChatGrant, Mode, ToolIdentity
from host.files import atomic_write_text
from host.skills import SKILL_FILE, SkillCatalog

__all__ = ["WINDOW_FILE", "Preferences"]

log = logging.getLogger(__name__)

WINDOW_FILE = "window.json"


class Preferences:
    def __init__(self, shared: AppState) -> None:
        self._shared = shared
        self._root = shared.root

    def reload(self) -> None:
        """Take up changes made outside this window (another Cairn command, an edit by hand)."""
        self._shared.reload_settings()

    def save_instructions(self, text: str) -> None:
        self._shared.save_settings(custom_instructions=text)

    def save_default_mode(self, mode: Mode) -> None:
        self._shared.save_settings(default_mode=mode)

    def save_context(
        self, reply_reserve: int | None, retained_tail: int | None, summary_account: str | None, summary_model: str
    ) -> None:
        """The reply reserve and the retained tail (``None``: automatic), and where summaries
        go (no account: the chat's own route; no model: the account's default)."""
        for name, value in (("room for the reply", reply_reserve), ("recent messages kept", retained_tail)):
            if value is not None and not MIN_TOKENS <= value <= MAX_TOKENS:
                raise SettingsError(
                    f"The {name} must be between {MIN_TOKENS:,} and {MAX_TOKENS:,} tokens, or Automatic."
                )
        summary = None
        if summary_account is not None:
            if self._root.load_settings().account(summary_account) is None:
                raise SettingsError("The account chosen for summaries is not in settings any more; choose another.")
            try:
                summary = SummaryRoute(account_id=summary_account, model=summary_model.strip() or None)
            except ValidationError as exc:
                raise SettingsError(f"The summary model cannot be used: {problem_text(exc)}.") from None
        self._shared.save_settings(reply_reserve=reply_reserve, retained_tail=retained_tail, summary_route=summary)

    def save_auto_titles(self, choice: str) -> None:
        """Whether chats get titles from their model: "off", "free_routes" or "always"."""
        if choice not in get_args(AutoTitles):
            raise SettingsError(f"{choice!r} is not a choice for chat titles; choose off, free_routes or always.")
        self._shared.save_settings(auto_titles=choice)

    def save_appearance(self, theme: str) -> None:
        self._shared.save_settings(theme=theme)

    def save_text_size(self, points: int | None) -> None:
        """Keep the text size (``None``: Cairn's default); out of range is refused in words."""
        if points is not None and not TEXT_SIZE_MIN <= points <= TEXT_SIZE_MAX:
            raise SettingsError(f"Text size must be between {TEXT_SIZE_MIN} and {TEXT_SIZE_MAX} points.")
        self._shared.save_settings(text_size=points)

    def set_workspace(self, folder: Path | None) -> SkillCatalog:
        """Use ``folder`` as the workspace (its .agents/skills too); return the new catalog."""
        self._shared.save_settings(workspace=str(folder) if folder else None)
        return self.skills()

    def save_skills_listed(self, count: int) -> None:
        """How many skills a chat lists one by one in its prompt; it finds the others with
        ``tool_search`` and loads them with ``load_skill``. Out of range is refused in words."""
        if not 0 <= count <= SKILLS_LISTED_MAX:
            raise SettingsError(
                f"The number of skills listed in the prompt must be between 0 and {SKILLS_LISTED_MAX:,}."
            )
        self._shared.save_settings(skills_listed=count)

    def skills(self) -> SkillCatalog:
        return self._root.engine.skills(self._shared.system)

    # -- what the window remembers (not settings) ------------------------------------------

    def window_state(self) -> str | None:
        """The text the window last saved of itself (geometry, last chat), if any."""
        try:
            return (self._shared.paths.config_dir / WINDOW_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            log.warning("ignoring an unreadable %s", WINDOW_FILE)
            return None

    def save_window_state(self, text: str) -> None:
        """Keep what the window says of itself; a failure only costs its place next time."""
        try:
            atomic_write_text(self._shared.paths.config_dir / WINDOW_FILE, text)
        except OSError as exc:
            log.warning("could not save the window state: %s", exc)

    # -- Always and Never ------------------------------------------------------------------

    def remember(self, target: ToolIdentity, allow: bool) -> None:
        """A person's Always (``True``) or Never (``False``) answer to a tool call."""
        self._shared.settings = self._root.settings_store.remember_grant(target, allow)
        self._shared.publish()

    def revoke_grant(self, target: ToolIdentity, session_id: str | None = None) -> None:
        """Withdraw an Always or Never answer, and the chat's own grant when ``session_id``."""
        if session_id is not None:
            self._shared.writer.append_meta(session_id, ChatGrant(target=target, allow=False))
        self._shared.settings = self._root.settings_store.remember_grant(target, None)
        self._shared.publish()

    # -- assistants ------------------------------------------------------------------------

    def save_assistant(self, assistant_id: str | None, **values: Any) -> Assistant:
        """Add or change an assistant from a form's values; ``SettingsError`` says what is wrong."""
        assistant = make_assistant(self._root.load_settings(), assistant_id=assistant_id, **values)
        self._shared.save_settings(assistants=with_assistant(self._root.load_settings(), assistant))
        return assistant

    def remove_assistant(self, assistant_id: str) -> None:
        self._shared.save_settings(assistants=without_assistant(self._root.load_settings(), assistant_id))

    # -- the skills folders, as the window follows them --------------------------------------

    def skill_watch_paths(self, roots: list[Path], limit: int = 400) -> list[str]:
        """What to watch for the skills folders ``roots``: each one, each folder in it and its
        SKILL.md; for a folder not there yet, the nearest folder above it that is, so its
        creation is noticed. At most ``limit`` paths: a folder of thousands of skills is still
        scanned, just not each one watched."""
        paths: list[Path] = []
        for root in roots:
            try:
                if root.is_dir():
                    paths.append(root)
                    for child in sorted(root.iterdir()):
                        if child.is_dir():
                            paths.append(child)
                            if (child / SKILL_FILE).is_file():
                                paths.append(child / SKILL_FILE)
                    continue
                above = root.parent
                while not above.is_dir() and above != above.parent:
                    above = above.parent
                paths.append(above)
            except OSError:
                continue  # an unreadable folder is reported by the scan itself
        return [str(p) for p in dict.fromkeys(paths)][:limit]

    def create_skills_folder(self, folder: Path) -> None:
        """Create the skills folder ``folder`` (and the folders above it) if it is missing;
        an ``OSError`` says why it cannot be."""
        folder.mkdir(parents=True, exist_ok=True)
