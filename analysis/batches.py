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

A run with more records than a batch is computed alone, whole while it holds no more than the
batches computed at once together (:data:`PARALLEL_BATCHES` times :data:`BATCH_RECORDS`): its cost
per record is then a batch's. A larger run is taken in **pieces** of whole tasks (consecutive tasks
in task order, up to that many records; a task with more is a piece alone), so memory follows the
largest piece (:func:`pieced_run`). Everything within a task is per task; what a run shares between
its tasks is two medians (the raw interval rates a step jump is judged against, the in-segment rates
warm-up is judged against, :data:`tierscope.analysis.throughput.JUMP_MEDIAN`,
:data:`~tierscope.analysis.throughput.WARM_MEDIAN`) and the per-run figures. The pieces are read in
one pass, each judged against the first piece's two medians while the rates behind the run's are
gathered; at its end, the run's medians (exact: the median of every rate, polars' to the bit) are
checked to judge no record otherwise (:func:`_one_pass`), and where one would, the figures come from
three passes that each find a median first. The per-run figures are exact too: counts add up, the
steady rate and its bootstrap interval come from the run's steady samples gathered in the unbatched
order, start-up and goodput from the lead task's intervals alone, stragglers from the tasks' own
figures; the mean rate is the pieces' steady steps over their steady seconds, equal up to the
rounding of a float sum taken in another order. The report's ``visit`` still receives a pieced run's
intervals whole (its charts bucket over the run).

A clock that jumps by days between two steps (:func:`tierscope.analysis.clock.clock_jumps`) is judged on the
intervals the pass holds: a run's are whole in its batch; a pieced run's intervals over a day are kept from
each piece and its pace (a median of every interval's seconds a step) read back from the spill only if there
are any.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import (
    BOOTSTRAP_SEED,
    SteadyRates,
    exact_median,
    median_of,
    steady_rates,
)
from tierscope.analysis.clock import (
    CLOCK_JUMP_SCHEMA,
    PACE,
    PACED,
    clock_intervals,
    clock_jumps,
    judged_jumps,
    long_intervals,
    pace_of,
)
from tierscope.analysis.engine import IN_MEMORY
from tierscope.analysis.errors import SpillError
from tierscope.analysis.goodput import GOODPUT_SCHEMA, event_frame, run_goodput
from tierscope.analysis.records import training_steps
from tierscope.analysis.tasks import own_figures, task_throughput, with_peers
from tierscope.analysis.throughput import (
    FIGURE_COLUMNS,
    INPUT_COLUMNS,
    JUMP_FACTOR,
    JUMP_RATES,
    STEADY_WEIGHT,
    WARM_RATES,
    WARMUP_FRACTION,
    collect_intervals,
    interval_samples,
    lead_rows,
    lead_tasks,
    ordered_records,
    pause_steps,
    run_parts,
    run_throughput,
    throughput_frame,
    with_pauses,
    with_raw_rates,
    with_segments,
    with_warmup,
)
from tierscope.dataset.schema import STEP_SCHEMA
from tierscope.tempdirs import owned_dir

#: Runs are processed together up to this many step records (a larger run alone). Computing the
#: intervals of 500,000 records takes about 0.6 GB at its peak; the batch size barely changes the
#: CPU time (10M records, 2 cores: 250k 20 s, 500k 20 s, 1M 21 s, 2M 23 s; peak 0.6 / 0.8 / 1.0 / 1.3 GB).
BATCH_RECORDS = 500_000
#: Batches computed at once, each on a thread (two cores: 1.9 of them busy, against 1.5 with one
#: thread reading ahead); peak memory grows by a batch's.
PARALLEL_BATCHES = 2


@dataclass
class IntervalFigures:
    """The per-run results of every interval: ``throughput`` (:data:`tierscope.analysis.throughput.THROUGHPUT_SCHEMA`,
    sorted by run id), ``tasks`` (:data:`tierscope.analysis.tasks.TASK_SCHEMA`, sorted by run, role,
    task index), ``samples`` (``{run_id: steady interval rates}`` in global steps/s, as
    :func:`tierscope.analysis.throughput.steady_samples`) and ``goodput``
    (:data:`tierscope.analysis.goodput.GOODPUT_SCHEMA`, sorted by run id)."""

    throughput: pl.DataFrame
    tasks: pl.DataFrame
    samples: dict[str, SteadyRates]
    goodput: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=GOODPUT_SCHEMA))
    #: ``{run_id: bootstrap draws of its steady rate}`` (:func:`tierscope.analysis.bootstrap.steady_draws`
    #: with ``draws_seed``, :data:`tierscope.analysis.bootstrap.BOOTSTRAP_DRAWS` draws): the speedup's
    #: interval divides the same draws (None: not kept).
    draws: dict[str, np.ndarray] = field(default_factory=dict)
    draws_seed: int | None = None
    #: The runs whose clock jumps by days (:func:`tierscope.analysis.clock.judged_jumps`' rows, sorted by run id),
    #: found in the pass and set aside: their figures are those of a run whose records are all left out.
    jumps: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=CLOCK_JUMP_SCHEMA))


