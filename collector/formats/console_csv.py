"""The Cloud Logging console's CSV download (Logs Explorer, "Download" as CSV).

One row per LogEntry, one column per flattened field (``timestamp``, ``severity``,
``insertId``, ``textPayload``, ``jsonPayload.message``, ``resource.labels.task_name``...),
often newest first. Self-contained on purpose: :func:`read_console_csv` turns the file into
entries (:data:`ENTRY_SCHEMA`), :func:`parse_entries` reads each entry's message with the
same text formats as a log file (the format chain, :func:`tierscope.collector.formats.parse_lines`).

- A download without its header row (a pasted excerpt) is read too: each row's fields are
  recognised by their shape (:func:`_headerless`).
- Entries are read in timestamp order, whatever the file's order.
- The task (``master-replica-0``, ``worker-replica-2``) becomes role and task index
  through the shared launcher-prefix step.
- The platform logs what a task writes to stderr a second time at ``ERROR`` severity, often
  behind a glog header: an ``ERROR`` entry with the same task and message (envelopes
  stripped) as a non-``ERROR`` entry less than :data:`COPY_WINDOW_S` seconds away is that
  copy, and is dropped (counted as skipped). Severity never fails a run.
- A message of several lines (a traceback) is read as those lines.
- A row with another number of fields than the header (an unquoted comma in a message, a row
  cut short) is a reject naming its file line and the field counts; the other rows are read.

Each row becomes a :class:`~tierscope.collector.sources.logentries.Entry` and goes through
:func:`~tierscope.collector.sources.logentries.records_from_entries`, the path ``collect cloud`` and
the JSON export use: records get the entry's ``insertId`` as ``entry_id`` and its timestamp
when they carry none; a reject names its entry's insertId and time.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from tierscope.collector.errors import InputError
from tierscope.collector.formats.base import FileRead, ParseContext, Parsed
from tierscope.collector.formats.envelopes import strip_envelopes, task_from_name
from tierscope.collector.sources.files import read_whole
from tierscope.collector.sources.logentries import Entry, records_from_entries
from tierscope.dataset.schema import REJECT_RAW_MAX

#: The name ``--format`` accepts for this file format.
CONSOLE_CSV = "logging-csv"

#: What :func:`read_console_csv` returns: one row per entry, in timestamp order.
ENTRY_SCHEMA: dict[str, pl.DataType] = {
    "row": pl.Int64(),
    "entry_id": pl.String(),
    "timestamp": pl.Datetime("us", "UTC"),
    "severity": pl.String(),
    "task_name": pl.String(),
    "message": pl.String(),
}

#: Seconds within which an ERROR entry repeating another entry's message is its copy.
COPY_WINDOW_S = 2.0

_MESSAGE_COLUMNS = ("textPayload", "jsonPayload.message", "message")
_TASK_COLUMNS = ("resource.labels.task_name", "labels.ml.googleapis.com/task_name", "task_name")


_EXAMPLE = "timestamp,severity,insertId,resource.labels.task_name,textPayload"
_MEANING = (
    "each entry's message is read with the formats above, in timestamp order; the task name gives role and "
    "index; a download without its header row is read by the fields' shapes"
)


def looks_like_console_csv(first_line: str) -> bool:
    """True when ``first_line`` is a Logs Explorer CSV header."""
    fields = {f.strip().strip('"') for f in first_line.split(",")}
    return "timestamp" in fields and bool(fields & {"insertId", *_MESSAGE_COLUMNS})


_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$")
_SEVERITIES = frozenset(("DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL", "ALERT", "EMERGENCY"))
_LOG_NAME = re.compile(r"^projects/[^/]+/logs/")
#: Fields a headerless row must have for the file to be taken as a download.
_HEADERLESS_MIN_FIELDS = 5


def _first_row(head: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(head.lstrip("\ufeff"))), [])
    except csv.Error:
        return []


def looks_like_headerless_row(fields: list[str]) -> bool:
    """True when ``fields`` (one CSV row) has an entry's shape: an RFC 3339 time, a severity and a log name."""
    return (
        len(fields) >= _HEADERLESS_MIN_FIELDS
        and any(_RFC3339.match(f) for f in fields)
        and any(f in _SEVERITIES for f in fields)
        and any(_LOG_NAME.match(f) for f in fields)
    )


