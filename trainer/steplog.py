"""The trainer's step log: the records :mod:`tierscope.collector.formats.structured` (``json``) or
:mod:`tierscope.collector.formats.cloudml` (``text``) read back.

``json`` goes through google-cloud-logging's ``StructuredLogHandler``: one JSON object per
line on the task's stdout, which Cloud Logging's agents turn into an entry whose
``jsonPayload`` is the record, labelled with ``run_id`` and ``tier``. ``text`` writes the
2016 experiment's line, ``Train [worker/1], step 200:loss:0.520, accuracy:0.910 (3.200 sec)
31.000 global_steps/s, 15.500 local_steps/s``. ``off`` writes nothing (to measure what
logging costs, see :mod:`tierscope.trainer.bench`).

Units: seconds (``elapsed_s``), steps per second, examples per second; timestamps UTC.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

from tierscope.contract import EVENTS, FAILED, JSON_LOG_SUFFIX, KIND_KEY, TEXT_LOG_SUFFIX

LogFormat = Literal["json", "text", "off"]
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "text", "off")
#: Log file suffix per format (:mod:`tierscope.contract`, which the collector reads a run directory by).
SUFFIXES: dict[str, str] = {"json": JSON_LOG_SUFFIX, "text": TEXT_LOG_SUFFIX, "off": TEXT_LOG_SUFFIX}


@dataclass(frozen=True)
class Identity:
    """Whose records these are: the run, its tier and the task writing them (role and index
    None for the job itself, e.g. the launcher's events)."""

    run_id: str
    tier: str
    role: str | None
    task_index: int | None


@dataclass
class IntervalMeter:
    """Rates over the interval since the previous record (the first one since ``start``, so it
    includes start-up, as the 2016 logs' first rate did). Times from ``time.perf_counter``."""

    start: float = field(default_factory=time.perf_counter)
    last_time: float | None = None
    last_global: int = 0
    last_local: int = 0

    def mark(self, global_step: int, local_step: int, now: float | None = None) -> tuple[float, float, float]:
        """``(elapsed_s, global_steps_per_s, local_steps_per_s)`` at ``now``; starts the next interval."""
        now = time.perf_counter() if now is None else now
        since = self.start if self.last_time is None else self.last_time
        seconds = max(now - since, 1e-9)
        rates = ((global_step - self.last_global) / seconds, (local_step - self.last_local) / seconds)
        self.last_time, self.last_global, self.last_local = now, global_step, local_step
        return now - self.start, max(rates[0], 0.0), max(rates[1], 0.0)


def utc_now() -> str:
    """Now as ISO 8601 UTC with microseconds and a ``Z`` (``2026-11-29T23:00:00.123456Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


#: Where google-cloud-logging's diagnostic entry goes: a stream, the process's stderr at the time, or nowhere.
Diagnostics = TextIO | Literal["stderr"] | None


def _structured_handler(labels: dict[str, str], stream: TextIO, diagnostics: Diagnostics) -> logging.Handler:
    from google.cloud.logging_v2.handlers import StructuredLogHandler

    class _TimestampedHandler(StructuredLogHandler):
        def emit_instrumentation_info(self) -> None:
            # Before its first record the handler writes a diagnostic entry (the library's version) to
            # the same stream: not a record of ours, so it goes to stderr and the step log stays records.
            import google.cloud.logging_v2 as cloud_logging
            from google.cloud.logging_v2._instrumentation import _create_diagnostic_entry

            cloud_logging._instrumentation_emitted = True
            out = sys.stderr if diagnostics == "stderr" else diagnostics
            if out is not None:
                out.write(json.dumps(_create_diagnostic_entry().payload) + "\n")

        # StructuredLogHandler drops a "timestamp" key from the payload (Cloud Logging reads
        # it as the entry's time); the record contract carries it in the line, so put it back.
        def format(self, record: logging.LogRecord) -> str:
            line = super().format(record)
            stamp = getattr(record, "tierscope_time", None)
            return line if stamp is None else '{"timestamp": ' + json.dumps(stamp) + ", " + line[1:]

    return _TimestampedHandler(labels=labels, stream=stream)


class StepLog:
    """Writes one task's step records and run events to ``stream`` (stdout by default), and nothing else:
    google-cloud-logging's diagnostic entry goes to ``diagnostics`` (default: stderr; None: nowhere).

    A step record holds the fields documented in :mod:`tierscope.collector.formats.structured`;
    ``role`` / ``task_index`` default to the writer's :class:`Identity` (the parameter-server
    coordinator passes its workers' instead). Not thread-safe; one per task.
    """

    def __init__(
        self,
        who: Identity,
        fmt: LogFormat = "json",
        stream: TextIO | None = None,
        diagnostics: Diagnostics = "stderr",
    ) -> None:
        if fmt not in LOG_FORMATS:
            raise ValueError(f"unknown log format {fmt!r}; choose one of {', '.join(LOG_FORMATS)}")
        self.who = who
        self.fmt = fmt
        # A logger of our own, outside logging's tree: the application's root handlers must
        # not see (or reformat) the step log, and two StepLogs must not share handlers.
        self._logger = logging.Logger("tierscope", logging.INFO)
        self._handler: logging.Handler | None = None
        if fmt == "json":
            labels = {"run_id": who.run_id, "tier": who.tier}
            self._handler = _structured_handler(labels, stream or sys.stdout, diagnostics)
        elif fmt == "text":
            self._handler = logging.StreamHandler(stream or sys.stdout)
            self._handler.setFormatter(logging.Formatter("%(levelname)s:tierscope:%(message)s"))
        if self._handler is not None:
            self._logger.addHandler(self._handler)

    def step(
        self,
        *,
        step: int,
        local_step: int,
        loss: float,
        accuracy: float,
        elapsed_s: float,
        global_steps_per_s: float,
        local_steps_per_s: float,
        batch_size: int,
        role: str | None = None,
        task_index: int | None = None,
    ) -> None:
        """Write one step record. ``examples_per_s`` is ``local_steps_per_s * batch_size``."""
        if self._handler is None:
            return
        role = self.who.role if role is None else role
        task_index = self.who.task_index if task_index is None else task_index
        if role is None or task_index is None:
            raise ValueError("a step record needs a role and a task index")
        if self.fmt == "text":
            self._logger.info(
                "Train [%s/%d], step %d:loss:%.3f, accuracy:%.3f (%.3f sec) %.3f global_steps/s, %.3f local_steps/s",
                *(role, task_index, step, loss, accuracy, elapsed_s, global_steps_per_s, local_steps_per_s),
            )
            return
        self._emit(
            logging.INFO,
            {
                "message": f"step {step}",
                KIND_KEY: "step",
                **self._ids(role, task_index),
                "step": step,
                "local_step": local_step,
                # a new process (a restart resuming from a checkpoint) shows as a new pid to the analysis
                "pid": os.getpid(),
                "loss": loss,
                "accuracy": accuracy,
                "elapsed_s": round(elapsed_s, 6),
                "global_steps_per_s": round(global_steps_per_s, 6),
                "local_steps_per_s": round(local_steps_per_s, 6),
                "examples_per_s": round(local_steps_per_s * batch_size, 3),
                "batch_size": batch_size,
            },
        )

    def event(
        self,
        event: str,
        reason: str | None = None,
        detail: dict[str, Any] | None = None,
        step: int | None = None,
    ) -> None:
        """Write a run event of this task: ``event`` one of :data:`tierscope.contract.EVENTS` (raises
        ValueError otherwise), ``detail`` JSON-serialisable, ``step`` the global step it concerns."""
        if event not in EVENTS:
            raise ValueError(f"unknown event {event!r}; choose one of {', '.join(EVENTS)}")
        if self._handler is None:
            return
        level = logging.ERROR if event == FAILED else logging.INFO
        if self.fmt == "text":
            self._logger.log(
                level,
                "Run %s %s %s%s%s",
                *(self.who.run_id, self._task_name(), event, f" at step {step}" if step else ""),
                f": {reason}" if reason else "",
            )
            return
        payload: dict[str, Any] = {
            "message": f"{event}" + (f": {reason}" if reason else ""),
            KIND_KEY: "event",
            **self._ids(self.who.role, self.who.task_index),
            "event": event,
            "reason": reason,
            "detail": detail or {},
        }
        if step is not None:
            payload["step"] = step
        self._emit(level, payload)

    def _task_name(self) -> str:
        return "job" if self.who.role is None else f"{self.who.role}/{self.who.task_index}"

    def _ids(self, role: str | None, task_index: int | None) -> dict[str, Any]:
        return {"run_id": self.who.run_id, "tier": self.who.tier, "role": role, "task_index": task_index}

    def _emit(self, level: int, payload: dict[str, Any]) -> None:
        self._logger.log(level, payload, extra={"tierscope_time": utc_now()})

    def flush(self) -> None:
        if self._handler is not None:
            self._handler.flush()

    def close(self) -> None:
        """Flush and detach the handler (the stream is left open)."""
        if self._handler is not None:
            self._handler.flush()
            self._logger.removeHandler(self._handler)
            self._handler = None