#: A run's stored records in stored order, a frame of at most ``rows`` at a time, given its id, the
#: columns wanted and ``rows`` (:meth:`tierscope.dataset.store.Dataset.chunks`): what a run taken in
#: pieces is split from.
RunChunks = Callable[[str, list[str], int], Iterable[pl.DataFrame]]
#: Rows held (of every piece) before each piece's are written to its file as a row group: about
#: 100 MB, and row groups of 50,000 rows or more for 20 pieces (polars reads many small ones back
#: into as many chunks, which every pass over the piece then pays for: 0.15 GB more at 6 M records).
SPILL_ROWS = 1_048_576
#: The name of a pieced run's spill directory in the temporary folder starts with this.
SPILL_PREFIX = "tierscope-pieces-"
#: Rows read at a time into the pieces (at most a piece's budget).
SPILL_READ_ROWS = 131_072

#: What :func:`tierscope.analysis.throughput.throughput_frame` takes of each run's records: ``run_id``,
#: ``records`` (UInt32, every stored record) and ``last_step`` (Int64, the highest global step).
RECORD_COLUMNS = ("run_id", "records", "last_step")


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
    chunks: RunChunks | None = None,
    samples: dict[str, SteadyRates] | None = None,
) -> IntervalFigures:
    """:func:`tierscope.analysis.throughput.run_throughput`, :func:`tierscope.analysis.tasks.task_throughput` and
    :func:`tierscope.analysis.throughput.steady_samples` of ``steps`` (:data:`tierscope.dataset.schema.STEP_SCHEMA`
    rows), computed a batch of runs at a time (:func:`run_batches`). ``counts``: :func:`record_counts`
    of ``steps``, if the caller has them (one query of the steps fewer), with ``last_step`` too
    (:data:`RECORD_COLUMNS`, as :func:`tierscope.analysis.analyze.step_overview` gives them: one per
    batch fewer). ``events``: the events table's :data:`tierscope.analysis.goodput.EVENT_COLUMNS` for
    the runs' goodput and the pauses of their steady rates (None: no events). ``chunks``: where a run
    taken in pieces reads its records
    (:data:`RunChunks`, as :meth:`tierscope.dataset.store.Dataset.chunks` gives them; None: from ``steps``).

    ``visit``, if given, is called once per batch with that batch's intervals
    (:func:`tierscope.analysis.throughput.collect_intervals` with ``extra`` columns), for a caller
    that draws more per-run figures from them (the report's charts); they are dropped
    once it returns. ``samples``: a dict the steady samples (:attr:`IntervalFigures.samples`) are put in,
    each batch's before its ``visit`` (a visitor may read its runs'; None: a new one).

    A run whose clock jumps by days between two steps (:func:`tierscope.analysis.clock.clock_jumps`, judged on
    the intervals each batch or piece holds anyway: no read of its own) is set aside once its batch is done:
    :attr:`IntervalFigures.jumps` says where, its figures are those of a run with no interval (its records
    counted), and neither ``samples`` nor ``visit`` receive it.
    """
    events = event_frame(events)
    # No runs at all: one pass over the (empty) steps still gives frames with their schema.
    counts = record_counts(steps) if counts is None else counts
    sizes = dict(counts.select("run_id", "records").iter_rows())
    batches = run_batches(counts, max_records) or [None]
    keep = visit is not None

    def part_of(batch: list[str | None] | None) -> pl.LazyFrame:
        return steps if batch is None else steps.filter(pl.col("run_id").is_in(batch, nulls_equal=True))

    # A run computed alone holds no other batch's intervals beside its own: it may be as large as the
    # batches computed at once together. Only a run larger than that is taken in pieces.
    alone = PARALLEL_BATCHES * max_records

    def pieced(batch: list[str | None] | None) -> bool:
        return batch is not None and len(batch) == 1 and sizes[batch[0]] > alone

    def large(batch: list[str | None] | None) -> bool:
        return batch is not None and len(batch) == 1 and sizes[batch[0]] > max_records

    def whole(batch: list[str | None] | None) -> PiecedRun:
        part = part_of(batch)
        known = None if batch is None or "last_step" not in counts.columns else counts
        return batch_figures(part, batch, known, events, seed, extra, keep)

    def set_aside(done: PiecedRun) -> PiecedRun:
        # A run whose clock jumps by days has no interval to build a figure on: its figures are a run's whose
        # records are all left out (its records still counted), its intervals never visited (charts, target).
        jumped = done.jumps.get_column("run_id")
        known = None if "last_step" not in counts.columns else counts
        blank = batch_figures(steps.clear(), jumped.to_list(), known, events, seed, extra, False)
        kept = ~pl.col("run_id").is_in(jumped.implode(), nulls_equal=True)
        gone = set(jumped.to_list())
        return PiecedRun(
            throughput=pl.concat([done.throughput.filter(kept), blank.throughput]).sort("run_id"),
            tasks=pl.concat([done.tasks.filter(kept), blank.tasks]).sort("run_id", "role", "task_index"),
            samples={r: s for r, s in done.samples.items() if r not in gone},
            lead=None,  # type: ignore[arg-type]  # dropped once taken
            intervals=None if done.intervals is None else done.intervals.filter(kept),
            goodput=pl.concat([done.goodput.filter(kept), blank.goodput]).sort("run_id")  # type: ignore[union-attr]
            if done.goodput is not None
            else None,
            draws={**{r: d for r, d in done.draws.items() if r not in gone}, **blank.draws},
            jumps=done.jumps,
        )

    def in_pieces(batch: list[str | None]) -> PiecedRun:
        read = min(SPILL_READ_ROWS, alone)
        rows = None if chunks is None else chunks(str(batch[0]), spill_columns(extra), read)
        run = pieced_run(part_of(batch), alone, seed, extra, keep, rows, events)
        run.goodput = run_goodput(run.lead, run.throughput, events)
        return run

    # Two batches are computed at a time, each on a thread of its own (polars and numpy release the
    # GIL), so both cores work; their results are taken in batch order (``visit`` too, on this
    # thread). A run taken in pieces is computed alone: its memory is what bounds the pass.
    results: list[PiecedRun] = []
    samples = {} if samples is None else samples
    # polars imports numpy on its first use of it, and that import fails when two threads make it at once
    # ("TypeError: 'module' object does not support item assignment", seen in a summary of 10 M records):
    # made here, before the batch threads start.
    pl.Series(np.empty(0))
    pool = ThreadPoolExecutor(max_workers=PARALLEL_BATCHES, thread_name_prefix="tierscope-batch")
    running: deque[Future[PiecedRun]] = deque()

    def take() -> None:
        done = running.popleft().result()
        if done.jumps.height:
            done = set_aside(done)
        samples.update(done.samples)
        if visit is not None and done.intervals is not None:
            visit(done.intervals)
        done.intervals = done.lead = None  # type: ignore[assignment]  # dropped once visited
        results.append(done)

    try:
        for batch in batches:
            if large(batch):  # alone: nothing else in memory beside it
                while running:
                    take()
                running.append(_done(in_pieces(batch) if pieced(batch) else whole(batch)))  # type: ignore[arg-type]
                take()
                continue
            while len(running) >= PARALLEL_BATCHES:
                take()
            running.append(pool.submit(whole, batch))
        while running:
            take()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    drawn: dict[str, np.ndarray] = {}
    for result in results:
        drawn.update(result.draws)
    return IntervalFigures(
        throughput=pl.concat([r.throughput for r in results]).sort("run_id"),
        tasks=pl.concat([r.tasks for r in results]).sort("run_id", "role", "task_index"),
        samples=samples,
        goodput=pl.concat([r.goodput for r in results]).sort("run_id"),
        draws=drawn,
        draws_seed=seed,
        jumps=pl.concat([r.jumps for r in results]).sort("run_id"),
    )


def _done(result: PiecedRun) -> Future[PiecedRun]:
    future: Future[PiecedRun] = Future()
    future.set_result(result)
    return future


def batch_figures(
    part: pl.LazyFrame,
    batch: list[str | None] | None,
    counts: pl.DataFrame | None,
    events: pl.DataFrame,
    seed: int,
    extra: Sequence[str],
    keep: bool,
) -> PiecedRun:
    """The interval figures of the whole runs in ``part`` (the steps of ``batch``, None: every run),
    in one pass over their intervals (held whole). ``counts``: :data:`RECORD_COLUMNS` of every run
    (None: counted from ``part``); ``events``: :func:`tierscope.analysis.goodput.event_frame`'s;
    ``keep``: also return the intervals (for a ``visit``)."""
    drawn: dict[str, np.ndarray] = {}
    intervals = collect_intervals(part, extra, events=events)
    leads = lead_rows(intervals)  # where each run's lead task's rows lie: start-up and goodput read them
    steady = interval_samples(intervals)
    if counts is None:
        throughput = run_throughput(part, seed=seed, intervals=intervals)
    else:  # run_throughput with the counts the caller has: no second read of the batch
        records = counts.filter(pl.col("run_id").is_in(batch, nulls_equal=True)).select(RECORD_COLUMNS)
        parts = run_parts(intervals.lazy()).collect(engine=IN_MEMORY)
        throughput = throughput_frame(records, parts, steady, intervals, seed, leads=leads, kept=drawn)
    return PiecedRun(
        throughput=throughput,
        tasks=task_throughput(part, intervals=intervals, samples=steady),
        samples=steady,
        lead=intervals,
        intervals=intervals if keep else None,
        goodput=run_goodput(intervals, throughput, events, leads),
        draws=drawn,
        jumps=clock_jumps(intervals),
    )


