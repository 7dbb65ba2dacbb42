"""The Cloud Logging console's CSV download (Logs Explorer, "Download" as CSV).

One row per LogEntry, one column per flattened field (``timestamp``, ``severity``,
``insertId``, ``textPayload``, ``jsonPayload.message``, ``resource.labels.task_name``...),
often newest first. Self-contained on purpose: :func:`read_console_csv` turns the file into
entries (:data:`ENTRY_SCHEMA`), :func:`parse_entries` reads each entry's message with the
same text formats as a log file (:func:`tierscope.collector.formats.parse_lines`).

- Entries are read in timestamp order, whatever the file's order.
- The task (``master-replica-0``, ``worker-replica-2``) becomes role and task index
  through the shared launcher-prefix step.
- The platform logs what a task writes to stderr a second time at ``ERROR`` severity: an
  ``ERROR`` entry with the same task and message as a non-``ERROR`` entry less than
  :data:`COPY_WINDOW_S` seconds away is that copy, and is dropped (counted as skipped).
- A message of several lines (a traceback) is read as those lines.

Each row becomes a :class:`~tierscope.collector.sources.logentries.Entry` and goes through
:func:`~tierscope.collector.sources.logentries.records_from_entries`, the path ``collect cloud`` and
the JSON export use: records get the entry's ``insertId`` as ``entry_id`` and its timestamp
when they carry none; a reject names its entry's insertId and time.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import polars as pl

from tierscope.collector.errors import InputError
from tierscope.collector.formats import FormatInfo, ParseContext, Parsed
from tierscope.collector.sources.files import is_gzip
from tierscope.collector.sources.logentries import Entry, records_from_entries

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


def describe_console_csv() -> FormatInfo:
    """This file format's row of ``tierscope formats``."""
    return FormatInfo(
        CONSOLE_CSV,
        "file",
        "timestamp,severity,insertId,resource.labels.task_name,textPayload",
        "each entry's message is read with the formats above, in timestamp order; the task name gives role and index",
    )


def looks_like_console_csv(first_line: str) -> bool:
    """True when ``first_line`` is a Logs Explorer CSV header."""
    fields = {f.strip().strip('"') for f in first_line.split(",")}
    return "timestamp" in fields and bool(fields & {"insertId", *_MESSAGE_COLUMNS})


def _first(frame: pl.DataFrame, names: tuple[str, ...]) -> pl.Expr:
    present = [n for n in names if n in frame.columns]
    return pl.coalesce(present) if present else pl.lit(None, dtype=pl.String)


def read_console_csv(path: Path) -> pl.DataFrame:
    """The entries of the CSV at ``path`` (plain or gzip), :data:`ENTRY_SCHEMA`, oldest first.

    Raises :class:`InputError` when the file is unreadable, not CSV, or lacks a
    ``timestamp`` or message column (``textPayload`` / ``jsonPayload.message``).
    """
    try:
        data = gzip.decompress(path.read_bytes()) if is_gzip(path) else path.read_bytes()
        frame = pl.read_csv(io.BytesIO(data), infer_schema=False, encoding="utf8-lossy")
    except (OSError, EOFError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"cannot read {path} as a Cloud Logging CSV download: {exc}") from exc
    if "timestamp" not in frame.columns or not any(c in frame.columns for c in _MESSAGE_COLUMNS):
        raise InputError(
            f"{path} has no 'timestamp' and 'textPayload'/'jsonPayload.message' columns: "
            "download the logs from the Logs Explorer as CSV, or pass --format for a plain log"
        )
    return (
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


def drop_error_copies(entries: pl.DataFrame) -> pl.DataFrame:
    """``entries`` without the platform's ERROR-severity copies of other entries."""
    errors = entries.filter(pl.col("severity") == "ERROR")
    others = entries.filter(pl.col("severity") != "ERROR")
    if errors.height == 0 or others.height == 0:
        return entries
    key = ["task_name", "message"]
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
    entries: pl.DataFrame,
    run_id: str | None = None,
    tier: str | None = None,
    context: ParseContext | None = None,
) -> Parsed:
    """Records, events and rejects from ``entries`` (:data:`ENTRY_SCHEMA`), in the schemas of
    :mod:`tierscope.dataset.schema`. ``skipped`` also counts the dropped ERROR copies.
    """
    kept = drop_error_copies(entries)
    parsed = records_from_entries(to_entries(kept), run_id=run_id, tier=tier, context=context)
    parsed.skipped += entries.height - kept.height
    return parsed
