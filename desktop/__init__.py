"""Cairn's application brain, without Qt: settings, routes, catalogs, the chat runtime."""

import sys

# httpx imports its command-line client (click, rich, pygments: about 60 ms) whenever it is
# imported, only to offer an ``httpx`` command that Cairn never runs. With the module marked
# absent, httpx takes its own fallback for an install without that client's dependencies.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "not installed", to importlib