@dataclass
class PiecedRun:
    """One run's results from :func:`pieced_run`: ``throughput`` and ``tasks`` rows (as
    :func:`tierscope.analysis.throughput.run_throughput` and :func:`tierscope.analysis.tasks.task_throughput`),
    ``samples`` (``{run_id: steady rates}``), ``lead`` (the lead task's intervals, for goodput) and
    ``intervals`` (every interval, only when asked for a ``visit``; else None)."""

    throughput: pl.DataFrame
    tasks: pl.DataFrame
    samples: dict[str, SteadyRates]
    lead: pl.DataFrame
    intervals: pl.DataFrame | None
    goodput: pl.DataFrame | None = None  # :func:`run_goodput`'s rows, once computed
    draws: dict[str, np.ndarray] = field(default_factory=dict)  # as IntervalFigures.draws (where kept)
    # the runs whose clock jumps (tierscope.analysis.clock.judged_jumps), figures still in
    jumps: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=CLOCK_JUMP_SCHEMA))


def task_pieces(tasks: pl.DataFrame, max_records: int) -> list[pl.DataFrame]:
    """``tasks`` (``role, task_index, records``, in task order) in pieces of consecutive tasks whose
    records add up to at most ``max_records`` (a task with more is a piece alone)."""
    pieces: list[list[int]] = []
    held = max_records
    for i, records in enumerate(tasks["records"]):
        if held + records > max_records:
            pieces.append([])
            held = 0
        pieces[-1].append(i)
        held += records
    return [tasks[p[0] : p[-1] + 1] for p in pieces]


def pieced_run(
    steps: pl.LazyFrame,
    max_records: int,
    seed: int = BOOTSTRAP_SEED,
    extra: Sequence[str] = (),
    keep: bool = False,
    chunks: Iterable[pl.DataFrame] | None = None,
    events: pl.DataFrame | None = None,
) -> PiecedRun:
    """The interval figures of the one run in ``steps`` (:data:`tierscope.dataset.schema.STEP_SCHEMA` rows),
    computed in pieces of whole tasks of at most ``max_records`` records (see the module doc for
    what is exact). ``keep``: also return every interval (``extra`` columns included). ``chunks``:
    the run's records (:func:`spill_columns`) in stored order, a frame at a time (None: read from
    ``steps`` by a streaming query, which reads further ahead). ``events``: the run's events (its
    checkpoint saves and evaluations pause training:
    :func:`tierscope.analysis.throughput.pause_steps`; None: none).

    The run's training records are first split into one temporary file per piece, in one pass
    (:func:`_spill`), so each pass over a piece reads its own rows only (~35 MB a million records);
    then :func:`_one_pass` (~8 MB more a million records for the raw rates), and only where it cannot
    vouch for its figures the three passes, whose first writes each piece's rows in log order with
    their raw rates to a file (the spilled one removed), which the two later passes read. Raises
    :class:`tierscope.analysis.errors.SpillError` if they cannot be written (a full temporary folder)."""
    per_task = (
        steps.group_by("role", "task_index")
        .agg(records=pl.len().cast(pl.UInt32), last_step=pl.col("step").max(), run_id=pl.col("run_id").first())
        .collect(engine="streaming")  # only the per-task rows are kept
    )
    records = per_task.group_by("run_id").agg(pl.col("records").sum().cast(pl.UInt32), pl.col("last_step").max())
    training = training_steps(per_task.lazy()).collect(engine=IN_MEMORY).sort("role", "task_index", nulls_last=True)
    pieces = task_pieces(training, max_records)
    if not pieces:  # no training task (a ps's or evaluator's log alone): no interval to hold, one pass
        intervals = collect_intervals(steps, extra, events=events)
        return PiecedRun(
            throughput=run_throughput(steps, seed=seed, intervals=intervals),
            tasks=task_throughput(steps, intervals=intervals),
            samples={},
            lead=intervals,
            intervals=intervals if keep else None,
            jumps=clock_jumps(intervals),
        )
    run_id = records["run_id"][0]
    if chunks is None:
        chunks = steps.select(spill_columns(extra)).collect_batches(chunk_size=min(SPILL_READ_ROWS, max_records))
    # An owned directory (tierscope.tempdirs), not a TemporaryDirectory: a summary killed here (OOM,
    # kill -9) would leave the run's spilled records behind for good; the next pieced run removes them.
    with owned_dir(SPILL_PREFIX) as spill:

        def unwritten(exc: Exception) -> SpillError:  # pyarrow's and polars' say neither where nor what to do
            return SpillError(
                f"cannot write the pieces of run {run_id!r} ({int(records['records'][0])} records) under "
                f"{spill.parent}: {exc}; free space there or set TMPDIR to a folder with room for them"
            )

        try:
            files = _spill(chunks, pieces, spill, min(max_records, SPILL_ROWS))
        except OSError as exc:
            raise unwritten(exc) from exc

        def stored(i: int) -> pl.LazyFrame:
            return pl.scan_parquet(files[i]).with_columns(run_id=pl.lit(run_id, pl.String()))

        run = _PiecedRunInputs(training, records, seed, extra, keep, spill, pause_steps(steps, events))
        try:
            done = _one_pass(stored, len(pieces), run)
        except (OSError, pl.exceptions.ComputeError) as exc:
            raise unwritten(exc) from exc
        if done is not None:
            return done
        # A median decided some record other than its first piece's did: the passes below, each
        # with the run's medians found before it.
        rated = [spill / f"rated-{i}.parquet" for i in range(len(pieces))]

        def piece(i: int) -> pl.LazyFrame:
            # The first pass puts the piece in log order with its raw rates and writes them beside it;
            # the two passes after read them back (only the columns each asks for), not order the
            # piece again: a third of the garbage the passes make (pages jemalloc holds a while,
            # :mod:`tierscope.cli`), and of their CPU.
            if rated[i].exists():
                return pl.scan_parquet(rated[i])
            raw = with_raw_rates(ordered_records(stored(i), extra).lazy()).collect(engine=IN_MEMORY)
            try:
                raw.write_parquet(rated[i], compression="lz4", statistics=False)
            except (OSError, pl.exceptions.ComputeError) as exc:
                raise unwritten(exc) from exc
            files[i].unlink()
            return raw.lazy()

        return _pieces_figures(piece, len(pieces), run)


