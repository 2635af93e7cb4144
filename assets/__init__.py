"""Cairn's bundled data files: the icon now, the model catalogs later."""

from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent
