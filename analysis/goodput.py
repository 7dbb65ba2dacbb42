"""Goodput per run: how much of the time a job was billed for went into training progress that lasted.

After ML Goodput Measurement (AI-Hypercomputer/ml-goodput-measurement: goodput = productive
time / job lifetime, with a badput breakdown), derived from the records and events a job
already wrote rather than from an instrumented recorder. All times in seconds, on the clock
of the run's **lead task** (master/chief 0, else its first training task,
:func:`tierscope.analysis.throughput.lead_tasks`): it starts with the job and logs the
shared global step. Every step is valued at the run's steady-state rate ``R`` (global
steps/s, :mod:`tierscope.analysis.throughput`).

- **Clock** (:mod:`tierscope.analysis.clock`, shared with time to target): the records' timestamps
  when the lead's records all have one (the origin: the run's first ``started`` event, else the
  first record's timestamp minus its ``elapsed_s``, else unknown); else ``elapsed_s`` (the task's
  own clock from its process start) when the lead ran as one segment; else none (restarts on an
  unknown clock).
- **Lifetime**: origin to the run's last ``finished``/``failed`` event, else to the lead's last record.
- **Start-up**: origin to the first record, minus the time its steps take at ``R``
  (``t_first - step_first / R``, clipped at 0).
- **Warm-up**: in the warm-up intervals after a segment's first record
  (:mod:`tierscope.analysis.throughput`), the time beyond what their steps take at ``R``.
- **Stalls**: a steady interval taking more than :data:`STALL_FACTOR` times what its steps take
  at ``R`` (a checkpoint save, an evaluation, an input stall) adds its excess. The log lines
  that would say which (``Saving checkpoints``) are not stored, so stalls are not classified.
- **Restarts**: between a segment's last record and the next one's first, the time beyond
  what that first record's steps take at ``R``. The next segment is taken to resume from one
  logging interval (the lead's median step interval) before its first record.
- **Wasted progress**: steps done again after resuming from a checkpoint behind the highest
  step reached (that step minus the resumed one), at ``R``.
- **Tail**: the lead's last record to the run's last ``finished``/``failed`` event.
- **Productive time**: the steps' time at ``R`` in first records and warm-up and stalled
  intervals, plus the whole of the other steady intervals, minus the wasted progress.
  **Goodput** = productive time / lifetime.

A bucket the log cannot show is null, never 0: no end event (tail), no clock origin
(start-up), restarts without timestamps. Goodput is then over the lifetime that is seen, and
``goodput_unobserved`` names the null buckets.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from tierscope.analysis.clock import lead_clock
from tierscope.analysis.throughput import lead_tasks

#: An interval taking more than this many times its steps' time at the steady rate is a stall.
#: Why 1.25 and not more: a logging interval is often 100 steps (20 s at 5 steps/s), and a 10 s
#: checkpoint save makes it only 1.5 times as long; noise of a few % never comes near 25 %.
STALL_FACTOR = 1.25
#: The buckets, in the order of a stacked bar.
BUCKETS = ("startup", "warmup", "stalls", "restarts", "wasted", "tail")
#: Events that end a run (their time ends its lifetime).
END_EVENTS = ("finished", "failed")

#: Columns of :func:`run_goodput` (shares are of ``lifetime_s``).
GOODPUT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "lifetime_s": pl.Float64(),
    "productive_s": pl.Float64(),
    "goodput": pl.Float64(),  # productive_s / lifetime_s
    **{f"badput_{b}_s": pl.Float64() for b in BUCKETS},
    **{f"badput_{b}_share": pl.Float64() for b in BUCKETS},
    "stalls": pl.UInt32(),  # stalled intervals
    "goodput_clock": pl.String(),  # timestamp / elapsed (null: no clock)
    "goodput_unobserved": pl.String(),  # the null buckets, comma-separated (null: none)
}

#: The events table's columns :func:`run_goodput` reads.
EVENT_COLUMNS = ("run_id", "event", "timestamp")


def _one_run(lead: pl.DataFrame, rate: float, started: object, ended: object) -> dict[str, object]:
    """The buckets of one run from its lead task's intervals (log order) and its steady rate."""
    steps = lead["step"].to_numpy().astype(float)
    first = lead["interval_index"].to_numpy() == 0
    warm = lead["warmup"].to_numpy() & ~first
    d_step = lead["d_step"].fill_null(0).to_numpy().astype(float)
    d_seconds = lead["d_seconds"].fill_null(0.0).to_numpy()
    expected = d_step / rate
    stalled = ~first & ~warm & (d_seconds > STALL_FACTOR * expected)
    out: dict[str, object] = {"stalls": int(stalled.sum())}
    out["badput_warmup_s"] = float(np.clip(d_seconds - expected, 0, None)[warm].sum())
    out["badput_stalls_s"] = float((d_seconds - expected)[stalled].sum())
    steady_time = float(d_seconds[~first & ~warm & ~stalled].sum()) + float(expected[warm | stalled].sum())

    clock = lead_clock(lead, started, ended)
    t, origin_known, end = clock.seconds, clock.origin_known, clock.end

    starts = np.flatnonzero(first)
    interval = float(np.median(d_step[~first])) if (~first).any() else 0.0
    wasted_steps, restarts, first_progress = 0.0, 0.0, 0.0
    highest = -np.inf
    for k, i in enumerate(starts):
        if k == 0:
            base = 0.0
        else:
            highest = max(highest, steps[starts[k - 1] : i].max())
            base = max(steps[i] - interval, 0.0)  # resumed one logging interval before its first record
            wasted_steps += max(highest - base, 0.0)
            if t is not None:
                restarts += max(t[i] - t[i - 1] - (steps[i] - base) / rate, 0.0)
        first_progress += (steps[i] - base) / rate
    out["badput_wasted_s"] = wasted_steps / rate
    out["badput_restarts_s"] = restarts if t is not None else None
    if t is None:
        out.update(badput_startup_s=None, badput_tail_s=None, lifetime_s=None)
    else:
        startup = max(t[0] - steps[starts[0]] / rate, 0.0) if origin_known else None
        out["badput_startup_s"] = startup
        out["badput_tail_s"] = max(end - t[-1], 0.0) if end is not None else None
        begin = 0.0 if origin_known else t[0] - steps[starts[0]] / rate  # the seen span starts at the first step
        out["lifetime_s"] = (end if end is not None else t[-1]) - begin
    out["goodput_clock"] = clock.name
    out["productive_s"] = steady_time + first_progress - out["badput_wasted_s"]
    return out


