"""MLPerf logging (``mlperf_logging.mllog``): one ``:::MLLOG {json}`` object per line.

::

    :::MLLOG {"namespace": "", "time_ms": 1700000123456, "event_type": "POINT_IN_TIME",
              "key": "throughput", "value": 812.4, "metadata": {"file": "train.py", "lineno": 90, "step": 300}}

- ``throughput``: a step record at ``metadata.step`` (the global step) with ``value`` as
  ``examples_per_s`` (MLPerf reports samples per second).
- ``eval_accuracy``: a record of role ``evaluator`` with ``value`` (the benchmark's quality
  metric as logged) as ``eval_accuracy``, at ``metadata.step``; without a step it is skipped.
- ``run_start`` is a ``started`` event; ``run_stop`` is ``finished`` when
  ``metadata.status`` is ``success`` and ``failed`` (reason: the status) otherwise.
- Every other key (``epoch_start``, ``block_stop``, hyperparameters...) carries no rate
  and is skipped.

``time_ms`` (milliseconds since the Unix epoch) is the ``timestamp``; ``elapsed_s`` is
seconds since the file's last ``run_start`` (carried across batches), null before it.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import polars as pl

from tierscope.collector import jsonvalues
from tierscope.collector.formats.base import ParseContext, Parsed, SingleLineFormat, split_by
from tierscope.collector.formats.vocabulary import NOT_UNIX_TIME, NOT_WHOLE, WHOLE_MAX, is_unix_time

_MARK = ":::MLLOG"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class _Bad(ValueError):
    pass


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise _Bad(f"{what} {value!r} is not a finite number >= 0")
    return float(value)


def _step(meta: dict[str, Any], key: str) -> int | None:
    step = meta.get("step")
    if step is None:
        return None
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= WHOLE_MAX["step"]:
        raise _Bad(f"{key}: metadata.step {step!r} {NOT_WHOLE}")
    return step


class MLPerf(SingleLineFormat):
    name: ClassVar[str] = "mlperf"
    example: ClassVar[str] = (
        ':::MLLOG {"namespace": "", "time_ms": 1700000123456, "event_type": "POINT_IN_TIME", '
        '"key": "throughput", "value": 812.4, "metadata": {"file": "train.py", "lineno": 90, "step": 300}}'
    )
    meaning: ClassVar[str] = (
        "step is metadata.step (global step); throughput is examples_per_s; elapsed_s is seconds since run_start"
    )

    mark: ClassVar[str] = _MARK
    mark_is_literal: ClassVar[bool] = True

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        ours, rest = split_by(lines, self.marked())
        state: dict[str, Any] = context.state.setdefault(self.name, {})
        start_ms: float | None = state.get("run_start_ms")
        steps: list[dict[str, Any]] = []
        events: list[dict[str, Any]] = []
        rejects: list[dict[str, Any]] = []
        for offset, line in ours.select("source_offset", "line").iter_rows():
            try:
                kind, row = self._read(line, start_ms)
            except _Bad as exc:
                rejects.append({"source_offset": offset, "format": self.name, "reason": str(exc), "raw": line})
                continue
            if kind == "started":
                start_ms = row.pop("_ms")
                if context.end is None or offset < context.end:
                    state["run_start_ms"] = start_ms
            if kind is None:
                continue
            row |= {"source_offset": offset, "format": self.name}
            (steps if kind == "step" else events).append(row)
        return Parsed(
            steps=pl.DataFrame(steps, infer_schema_length=None),
            events=pl.DataFrame(events, infer_schema_length=None),
            rejects=pl.DataFrame(rejects, infer_schema_length=None),
            rest=rest,
        )

    @staticmethod
    def _read(line: str, start_ms: float | None) -> tuple[str | None, dict[str, Any]]:
        """``(kind, row)``: kind is ``step``, ``started``, ``finished``/``failed`` or None (skipped)."""
        text = line[line.index(_MARK) + len(_MARK) :]
        try:
            obj = jsonvalues.loads(text)
        except jsonvalues.JSONValueError as exc:
            raise _Bad(f"':::MLLOG' {exc}") from None
        except json.JSONDecodeError as exc:
            raise _Bad(f"not valid JSON after ':::MLLOG' ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("key"), str):
            raise _Bad("':::MLLOG' object without a string 'key'")
        key = obj["key"]
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        if key not in ("throughput", "eval_accuracy", "run_start", "run_stop"):
            return None, {}
        ms = _finite(obj.get("time_ms"), f"{key}: time_ms")
        if not is_unix_time(ms / 1000):
            # datetime would raise (year 10000, a time_t overflow) or store a time no log has
            raise _Bad(f"{key}: time_ms {obj['time_ms']!r} / 1000 {NOT_UNIX_TIME}")
        # milliseconds added to the epoch: exact, where ms / 1000 as a float is not near year 9999
        stamp = _EPOCH + timedelta(milliseconds=ms)
        if key == "run_start":
            return "started", {"event": "started", "timestamp": stamp, "_ms": ms}
        if key == "run_stop":
            status = meta.get("status")
            if status == "success":
                return "finished", {"event": "finished", "timestamp": stamp}
            return "failed", {"event": "failed", "reason": f"MLPerf run_stop status: {status}", "timestamp": stamp}
        value = _finite(obj.get("value"), f"{key} value")
        step = _step(meta, key)
        row: dict[str, Any] = {
            "step": step,
            "timestamp": stamp,
            "elapsed_s": None if start_ms is None else (ms - start_ms) / 1000,
        }
        if key == "throughput":
            if step is None:
                raise _Bad("throughput without metadata.step: no step to store it at")
            return "step", row | {"examples_per_s": value}
        if step is None:
            return None, {}
        return "step", row | {"role": "evaluator", "eval_accuracy": value}