def _headerless_entry(row: int, fields: list[str]) -> dict[str, object]:
    """One headerless row as an entry. Its columns are not named, so each is found by its shape:
    the first time is the entry's (the receive time comes later), the first severity word the
    entry's severity, the first non-empty field the insertId, a task name the task, and the
    message is the last field that is not a bare severity (``jsonPayload.levelname`` follows it)."""
    texts = [f for f in fields if f]
    stamps = [f for f in fields if _RFC3339.match(f)]
    severities = [f for f in fields if f in _SEVERITIES]
    tasks = [f for f in fields if task_from_name(f) != (None, None)]
    logs = [f.rsplit("/", 1)[-1] for f in fields if _LOG_NAME.match(f)]
    messages = [f for f in texts if f not in _SEVERITIES]
    return {
        "row": row,
        "entry_id": texts[0] if texts else None,
        "timestamp": stamps[0] if stamps else None,
        "severity": severities[0] if severities else None,
        "task_name": tasks[0] if tasks else (logs[0] if logs else None),
        "message": messages[-1] if messages else "",
    }


def _headerless(text: str) -> Download:
    """The rows of a download without its header row (rows cut short are read as far as they go;
    one the csv module cannot read, a field over its limit, is a reject naming its line)."""
    rows: list[dict[str, object]] = []
    bad: list[dict[str, object]] = []
    for n, (line, fields, raw) in enumerate(_rows(text.lstrip("\ufeff")), start=1):
        if isinstance(fields, csv.Error):
            bad.append(_row_reject(n, line, f"cannot be read as CSV ({fields})", raw))
        else:
            rows.append(_headerless_entry(n, fields))
    frame = pl.DataFrame(
        rows,
        schema={**ENTRY_SCHEMA, "timestamp": pl.String()},
    )
    entries = frame.with_columns(
        pl.col("timestamp").str.to_datetime(time_unit="us", time_zone="UTC", strict=False)
    ).sort("timestamp", "row", nulls_last=True)
    return Download(entries=entries, rejects=pl.DataFrame(bad, schema=_ROW_REJECT), rows=len(rows) + len(bad))


def _first(frame: pl.DataFrame, names: tuple[str, ...]) -> pl.Expr:
    present = [n for n in names if n in frame.columns]
    return pl.coalesce(present) if present else pl.lit(None, dtype=pl.String)


@dataclass
class Download:
    """A CSV download read: its entries (:data:`ENTRY_SCHEMA`, oldest first), the rows that could
    not be read (``source_offset`` = the file line the row starts on, ``format``, ``reason``,
    ``raw``) and how many rows it has (header and blank lines not counted)."""

    entries: pl.DataFrame
    rejects: pl.DataFrame
    rows: int


_ROW_REJECT: dict[str, pl.DataType] = {
    "source_offset": pl.Int64(),
    "format": pl.String(),
    "reason": pl.String(),
    "raw": pl.String(),
}


class _Taken:
    """The lines a :func:`csv.reader` takes from ``text``, kept until :meth:`take`: a row's raw text."""

    def __init__(self, text: str) -> None:
        self._lines = iter(io.StringIO(text))
        self._taken: list[str] = []

    def __iter__(self) -> _Taken:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self._taken.append(line)
        return line

    def take(self) -> str:
        raw, self._taken = "".join(self._taken), []
        return raw


