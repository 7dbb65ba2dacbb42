"""A whole Cloud Logging export as a whole-file format: ``gcloud logging read --format=json``
(a JSON array of LogEntry objects) or a REST ``entries.list`` response
(``{"entries": [...], "nextPageToken": "..."}``, saved from the API explorer or curl).

The file is held whole (at most :data:`~tierscope.collector.sources.files.WHOLE_FILE_MAX_BYTES`,
64 MiB decompressed; a larger one is an error saying to convert it to one entry per line) and
each entry becomes records as a live collect's does
(:func:`tierscope.collector.sources.logentries.records_from_entries`).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tierscope.collector import jsonvalues
from tierscope.collector.errors import InputError
from tierscope.collector.formats.base import FileRead, ParseContext, Parsed
from tierscope.collector.sources.files import is_gzip, read_whole
from tierscope.collector.sources.logentries import (
    EXPORT_CHUNK,
    EXPORT_FORMAT,
    LINES_FORMAT,
    Entry,
    EntryError,
    joined,
    oldest_first,
    records_from_entries,
)
from tierscope.dataset.schema import REJECT_RAW_MAX, REJECT_SCHEMA, empty

_SNIFF_BYTES = 4096
#: The start of an ``entries.list`` response: an object whose first key is one of its two fields.
_RESPONSE_HEAD = re.compile(r'^\{\s*"(?:entries|nextPageToken)"\s*:')


def _open_text(path: Path) -> Any:
    return gzip.open(path, "rt", encoding="utf-8") if is_gzip(path) else path.open("r", encoding="utf-8")


def looks_like_export(path: Path) -> bool:
    """True if ``path`` (plain or gzip) starts like a whole-file export: a JSON array of objects
    (``[`` then ``{`` or ``]``) or an ``entries.list`` response (``{"entries":`` or
    ``{"nextPageToken":``).

    Text logs whose lines start with ``[`` (``[worker-2] Train [...``) do not: the next
    character is not ``{``; nor does a file of one JSON object per line (a LogEntry or
    tierscope's structured record), whose first key is neither. Never raises: an unreadable
    file is left to the line reader.
    """
    try:
        with _open_text(path) as fh:
            head = fh.read(_SNIFF_BYTES)
    except (OSError, UnicodeDecodeError, EOFError):
        return False
    return _export_head(head)


def _export_head(head: str) -> bool:
    head = head.lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        return _RESPONSE_HEAD.match(head) is not None
    if not head.startswith("["):
        return False
    rest = head[1:].lstrip()
    return rest.startswith(("{", "]"))


@dataclass
class Export:
    """The entries of an export file, and the items that were not LogEntry objects
    (as rejects in REJECT_SCHEMA, ``source_offset`` = 1-based position in the array).
    ``notes`` says what the file leaves out (a response's later pages)."""

    entries: list[Entry]
    rejects: pl.DataFrame
    items: int
    notes: list[str] = field(default_factory=list)


def entry_from_item(item: Any, where: str) -> Entry:
    """One decoded export item (or line) as an :class:`Entry`; ``where`` names it in messages
    (``item 3 of the array``, ``line 12``). Raises :class:`EntryError` for an item that is not
    a LogEntry object or holds a value that cannot be represented or a malformed field."""
    if not isinstance(item, dict):
        raise EntryError(f"{where} is a JSON {type(item).__name__}, not a LogEntry object")
    problem = jsonvalues.problem_in(item)
    if problem is not None:
        raise EntryError(f"{where}: {problem}")
    return Entry.from_api_repr(item)


def _page_notes(found: bool, others: dict[str, Any], path: Path) -> list[str]:
    """What an ``entries.list`` response's other members say (``others``: every member but the
    ``entries`` array, ``found`` whether there was one; for an array: True and empty). Raises
    :class:`InputError` for an object of another shape."""
    if "entries" in others and others["entries"] is not None:
        raise InputError(
            f"{path}: 'entries' is a JSON {type(others['entries']).__name__}, expected an array of LogEntry objects"
        )
    if not found and "entries" not in others and "nextPageToken" not in others:
        raise InputError(
            f"{path} holds a JSON object without 'entries', expected an array of LogEntry objects "
            'or an entries.list response {"entries": [...]}'
        )
    if others.get("nextPageToken"):
        return [
            "the file is one page of an entries.list response (it has a nextPageToken): "
            "the later pages are not in it; save them too, or read the logs with `tierscope collect cloud`"
        ]
    return []


def read_export(path: Path, run_id: str) -> Export:
    """Read a ``gcloud logging read --format=json`` file or an ``entries.list`` response (plain
    or gzip), entries oldest first.

    The text is held whole (at most :data:`~tierscope.collector.sources.files.WHOLE_FILE_MAX_BYTES`
    decompressed) but decoded one entry at a time into :class:`Entry` objects, never as one
    Python list of dicts (which took eight times the file's size). Raises :class:`InputError`
    if it is not valid JSON, not of either shape, or larger than the limit. Items that are not
    objects, or have a malformed field, become rejects of run ``run_id``.
    """
    try:
        text = read_whole(path, "a JSON export", _TOO_BIG_HINT).decode("utf-8").lstrip("\ufeff")
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    entries: list[Entry] = []
    bad: list[dict[str, Any]] = []
    container = "the array" if text.lstrip().startswith("[") else "'entries'"
    items = jsonvalues.iter_document_items(text, "entries")
    position = 0
    try:
        while True:
            item = next(items)
            position += 1
            try:
                entries.append(entry_from_item(item, f"item {position} of {container}"))
            except EntryError as exc:
                bad.append(_item_reject(run_id, path, position, str(exc), item))
    except StopIteration as done:
        found, others = done.value
    except json.JSONDecodeError as exc:
        hint = "export it again or fix the file"
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            hint = f"it looks like one LogEntry per line: collect it without --format, or with --format {LINES_FORMAT}"
        raise InputError(
            f"{path} looks like a `gcloud logging read --format=json` export but is not valid JSON "
            f"({exc.msg} at line {exc.lineno}, column {exc.colno}); {hint}"
        ) from None
    notes = _page_notes(found, others, path)
    entries.sort(key=oldest_first)
    rejects = pl.DataFrame(bad, schema=REJECT_SCHEMA) if bad else empty(REJECT_SCHEMA)
    return Export(entries=entries, rejects=rejects, items=position, notes=notes)


def _item_reject(run_id: str, path: Path, position: int, reason: str, item: Any) -> dict[str, Any]:
    raw = json.dumps(item, sort_keys=True, default=str)[:REJECT_RAW_MAX]
    return {
        "run_id": run_id,
        "source": str(path),
        "source_offset": position,
        "format": EXPORT_FORMAT,
        "reason": reason,
        "raw": raw,
    }


#: Entries of an export whose records are stored at a time: a few MB of records, a file each.
STORE_ENTRIES = 50_000


_TOO_BIG_HINT = (
    "turn it into one entry per line, which is read in batches (`jq -c '.[]' FILE > FILE.ndjson`, "
    "or `jq -c '.entries[]'` for an entries.list response), or export shorter time ranges"
)


class LogEntriesExport:
    """The ``gcloud logging read --format=json`` export or an ``entries.list`` response as a
    whole-file format (:class:`~tierscope.collector.formats.FileFormat`): ``items`` counts the
    array's items."""

    name = EXPORT_FORMAT
    example = '[{"insertId": "...", "timestamp": "...", "jsonPayload": {"message": "..."}, "logName": "..."}]'
    meaning = (
        'a JSON array of LogEntry objects, or an entries.list response {"entries": [...]} (oldest first '
        "whatever the file's order); each message is read like a log line, the task name or log name gives "
        "role and index, severity is ignored"
    )

    def claims(self, head: str) -> bool:
        return _export_head(head)

    def read(self, path: Path, run_id: str, tier: str | None, context: ParseContext) -> FileRead:
        export = read_export(path, run_id)

        def parts() -> Iterator[Parsed]:
            yield Parsed(
                steps=pl.DataFrame(),
                events=pl.DataFrame(),
                rejects=export.rejects,
                rest=pl.DataFrame(),
                notes=export.notes,
            )
            # Parsed a page at a time, stored many pages at a time: each store is one more file
            # for the run, re-read to find duplicates by the next.
            pending: list[Parsed] = []
            for start in range(0, len(export.entries), EXPORT_CHUNK):
                chunk = export.entries[start : start + EXPORT_CHUNK]
                pending.append(records_from_entries(chunk, context, run_id=run_id, tier=tier))
                if len(pending) * EXPORT_CHUNK >= STORE_ENTRIES:
                    yield joined(pending)
                    pending = []
            if pending:
                yield joined(pending)

        return FileRead(items=export.items, parts=parts())


EXPORT_FILE_FORMAT = LogEntriesExport()