_KEYS = ["role", "task_index"]


def spill_columns(extra: Sequence[str] = ()) -> list[str]:
    """The step record's columns a run taken in pieces reads: :data:`INPUT_COLUMNS` and the ``extra``
    ones the step record has."""
    return list(dict.fromkeys([*INPUT_COLUMNS, *(c for c in extra if c in STEP_SCHEMA)]))


def _spill(chunks: Iterable[pl.DataFrame], pieces: list[pl.DataFrame], into: Path, held_rows: int) -> list[Path]:
    """The training records of ``chunks`` (one run's, in stored order), each piece's rows into a file of
    its own under ``into`` (``run_id`` left out: one value), in their order; the file of each piece.

    Memory: a chunk, plus up to ``held_rows`` rows held before each piece's are written as a row
    group. A polars sink partitioned by piece held 0.8 GB for a run of 20 M records on 20 tasks (its
    readers' look-ahead and each partition's buffers); a loop over collected batches let them pile
    up (1.5 GB)."""
    import pyarrow as pa
    import pyarrow.parquet as pq  # polars has no writer that appends a row group to an open file

    index = pl.concat([p.select(_KEYS).with_columns(_piece=pl.lit(i, pl.UInt32)) for i, p in enumerate(pieces)])
    paths = [into / f"piece-{i}.parquet" for i in range(len(pieces))]
    held: dict[int, list[pl.DataFrame]] = {}
    writers: dict[int, pq.ParquetWriter] = {}

    def flush() -> None:
        for i, parts in held.items():
            table = pl.concat(parts).to_arrow()
            if i not in writers:
                writers[i] = pq.ParquetWriter(paths[i], table.schema, compression="lz4", use_dictionary=False)
            writers[i].write_table(table)
        held.clear()

    try:
        holding = 0
        for chunk in chunks:
            tagged = (
                training_steps(chunk.lazy().drop("run_id"))
                .join(index.lazy(), on=_KEYS, how="left", nulls_equal=True, maintain_order="left")
                .collect(engine=IN_MEMORY)
            )
            for (i,), part in tagged.partition_by("_piece", as_dict=True, include_key=False).items():
                held.setdefault(i, []).append(part)
            holding += tagged.height
            if holding >= held_rows:
                flush()
                holding = 0
        flush()
    finally:
        for writer in writers.values():
            writer.close()
        # pyarrow's pool (mimalloc) keeps what the reads and writes freed, ~60 MB at 20 M records,
        # for the rest of the process: through every pass over the pieces.
        pa.default_memory_pool().release_unused()
    return paths


def _gathered(columns: Iterable[pl.Series], size: int, out: np.ndarray | None = None) -> np.ndarray:
    """The non-null values of ``columns`` (Float64, at most ``size`` in all) one after another in one
    array (``out``, if given, of at least ``size``), each column dropped once copied: no list of them
    and no second copy."""
    out = np.empty(size, dtype=np.float64) if out is None else out
    held = 0
    for column in columns:
        values = column.drop_nulls().to_numpy()
        out[held : held + values.size] = values
        held += values.size
    return out[:held]


@dataclass(frozen=True)
class _PiecedRunInputs:
    """What the passes over a run's pieces take: its training tasks (``run_id, role, task_index,
    records``, in task order), its ``records`` (``run_id, records, last_step``), the bootstrap ``seed``,
    the ``extra`` interval columns, ``keep`` (every interval too), the ``spill`` folder and where the run
    paused to evaluate or save (``pauses``: :func:`tierscope.analysis.throughput.pause_steps`)."""

    training: pl.DataFrame
    records: pl.DataFrame
    seed: int
    extra: Sequence[str]
    keep: bool
    spill: Path
    pauses: pl.DataFrame


