"""Cloud Logging LogEntry objects to step records, events and rejects.

One module shared by the live collect (:mod:`tierscope.collector.sources.cloud_logging`) and the
offline import of a ``gcloud logging read --format=json`` export (a JSON array of
LogEntry objects, read by ``tierscope collect files``), so both give the same records.

What an entry holds, and what becomes of it:

- ``jsonPayload`` with a ``"tierscope"`` key: tierscope's structured record
  (:func:`tierscope.collector.formats.structured.record_from_payload`).
- ``jsonPayload.message`` or ``textPayload``: text, one or more lines, read by the same
  format chain as a log file (:func:`tierscope.collector.formats.parse_lines`).
- anything else (other JSON, protoPayload, no payload): skipped (counted, not stored).

Role and task index come from the record itself when it names them, else from the
replica's task name (``resource.labels.task_name``, the older entry label
``ml.googleapis.com/task_name``, else the log name's last part: ``.../logs/master-replica-0``),
see :func:`~tierscope.collector.formats.envelopes.task_from_name`. ``run_id`` is the record's,
else the job id (``resource.labels.job_id``), else the caller's fallback. ``timestamp``
is the record's, else the entry's; ``entry_id`` is the ``insertId``; ``source`` is the
log name; ``source_offset`` is null. The severity is ignored: the platform re-logs some
stdout lines a second time at severity ERROR, and such a copy is neither a failure nor a
second record (it has the same key columns, so the dataset stores it once).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from tierscope.collector import jsonvalues
from tierscope.collector.errors import InputError
from tierscope.collector.formats import LINES_SCHEMA, FileRead, ParseContext, Parsed, parse_lines
from tierscope.collector.formats.envelopes import task_from_name
from tierscope.collector.formats.structured import StructuredJSON, rows_from_payloads
from tierscope.collector.sources.files import is_gzip, read_whole
from tierscope.contract import KIND_KEY
from tierscope.dataset.schema import (
    EVENT_SCHEMA,
    REJECT_RAW_MAX,
    REJECT_SCHEMA,
    STEP_SCHEMA,
    conform,
    empty,
)

#: The entry label older training jobs put the replica's name in.
TASK_NAME_LABEL = "ml.googleapis.com/task_name"

#: Format name given to rejects of entries that are not LogEntry objects at all.
EXPORT_FORMAT = "logentries"


class EntryError(ValueError):
    """An export item that is not a readable LogEntry."""


def _parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp (any number of fraction digits, ``Z``) as UTC, to the microsecond."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise EntryError(f"timestamp {value!r} is not an RFC 3339 time") from None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(when: datetime) -> str:
    """``when`` as Cloud Logging writes times: RFC 3339, UTC, microseconds, ``Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Entry:
    """The fields of a LogEntry tierscope reads. ``timestamp`` is UTC (microseconds)."""

    insert_id: str | None
    timestamp: datetime | None
    log_name: str | None = None
    severity: str | None = None
    resource_type: str | None = None
    resource_labels: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    payload: str | Mapping[str, Any] | None = None
    #: Why the entry cannot be read (a value :mod:`tierscope.collector.jsonvalues` could not
    #: represent); such an entry is a reject.
    problem: str | None = None

    @classmethod
    def from_api_repr(cls, item: Mapping[str, Any]) -> Entry:
        """From the REST API's JSON form (what ``gcloud logging read --format=json`` prints).

        Raises :class:`EntryError` for a timestamp that is not RFC 3339.
        """
        resource = item.get("resource") or {}
        payload: str | Mapping[str, Any] | None = None
        if "textPayload" in item:
            payload = item["textPayload"]
        elif "jsonPayload" in item:
            payload = item["jsonPayload"]
        return cls(
            insert_id=item.get("insertId"),
            timestamp=_parse_time(item.get("timestamp")),
            log_name=item.get("logName"),
            severity=item.get("severity"),
            resource_type=resource.get("type"),
            resource_labels=resource.get("labels") or {},
            labels=item.get("labels") or {},
            payload=payload,
        )

    @classmethod
    def from_log_entry(cls, entry: Any) -> Entry:
        """From a :class:`google.cloud.logging_v2.entries.LogEntry` (or Text/StructEntry)."""
        resource = entry.resource
        payload = entry.payload
        return cls(
            insert_id=entry.insert_id,
            timestamp=_parse_time(entry.timestamp),
            log_name=entry.log_name,
            severity=entry.severity,
            resource_type=resource.type if resource is not None else None,
            resource_labels=(resource.labels or {}) if resource is not None else {},
            labels=entry.labels or {},
            payload=payload if isinstance(payload, str | Mapping) else None,
            problem=jsonvalues.problem_in(payload),
        )

    @property
    def job_id(self) -> str | None:
        return self.resource_labels.get("job_id")

    @property
    def task_name(self) -> str | None:
        named = self.resource_labels.get("task_name") or self.labels.get(TASK_NAME_LABEL)
        if named or not self.log_name:
            return named
        # AI Platform names each replica's log after it: projects/P/logs/master-replica-0.
        last = self.log_name.rsplit("/", 1)[-1]
        return last if task_from_name(last) != (None, None) else None


