"""The figures behind every interval, computed a batch of runs at a time so memory stays bounded.

:func:`tierscope.analysis.throughput.interval_rates` holds one row per record: 10 million records
take over a GB once materialised, and several times that while they are sorted and
windowed. Every figure drawn from the intervals is per run, though: the windows are
over a task, a segment or a run (``.over("run_id")`` for the run's median), the
aggregates are grouped by run (or by task within a run), and each run's bootstrap is
seeded by its own id. So intervals computed over a few whole runs at a time give
exactly the figures of one pass over all of them, and peak memory follows the largest
batch (at most :data:`BATCH_RECORDS` records, or one run if a run is larger) instead
of the dataset. A hive-partitioned dataset reads only the batch's files.

What needs more than one run (the baseline's speedup, the scaling fit) reads only the
per-run results kept here: the throughput and task rows and the steady samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import BOOTSTRAP_SEED
from tierscope.analysis.goodput import GOODPUT_SCHEMA, event_frame, run_goodput
from tierscope.analysis.tasks import task_throughput
from tierscope.analysis.throughput import collect_intervals, run_throughput, steady_samples

#: Runs are processed together up to this many step records (a larger run alone). Computing the
#: intervals of 500,000 records takes about 0.6 GB at its peak; the batch size barely changes the
#: CPU time (10M records, 2 cores: 250k 20 s, 500k 20 s, 1M 21 s, 2M 23 s; peak 0.6 / 0.8 / 1.0 / 1.3 GB).
BATCH_RECORDS = 500_000


@dataclass
class IntervalFigures:
    """The per-run results of every interval: ``throughput`` (:data:`tierscope.analysis.throughput.THROUGHPUT_SCHEMA`,
    sorted by run id), ``tasks`` (:data:`tierscope.analysis.tasks.TASK_SCHEMA`, sorted by run, role,
    task index), ``samples`` (``{run_id: steady interval rates}`` in global steps/s, as
    :func:`tierscope.analysis.throughput.steady_samples`) and ``goodput``
    (:data:`tierscope.analysis.goodput.GOODPUT_SCHEMA`, sorted by run id)."""

    throughput: pl.DataFrame
    tasks: pl.DataFrame
    samples: dict[str, np.ndarray]
    goodput: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=GOODPUT_SCHEMA))


def record_counts(steps: pl.LazyFrame) -> pl.DataFrame:
    """``run_id`` (String), ``records`` (UInt32): ``steps``' records per run, sorted by run id."""
    return steps.group_by("run_id").agg(records=pl.len().cast(pl.UInt32)).sort("run_id").collect()


def run_batches(counts: pl.DataFrame, max_records: int = BATCH_RECORDS) -> list[list[str | None]]:
    """The run ids of ``counts`` (records per run, :func:`record_counts`' columns) in batches of whole
    runs, in run id order: consecutive runs are grouped while their records add up to at most
    ``max_records`` (a run with more is a batch alone)."""
    batches: list[list[str | None]] = []
    held = max_records  # forces a new batch for the first run
    for run_id, records in counts.sort("run_id").select("run_id", "records").iter_rows():
        if held + records > max_records:
            batches.append([])
            held = 0
        batches[-1].append(run_id)
        held += records
    return batches


def interval_figures(
    steps: pl.LazyFrame,
    seed: int = BOOTSTRAP_SEED,
    extra: Sequence[str] = (),
    visit: Callable[[pl.DataFrame], None] | None = None,
    max_records: int = BATCH_RECORDS,
    counts: pl.DataFrame | None = None,
    events: pl.DataFrame | None = None,
) -> IntervalFigures:
    """:func:`tierscope.analysis.throughput.run_throughput`, :func:`tierscope.analysis.tasks.task_throughput` and
    :func:`tierscope.analysis.throughput.steady_samples` of ``steps`` (:data:`tierscope.dataset.schema.STEP_SCHEMA`
    rows), computed a batch of runs at a time (:func:`run_batches`). ``counts``: :func:`record_counts`
    of ``steps``, if the caller has them (one query of the steps fewer). ``events``: the events
    table's :data:`tierscope.analysis.goodput.EVENT_COLUMNS` for the runs' goodput (None: no events).

    ``visit``, if given, is called once per batch with that batch's intervals
    (:func:`tierscope.analysis.throughput.collect_intervals` with ``extra`` columns), for a caller
    that draws more per-run figures from them (the report's charts); they are dropped
    once it returns.
    """
    throughput, tasks, goodput = [], [], []
    samples: dict[str, np.ndarray] = {}
    events = event_frame(events)
    # No runs at all: one pass over the (empty) steps still gives frames with their schema.
    counts = record_counts(steps) if counts is None else counts
    for batch in run_batches(counts, max_records) or [None]:
        part = steps if batch is None else steps.filter(pl.col("run_id").is_in(batch, nulls_equal=True))
        intervals = collect_intervals(part, extra)
        throughput.append(run_throughput(part, seed=seed, intervals=intervals))
        goodput.append(run_goodput(intervals, throughput[-1], events))
        tasks.append(task_throughput(part, intervals=intervals))
        samples.update(steady_samples(intervals.filter(~pl.col("warmup"))))
        if visit is not None:
            visit(intervals)
        del intervals  # before the next batch is computed, not after
    return IntervalFigures(
        throughput=pl.concat(throughput).sort("run_id"),
        tasks=pl.concat(tasks).sort("run_id", "role", "task_index"),
        samples=samples,
        goodput=pl.concat(goodput).sort("run_id"),
    )
