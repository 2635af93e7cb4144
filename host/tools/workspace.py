"""The workspace file tools' work: listing, reading, writing and editing, through the jail.

Each function blocks (the built-in tools run it in a worker thread), returns the text for the
model, and raises ``ToolError`` (a ``JailError`` is one) with a sentence saying what happened
and what to do.
"""

from __future__ import annotations

from host.tools.catalog import ToolError
from host.tools.handles import Kind, show
from host.tools.jail import Jail
from host.tools.limits import ToolLimits
from host.tools.textfile import LineReader, counted, decode_line, looks_binary, size_text

__all__ = ["edit_file", "list_folder", "read_file", "write_file"]

_LABELS: dict[Kind, str] = {"folder": "[folder]", "file": "[file]  ", "link": "[link]  ", "other": "[other] "}


def list_folder(jail: Jail, path: str, limits: ToolLimits) -> str:
    parts = jail.parts(path)
    with jail.folder(parts) as folder:
        entries, more = folder.scan(limits.list_scan)
        shown = entries[: limits.list_entries]
        lines = []
        for name, kind in shown:
            if kind == "folder":
                lines.append(f"{_LABELS[kind]} {name}/")
            elif kind == "file":
                size = folder.size(name)
                lines.append(f"{_LABELS[kind]} {name} ({size_text(size) if size is not None else 'size unknown'})")
            elif kind == "link":
                lines.append(f"{_LABELS[kind]} {name} (symbolic link; not followed)")
            else:
                lines.append(f"{_LABELS[kind]} {name} (not a regular file: a pipe, socket or device)")
    where = show(parts)
    total = (
        f"more than {counted(len(entries), 'entry', 'entries')}" if more else counted(len(entries), "entry", "entries")
    )
    if not entries:
        return f"The folder {where} is empty."
    head = f"The folder {where} has {total}, by name:"
    if len(entries) > len(shown) or more:
        lines.append(
            f"[Only the first {len(shown):,} of {total} are shown. List a subfolder, or use "
            "search_text with a glob, to see the others.]"
        )
    return "\n".join([head, *lines])


def read_file(jail: Jail, path: str, offset: int, limit: int, limits: ToolLimits) -> str:
    parts = jail.parts(path)
    where = show(parts)
    with jail.open_file(parts) as file:
        head = file.read(limits.binary_sniff)
        if looks_binary(head):
            raise ToolError(
                f"{where} is a binary file ({size_text(file.size)}), and read_file shows only text files; "
                "search_text skips such files too."
            )
        if not head:
            return f"{where} is empty."
        reader = LineReader(file, head, budget=limits.read_bytes, keep=limits.line_chars * 4)
        shown: list[str] = []
        chars = 0
        number = 0
        more = False
        for raw, cut in reader:
            number += 1
            if number < offset:
                continue
            if len(shown) >= limit:
                more = True
                break
            text = decode_line(raw, first=number == 1)
            if cut or len(text) > limits.line_chars:
                text = f"{text[: limits.line_chars]} … [line cut at {limits.line_chars:,} characters]"
            entry = f"{number:>6}\t{text}"
            if shown and chars + len(entry) + 1 > limits.output_chars:
                more = True
                break
            shown.append(entry)
            chars += len(entry) + 1
        size = file.size
    if not shown:
        if reader.stopped:
            raise ToolError(
                f"Line {offset:,} of {where} lies beyond its first {size_text(limits.read_bytes)}, the most read_file "
                f"reads of one file ({where} is {size_text(size)}); search_text can find lines in that first part."
            )
        raise ToolError(
            f"{where} has {counted(number, 'line')}, so there is no line {offset:,}; give a smaller offset."
        )
    last = offset + len(shown) - 1
    if more:
        why = "the most one answer holds" if len(shown) < limit else f"the {counted(limit, 'line')} asked for"
        shown.append(
            f"[Lines {offset:,} to {last:,} of {where} are shown ({why}); the file goes on. "
            f"To read on, call read_file with offset={last + 1}.]"
        )
    elif reader.stopped:
        shown.append(
            f"[Stopped at line {last:,}: read_file reads only the first {size_text(limits.read_bytes)} of a file, "
            f"and {where} is {size_text(size)}. search_text can find lines in that first part.]"
        )
    return "\n".join(shown)


def write_file(jail: Jail, path: str, content: str, limits: ToolLimits) -> str:
    parts = jail.parts(path)
    data = content.encode("utf-8")
    if len(data) > limits.write_bytes:
        raise ToolError(
            f"The content is {size_text(len(data))}; write_file writes at most {size_text(limits.write_bytes)} "
            "to one file. Split it into several files."
        )
    created = jail.replace(parts, data)
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return f"{'Created' if created else 'Replaced'} {show(parts)} ({counted(lines, 'line')}, {size_text(len(data))})."


def edit_file(jail: Jail, path: str, old_text: str, new_text: str, limits: ToolLimits) -> str:
    parts = jail.parts(path)
    where = show(parts)
    if not old_text:
        raise ToolError("old_text is empty; give the exact text to replace (write_file makes a whole file).")
    if old_text == new_text:
        raise ToolError("old_text and new_text are the same, so there is nothing to change.")
    with jail.open_file(parts) as file:
        if file.size > limits.write_bytes:
            raise ToolError(
                f"{where} is {size_text(file.size)}; edit_file changes files of at most "
                f"{size_text(limits.write_bytes)}."
            )
        data = file.read(limits.write_bytes + 1)
        stamp = file.stamp
    if len(data) > limits.write_bytes:
        raise ToolError(f"{where} grew past {size_text(limits.write_bytes)} while it was being read; nothing changed.")
    if looks_binary(data[: limits.binary_sniff]):
        raise ToolError(f"{where} is a binary file, and edit_file changes only text files.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{where} is not UTF-8 text (a byte at offset {exc.start:,} is not), so edit_file cannot change it "
            "without damaging it."
        ) from exc
    old, new = old_text, new_text
    starts = _occurrences(text, old)
    if not starts and "\r\n" in text and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")  # the file has Windows line ends
        starts = _occurrences(text, old)
    if not starts:
        raise ToolError(
            f"old_text was not found in {where}; read the file again and copy the exact text, "
            "with its spaces, indentation and line breaks."
        )
    if len(starts) > 1:
        lines = sorted({text.count("\n", 0, i) + 1 for i in starts[:10]})
        at = f"line {lines[0]}" if len(lines) == 1 else f"lines {', '.join(map(str, lines))}"
        raise ToolError(
            f"old_text occurs {len(starts)}{' or more' if len(starts) > 10 else ''} times in {where} "
            f"(at {at}); include more of the surrounding text so that it matches exactly one place."
        )
    start = starts[0]
    result = text[:start] + new + text[start + len(old) :]
    encoded = result.encode("utf-8")
    if len(encoded) > limits.write_bytes:
        raise ToolError(
            f"The edited {where} would be {size_text(len(encoded))}; the limit is {size_text(limits.write_bytes)}."
        )
    jail.replace(parts, encoded, expect=stamp)
    line = text.count("\n", 0, start) + 1
    return (
        f"Edited {where}: replaced {counted(old.count(chr(10)) + 1, 'line')} at line {line:,} "
        f"with {counted(new.count(chr(10)) + 1, 'line')}."
    )


def _occurrences(text: str, needle: str, most: int = 11) -> list[int]:
    """Where ``needle`` starts in ``text``, overlapping ones included, at most ``most``."""
    found: list[int] = []
    at = text.find(needle)
    while at >= 0 and len(found) < most:
        found.append(at)
        at = text.find(needle, at + 1)
    return found