_META_SCHEMA: dict[str, pl.DataType] = {
    "source_offset": pl.Int64(),
    "_entry_id": pl.String(),
    "_entry_ts": pl.Datetime("us", "UTC"),
    "_log_name": pl.String(),
    "_job_id": pl.String(),
    "_task_role": pl.String(),
    "_task_index": pl.Int32(),
}


def _frame(parts: Sequence[pl.DataFrame]) -> pl.DataFrame:
    parts = [p for p in parts if p.width]
    return pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()


def _attach(
    frame: pl.DataFrame,
    meta: pl.DataFrame,
    schema: dict[str, pl.DataType],
    run_id: str | None,
    tier: str | None,
    tier_by_run: Mapping[str, str],
    source: str | None,
) -> pl.DataFrame:
    """Complete records (keyed by entry number in ``source_offset``) with their entry's facts."""
    if frame.height == 0:
        return empty(schema)
    joined = conform(frame, schema).join(meta, on="source_offset", how="left")
    run = pl.coalesce(pl.col("run_id"), pl.col("_job_id"), pl.lit(run_id, dtype=pl.String))
    columns = [
        run.alias("run_id"),
        pl.coalesce(pl.col("_log_name"), pl.lit(source, dtype=pl.String)).alias("source"),
        pl.lit(None, dtype=pl.Int64).alias("source_offset"),
    ]
    if "tier" in schema:
        by_run = run.replace_strict(dict(tier_by_run), default=None, return_dtype=pl.String)
        columns.append(pl.coalesce(pl.col("tier"), pl.lit(tier, dtype=pl.String), by_run).alias("tier"))
    if "role" in schema:
        # A record that names its role keeps it; the task name's index only fills in for the same role.
        from_task = pl.col("role").is_null() | (pl.col("role") == pl.col("_task_role"))
        columns += [
            pl.coalesce(pl.col("role"), pl.col("_task_role")).alias("role"),
            pl.coalesce(pl.col("task_index"), pl.when(from_task).then(pl.col("_task_index"))).alias("task_index"),
        ]
    if "timestamp" in schema:
        columns.append(pl.coalesce(pl.col("timestamp"), pl.col("_entry_ts")).alias("timestamp"))
    if "entry_id" in schema:
        columns.append(pl.col("_entry_id").alias("entry_id"))
    if "reason" in schema and "raw" in schema:
        where = pl.format(
            " (Cloud Logging entry {} at {})",
            pl.col("_entry_id").fill_null("without insertId"),
            pl.col("_entry_ts").dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").fill_null("unknown time"),
        )
        columns += [
            (pl.col("reason") + where).alias("reason"),
            pl.col("raw").str.slice(0, REJECT_RAW_MAX).alias("raw"),
        ]
    return conform(joined.with_columns(columns), schema)


