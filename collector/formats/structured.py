"""tierscope's structured step log: one JSON object per line.

The trainer writes it through google-cloud-logging's ``StructuredLogHandler``, so the
same object arrives in Cloud Logging as an entry's ``jsonPayload``. A step record::

    {"message": "step 200", "severity": "INFO",
     "logging.googleapis.com/labels": {"run_id": "r1", "tier": "BASIC"},
     "tierscope": "step", "run_id": "r1", "tier": "BASIC", "role": "worker", "task_index": 0,
     "step": 200, "local_step": 100, "pid": 4242, "loss": 0.52, "accuracy": 0.91, "elapsed_s": 3.2,
     "global_steps_per_s": 31.0, "local_steps_per_s": 15.5, "examples_per_s": 1550.0,
     "batch_size": 100, "timestamp": "2026-11-29T23:00:00.123456Z"}

A run event has ``"tierscope": "event"``, ``"event"`` (one of :data:`tierscope.contract.EVENTS`:
started / failed / finished and the milestones goodput reads, such as ``checkpoint_begin``),
``"reason"``, ``"detail"`` (an object) and, for a milestone, ``"step"``. Meaning of the numbers: ``step`` is the global
step, ``local_step`` this task's own count, ``pid`` the process that wrote it, ``elapsed_s`` seconds since the task
started, rates over the last logging interval. Objects without a top-level ``"tierscope"`` key are
not ours and are handed on to the next format: a Cloud Logging entry holding a record in its
``jsonPayload`` is read by :mod:`tierscope.collector.formats.logentry`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import polars as pl

from tierscope.collector import jsonvalues
from tierscope.collector.formats.base import ParseContext, Parsed, SingleLineFormat
from tierscope.collector.formats.vocabulary import NOT_UNIX_TIME, WHOLE_MAX, is_unix_time
from tierscope.contract import KIND_KEY
from tierscope.dataset.schema import EVENTS, ROLES

LABELS_KEY = "logging.googleapis.com/labels"

#: The largest value of each whole field (the vocabulary's, by its group: task_index is a ``task``).
_INT_MAX = {
    "step": WHOLE_MAX["step"],
    "local_step": WHOLE_MAX["local_step"],
    "task_index": WHOLE_MAX["task"],
    "pid": WHOLE_MAX["pid"],
}
#: The Unix epoch, to put a time in seconds without datetime.timestamp()'s overflow at year 10000 UTC.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FLOAT_FIELDS = (
    "loss",
    "accuracy",
    "elapsed_s",
    "interval_s",
    "global_steps_per_s",
    "local_steps_per_s",
    "examples_per_s",
)


class RecordError(ValueError):
    """A structured record with a missing or invalid field."""


def _as_int(payload: Mapping[str, Any], key: str, required: bool) -> int | None:
    value = payload.get(key)
    if value is None:
        if required:
            raise RecordError(f"missing field '{key}'")
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not math.isfinite(value))  # int(nan) raises
        or value != int(value)
    ):
        raise RecordError(f"field '{key}' is {value!r}, not a whole number")
    if value < 0:
        raise RecordError(f"field '{key}' is {value!r}, negative")
    if value > _INT_MAX[key]:
        # a frame's column would overflow (a traceback): more than the stored type holds
        raise RecordError(f"field '{key}' is {value!r}, more than {_INT_MAX[key]} (the largest a record holds)")
    return int(value)


def _pid(payload: Mapping[str, Any]) -> int | None:
    """The record's ``pid``, None where it names none a record can hold: a process id only marks a new process (a
    restart), so a record whose pid is a string, negative or too large keeps its figures and loses that mark."""
    try:
        return _as_int(payload, "pid", required=False)
    except RecordError:
        return None


def _as_float(payload: Mapping[str, Any], key: str) -> float | None:
    value = payload.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(f"field '{key}' is {value!r}, not a number")
    if key != "loss" and (not math.isfinite(value) or value < 0):
        raise RecordError(f"field '{key}' is {value!r}, not a finite number >= 0")
    return float(value)


def _as_time(value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise RecordError(f"timestamp {value!r} is not an ISO 8601 time") from None
    # a time without an offset is stored as UTC; an offset can carry 9999-12-31 into year 10000
    # (whole seconds, floored: a float of them cannot tell 9999-12-31T23:59:59.999999 from year 10000)
    since = (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)) - _EPOCH
    if not is_unix_time(since // timedelta(seconds=1)):
        raise RecordError(f"timestamp {value!r} {NOT_UNIX_TIME}")
    return stamp


def record_from_payload(payload: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``("step" | "event", row)`` from one structured payload (a line's object or a jsonPayload).

    ``row`` uses the column names of :data:`~tierscope.dataset.schema.STEP_SCHEMA` or
    ``EVENT_SCHEMA``. Raises :class:`RecordError` saying which field is wrong.
    """
    kind = payload.get(KIND_KEY)
    labels = payload.get(LABELS_KEY) or {}
    role = payload.get("role")
    if role is not None and str(role).lower() not in ROLES:
        raise RecordError(f"unknown role {role!r} (expected one of {', '.join(ROLES)})")
    common = {
        "run_id": payload.get("run_id") or labels.get("run_id"),
        "tier": payload.get("tier") or labels.get("tier"),
        "role": None if role is None else str(role).lower(),
        "task_index": _as_int(payload, "task_index", required=False),
        "timestamp": _as_time(payload.get("timestamp")),
    }
    if kind == "step":
        row = common | {k: _as_int(payload, k, required=(k == "step")) for k in ("step", "local_step")}
        row["pid"] = _pid(payload)
        row |= {k: _as_float(payload, k) for k in _FLOAT_FIELDS}
        accuracy = row["accuracy"]
        if accuracy is not None and not 0 <= accuracy <= 1:
            raise RecordError(f"field 'accuracy' is {accuracy!r}, not between 0 and 1")
        return "step", row
    if kind == "event":
        event = payload.get("event")
        if event not in EVENTS:
            raise RecordError(f"event {event!r} is not one of {', '.join(EVENTS)}")
        detail = payload.get("detail")
        return "event", common | {
            "event": event,
            "reason": payload.get("reason"),
            "detail": None if detail is None else json.dumps(detail, sort_keys=True),
            "step": _as_int(payload, "step", required=False),
        }
    raise RecordError(f"'{KIND_KEY}' is {kind!r}, expected 'step' or 'event'")