def _rows(text: str) -> Iterator[tuple[int, list[str] | csv.Error, str]]:
    """``(line the row starts on, its fields or why they cannot be read, its raw text)`` for each
    row of ``text``; blank lines are left out. Linear in the text: each line is read once."""
    lines = _Taken(text)
    reader = csv.reader(lines)
    start = 1
    while True:
        try:
            fields: list[str] | csv.Error = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a field over the csv module's limit (128 Ki characters)
            fields = exc
        raw = lines.take()
        if fields:
            yield start, fields, raw
        start = reader.line_num + 1


def _unique(names: list[str]) -> list[str]:
    """Column names made unique (a repeated one gets ``_2``, ``_3``...): the first keeps its name."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


def _row_reject(row: int, line: int, why: str, raw: str) -> dict[str, object]:
    return {
        "source_offset": line,
        "format": CONSOLE_CSV,
        "reason": f"row {row} (line {line}) {why}: an unquoted comma or quote, "
        "or a row cut short; fix the row or download the logs again",
        "raw": raw.rstrip("\r\n")[:REJECT_RAW_MAX],
    }


def _with_header(text: str, path: Path) -> Download:
    """The rows of a download with its header row: a row with another number of fields than
    the header is a reject naming its line, the others are entries."""
    rows = _rows(text.lstrip("\ufeff"))
    header_row = next(rows, None)
    if header_row is None or isinstance(header_row[1], csv.Error):
        raise InputError(f"cannot read {path} as a Cloud Logging CSV download: no header row")
    header = _unique([name.strip() for name in header_row[1]])
    good: list[list[str]] = []
    bad: list[dict[str, object]] = []
    for line, fields, raw in rows:
        if isinstance(fields, csv.Error) or len(fields) != len(header):
            why = (
                f"cannot be read as CSV ({fields})"
                if isinstance(fields, csv.Error)
                else f"has {len(fields)} fields, the header has {len(header)}"
            )
            bad.append(_row_reject(len(good) + len(bad) + 1, line, why, raw))
            continue
        good.append(fields)
    frame = pl.DataFrame(good, schema=dict.fromkeys(header, pl.String()), orient="row")
    if "timestamp" not in frame.columns or not any(c in frame.columns for c in _MESSAGE_COLUMNS):
        raise InputError(
            f"{path} has no 'timestamp' and 'textPayload'/'jsonPayload.message' columns: "
            "download the logs from the Logs Explorer as CSV, or pass --format for a plain log"
        )
    entries = (
        frame.with_row_index("row", offset=1)
        .select(
            pl.col("row").cast(pl.Int64),
            _first(frame, ("insertId",)).alias("entry_id"),
            pl.col("timestamp").str.to_datetime(time_unit="us", time_zone="UTC", strict=False).alias("timestamp"),
            _first(frame, ("severity",)).str.to_uppercase().alias("severity"),
            _first(frame, _TASK_COLUMNS).alias("task_name"),
            _first(frame, _MESSAGE_COLUMNS).fill_null("").alias("message"),
        )
        .sort("timestamp", "row", nulls_last=True)
    )
    return Download(entries=entries, rejects=pl.DataFrame(bad, schema=_ROW_REJECT), rows=len(good) + len(bad))


def read_download(path: Path) -> Download:
    """The CSV at ``path`` (plain or gzip): its entries and the rows that could not be read.

    Raises :class:`InputError` when the file is unreadable, larger than
    :data:`~tierscope.collector.sources.files.WHOLE_FILE_MAX_BYTES` decompressed, or lacks a
    header row with a ``timestamp`` and a message column (``textPayload`` / ``jsonPayload.message``).
    """
    text = read_whole(path, "a CSV download").decode("utf-8", errors="replace")
    if looks_like_headerless_row(_first_row(text)):
        return _headerless(text)
    return _with_header(text, path)


def read_console_csv(path: Path) -> pl.DataFrame:
    """The entries of the CSV at ``path`` (plain or gzip), :data:`ENTRY_SCHEMA`, oldest first;
    rows that cannot be read are left out (:func:`read_download` returns them as rejects).
    Raises :class:`InputError` as :func:`read_download` does."""
    return read_download(path).entries


def drop_error_copies(entries: pl.DataFrame) -> pl.DataFrame:
    """``entries`` without the platform's ERROR-severity copies of other entries."""
    if entries.filter(pl.col("severity") == "ERROR").height == 0:
        return entries
    # The copy may carry a glog header the original lacks: compare the bare messages.
    bare = entries.with_columns(strip_envelopes(entries.get_column("message")).alias("_bare"))
    errors = bare.filter(pl.col("severity") == "ERROR")
    others = bare.filter(pl.col("severity") != "ERROR")
    if others.height == 0:
        return entries
    key = ["task_name", "_bare"]
    matched = (
        errors.drop_nulls("timestamp")
        .sort("timestamp")
        .join_asof(
            others.drop_nulls("timestamp").select(*key, "timestamp", pl.col("row").alias("_twin")).sort("timestamp"),
            on="timestamp",
            by=key,
            strategy="nearest",
            check_sortedness=False,
            tolerance=f"{int(COPY_WINDOW_S * 1000)}ms",
        )
        .filter(pl.col("_twin").is_not_null())
    )
    return entries.filter(~pl.col("row").is_in(matched.get_column("row").implode()))