def records_from_entries(
    entries: Sequence[Entry],
    run_id: str | None = None,
    tier: str | None = None,
    tier_by_run: Mapping[str, str] | None = None,
    source: str | None = None,
    context: ParseContext | None = None,
) -> Parsed:
    """Step records, events and rejects from ``entries`` (see the module docstring for the rules).

    Returns frames in exactly STEP/EVENT/REJECT_SCHEMA (``rest`` empty); ``skipped`` counts
    the entries and text lines that carry no record. ``run_id`` is the run of records that
    neither name one nor come from a training job; ``tier`` the tier of records that do
    not name one, else ``tier_by_run[run_id]``; ``source`` the source of entries without a
    log name; ``context`` is passed to :func:`~tierscope.collector.formats.parse_lines` (keep one per
    collect). Never raises for bad payloads: they become rejects.
    """
    structured: list[tuple[int | None, Mapping[str, Any]]] = []
    numbers: list[int] = []
    texts: list[str] = []
    skipped = 0
    meta_rows = []
    unreadable: list[dict[str, Any]] = []
    # Every record-bearing line (a structured payload, or one line of a text payload) gets its
    # own number, so the format chain's per-line accounting holds; meta maps it to its entry.
    for entry in entries:
        role, index = task_from_name(entry.task_name)
        facts = (entry.insert_id, entry.timestamp, entry.log_name, entry.job_id, role, index)
        payload = entry.payload
        if entry.problem is not None:
            meta_rows.append((len(meta_rows) + 1, *facts))
            unreadable.append(
                {
                    "source_offset": len(meta_rows),
                    "format": EXPORT_FORMAT,
                    "reason": entry.problem,
                    "raw": json.dumps(payload, sort_keys=True, default=str)[:REJECT_RAW_MAX],
                }
            )
            continue
        if isinstance(payload, Mapping) and KIND_KEY in payload:
            meta_rows.append((len(meta_rows) + 1, *facts))
            structured.append((len(meta_rows), payload))
            continue
        text = payload.get("message") if isinstance(payload, Mapping) else payload
        if not isinstance(text, str):
            skipped += 1
            continue
        for line in text.split("\n"):
            meta_rows.append((len(meta_rows) + 1, *facts))
            numbers.append(len(meta_rows))
            texts.append(line.rstrip("\r"))
    meta = pl.DataFrame(meta_rows, schema=_META_SCHEMA, orient="row")
    steps, events, rejects = rows_from_payloads(structured, StructuredJSON.name)
    rejects += unreadable
    lines = pl.DataFrame({"source_offset": numbers, "line": texts}, schema=LINES_SCHEMA)
    parsed = parse_lines(lines, context=context) if lines.height else None
    common = {"run_id": run_id, "tier": tier, "tier_by_run": tier_by_run or {}, "source": source}

    def part(rows: list[dict[str, Any]], name: str, schema: dict[str, pl.DataType]) -> pl.DataFrame:
        frames = [pl.DataFrame(rows, infer_schema_length=None)]
        if parsed is not None:
            frames.append(getattr(parsed, name))
        return _attach(_frame(frames), meta, schema, **common)

    return Parsed(
        steps=part(steps, "steps", STEP_SCHEMA),
        events=part(events, "events", EVENT_SCHEMA),
        rejects=part(rejects, "rejects", REJECT_SCHEMA),
        rest=pl.DataFrame(schema=LINES_SCHEMA),
        skipped=skipped + (parsed.skipped if parsed is not None else 0),
    )


# --- gcloud logging read --format=json exports ------------------------------------------------

_SNIFF_BYTES = 4096
_NO_TIME = datetime.min.replace(tzinfo=UTC)


def _open_text(path: Path) -> Any:
    return gzip.open(path, "rt", encoding="utf-8") if is_gzip(path) else path.open("r", encoding="utf-8")


def looks_like_export(path: Path) -> bool:
    """True if ``path`` (plain or gzip) starts like a JSON array of objects: ``[`` then ``{`` or ``]``.

    Text logs whose lines start with ``[`` (``[worker-2] Train [...``) do not: the next
    character is not ``{``. Never raises: an unreadable file is left to the line reader.
    """
    try:
        with _open_text(path) as fh:
            head = fh.read(_SNIFF_BYTES)
    except (OSError, UnicodeDecodeError, EOFError):
        return False
    return _export_head(head)


