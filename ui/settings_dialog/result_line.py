"""The line under a Settings form's buttons that says how Test, Load or Save went.

A problem looks like one (the theme's danger colour on its soft background) and success like success; a
request under way is quiet. What it says belongs to the form as it was when asked: changing
any field clears it, and an answer that comes back after such a change is dropped rather than
shown against values it was not about. Cairn's messages tell a person where to mend things
("in Settings → Models"); inside Settings that is said as where here.
"""

from __future__ import annotations

import re
from typing import Literal

from PySide6.QtWidgets import QLabel

from ui.widgets.theme import tokens_of

__all__ = ["ResultLine", "said_in_settings"]

Tone = Literal["quiet", "ok", "problem"]
_IN_TAB = re.compile(r"\bin Settings → (\w[\w ]*?)\b(?=[.,;:]|$| or| and)")
_IN_SETTINGS = re.compile(r"\s+in Settings\b")


def said_in_settings(text: str) -> str:
    """``text`` as Settings itself says it: "in Settings → Models" is "in the Models tab",
    "Check the account's key in Settings." is "Check the account's key here."."""
    return _IN_SETTINGS.sub(" here", _IN_TAB.sub(r"in the \1 tab", text))


class ResultLine:
    def __init__(self, label: QLabel) -> None:
        self.label = label
        self.asked = 0  # which state of the form the line speaks of

    def changed(self) -> None:
        """A field changed: what the line said no longer holds."""
        self.asked += 1
        self.show("", "quiet")

    def working(self, text: str) -> int:
        """Say a request is under way; the number to ``answer`` it with."""
        self.show(text, "quiet")
        return self.asked

    def answer(self, asked: int, text: str, tone: Tone = "ok") -> None:
        """What the request numbered ``asked`` found, unless the form changed since."""
        if asked == self.asked:
            self.show(text, tone)

    def show(self, text: str, tone: Tone) -> None:
        tokens = tokens_of(self.label)
        text = said_in_settings(text) if tone == "problem" else text
        style = {
            "quiet": f"color: {tokens.muted};",
            "ok": f"color: {tokens.ok};",
            "problem": f"color: {tokens.danger}; background: {tokens.danger_soft}; padding: 6px 8px;"
            f" border-radius: 4px;",
        }[tone]
        self.label.setStyleSheet(style if text else "")
        self.label.setText(text)
        self.label.setAccessibleDescription("A problem" if tone == "problem" and text else "")
