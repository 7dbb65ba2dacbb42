"""One analysis pass over a dataset: every figure a command shows, computed once.

:func:`analyze` opens each table of the dataset once (``Dataset.scans`` counts it) and
returns an :class:`Analysis`, a plain object that ``summary``, ``predict``, ``recommend`` and
the report read without touching the dataset again. What it costs:

- ``runs`` (run facts), ``events`` and ``rejects`` are small: read whole (the rejects only
  counted).
- ``steps`` is the large table. One query over its ``run_id, step, tier, source`` columns gives
  the records per run, the highest step, the tiers and the sources; then the intervals are
  computed a batch of whole runs at a time (:mod:`tierscope.analysis.batches`: each batch
  reads only its runs' partitions) and dropped once the batch's per-run figures, steady
  samples and, with ``charts``, bucketed chart series (:mod:`tierscope.analysis.series`) are
  taken from them, and with a target or ``charts`` each run's loss or accuracy on its clock
  (:mod:`tierscope.analysis.target`: reduced to the time to target and a bucketed series; the
  evaluations of an accuracy target read from the batch's partitions). Peak memory follows the
  largest batch, not the dataset.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from tierscope.analysis.batches import RECORD_COLUMNS, IntervalFigures, interval_figures
from tierscope.analysis.bootstrap import SteadyRates
from tierscope.analysis.clock import LONGEST_ELAPSED_S, impossible_elapsed, on_the_clock
from tierscope.analysis.comparable import apart
from tierscope.analysis.configurations import configurations
from tierscope.analysis.cost import run_costs
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.goodput import EVENT_COLUMNS as GOODPUT_EVENT_COLUMNS
from tierscope.analysis.lone_task import FOOTER_COLUMNS as LONE_FOOTER_COLUMNS
from tierscope.analysis.lone_task import READ_ALONE_COLUMNS, lone_tasks, read_alone
from tierscope.analysis.options import DEFAULT_TARGET_STEPS, AnalysisOptions
from tierscope.analysis.provenance import Provenance, provenance
from tierscope.analysis.series import INTERVAL_VIEW, ChartSeries, ThroughputSeries, charted_runs
from tierscope.analysis.stated_rates import GLOBAL_RATE, measured_rates, stated_rate_counts, stated_rate_notes
from tierscope.analysis.summary import (
    batch_notes,
    failures,
    mixed_unit_notes,
    run_index,
    summary_frame,
    withhold_non_finite,
)
from tierscope.analysis.target import (
    MetricSeries,
    Target,
    TargetPass,
    event_evaluations,
    target_of,
    with_time_to_target,
)
from tierscope.analysis.whole_run import whole_run_rates
from tierscope.dataset.schema import off_the_clock
from tierscope.dataset.store import Dataset
from tierscope.errors import TierscopeError

if TYPE_CHECKING:
    from tierscope.analysis.forecast import Scaling  # imports scipy: only when fitting

#: The events table's columns the pass reads (tiers, failures, sources, the runs' start and end for goodput).
EVENT_COLUMNS = [
    "run_id",
    "tier",
    "event",
    "reason",
    "source",
    "source_offset",
    "timestamp",
    "role",
    "task_index",
    "step",
    "detail",  # an eval_end event's metrics (tierscope's trainer): evaluations for an accuracy target
]


@dataclass
class Analysis:
    """What one pass over a dataset found (see :func:`analyze`).

    - ``options``: what was asked (:class:`tierscope.analysis.options.AnalysisOptions`).
    - ``runs``: the run index, ``run_id, tier, ran_on, date, note, topology``
      (:func:`tierscope.analysis.summary.run_index`).
    - ``costs``: :func:`tierscope.analysis.cost.tier_costs` of ``runs`` on each run's date
      (else ``options.price_date``, else today) in ``options.region``.
    - ``figures``: the per-run and per-task interval figures and steady samples
      (:class:`tierscope.analysis.batches.IntervalFigures`).
    - ``summary``: one row per run, :data:`tierscope.analysis.summary.SUMMARY_SCHEMA`, with the
      time and price columns for ``target_steps``.
    - ``target_steps``: N of "time and price to N steps" (None: not asked).
    - ``last_step``: the highest global step of any run (None: no step records).
    - ``provenance``: sources, collection times, counts, price rows, version.
    - ``series``: the bucketed throughput series the report charts (None unless ``options.charts``).
    - ``target``: the loss or accuracy target asked (:class:`tierscope.analysis.target.Target`; None: none);
      the summary's ``time_to_target_s``, ``step_at_target``, ``cost_to_target``... columns answer it.
    - ``metric_series``: the charted runs' loss (or the target's accuracy) over wall time
      (:class:`tierscope.analysis.target.MetricSeries`; None unless ``options.charts``).
    - ``scaling``: the Amdahl and USL fits (:class:`tierscope.analysis.forecast.Scaling`; None
      unless ``options.fits``, or until :func:`tierscope.analysis.forecast.scaling` fits them).
    """

    options: AnalysisOptions
    runs: pl.DataFrame
    costs: pl.DataFrame
    figures: IntervalFigures
    summary: pl.DataFrame
    target_steps: int | None
    last_step: int | None
    provenance: Provenance
    series: ThroughputSeries | None = None
    scaling: Scaling | None = None
    target: Target | None = None
    metric_series: MetricSeries | None = None
    #: What the figures of a run leave out and why, ``(run id, sentence)`` each (stored times outside 1970-9999).
    notes: list[tuple[str, str]] = field(default_factory=list)
    #: One row per configuration (runs repeating one job pooled, their spread between runs):
    #: :func:`tierscope.analysis.configurations.configurations` of ``summary``.
    configurations: pl.DataFrame | None = None
    #: How the work of each run kept apart from the baseline differs from the baseline's, the parts of the
    #: summary's ``baseline_note`` (:func:`tierscope.analysis.comparable.apart`; its ``APART_SCHEMA``).
    apart: pl.DataFrame | None = None


def step_overview(steps: pl.LazyFrame, footers: pl.DataFrame | None = None) -> pl.DataFrame:
    """One query of the step records: per run (sorted by run id) ``run_id`` (String), ``records``
    (UInt32), ``last_step`` (Int64), ``tiers``, ``sources`` and ``log_formats`` (the formats that read its
    records: :mod:`tierscope.analysis.comparable`) (List of String, distinct, sorted), and
    :func:`log_examples`' columns (null where no record states examples/s): ``log_batch_size``
    (Float64: the batch a step of one replica processes), ``log_examples_unit``, ``log_examples_per_s``,
    ``log_examples_other``, ``log_replicas`` (:func:`lockstep_replicas`).

    ``footers``: what the files' footers say (:meth:`tierscope.dataset.store.Dataset.footers` of
    :data:`OVERVIEW_COLUMNS`, the files of ``steps``' runs): a run whose every file holds one tier,
    one source and one format (or none) and states its highest step takes its figures from them, unread; the
    others are read."""
    # Two light queries rather than one with a list per run: per run, tier, source and format first (a few
    # rows each), and the batch ratio over the rows that log both rates only (pushed into the scan).
    stated = _stated_values(footers)
    unread = steps if stated is None else steps.filter(~pl.col("run_id").is_in(stated["run_id"].unique().implode()))
    per_value = unread.group_by("run_id", "tier", "source", "format").agg(
        records=pl.len(), last_step=pl.col("step").max()
    )
    batch = log_examples(steps)
    # streaming: only the per-run rows are kept, whatever the records (collect_all would merge the scans)
    values, batches = per_value.collect(engine="streaming"), batch.collect(engine="streaming")
    if stated is not None:
        values = pl.concat([values, stated.cast(values.schema)])  # type: ignore[arg-type]
    return (
        values.group_by("run_id")
        .agg(
            records=pl.col("records").sum().cast(pl.UInt32),
            last_step=pl.col("last_step").max(),
            tiers=pl.col("tier").drop_nulls().unique().sort(),
            sources=pl.col("source").drop_nulls().unique().sort(),
            log_formats=pl.col("format").drop_nulls().unique().sort(),
        )
        .join(batches, on="run_id", how="left")
        .with_columns(pl.col("log_batch_size", "log_examples_per_s").cast(pl.Float64))
        .with_columns(pl.col("log_replicas").cast(pl.UInt32))
        .sort("run_id")
    )


def log_examples(steps: pl.LazyFrame) -> pl.LazyFrame:
    """Per run whose records state examples/s: ``run_id``, ``log_examples_unit`` (``tokens`` or ``examples``:
    what most of those records counted, the step schema's ``examples_unit``; a tie is tokens),
    ``log_batch_size`` (the median of examples/s over local steps/s where a record of that unit logs both; null:
    none does), ``log_examples_per_s`` (the median examples/s of that unit's records) and ``log_examples_other``
    (UInt32: the records that counted the other unit, left out: tokens are never added to images).

    The median examples/s is what a log timed by its clock alone (no steps/s, no step time) says of its
    examples: its warm-up lines are a few of many, which a median does not follow."""
    unit = pl.when((pl.col("examples_unit") == "tokens").fill_null(False)).then(pl.lit("tokens"))
    per_unit = (
        steps.filter(pl.col("examples_per_s").is_not_null())
        .with_columns(log_examples_unit=unit.otherwise(pl.lit("examples")))
        .group_by("run_id", "log_examples_unit")
        .agg(
            _records=pl.len(),
            log_batch_size=(pl.col("examples_per_s") / pl.col("local_steps_per_s"))
            .filter(pl.col("local_steps_per_s") > 0)
            .median(),
            log_examples_per_s=pl.col("examples_per_s").median(),
        )
    )
    return (
        per_unit.sort("run_id", "_records", "log_examples_unit", descending=[False, True, True])
        .group_by("run_id", maintain_order=True)
        .agg(
            pl.col("log_examples_unit", "log_batch_size", "log_examples_per_s").first(),
            log_examples_other=(pl.col("_records").sum() - pl.col("_records").first()).cast(pl.UInt32),
        )
        .join(lockstep_replicas(steps), on="run_id", how="left")
    )


#: The share of a run's step reports at a global step another task reported too, from which its tasks are
#: replicas in lockstep. Synchronous replicas each report every global step they log (a PyTorch/XLA
#: process per TPU core, torchrun ranks that all print); asynchronous workers read a shared counter at
#: their own moments, and two of them rarely print the same value.
LOCKSTEP_SHARE = 0.8


def lockstep_replicas(steps: pl.LazyFrame) -> pl.LazyFrame:
    """Per run whose records state examples/s: ``run_id``, ``log_replicas`` (UInt32: the tasks that
    reported them, where at least two did and :data:`LOCKSTEP_SHARE` or more of their reports are of a
    global step another task reported too; null otherwise). Each such task is a replica that processed its
    own batch at every global step, and its examples/s are its own: the run's are their sum, whatever
    the machines (one TPU VM runs a process per core; one a2-highgpu-8g, eight ranks)."""
    reports = (
        steps.filter(pl.col("examples_per_s").is_not_null()).select("run_id", "step", "role", "task_index").unique()
    )
    at_step = reports.group_by("run_id", "step").agg(reporters=pl.len())
    shared = at_step.group_by("run_id").agg(
        _shared=pl.col("reporters").filter(pl.col("reporters") >= 2).sum() / pl.col("reporters").sum()
    )
    tasks = reports.select("run_id", "role", "task_index").unique().group_by("run_id").agg(_tasks=pl.len())
    return tasks.join(shared, on="run_id").select(
        "run_id",
        log_replicas=pl.when((pl.col("_tasks") >= 2) & (pl.col("_shared") >= LOCKSTEP_SHARE))
        .then(pl.col("_tasks"))
        .cast(pl.UInt32),
    )


def off_the_clock_notes(steps: pl.LazyFrame, events: pl.DataFrame) -> list[tuple[str, str]]:
    """``(run id, sentence)`` per run whose records or events hold a time outside 1970-9999 (a dataset
    written before the collector rejected such times): how many, and that they count as untimed. Reads
    the ``run_id`` and ``timestamp`` columns of ``steps`` alone."""
    by_run = (
        pl.concat(
            [
                steps.filter(off_the_clock()).select("run_id", kind=pl.lit("record")).collect(engine="streaming"),
                events.filter(off_the_clock()).select("run_id", kind=pl.lit("event")),
            ]
        )
        .group_by("run_id", "kind")
        .agg(count=pl.len())
        .sort("run_id", "kind", descending=[False, True])
    )
    notes = []
    for (run_id,), rows in by_run.group_by("run_id", maintain_order=True):
        said = " and ".join(f"{c:,} {k}{'s' if c != 1 else ''}" for k, c in rows.select("kind", "count").iter_rows())
        notes.append(
            (
                run_id,
                f"{said} stored with a time outside 1970-9999, read as untimed (the run's clock is then its "
                "elapsed seconds where it logs them); collect its logs into a new dataset to reject them",
            )
        )
    return notes


def impossible_elapsed_counts(steps: pl.LazyFrame) -> pl.DataFrame:
    """``run_id, impossible_elapsed`` (UInt32), ``largest_elapsed`` (Float64), one row per run whose records state
    an elapsed time no process can have run (:func:`tierscope.analysis.clock.impossible_elapsed`), sorted by run
    id: how many, and the largest. Reads ``run_id`` and ``elapsed_s`` alone."""
    return (
        steps.filter(impossible_elapsed())
        .group_by("run_id")
        .agg(impossible_elapsed=pl.len().cast(pl.UInt32), largest_elapsed=pl.col("elapsed_s").max())
        .sort("run_id")
        .collect(engine="streaming")
    )


def impossible_elapsed_notes(counts: pl.DataFrame) -> list[tuple[str, str]]:
    """``(run id, sentence)`` per run of :func:`impossible_elapsed_counts`' ``counts``: how many, the largest,
    and that they are left out of its rates (:func:`tierscope.analysis.throughput.ordered_records`)."""
    return [
        (
            run_id,
            f"{count:,} record{'s' if count != 1 else ''} stating an elapsed time of "
            f"{beyond(largest, LONGEST_ELAPSED_S)} s{' at most' if count != 1 else ''}, beyond any run's length "
            f"(over {LONGEST_ELAPSED_S:,.0f} s, 1,000 years): left out of its rates, not read as a restart",
        )
        for run_id, count, largest in counts.select("run_id", "impossible_elapsed", "largest_elapsed").iter_rows()
    ]


def clock_jump_notes(jumps: pl.DataFrame) -> list[tuple[str, str]]:
    """``(run id, sentence)`` per run of :func:`tierscope.analysis.clock.judged_jumps`' ``jumps``: the largest jump,
    where, against the run's pace, and that the run is set aside (no figure of it is built on its clock)."""
    return [
        (
            run_id,
            f"its clock jumps {duration(jump)} between global steps {before:,} and {after:,}, where a step takes "
            f"{step_s:.3g} s: no run pauses so long between two steps of one process (a clock set wrong), so no "
            f"figure of it is built on that clock; its records are set aside"
            + (f" ({count:,} such jumps)" if count > 1 else ""),
        )
        for run_id, count, jump, before, after, step_s in jumps.select(
            "run_id", "clock_jumps", "jump_s", "jump_from_step", "jump_to_step", "step_s"
        ).iter_rows()
    ]


def duration(seconds: float) -> str:
    """``seconds`` (> 1 day) in the largest unit that reads: ``312.3 years``, ``2.0 days``."""
    years = seconds / (365.25 * 86400)
    return f"{years:,.1f} years" if years >= 1 else f"{seconds / 86400:,.1f} days"


def beyond(figure: float, bound: float) -> str:
    """``figure`` (above ``bound``, or not finite) in the fewest significant digits (at least 4) that still read
    above ``bound``: 3.1557600001e10 against 31,557,600,000 is ``3.1557600001e+10``, never a rounded
    ``3.156e+10`` that reads as the bound itself or less."""
    if not math.isfinite(figure):
        return f"{figure:g}"
    for digits in range(4, 18):
        shown = f"{figure:.{digits}g}"
        if float(shown) > bound:
            return shown
    return repr(figure)


def _on_the_clock(chunks: Iterator[pl.DataFrame], alone: bool = False) -> Iterator[pl.DataFrame]:
    """``chunks`` (of one run) with :func:`tierscope.analysis.clock.on_the_clock`'s times, where they have a
    timestamp, :func:`tierscope.analysis.stated_rates.measured_rates`' global rates, where they have one, and, for
    a run whose task is ``alone`` (:func:`tierscope.analysis.lone_task.lone_tasks`), its local steps read so."""
    for chunk in chunks:
        if "timestamp" in chunk.columns:
            chunk = chunk.with_columns(on_the_clock())
        if GLOBAL_RATE in chunk.columns:
            chunk = chunk.with_columns(measured_rates())
        yield chunk.with_columns(read_alone()) if alone and set(READ_ALONE_COLUMNS) <= set(chunk.columns) else chunk


#: The step record's columns whose footer statistics :func:`step_overview` can take for reading them.
OVERVIEW_COLUMNS = ["tier", "source", "format", "step"]


def _stated_values(footers: pl.DataFrame | None) -> pl.DataFrame | None:
    """``run_id, tier, source, format, records, last_step`` per file of the runs whose every file's footer
    states one tier, one source and one format (or only nulls) and its highest step (None: no footers)."""
    if footers is None:
        return None

    def one_value(column: str) -> pl.Expr:
        only_nulls = pl.col(f"{column}_nulls") == pl.col("rows")
        return pl.col(f"{column}_known") & (only_nulls | (pl.col(f"{column}_min") == pl.col(f"{column}_max")))

    told = one_value("tier") & one_value("source") & one_value("format") & pl.col("step_known")
    return footers.filter(told.all().over("run_id")).select(
        "run_id",
        tier=pl.when(pl.col("tier_nulls") < pl.col("rows")).then("tier_min"),
        source=pl.when(pl.col("source_nulls") < pl.col("rows")).then("source_min"),
        format=pl.when(pl.col("format_nulls") < pl.col("rows")).then("format_min"),
        records="rows",
        last_step="step_max",
    )


class SelectionError(AnalysisError, ValueError):
    """``runs`` or ``tiers`` of :class:`AnalysisOptions` select no run, or name one the dataset lacks."""


def _run_filter(run_ids: tuple[str, ...]) -> pl.Expr | None:
    return pl.col("run_id").is_in(list(run_ids)) if run_ids else None


def _selected(runs: pl.DataFrame, options: AnalysisOptions, dataset: Dataset) -> pl.DataFrame:
    """The rows of the run index ``runs`` that ``options.runs`` and ``options.tiers`` select.
    Raises :class:`SelectionError` for a run id the dataset lacks or a tier no selected run has."""
    missing = [r for r in options.runs if r not in set(runs["run_id"])]
    if missing:
        # Only on this error path: the run ids of the whole dataset, to say which exist.
        known = sorted(set(dataset.read("runs", columns=["run_id"])["run_id"]))
        raise SelectionError(
            f"no run {', '.join(map(repr, missing))} in {dataset.root} (--runs); its runs: {', '.join(known) or 'none'}"
        )
    if not options.tiers:
        return runs
    wanted = [t.upper() for t in options.tiers]
    chosen = runs.filter(pl.col("tier").str.to_uppercase().is_in(wanted))
    if chosen.height == 0:
        tiers = sorted(set(runs["tier"].drop_nulls()))
        raise SelectionError(
            f"no run of tier {', '.join(options.tiers)} (--tier) among {runs.height} runs; their tiers: "
            f"{', '.join(tiers) or 'none'}"
        )
    return chosen


def _footers(dataset: Dataset) -> pl.DataFrame | None:
    """The steps' footers for :func:`step_overview` and :func:`lone_tasks` (None where one cannot be read: their
    queries read every run)."""
    try:
        return dataset.footers("steps", [*OVERVIEW_COLUMNS, *LONE_FOOTER_COLUMNS])
    except (OSError, ValueError):
        return None


def with_log_dates(runs: pl.DataFrame, events: pl.DataFrame, steps: pl.LazyFrame | None = None) -> pl.DataFrame:
    """``runs`` with a run of no date dated by its log: the day (UTC) of its first event with a timestamp,
    else of its first step record with one (``steps``, read for those runs alone: most runs are dated by
    their manifest or their events, so the records' times are read only where nothing else dates a run)."""
    timed = events.filter(pl.col("timestamp").is_not_null()).select("run_id", "timestamp")
    undated = runs.filter(pl.col("date").is_null())["run_id"]
    undated = undated.filter(~undated.is_in(timed["run_id"].unique().implode()))
    if steps is not None and undated.len() > 0:
        first_records = (
            steps.filter(pl.col("run_id").is_in(undated.implode()) & pl.col("timestamp").is_not_null())
            .group_by("run_id")
            .agg(pl.col("timestamp").min())
            .collect(engine="streaming")
        )
        timed = pl.concat([timed, first_records.cast(timed.schema)])  # type: ignore[arg-type]
    first = timed.group_by("run_id").agg(logged=pl.col("timestamp").min().dt.date())
    return (
        runs.join(first, on="run_id", how="left")
        .with_columns(
            date_origin=pl.when(pl.col("date").is_not_null())
            .then(pl.lit("run"))
            .when(pl.col("logged").is_not_null())
            .then(pl.lit("log")),
            date=pl.coalesce("date", "logged"),
        )
        .drop("logged")
    )


def _target(options: AnalysisOptions, last_step: int | None) -> int | None:
    if options.steps == "longest":
        return last_step or DEFAULT_TARGET_STEPS
    return options.steps


class _Gatherers:
    """The chart and target gatherers, handed each batch's intervals on a thread of their own: a fifth of a
    report's pass, they take a batch in while the pass computes the next batch's figures (and reads the
    batch after that), so each core has work. In order, a batch at a time: at most one batch's
    intervals wait for them (the pass' peak memory grows by one batch's intervals). Their errors are
    raised here, at the next batch or at the end."""

    def __init__(self, visitors: list[Callable[[pl.DataFrame], None]]) -> None:
        self.visitors = visitors
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tierscope-charts") if visitors else None
        self.pending: Future[None] | None = None

    def _take(self, intervals: pl.DataFrame) -> None:
        for add in self.visitors:
            add(intervals)

    def visit(self, intervals: pl.DataFrame) -> None:
        """Hand one batch's intervals to every gatherer, once the previous batch's are taken in."""
        self._wait()
        assert self.pool is not None  # only called with gatherers
        self.pending = self.pool.submit(self._take, intervals)

    def _wait(self) -> None:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.result()

    def __enter__(self) -> _Gatherers:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        try:
            if kind is None:
                self._wait()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True, cancel_futures=True)


def analyze(dataset: Dataset, options: AnalysisOptions | None = None) -> Analysis:
    """Analyse ``dataset``: every table opened once, the steps a batch of runs at a time.

    Raises as :func:`_analyze`; a data file whose pages do not decode (its footer read: a file
    without a digest in its name) as :class:`tierscope.dataset.errors.DatasetCorruptError` naming it.
    """
    try:
        return _analyze(dataset, options)
    except TierscopeError:
        raise
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:  # pyarrow: OSError or ValueError
        try:
            found = dataset.corrupt_file("steps")
        except FileNotFoundError:  # a compaction replaced a file meanwhile: the query's own error
            found = None
        if found is None:
            raise
        raise found from exc


def _analyze(dataset: Dataset, options: AnalysisOptions | None = None) -> Analysis:
    """Analyse ``dataset``: every table opened once, the steps a batch of runs at a time.

    Raises :class:`tierscope.dataset.errors.DatasetCorruptError` if a data file is unreadable,
    :class:`tierscope.analysis.summary.BaselineError` for a bad ``options.baseline``,
    :class:`SelectionError` when ``options.runs`` or ``options.tiers`` select no run,
    :class:`tierscope.analysis.target.TargetError` for both a loss and an accuracy target.
    """
    options = options or AnalysisOptions()
    goal = target_of(options.target_loss, options.target_accuracy)
    # --runs is pushed into every scan (hive partitions by run id: unselected runs are not read);
    # --tier needs the run index first (a run's tier is in its facts, events or records).
    picked = _run_filter(options.runs)
    facts = dataset.read("runs", where=picked)
    events = dataset.read("events", where=picked, columns=EVENT_COLUMNS)
    stored = dataset.scan("steps")
    chosen = stored if picked is None else stored.filter(picked)
    notes = off_the_clock_notes(chosen, events)
    elapsed = impossible_elapsed_counts(chosen)
    stated = stated_rate_counts(chosen)
    notes += impossible_elapsed_notes(elapsed) + stated_rate_notes(stated)
    # a time outside 1970-9999 is no time: read as none, so no figure is reckoned from it; a stated rate of 0 or
    # beyond any machine is no rate (analysis.stated_rates)
    events, steps = events.with_columns(on_the_clock()), stored.with_columns(on_the_clock(), measured_rates())
    footers = _footers(dataset)
    if picked is not None:
        steps = steps.filter(picked)
        footers = footers.filter(picked) if footers is not None else None
    overview = step_overview(steps, footers)
    seen = pl.concat(
        [
            # each run's first tier in its records, null where they name none: an explode dropped such a run
            # under polars 2 (an empty list gives no row), and its records never reached the summary
            overview.select("run_id", tier=pl.col("tiers").list.drop_nulls().list.first()),
            events.select("run_id", "tier"),
        ]
    )
    runs = _selected(run_index(facts, seen), options, dataset)
    if options.tiers:
        chosen = _run_filter(tuple(runs["run_id"]))
        facts, events, overview = facts.filter(chosen), events.filter(chosen), overview.filter(chosen)
        steps = steps.filter(chosen)
        picked = chosen
    rejected = dataset.scan("rejects")
    rejects = (rejected if picked is None else rejected.filter(picked)).select(pl.len()).collect().item()
    gather = ChartSeries(charted_runs(overview)) if options.charts else None
    started = events.filter(pl.col("event") == "started").group_by("run_id").agg(pl.col("timestamp").min())
    metrics = None
    samples: dict[str, SteadyRates] = {}  # each batch's, before its intervals are visited: a time's rate
    if goal is not None or gather is not None:
        charted = gather.runs["run_id"].to_list() if gather is not None else None
        metrics = TargetPass(steps, goal, dict(started.iter_rows()), charted, event_evaluations(events), samples)
    visitors = [v.add for v in (gather, metrics) if v is not None]
    # a task alone made every global step between its lines: its step times time them all (analysis.lone_task)
    unrated = stated.filter((pl.col("zero_rates") > 0) | (pl.col("implausible_rates") > 0)).get_column("run_id")
    lone = lone_tasks(runs, steps, footers, unrated)
    if lone.height:
        steps = steps.with_columns(read_alone(lone))
    alone = set(lone["run_id"])
    with _Gatherers(visitors) as gatherers:
        figures = interval_figures(
            steps,
            options.seed,
            extra=(*(INTERVAL_VIEW if gather is not None else ()), *(metrics.columns if metrics is not None else ())),
            visit=gatherers.visit if visitors else None,
            counts=overview.select(RECORD_COLUMNS),
            events=events.select(GOODPUT_EVENT_COLUMNS),
            chunks=lambda run_id, columns, rows: _on_the_clock(
                dataset.chunks("steps", run_id, columns, rows), run_id in alone
            ),
            samples=samples,
        )
    # a run whose clock jumps by days between steps of seconds has no interval to build a figure on: the pass set
    # it aside (batches.IntervalFigures.jumps: no figures, no chart, no time to target); nor is it dated off that
    # clock (a year 2318 would price it on rows of that year), nor are its records read for its failures
    jumps = figures.jumps
    if jumps.height:
        kept = ~pl.col("run_id").is_in(jumps["run_id"].implode())
        notes += clock_jump_notes(jumps)
        steps, dated, lone = steps.filter(kept), events.filter(kept), lone.filter(kept)
    else:
        dated = events
    runs = with_log_dates(runs, dated, steps)
    costs = run_costs(runs, options.price_day(), options.region, options.price_table(), options.price_date is not None)
    last_step = overview["last_step"].max()
    target = _target(options, last_step)
    batches = overview.select(
        "run_id", "log_batch_size", "log_examples_unit", "log_examples_per_s", "log_replicas", "log_formats"
    )
    notes += batch_notes(runs, batches) + mixed_unit_notes(
        overview.filter(pl.col("run_id").is_in(runs["run_id"].implode()))
    )
    set_aside = stated.join(elapsed, on="run_id", how="full", coalesce=True).join(
        jumps.select("run_id", "clock_jumps"), on="run_id", how="full", coalesce=True
    )
    ended = failures(events, steps)
    summary = summary_frame(
        runs, figures, costs, ended, options, target, batches, whole_run_rates(events), set_aside, lone
    )
    summary = with_time_to_target(summary, metrics.reached() if metrics is not None else None, goal)
    summary = withhold_non_finite(summary)
    configs = configurations(summary, target)
    sources = pl.concat([overview["sources"].explode(), events["source"]])
    analysis = Analysis(
        options=options,
        runs=runs,
        costs=costs,
        figures=figures,
        summary=summary,
        target_steps=target,
        last_step=last_step,
        provenance=provenance(str(dataset.root), summary, costs, facts, sources, rejects, options.region),
        series=ThroughputSeries(gather.runs, *gather.frames()) if gather is not None else None,
        target=goal,
        metric_series=metrics.series() if gather is not None and metrics is not None else None,
        notes=notes,
        configurations=configs,
        apart=apart(summary, batches, named=options.baseline is not None),
    )
    if options.fits:
        from tierscope.analysis.forecast import scaling  # only the commands that fit import it

        scaling(analysis)
    return analysis
