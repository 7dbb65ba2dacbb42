"""Cloud Logging LogEntry objects to step records, events and rejects.

One module shared by the live collect (:mod:`tierscope.collector.sources.cloud_logging`) and
every offline shape of the same entries, so all give the same records:

- a JSON array of LogEntry objects (``gcloud logging read --format=json``) or the REST
  ``entries.list`` response: the whole-file format :mod:`tierscope.collector.formats.logentries_export`;
- one LogEntry per line (what a Cloud Logging sink writes to a Cloud Storage bucket, hourly
  files ``LOG_ID/YYYY/MM/DD/08:00:00_08:59:59_S0.json``; or ``jq -c '.[]'`` over an array):
  the line format :class:`~tierscope.collector.formats.logentry.LogEntryLines`, read in batches
  and incrementally like any text log, each entry keeping its line number.

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
log name and ``source_offset`` null, except for an entry read from a file of one entry per line:
that file and the entry's line. The severity is ignored: the platform re-logs some
stdout lines a second time at severity ERROR, and such a copy is neither a failure nor a
second record (it has the same key columns, so the dataset stores it once).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import polars as pl

from tierscope.collector import jsonvalues
from tierscope.collector.cloudtime import format_time as format_time
from tierscope.collector.formats.base import LINES_SCHEMA, ParseContext, Parsed, chain_of
from tierscope.collector.formats.envelopes import task_from_name
from tierscope.collector.formats.structured import StructuredJSON, rows_from_payloads
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


def _mapping(item: Mapping[str, Any], key: str, what: str) -> Mapping[str, Any]:
    """``item[key]`` if it is an object (missing or null: empty); raises :class:`EntryError` otherwise."""
    value = item.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict | Mapping):  # dict first: the ABC check is slow
        raise EntryError(f"field '{what}' is a JSON {type(value).__name__}, not an object")
    return value


def _string(item: Mapping[str, Any], key: str, what: str) -> str | None:
    """``item[key]`` if it is a string (missing or null: None); raises :class:`EntryError` otherwise."""
    value = item.get(key)
    if value is None or isinstance(value, str):
        return value
    raise EntryError(f"field '{what}' is a JSON {type(value).__name__}, not a string")


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

        Raises :class:`EntryError` for a timestamp that is not RFC 3339, a ``resource``,
        ``resource.labels``, ``labels`` or ``jsonPayload`` that is not an object, or a field
        read as text (``timestamp``, ``insertId``, ``logName``, ``severity``, ``textPayload``, the resource's
        type, the job id and task name labels) that is not a string.
        """
        resource = _mapping(item, "resource", "resource")
        resource_labels = _mapping(resource, "labels", "resource.labels")
        labels = _mapping(item, "labels", "labels")
        # Checked here, not where they are used: a dict insertId once broke the sort of a
        # batch's entries, an int task name the task's regex (tracebacks).
        for mapping, key, what in (
            (resource, "type", "resource.type"),
            (resource_labels, "job_id", "resource.labels.job_id"),
            (resource_labels, "task_name", "resource.labels.task_name"),
            (labels, TASK_NAME_LABEL, f"labels.{TASK_NAME_LABEL}"),
        ):
            _string(mapping, key, what)
        payload: str | Mapping[str, Any] | None = None
        if "textPayload" in item:
            payload = _string(item, "textPayload", "textPayload")
        elif "jsonPayload" in item:
            payload = _mapping(item, "jsonPayload", "jsonPayload")
        return cls(
            insert_id=_string(item, "insertId", "insertId"),
            timestamp=_parse_time(_string(item, "timestamp", "timestamp")),
            log_name=_string(item, "logName", "logName"),
            severity=_string(item, "severity", "severity"),
            resource_type=resource.get("type"),
            resource_labels=resource_labels,
            labels=labels,
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
    "_position": pl.Int64(),
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
    # An entry read from a file of one entry per line is found again by the file and its line;
    # one from the API or a whole-file export by its log name (and insertId).
    in_file = pl.col("_position").is_not_null()
    source_column = pl.lit(source, dtype=pl.String)
    columns = [
        run.alias("run_id"),
        pl.when(in_file).then(source_column).otherwise(pl.coalesce(pl.col("_log_name"), source_column)).alias("source"),
        pl.col("_position").alias("source_offset"),
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
    context: ParseContext,
    run_id: str | None = None,
    tier: str | None = None,
    tier_by_run: Mapping[str, str] | None = None,
    source: str | None = None,
    positions: Sequence[int] | None = None,
) -> Parsed:
    """Step records, events and rejects from ``entries`` (see the module docstring for the rules).

    Returns frames in exactly STEP/EVENT/REJECT_SCHEMA (``rest`` empty); ``skipped`` counts
    the entries and text lines that carry no record. ``run_id`` is the run of records that
    neither name one nor come from a training job; ``tier`` the tier of records that do
    not name one, else ``tier_by_run[run_id]``; ``source`` the source of entries without a
    log name; the messages are read by ``context``'s format chain
    (:attr:`~tierscope.collector.formats.base.ParseContext.chain`; keep one context per collect).
    ``positions`` (one per entry: its line in a file of one entry per line) become the
    rows' ``source_offset``, and ``source`` their source; without them ``source_offset`` is null
    and ``source`` the log name. Never raises for bad payloads: they become rejects.
    """
    structured: list[tuple[int | None, Mapping[str, Any]]] = []
    numbers: list[int] = []
    texts: list[str] = []
    skipped = 0
    meta_rows = []
    unreadable: list[dict[str, Any]] = []
    # Every record-bearing line (a structured payload, or one line of a text payload) gets its
    # own number, so the format chain's per-line accounting holds; meta maps it to its entry.
    where = positions if positions is not None else [None] * len(entries)
    for entry, position in zip(entries, where, strict=True):
        role, index = task_from_name(entry.task_name)
        facts = (entry.insert_id, entry.timestamp, entry.log_name, entry.job_id, role, index, position)
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
    parsed = chain_of(context)(lines, context=context) if lines.height else None
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


# --- shared by every reader of entries ----------------------------------------------------

_NO_TIME = datetime.min.replace(tzinfo=UTC)


def oldest_first(entry: Entry) -> tuple[datetime, str]:
    # gcloud prints newest first; the live collect reads oldest first (equal times by insertId).
    # Reading in the same order keeps the same copy of a repeated line, so both store the same rows.
    return (entry.timestamp or _NO_TIME, entry.insert_id or "")


#: Entries of an export turned into records at a time (one page of the live API).
EXPORT_CHUNK = 1000


def joined(parts: Sequence[Parsed]) -> Parsed:
    """``parts`` as one (frames concatenated, ``skipped`` and ``notes`` summed; ``rest`` empty)."""
    return Parsed(
        steps=_frame([p.steps for p in parts]),
        events=_frame([p.events for p in parts]),
        rejects=_frame([p.rejects for p in parts]),
        rest=pl.DataFrame(schema=LINES_SCHEMA),
        skipped=sum(p.skipped for p in parts),
        notes=[n for p in parts for n in p.notes],
    )


#: The name of the line format reading one LogEntry per line
#: (:class:`tierscope.collector.formats.logentry.LogEntryLines`).
LINES_FORMAT = "logentry-lines"

# --- one LogEntry per line: Cloud Storage sink files, jq -c ----------------------------------


def records_from_lines(
    lines: Sequence[tuple[int, str]], context: ParseContext, source: str | None = None
) -> tuple[Parsed, list[int]]:
    """Records, events and rejects from ``(line number, text)`` pairs, each meant to hold one
    LogEntry in JSON, and the numbers of the lines that hold none (a JSON object without a
    ``logName``, or one with a ``"tierscope"`` key: tierscope's own structured record), which
    the caller hands on to the other formats.

    Rows carry their line's number in ``source_offset`` and ``source`` as given (null: the
    caller's file). A line that is not valid JSON, holds a value that cannot be represented or
    a malformed field (:class:`EntryError`) is a reject (format :data:`LINES_FORMAT`). Entries
    are read oldest first in chunks of :data:`EXPORT_CHUNK`, as a whole-file export is, so a
    sink file and the same entries exported with gcloud give the same records. ``context`` is
    the inner :class:`~tierscope.collector.formats.ParseContext` of the messages (keep one per file).
    """
    found: list[tuple[Entry, int]] = []
    bad: list[dict[str, Any]] = []
    not_entries: list[int] = []
    for number, text in lines:
        try:
            item = jsonvalues.loads(text)
        except jsonvalues.JSONValueError as exc:
            bad.append(_line_reject(number, str(exc), text))
            continue
        except json.JSONDecodeError as exc:
            bad.append(_line_reject(number, f"not valid JSON ({exc.msg} at column {exc.colno})", text))
            continue
        if not isinstance(item, dict) or "logName" not in item or KIND_KEY in item:
            not_entries.append(number)
            continue
        try:
            found.append((Entry.from_api_repr(item), number))
        except EntryError as exc:
            bad.append(_line_reject(number, str(exc), text))
    found.sort(key=lambda pair: oldest_first(pair[0]))
    nothing = pl.DataFrame()
    parts = [Parsed(steps=nothing, events=nothing, rejects=pl.DataFrame(bad, schema=_LINE_REJECT), rest=nothing)]
    for start in range(0, len(found), EXPORT_CHUNK):
        chunk = found[start : start + EXPORT_CHUNK]
        parts.append(
            records_from_entries([e for e, _ in chunk], context, source=source, positions=[n for _, n in chunk])
        )
    return joined(parts), not_entries


_LINE_REJECT: dict[str, pl.DataType] = {
    "source_offset": pl.Int64(),
    "format": pl.String(),
    "reason": pl.String(),
    "raw": pl.String(),
}


def _line_reject(number: int, reason: str, text: str) -> dict[str, Any]:
    return {"source_offset": number, "format": LINES_FORMAT, "reason": reason, "raw": text[:REJECT_RAW_MAX]}