def _threshold(median: float | None, factor: float, unknown: float) -> float:
    """``factor`` times ``median`` as the intervals compare with it (the same float product), ``unknown``
    where there is no median (a comparison with null: never a jump, never a slow start)."""
    return unknown if median is None else factor * median


def _one_pass(
    stored: Callable[[int], pl.LazyFrame],
    count: int,
    run: _PiecedRunInputs,
) -> PiecedRun | None:
    """The figures of :func:`pieced_run` in one pass over its ``count`` pieces (``stored(i)``: piece i's
    spilled records), or None where the pass cannot vouch for them. ``run.spill``: a folder for what
    the pass keeps until its end (the raw rates, the lead task's intervals), out of memory.

    The intervals are judged against the run's two medians (:data:`JUMP_MEDIAN`, :data:`WARM_MEDIAN`),
    known only once every piece is read. Each piece is judged against its first piece's medians
    instead, while the rates behind the run's are gathered (16 bytes a record: the raw and jump rates; the
    warm-up sample is the steady rates, kept anyway, and the few in-segment warm-up ones). Once
    they are known, a record was judged otherwise by them only if a rate lies between the two
    thresholds: a jump rate (:data:`~tierscope.analysis.throughput.JUMP_RATE`) between the two jump
    thresholds, or the rate of a record at warm-up's
    edge (in warm-up past a segment's first record, or the first record past it) between the two
    slow-start ones (warm-up lasts while every rate so far is below the threshold, so it ends
    elsewhere only if one of those changes side). Where none does, every figure is the one the
    run's medians give; else None (the caller takes the passes that find the medians first).

    Memory: one piece's records and intervals at a time. The raw rates, the steady rates and their
    weights and the lead task's intervals wait in ``spill`` until the pass is over; then the steady
    rates are read back (8 bytes a record), for the run's medians and figures."""
    columns = list(dict.fromkeys([*FIGURE_COLUMNS, *run.extra]))
    figures = _PieceFigures(run)
    raw_path = run.spill / "raw-rates.f64"  # every piece's raw rates, appended: the jump median's sample
    jump_path = run.spill / "jump-rates.f64"  # every piece's jump rates (throughput.JUMP_RATE), appended
    jumped = 0
    warm_only: list[np.ndarray] = []  # in-segment warm-up rates: with the steady ones, the warm median's sample
    edges: list[np.ndarray] = []  # rates at warm-up's edge (see above)
    jump_median = warm_median = None
    in_segment, warm = pl.col("interval_index") > 0, pl.col("warmup")
    edge = in_segment & (warm | warm.shift(1))  # past a segment's first row, the row before is the segment's
    for i in range(count):
        ordered = ordered_records(stored(i), run.extra).lazy()
        if i == 0:  # the first piece's medians, which every piece is judged against
            raw = with_raw_rates(ordered).collect(engine=IN_MEMORY)
            jump_median = exact_median(raw.select(JUMP_RATES.drop_nulls()).to_series().to_numpy())
            rated = with_segments(raw.lazy(), pl.lit(jump_median, pl.Float64)).collect(engine=IN_MEMORY)
            warm_median = exact_median(rated.select(WARM_RATES.drop_nulls()).to_series().to_numpy())
            ordered = raw.lazy()
            del raw, rated
        # One query from the records to the figures' columns and the raw rates: no stage held whole beside
        # the next (a piece of a million records would hold several hundred MB more).
        judged = with_segments(with_raw_rates(ordered), pl.lit(jump_median, pl.Float64))
        raw_rate = pl.when(~pl.col("_first")).then(pl.col("_raw_rate"))  # JUMP_RATES, null elsewhere
        intervals = (
            with_warmup(judged.with_columns(raw_rate=raw_rate, jump_rate="_jump_rate"), pl.lit(warm_median, pl.Float64))
            .select(*columns, "raw_rate", "jump_rate")
            .collect(engine=IN_MEMORY)
        )
        # The piece's records (a frame behind the lazy ones) dropped now, not when the next piece's are
        # in memory beside them: 0.3 GB at the pass' end for a piece of a million records.
        del ordered, judged
        jump = intervals.get_column("raw_rate").drop_nulls().to_numpy()
        with raw_path.open("ab") as out:
            np.ascontiguousarray(jump).tofile(out)
        jumped += jump.size
        del jump
        with jump_path.open("ab") as out:  # the rates judged as jumps (JUMP_RATE), beside the median's sample
            np.ascontiguousarray(intervals.get_column("jump_rate").drop_nulls().to_numpy()).tofile(out)
        intervals = intervals.drop("raw_rate", "jump_rate")
        found = intervals.select(
            warm_only=pl.col("rate").filter(in_segment & warm).drop_nulls().implode(),
            edges=pl.col("rate").filter(edge).drop_nulls().implode(),
        )
        warm_only.append(found["warm_only"].explode().to_numpy())
        edges.append(found["edges"].explode().to_numpy())
        figures.add(intervals)
        del intervals, found

    # The run's jump median, and whether any raw rate lies between its threshold and the first piece's
    # (a jump is a raw rate above it: one in (low, high] is judged otherwise): read from the spill a
    # block at a time.
    def spilled(path: Path) -> Iterable[np.ndarray]:
        with path.open("rb") as source:
            while (block := np.fromfile(source, dtype=np.float64, count=SPILL_ROWS)).size:
                yield block

    run_jump = median_of(lambda: spilled(raw_path), jumped)
    low, high = sorted(_threshold(m, JUMP_FACTOR, float("inf")) for m in (jump_median, run_jump))
    if low != high and any(bool(((b > low) & (b <= high)).any()) for b in spilled(jump_path)):
        return None
    raw_path.unlink()
    jump_path.unlink()
    # Now the segments are the run's, and so the warm-up sample (the steady rates and the in-segment
    # warm-up ones): its median, and whether a rate at warm-up's edge lies between its threshold and
    # the first piece's (slow is below: [low, high)).
    steady = figures.steady()
    run_warm = median_of(lambda: [steady, *warm_only], steady.size + sum(w.size for w in warm_only))
    low, high = sorted(_threshold(m, WARMUP_FRACTION, float("-inf")) for m in (warm_median, run_warm))
    edge_rates = np.concatenate(edges) if edges else np.empty(0)
    if low != high and bool(((edge_rates >= low) & (edge_rates < high)).any()):
        return None
    return figures.result()


