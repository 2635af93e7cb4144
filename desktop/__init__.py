"""Cairn's application brain, without Qt: settings, routes, catalogs, the chat runtime."""