def _export_head(head: str) -> bool:
    head = head.lstrip("\ufeff \t\r\n")
    if not head.startswith("["):
        return False
    rest = head[1:].lstrip()
    return rest.startswith(("{", "]"))


@dataclass
class Export:
    """The entries of an export file, and the items that were not LogEntry objects
    (as rejects in REJECT_SCHEMA, ``source_offset`` = 1-based position in the array)."""

    entries: list[Entry]
    rejects: pl.DataFrame
    items: int


def read_export(path: Path, run_id: str) -> Export:
    """Read a ``gcloud logging read --format=json`` file (plain or gzip) whole, entries oldest first.

    Raises :class:`InputError` if it is not valid JSON or not a JSON array. Items that are
    not objects, or have a malformed timestamp, become rejects of run ``run_id``.
    """
    try:
        text = read_whole(path, "a JSON export").decode("utf-8")
        doc = jsonvalues.loads_lenient(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path} looks like a `gcloud logging read --format=json` export but is not valid JSON "
            f"({exc.msg} at line {exc.lineno}, column {exc.colno}); export it again or fix the file"
        ) from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if not isinstance(doc, list):
        raise InputError(f"{path} holds a JSON {type(doc).__name__}, expected an array of LogEntry objects")
    entries: list[Entry] = []
    bad: list[dict[str, Any]] = []
    for position, item in enumerate(doc, start=1):
        try:
            if not isinstance(item, dict):
                raise EntryError(f"item {position} of the array is a JSON {type(item).__name__}, not a LogEntry object")
            problem = jsonvalues.problem_in(item)
            if problem is not None:
                raise EntryError(f"item {position} of the array: {problem}")
            entries.append(Entry.from_api_repr(item))
        except EntryError as exc:
            raw = json.dumps(item, sort_keys=True, default=str)[:REJECT_RAW_MAX]
            bad.append(
                {
                    "run_id": run_id,
                    "source": str(path),
                    "source_offset": position,
                    "format": EXPORT_FORMAT,
                    "reason": str(exc),
                    "raw": raw,
                }
            )
    # gcloud prints newest first; the live collect reads oldest first (equal times by insertId).
    # Reading in the same order keeps the same copy of a repeated line, so both store the same rows.
    entries.sort(key=lambda e: (e.timestamp or _NO_TIME, e.insert_id or ""))
    rejects = pl.DataFrame(bad, schema=REJECT_SCHEMA) if bad else empty(REJECT_SCHEMA)
    return Export(entries=entries, rejects=rejects, items=len(doc))


#: Entries of an export turned into records at a time (one page of the live API).
EXPORT_CHUNK = 1000


class LogEntriesExport:
    """The ``gcloud logging read --format=json`` export as a whole-file format
    (:class:`~tierscope.collector.formats.FileFormat`): ``items`` counts the array's items."""

    name = EXPORT_FORMAT
    example = '[{"insertId": "...", "timestamp": "...", "jsonPayload": {"message": "..."}, "logName": "..."}]'
    meaning = (
        "a JSON array of LogEntry objects (oldest first whatever the file's order); each message is read "
        "like a log line, the task name or log name gives role and index, severity is ignored"
    )

    def claims(self, head: str) -> bool:
        return _export_head(head)

    def read(self, path: Path, run_id: str, tier: str | None, context: ParseContext) -> FileRead:
        export = read_export(path, run_id)

        def parts() -> Iterator[Parsed]:
            yield Parsed(steps=pl.DataFrame(), events=pl.DataFrame(), rejects=export.rejects, rest=pl.DataFrame())
            for start in range(0, len(export.entries), EXPORT_CHUNK):
                chunk = export.entries[start : start + EXPORT_CHUNK]
                yield records_from_entries(chunk, run_id=run_id, tier=tier, context=context)

        return FileRead(items=export.items, parts=parts())


EXPORT_FILE_FORMAT = LogEntriesExport()