def to_entries(entries: pl.DataFrame) -> list[Entry]:
    """The CSV's rows (:data:`ENTRY_SCHEMA`) as :class:`~tierscope.collector.sources.logentries.Entry`,
    for :func:`~tierscope.collector.sources.logentries.records_from_entries`: the one path from a
    LogEntry to records, shared with ``collect cloud`` and the JSON export."""
    return [
        Entry(
            insert_id=row["entry_id"],
            timestamp=row["timestamp"],
            severity=row["severity"],
            resource_labels={"task_name": row["task_name"]} if row["task_name"] else {},
            payload=row["message"],
        )
        for row in entries.iter_rows(named=True)
    ]


def parse_entries(
    entries: pl.DataFrame, context: ParseContext, run_id: str | None = None, tier: str | None = None
) -> Parsed:
    """Records, events and rejects from ``entries`` (:data:`ENTRY_SCHEMA`), in the schemas of
    :mod:`tierscope.dataset.schema`; messages are read by ``context``'s format chain.
    ``skipped`` also counts the dropped ERROR copies.

    A glog header inside a message prints no year: without ``context.year`` it takes the year
    of the oldest entry (a header is milliseconds from its entry's time), so the logger's own
    time is the record's, as in a text log. As there, a year turning over inside the download
    is not detected.
    """
    years = entries.get_column("timestamp").drop_nulls().dt.year()
    if years.len() and context.year is None:
        context = replace(context, year=int(years[0]))
    kept = drop_error_copies(entries)
    parsed = records_from_entries(to_entries(kept), context, run_id=run_id, tier=tier)
    parsed.skipped += entries.height - kept.height
    return parsed


class ConsoleCSV:
    """The console's CSV download as a whole-file format (:class:`~tierscope.collector.formats.FileFormat`):
    ``items`` counts the rows."""

    name = CONSOLE_CSV
    example = _EXAMPLE
    meaning = _MEANING

    def claims(self, head: str) -> bool:
        first = head.lstrip("\ufeff").split("\n", 1)[0]
        return looks_like_console_csv(first) or looks_like_headerless_row(_first_row(head))

    def read(self, path: Path, run_id: str, tier: str | None, context: ParseContext) -> FileRead:
        got = read_download(path)
        nothing = pl.DataFrame()
        ragged = Parsed(steps=nothing, events=nothing, rejects=got.rejects, rest=nothing)
        return FileRead(items=got.rows, parts=iter([ragged, parse_entries(got.entries, context, run_id, tier)]))


CONSOLE_CSV_FORMAT = ConsoleCSV()
