"""How much the built-in tools read, return and wait: every limit in one place."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "ToolLimits"]


@dataclass(frozen=True)
class ToolLimits:
    """The built-in tools' limits. When one cuts a result, the result says so and how to go on."""

    # Every tool
    output_chars: int = 100_000  # characters one answer returns
    line_chars: int = 2_000  # characters of one line read_file shows before cutting it

    # list_folder
    list_entries: int = 500  # entries shown, by name
    list_scan: int = 100_000  # entries looked at in one folder

    # read_file, and edit_file's read
    read_bytes: int = 10_000_000  # bytes read from the start of one file in one call
    read_lines: int = 2_000  # lines returned by one call
    binary_sniff: int = 8_192  # bytes looked at to tell text from binary

    # write_file, edit_file
    write_bytes: int = 10_000_000  # bytes one file may be written with

    # search_text
    search_results: int = 200  # matching lines returned
    search_files: int = 20_000  # files searched
    search_bytes: int = 50_000_000  # bytes read by one search, all files together
    search_file_bytes: int = 10_000_000  # bytes read from the start of one file
    search_seconds: float = 10.0  # time one search may take
    search_depth: int = 64  # folders below the start folder
    search_line_chars: int = 300  # a regex sees a line in windows this long; also shown per match
    regex_slow_seconds: float = 0.25  # one regex call slower than this stops the search

    # fetch_url
    fetch_bytes: int = 2_000_000  # bytes of a response body read
    fetch_redirects: int = 5  # redirects followed, each target checked again
    fetch_seconds: float = 30.0  # time for the whole fetch, redirects included


DEFAULT_LIMITS = ToolLimits()