def rows_from_payloads(
    items: Iterable[tuple[int | None, Mapping[str, Any]]], fmt: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Steps, events and rejects (as row dicts) from ``(source_offset, payload)`` pairs."""
    steps: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    rejects: list[dict[str, Any]] = []
    for offset, payload in items:
        try:
            kind, row = record_from_payload(payload)
        except RecordError as exc:
            rejects.append(
                {
                    "source_offset": offset,
                    "format": fmt,
                    "reason": str(exc),
                    "raw": json.dumps(payload, sort_keys=True, default=str),
                }
            )
            continue
        row |= {"source_offset": offset, "format": fmt}
        (steps if kind == "step" else events).append(row)
    return steps, events, rejects


class StructuredJSON(SingleLineFormat):
    name: ClassVar[str] = "structured"
    example: ClassVar[str] = (
        '{"tierscope": "step", "run_id": "r1", "tier": "BASIC", "role": "chief", "task_index": 0, '
        '"step": 200, "loss": 0.52, "accuracy": 0.91, "elapsed_s": 3.2, "global_steps_per_s": 31.0, '
        '"local_steps_per_s": 31.0}'
    )
    meaning: ClassVar[str] = (
        "step is the global step, local_step the task's own; elapsed_s is seconds since the "
        "task started; rates cover the last logging interval"
    )

    def sniff(self, lines: pl.Series) -> int:
        # A Cloud Logging entry holding a record names the kind key inside its jsonPayload: it
        # is one LogEntry per line (logentry-lines), even though the structured format runs first.
        mentions = lines.str.contains(f'"{KIND_KEY}"', literal=True)
        return int((mentions & ~lines.str.contains('"logName"', literal=True)).sum())

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        # A literal search is a fast scan; stripping every line is a copy of the batch. Text
        # logs (most of the volume) mention no kind key and leave here.
        if not lines.select(pl.col("line").str.contains(f'"{KIND_KEY}"', literal=True).any()).item():
            empty = pl.DataFrame()
            return Parsed(steps=empty, events=empty, rejects=empty, rest=lines)
        ours = pl.col("line").str.strip_chars_start().str.starts_with("{") & pl.col("line").str.contains(
            f'"{KIND_KEY}"', literal=True
        )
        candidates = lines.filter(ours)
        payloads: list[tuple[int | None, Mapping[str, Any]]] = []
        bad: list[dict[str, Any]] = []
        not_ours: list[int] = []
        for offset, line in candidates.select("source_offset", "line").iter_rows():
            try:
                payload = jsonvalues.loads(line)
            except jsonvalues.JSONValueError as exc:
                bad.append({"source_offset": offset, "format": self.name, "reason": str(exc), "raw": line})
                continue
            except json.JSONDecodeError as exc:
                bad.append(
                    {
                        "source_offset": offset,
                        "format": self.name,
                        "reason": f"not valid JSON ({exc.msg} at column {exc.colno})",
                        "raw": line,
                    }
                )
                continue
            if not isinstance(payload, dict):
                bad.append(
                    {"source_offset": offset, "format": self.name, "reason": "JSON value is not an object", "raw": line}
                )
                continue
            if KIND_KEY not in payload:
                # The key is nested (a Cloud Logging entry's jsonPayload): another format's line.
                not_ours.append(offset)
                continue
            payloads.append((offset, payload))
        steps, events, rejects = rows_from_payloads(payloads, self.name)
        # Keep the raw line (not the re-serialised object) so the reject shows what was read.
        raw_by_offset = dict(candidates.select("source_offset", "line").iter_rows())
        for row in rejects:
            row["raw"] = raw_by_offset.get(row["source_offset"], row["raw"])
        return Parsed(
            steps=pl.DataFrame(steps, infer_schema_length=None),
            events=pl.DataFrame(events, infer_schema_length=None),
            rejects=pl.DataFrame(bad + rejects, infer_schema_length=None),
            rest=lines.filter(~ours | pl.col("source_offset").is_in(not_ours)),
        )
