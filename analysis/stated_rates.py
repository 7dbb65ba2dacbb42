"""A stated steps/s that measures nothing: 0 (no step was made to time) or beyond any machine.

A rate is steps over a time. A log that states ``global_step/sec: 0`` timed no step: a job that hung, a
counter that never moved, a mutated line. Read as a measurement it gives a steady rate of 0 and a plan of
infinite hours (no machine is that slow: it is not running). A stated ``1e300`` steps/s would reach any
target in no time and be recommended. Both are left out of a run's rates (its clock, where it has one,
still times its steps), each said once per run with its count (:func:`stated_rate_notes`), and a run left
with no rate says which of the two it is (``summary``'s ``steady_status``).

The bound, :data:`MAX_STEPS_PER_S`: one step a microsecond. A training step runs its model forward,
backward and an update, each at least one kernel on an accelerator, and a kernel's launch alone costs
microseconds (4-6 µs a launch measured on an RTX 5070 Ti, https://susun-blog.com/blog/pegainfer-3-cuda-graph,
read 2026-12-07; the overhead NVIDIA's CUDA Graphs exist to cut, https://developer.nvidia.com/blog/cuda-graphs/);
a step on a CPU goes through a framework's dispatch of several operations, each of the same order. The
fastest of the shared real cases runs 449.85 global steps/s (case22): a million leaves over three orders of
magnitude above it. The same bound keeps a local step time from timing an interval
(:data:`tierscope.analysis.throughput.MAX_TIMING_STEPS_PER_S`).
"""

from __future__ import annotations

import polars as pl

#: The fastest steps/s a log can state and mean it (see the module doc): one step a microsecond.
MAX_STEPS_PER_S = 1e6

#: The column of the step records a stated global rate is in (:data:`tierscope.dataset.schema.STEP_SCHEMA`).
GLOBAL_RATE = "global_steps_per_s"


def zero_rate(column: str = GLOBAL_RATE) -> pl.Expr:
    """Boolean: ``column`` states 0 steps/s (or less; false where it is null)."""
    rate = pl.col(column)
    return (rate.is_not_null() & (rate <= 0)).fill_null(False)


def implausible_rate(column: str = GLOBAL_RATE) -> pl.Expr:
    """Boolean: ``column`` states more than :data:`MAX_STEPS_PER_S`, or a figure that is not finite (false
    where it is null)."""
    rate = pl.col(column)
    return (rate.is_not_null() & (rate.is_nan() | (rate > MAX_STEPS_PER_S))).fill_null(False)


def measured_rates(column: str = GLOBAL_RATE) -> pl.Expr:
    """``column`` with every :func:`zero_rate` and :func:`implausible_rate` read as null (a record that states
    no rate), aliased to ``column``."""
    return pl.when(zero_rate(column) | implausible_rate(column)).then(None).otherwise(pl.col(column)).alias(column)


#: The columns of :func:`stated_rate_counts`: per run, the records whose stated global rate was left out.
COUNTS_SCHEMA = {"run_id": pl.String(), "zero_rates": pl.UInt32(), "implausible_rates": pl.UInt32(),
                 "largest_rate": pl.Float64()}  # fmt: skip


def stated_rate_counts(steps: pl.LazyFrame) -> pl.DataFrame:
    """:data:`COUNTS_SCHEMA`, one row per run with a record stating a zero or implausible global rate (sorted
    by run id): how many of each, and the largest stated. Reads ``run_id`` and ``global_steps_per_s`` alone."""
    return (
        steps.select("run_id", GLOBAL_RATE)
        .filter(zero_rate() | implausible_rate())
        .group_by("run_id")
        .agg(
            zero_rates=zero_rate().sum().cast(pl.UInt32),
            implausible_rates=implausible_rate().sum().cast(pl.UInt32),
            largest_rate=pl.col(GLOBAL_RATE).filter(implausible_rate()).max(),
        )
        .sort("run_id")
        .collect(engine="streaming")
        .cast(COUNTS_SCHEMA)  # type: ignore[arg-type]
    )


def stated_rate_notes(counts: pl.DataFrame) -> list[tuple[str, str]]:
    """``(run id, sentence)`` per run and kind of :func:`stated_rate_counts`' ``counts``: how many records stated
    it, and that they are left out of its rates."""
    notes = []
    for run_id, zeros, implausible, largest in counts.select(*COUNTS_SCHEMA).iter_rows():
        if zeros:
            notes.append(
                (
                    run_id,
                    f"{_records(zeros)} stating 0 global steps/s, which times no step: left out of its rates "
                    "(a zero rate is no measurement)",
                )
            )
        if implausible:
            notes.append(
                (
                    run_id,
                    f"{_records(implausible)} stating global steps/s beyond any machine (up to {largest:g}; over "
                    f"{MAX_STEPS_PER_S:,.0f} is more than a step a microsecond): left out of its rates",
                )
            )
    return notes


def _records(count: int) -> str:
    """``1 record``, ``2 records``."""
    return f"{count:,} record{'s' if count != 1 else ''}"