def _pieces_figures(
    piece: Callable[[int], pl.LazyFrame],
    count: int,
    run: _PiecedRunInputs,
) -> PiecedRun:
    """The three passes of :func:`pieced_run` over its ``count`` pieces (``piece(i)``: piece i's raw
    rates, :func:`tierscope.analysis.throughput.with_raw_rates`), each with the medians the one before
    found: where :func:`_one_pass` cannot vouch for its figures."""
    size = int(run.training["records"].sum())  # at most this many rates: the run's training rows
    jump = _gathered((piece(i).select(JUMP_RATES).collect(engine=IN_MEMORY).to_series() for i in range(count)), size)
    jump_median = pl.lit(exact_median(jump, in_place=True), pl.Float64)
    del jump
    warm = _gathered(
        (
            with_segments(piece(i), jump_median).select(WARM_RATES).collect(engine=IN_MEMORY).to_series()
            for i in range(count)
        ),
        size,
    )
    warm_median = pl.lit(exact_median(warm, in_place=True), pl.Float64)
    del warm
    columns = list(dict.fromkeys([*FIGURE_COLUMNS, *run.extra]))
    figures = _PieceFigures(run)
    for i in range(count):
        figures.add(
            with_warmup(with_segments(piece(i), jump_median), warm_median).select(columns).collect(engine=IN_MEMORY)
        )
    return figures.result()


