"""Attaching an MCP server's resource: the composer's "Attach from an MCP server…" opens the
picker. Its listings are fetched on the core, and fetched again while it is open whenever a
server's status changes (a server started, failed, or said its resources changed); the chosen
resource is read on the core and waits as a chip like any attached file."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from desktop.app import Attachment, ListedResource, ResourceListing, ServerView, too_many
from ui.bridge.core_client import CoreClient
from ui.chat_panel.composer import Composer
from ui.chat_panel.resource_picker import ResourcePicker

__all__ = ["ResourceIntake"]

_SETTLE_MS = 150  # a burst of status changes costs one listing


class _Relay(QObject):
    """Carries "a server changed" from the core thread to the GUI thread (a queued signal)."""

    changed = Signal()


class ResourceIntake(QObject):
    """Opens the picker for ``composer`` and attaches what is chosen in it."""

    def __init__(self, core: CoreClient, composer: Composer) -> None:
        super().__init__(composer)
        self.core, self.composer = core, composer
        self.picker: ResourcePicker | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._again = QTimer(self)
        self._again.setSingleShot(True)
        self._again.setInterval(_SETTLE_MS)
        self._again.timeout.connect(self._fetch)
        self._relay = _Relay(self)
        self._relay.changed.connect(self._again.start)
        composer.choose_resource.connect(self.open)

    def open(self) -> None:
        """Show the picker (again, if it is open) and list the servers' resources."""
        if self.picker is not None:
            self.picker.raise_()
            self.picker.activateWindow()
            return
        picker = ResourcePicker(self.composer.window())
        picker.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        picker.chosen.connect(self._attach)
        picker.finished.connect(self._closed)
        self.picker = picker
        picker.open()
        self._fetch()
        relay = self._relay

        def heard(_view: ServerView) -> None:  # on the core thread
            with contextlib.suppress(RuntimeError):  # the window is gone and its unsubscribe is on its way
                relay.changed.emit()

        self.core.run_on_core(lambda app: app.mcp.watch(heard), self._watching, lambda _error: None)

    def _watching(self, result: tuple[list[ServerView], Callable[[], None]]) -> None:
        self._unsubscribe = result[1]
        if self.picker is None:  # closed before the core answered
            self._stop_watching()

    def _stop_watching(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            self.core.run_on_core(lambda _app: unsubscribe(), None, lambda _error: None)

    def _fetch(self) -> None:
        picker = self.picker
        if picker is None:
            return

        def show(listings: list[ResourceListing]) -> None:
            if picker is self.picker:
                picker.show_listings(listings)

        def failed(error: BaseException) -> None:
            if picker is self.picker:
                picker.say(f"The servers' resources could not be listed: {error}")

        self.core.run_on_core(lambda app: app.mcp.resources(), show, failed)

    def _attach(self, resource: ListedResource) -> None:
        picker = self.picker
        composer = self.composer

        def done(part: Attachment) -> None:
            if picker is not self.picker:
                return  # cancelled while it was read
            crowded = too_many(len(composer.attachments()) + 1)
            if crowded is not None:
                refused(crowded)
                return
            composer.add_attachment(part)
            if picker is not None:
                picker.accept()

        def refused(text: str) -> None:
            if picker is self.picker and picker is not None:
                picker.refused(text)

        self.core.run_on_core(
            lambda app: app.attachments.attach_resource(resource), done, lambda error: refused(str(error))
        )

    def _closed(self) -> None:
        self.picker = None
        self._again.stop()
        self._stop_watching()
        self.composer.take_focus()
