"""Cairn's trusted kernel: the journal, the transcript, tool specs and identity.

No Qt and no model knowledge live here; ``desktop`` and ``ui`` build on it.
"""