class _PieceFigures:
    """What the figures keep of each piece's intervals (:meth:`add`, in piece order), and the run's
    figures from them (:meth:`result`): the parts that add up, each task's own figures, the steady
    rates in the unbatched order and their weights, the lead task's intervals and, with ``keep``,
    every interval. The steady rates and weights (8 bytes a record each) and the lead task's
    intervals wait in ``spill`` until the pass is over, so the pass holds one piece's intervals at
    a time: a run of 20 M records held 320 MB of them beside the last piece. The weights are written
    only once one differs from the first, and read back only where the run's known ones differ (what
    :func:`tierscope.analysis.bootstrap.steady_rates` decides from their least and greatest known
    one, kept as they go by)."""

    def __init__(self, run: _PiecedRunInputs) -> None:
        self.lead_key = lead_tasks(run.training.select("run_id", *_KEYS).lazy()).collect(engine=IN_MEMORY)
        self.lead_path = run.spill / "lead.parquet"
        self.rates_path = run.spill / "steady-rates.f64"
        self.weights_path = run.spill / "steady-weights.f64"
        self.paused_path = run.spill / "steady-paused.u8"  # each steady rate's interval holds a pause
        self.paused = 0  # how many do
        # every interval's seconds a step (clock.PACE), the run's pace only where an interval is over a day
        self.pace_path = run.spill / "clock-pace.f64"
        self.long: list[pl.DataFrame] = []  # the intervals over a day (clock.long_intervals)
        for path in (
            self.rates_path,
            self.weights_path,
            self.paused_path,
            self.pace_path,
        ):  # an earlier pass' (the one pass before three)
            path.unlink(missing_ok=True)
        self.run = run
        self.keep = run.keep
        self.parts: list[pl.DataFrame] = []
        self.own: list[pl.DataFrame] = []
        self.kept: list[pl.DataFrame] = []
        self.first_weight: float | None = None
        self.alike = True  # every weight so far the first one
        self.shortest, self.longest = float("inf"), float("-inf")  # the known weights' (finite, > 0)
        self.held = 0
        self.empty: pl.DataFrame | None = None
        self.loaded: np.ndarray | None = None

    def add(self, intervals: pl.DataFrame) -> None:
        """One piece's intervals (:data:`FIGURE_COLUMNS` and the extra ones; whole tasks)."""
        intervals = with_pauses(intervals, self.run.pauses)
        self.empty = intervals.clear() if self.empty is None else self.empty
        clocked = clock_intervals(intervals)
        self.long.append(long_intervals(clocked))
        with self.pace_path.open("ab") as out:
            np.ascontiguousarray(clocked.filter(PACED).select(PACE).collect().to_series().to_numpy()).tofile(out)
        self.parts.append(run_parts(intervals.lazy()).collect(engine=IN_MEMORY))
        self.own.append(own_figures(intervals.lazy()))
        steady = intervals.filter(~pl.col("warmup") & pl.col("rate").is_not_null()).select(
            "rate", STEADY_WEIGHT, "paused"
        )
        held, more = self.held, steady.height
        with self.rates_path.open("ab") as out:
            np.ascontiguousarray(steady.get_column("rate").to_numpy()).tofile(out)
        with self.paused_path.open("ab") as out:
            np.ascontiguousarray(steady.get_column("paused").to_numpy().astype(np.uint8)).tofile(out)
        self.paused += int(steady.get_column("paused").sum())
        weight = np.ascontiguousarray(steady.get_column("weight").to_numpy())
        if more:
            known = np.isfinite(weight) & (weight > 0)
            self.longest = max(self.longest, float(np.max(weight, where=known, initial=-np.inf)))
            self.shortest = min(self.shortest, float(np.min(weight, where=known, initial=np.inf)))
        if self.alike and more:
            self.first_weight = float(weight[0]) if self.first_weight is None else self.first_weight
            if not (weight == self.first_weight).all():  # NaN (unknown) too: steady_rates decides
                self.alike = False
                with self.weights_path.open("wb") as out:
                    np.full(held, self.first_weight, dtype=np.float64).tofile(out)
        if not self.alike:
            with self.weights_path.open("ab") as out:
                weight.tofile(out)
        self.held += more
        del steady, weight
        lead = intervals.join(self.lead_key, on=["run_id", *_KEYS], how="semi", nulls_equal=True)
        if lead.height:  # the lead task is whole in one piece
            lead.write_parquet(self.lead_path, compression="lz4", statistics=False)
        if self.keep:
            self.kept.append(intervals)

    def steady(self) -> np.ndarray:
        """Every steady rate so far, in the unbatched order (read from the spill once, then held)."""
        if self.loaded is None or self.loaded.size != self.held:
            self.loaded = np.fromfile(self.rates_path, dtype=np.float64) if self.held else np.empty(0)
        return self.loaded

    def sample(self) -> SteadyRates:
        """The steady rates and their weights, as :func:`tierscope.analysis.bootstrap.steady_rates`
        gives them: weights only where the known ones differ (else, or none known, every interval alike);
        without the intervals that hold a pause (an evaluation, a save) unless every one does
        (:data:`tierscope.analysis.throughput.NOT_PAUSED`)."""
        rates = self.steady()
        kept = None
        if 0 < self.paused < self.held:
            kept = np.fromfile(self.paused_path, dtype=np.uint8) == 0
            rates = rates[kept]
        if self.alike or self.longest == float("-inf") or self.longest == self.shortest:
            return SteadyRates(rates, None)
        weights = np.fromfile(self.weights_path, dtype=np.float64)
        return steady_rates(rates, weights if kept is None else weights[kept])

    def result(self) -> PiecedRun:
        """The run's figures."""
        records, seed = self.run.records, self.run.seed
        summed = pl.concat(self.parts).group_by("run_id").agg(pl.all().sum())
        samples = {records["run_id"][0]: self.sample()} if self.held else {}
        lead = pl.read_parquet(self.lead_path) if self.lead_path.exists() else self.empty
        return PiecedRun(
            throughput=throughput_frame(records, summed, samples, lead.lazy(), seed),
            tasks=with_peers(pl.concat(self.own)),
            samples=samples,
            lead=lead,
            intervals=pl.concat(self.kept) if self.keep else None,
            jumps=self.jumps(),
        )

    def jumps(self) -> pl.DataFrame:
        """The run's clock jumps (:func:`tierscope.analysis.clock.judged_jumps`): its pace read back from the
        spill only where an interval is over a day."""
        long = pl.concat(self.long) if self.long else pl.DataFrame()
        if not long.height:
            return pl.DataFrame(schema=CLOCK_JUMP_SCHEMA)
        pace = pace_of(pl.Series(np.fromfile(self.pace_path, dtype=np.float64)))
        paces = pl.DataFrame({"run_id": long.get_column("run_id").unique(), "step_s": pace})
        return judged_jumps(long, paces.cast({"step_s": pl.Float64}))