def run_goodput(intervals: pl.DataFrame, throughput: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Goodput and badput of each run of ``intervals`` (:func:`tierscope.analysis.throughput.collect_intervals`,
    in log order per task) with a steady rate in ``throughput``
    (:data:`tierscope.analysis.throughput.THROUGHPUT_SCHEMA`): :data:`GOODPUT_SCHEMA`, one row per such
    run, sorted by run id. ``events``: the events table's :data:`EVENT_COLUMNS` (any runs: the first
    ``started`` and the last ``finished``/``failed`` time of each)."""
    rates = throughput.filter(pl.col("steady_global_steps_per_s") > 0).select("run_id", "steady_global_steps_per_s")
    lead = intervals.join(lead_tasks(intervals.lazy()).collect(), on=["run_id", "role", "task_index"], how="semi")
    bounds = events.group_by("run_id").agg(
        started=pl.col("timestamp").filter(pl.col("event") == "started").min(),
        ended=pl.col("timestamp").filter(pl.col("event").is_in(END_EVENTS)).max(),
    )
    rows = []
    by_run = dict(rates.iter_rows())
    limits = {r: (s, e) for r, s, e in bounds.iter_rows()}
    for (run_id,), part in lead.group_by("run_id", maintain_order=True):
        if run_id not in by_run:
            continue
        started, ended = limits.get(run_id, (None, None))
        row = _one_run(part, by_run[run_id], started, ended)
        rows.append({"run_id": run_id, **row})
    frame = pl.DataFrame(rows, schema={k: v for k, v in GOODPUT_SCHEMA.items() if not k.endswith("_share")})
    frame = frame.with_columns(
        goodput=pl.col("productive_s") / pl.col("lifetime_s"),
        goodput_unobserved=pl.concat_str(
            [pl.when(pl.col(f"badput_{b}_s").is_null()).then(pl.lit(b)) for b in BUCKETS],
            separator=",",
            ignore_nulls=True,
        ).replace("", None),
        **{f"badput_{b}_share": pl.col(f"badput_{b}_s") / pl.col("lifetime_s") for b in BUCKETS},
    )
    return frame.select([pl.col(n).cast(t) for n, t in GOODPUT_SCHEMA.items()]).sort("run_id")
