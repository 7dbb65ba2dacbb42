"""Step records as the analysis sees them: one row per logged event, in the order it happened.

The dataset already drops rows whose :data:`tierscope.dataset.schema.STEP_KEY` values repeat.
The same record can still arrive twice with different key values: the same line read
by two parsers (a text line with ``elapsed_s`` and a structured entry with a
``timestamp``), a platform copy at severity ``ERROR`` that lost a field, two log
handlers. :func:`merge_duplicates` folds those copies into one record.

What makes two records of one task and global step the same record: nothing they both
carry disagrees. ``elapsed_s`` within :data:`SAME_ELAPSED_S` seconds, ``timestamp``
within :data:`SAME_TIMESTAMP_S` seconds (when both have one). A task that logs a step a
second time after a restart from an older checkpoint does so from a new process, with a
new ``elapsed_s`` and a later clock, so it stays a separate record.
"""

from __future__ import annotations

import itertools
from typing import TypeVar

import numpy as np
import polars as pl

from tierscope.analysis.engine import IN_MEMORY
from tierscope.dataset.schema import TRAINING_ROLES

TASK = ("run_id", "role", "task_index")
#: What identifies a record of a task: its global step, or for a step-less record (a
#: `global_step/sec` line with no step) the line it was read from (``position``, null otherwise).
RECORD = (*TASK, "step", "position")

#: ``elapsed_s`` values closer than this are one record logged twice (text logs print ms).
SAME_ELAPSED_S = 1e-3
#: ``timestamp`` values closer than this are one record (a platform copy is re-stamped on ingestion).
SAME_TIMESTAMP_S = 5.0


def run_spans(frame: pl.DataFrame) -> list[tuple[int, int]]:
    """``(offset, length)`` of each stretch of consecutive rows of one ``run_id`` in ``frame``, in row
    order (a null run id is a value of its own). Where each run's rows lie together, as in the intervals,
    there is one stretch a run, and its rows are ``frame.slice(offset, length)``: no hashing of run ids."""
    if frame.height == 0:
        return []
    lengths = frame.get_column("run_id").rle().struct.field("len").to_list()
    offsets = [0, *itertools.accumulate(lengths)][:-1]
    return list(zip(offsets, lengths, strict=True))


def training_steps(steps: pl.LazyFrame) -> pl.LazyFrame:
    """Records of training tasks only (master, chief, worker).

    A record that names no task (Estimator, Keras and MLPerf lines without a launcher
    prefix) comes from a single-process log: it counts as the run's one training task.
    """
    return steps.filter(TRAINING)


#: True on a record of a training task (see :func:`training_steps`).
TRAINING = pl.col("role").is_in(list(TRAINING_ROLES)) | pl.col("role").is_null()


def merge_duplicates(steps: pl.LazyFrame) -> pl.LazyFrame:
    """One row per record: copies of a record (see the module doc) merged.

    Input: :data:`tierscope.dataset.schema.STEP_SCHEMA` rows (or a subset of its columns holding
    :data:`RECORD`, ``elapsed_s``, ``timestamp``, ``source`` and ``source_offset``). Output: the same columns, each the
    first non-null value among the copies (so a copy with ``interval_s`` completes one
    with ``elapsed_s``; ``source``/``source_offset`` are the earliest copy's), plus
    ``copies`` (UInt32, how many rows were merged; 1 for a record logged once).
    """
    columns = steps.collect_schema().names()
    # Most records are logged once: only keys seen twice go through the (costly) merge.
    counted = steps.with_columns(_n=pl.len().over(RECORD))
    single = counted.filter(pl.col("_n") == 1).select(*columns, copies=pl.lit(1, dtype=pl.UInt32))
    repeated = counted.filter(pl.col("_n") > 1).drop("_n")
    ordered = repeated.sort([*RECORD, "elapsed_s", "timestamp", "source", "source_offset"], nulls_last=True)
    prev_elapsed = pl.col("elapsed_s").shift(1).over(RECORD)
    prev_ts = pl.col("timestamp").shift(1).over(RECORD)
    differs = ((pl.col("elapsed_s") - prev_elapsed).abs() > SAME_ELAPSED_S).fill_null(False) | (
        (pl.col("timestamp") - prev_ts).dt.total_microseconds().abs() > SAME_TIMESTAMP_S * 1e6
    ).fill_null(False)
    others = [c for c in columns if c not in RECORD]
    merged = (
        ordered.with_columns(_occurrence=differs.cum_sum().over(RECORD))
        .group_by([*RECORD, "_occurrence"])
        .agg(*[pl.col(c).drop_nulls().first() for c in others], copies=pl.len().cast(pl.UInt32))
        .select(*columns, "copies")
    )
    return pl.concat([single, merged])


def in_log_order(steps: pl.LazyFrame) -> pl.LazyFrame:
    """``steps`` sorted per task in the order the records were written.

    By ``timestamp`` when every record of the task has one, else by ``source`` and
    ``source_offset`` (a file is written in order; the 2016 logs have no clock); within a file, by
    its lines where its clock goes back (:func:`with_order_stamps`). Not by step: a restart from an
    older checkpoint logs lower steps *after* higher ones.
    """
    return with_order_stamps(steps).sort([*TASK, *LOG_ORDER], nulls_last=True).drop("_order_ts")


#: What orders the records of one task (after :data:`TASK`), nulls last: ``_order_ts`` is the
#: timestamp where every record of the task has one (:func:`with_order_stamps`), else null.
LOG_ORDER = ("_order_ts", "source", "source_offset", "step")
#: The records of one file of one task (:func:`with_order_stamps`).
_SOURCE = (*TASK, "source")
_Frame = TypeVar("_Frame", pl.DataFrame, pl.LazyFrame)


def with_order_stamps(frame: _Frame) -> _Frame:
    """``frame`` with ``_order_ts`` (:data:`LOG_ORDER`'s first key; rows in any order): null in a task where a
    record has no timestamp; else, for a record with a line number (``source_offset``), the latest timestamp of
    its file's lines up to its own (of the task's records, in line order), and for one without (a Cloud Logging
    entry), its own timestamp.

    A file is written in line order, so its line order is the records' order whatever its clock says: a clock
    that goes back (an NTP step, a clock set back by minutes, one that ran ahead and came back) must not move
    the later lines before the earlier ones, where their steps would go back and read as a restart. The running
    latest time keeps each line at or after the one before it and still places the file among the task's
    other files by time. A file whose timestamps fall from line to line more often than they rise was not
    written in that order but listed newest first (a ``gcloud logging read`` export of one entry a line): its
    records go by their own timestamps."""
    stamp = pl.col("timestamp")
    lined = frame.sort([*_SOURCE, "source_offset"], nulls_last=True, maintain_order=True)
    change = stamp.diff()
    written = (change < 0).sum().over(_SOURCE) <= (change > 0).sum().over(_SOURCE)
    order = pl.when(pl.col("source_offset").is_not_null() & written).then(stamp.cum_max().over(_SOURCE))
    timed = stamp.is_not_null().all().over(TASK)
    return lined.with_columns(_order_ts=pl.when(timed).then(order.otherwise(stamp)))


def _order_ts(stamps: pl.Series | None = None) -> pl.Expr:
    """The timestamps :func:`distinct_in_log_order` checks the stored order by (null in a task where a record has
    none); given the rows' ``timestamp`` column, without the per-task window where every row or none has one.
    Where they pass (no task's clock goes back along the rows, stored as the collector writes them: each file in
    line order), they order as :func:`with_order_stamps`' do, which a sort takes instead."""
    if stamps is not None and stamps.null_count() in (0, stamps.len()):
        return pl.col("timestamp")
    return pl.when(pl.col("timestamp").is_not_null().all().over(TASK)).then(pl.col("timestamp"))


def _not_before(
    keys: tuple[str, ...], prev: dict[str, pl.Expr], first: pl.Expr, nulls: dict[str, str] | None = None
) -> pl.Expr:
    """Whether each row sorts at or after ``prev`` (the previous row's ``keys``) by ``keys``
    ascending, nulls last: lexicographic, one comparison per key, no sort. True where ``first``.

    ``nulls``: ``"none"`` or ``"all"`` for a key whose column holds no null or only nulls (of the rows
    compared; the first row's ``prev`` may be null, ``first`` covers it): a key all null ties
    everywhere and is left out, one without nulls is compared without the null cases."""
    ok = pl.lit(True)
    for key in reversed(keys):
        held = (nulls or {}).get(key)
        if held == "all":
            continue
        cur, before = pl.col(key), prev[key]
        if held == "none":
            ok = (before < cur) | ((before == cur) & ok)
            continue
        after = (before < cur).fill_null(False) | (before.is_not_null() & cur.is_null())
        ok = after | (before.eq_missing(cur) & ok)
    return first | ok


def null_kinds(frame: pl.DataFrame) -> dict[str, str]:
    """``"none"`` / ``"all"`` per column of ``frame`` holding no null / only nulls (see :func:`_not_before`)."""
    counts = frame.null_count().row(0, named=True)
    return {c: "none" if n == 0 else "all" for c, n in counts.items() if n in (0, frame.height)}


def task_starts() -> pl.Expr:
    """True on a row whose task differs from the previous row's (and on the first row): on rows grouped
    by task (each task's rows together), its first row. A window over the task is then a plain
    shift masked here, far cheaper than ``.over(TASK)``."""
    same = pl.lit(True)
    for key in TASK:
        same = same & pl.col(key).eq_missing(pl.col(key).shift(1))
    return ~same | (pl.int_range(pl.len()) == 0)


def distinct_in_log_order(steps: pl.DataFrame, starts: bool = False) -> pl.DataFrame:
    """``in_log_order(merge_duplicates(steps))``, collected: the same rows in the same order (ties of
    the order excepted), at a fraction of the cost where the dataset holds them as the collector
    writes them. Input: :func:`merge_duplicates`' columns; output: the same plus ``copies`` (and with
    ``starts``, ``_first``: Boolean, true on each task's first row, as :func:`task_starts`).

    The collector stores each task's records in log order, so the sort is made only where a
    cheap check (one comparison of each row with the task's previous one) finds that order
    broken: none when the rows are grouped by task already (a compacted partition), a stable
    sort by task alone when only the tasks interleave (one log of several tasks), the full sort
    otherwise. Copies of a record share its task and global step, so they can exist only in a
    task whose steps, in log order, do not strictly increase (a restart, a re-read source, a
    second source, a step-less record): only those tasks go through :func:`merge_duplicates`.
    """
    # One chunk per column first (a read of several files gives one a file): polars would otherwise
    # copy the columns into one chunk again at every eager step below.
    steps = steps.rechunk()
    frame = steps.with_columns(_order_ts=_order_ts(steps.get_column("timestamp")))
    coded = task_codes(frame)
    if coded is None:  # the run ids' stretches out of order: the tasks compared by their keys
        first = pl.int_range(pl.len()) == 0
        whole = (*TASK, *LOG_ORDER)
        in_order = _not_before(whole, {k: pl.col(k).shift(1) for k in whole}, first, null_kinds(frame)).all()
        if not frame.select(in_order).item():
            frame = by_task(frame)
            if not frame.select(in_order).item():
                frame = with_order_stamps(frame).sort(whole, nulls_last=True)
        first = frame.select(task_starts().alias("_first")).to_series()
    else:
        codes, runs = coded
        # Columns holding one value in each run (the run id, a run's one source, a column all null) are
        # the same after any reordering within the runs, and tie within every task.
        same = [c for c in frame.columns if c == "run_id" or _one_per_run(frame.get_column(c), runs, c == "source")]
        if codes.size > 1 and (codes[1:] < codes[:-1]).any():
            # Tasks interleaved (one log of several tasks), each in log order: a stable sort by task is all it takes.
            order = np.argsort(codes, kind="stable")
            frame, codes = _gathered_rows(frame, order, same), codes[order]
        first = pl.Series("_first", _starts_of(codes))
        # within each task (its first row compared with nothing), in log order?
        keys = frame.select(LOG_ORDER)
        prev = {k: pl.col(k).shift(1) for k in LOG_ORDER}
        ties = null_kinds(keys) | dict.fromkeys((c for c in LOG_ORDER if c in same), "all")
        in_order = _not_before(LOG_ORDER, prev, pl.col("_first"), ties)
        if not keys.with_columns(first).select(in_order.all()).item():
            frame = with_order_stamps(frame).sort((*TASK, *LOG_ORDER), nulls_last=True)
            first = frame.select(task_starts().alias("_first")).to_series()
    frame = frame.drop("_order_ts")
    rises = pl.col("step") > pl.col("step").shift(1)
    unsure = pl.col("step").is_null() | (~pl.col("_first") & ~rises.fill_null(False))
    marked = frame.select("step").with_columns(first).select(unsure).to_series()
    if not marked.any():
        once = frame.with_columns(copies=pl.lit(1, dtype=pl.UInt32))
        return once.with_columns(first) if starts else once
    flagged = frame.select(TASK).with_columns(marked.alias("_unsure")).select(pl.col("_unsure").any().over(TASK))
    flagged = flagged.to_series()
    clean = frame.filter(~flagged).with_columns(copies=pl.lit(1, dtype=pl.UInt32))
    merged = in_log_order(merge_duplicates(frame.filter(flagged).lazy())).collect(engine=IN_MEMORY)
    out = by_task(pl.concat([clean, merged]))
    return out.with_columns(_first=task_starts()) if starts else out


def task_codes(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """Per row of ``frame``, a number that orders its task as :data:`TASK` does (ascending, nulls
    last; equal for the rows of one task): the run's stretch, the role's rank among the frame's
    roles and the task index, packed in one unsigned integer (uint16 where they fit, so a stable
    sort by it is a radix sort); and the runs' numbers of rows, in row order. None where a run's
    rows are not one stretch, stretches in run id order (then the task's strings must be compared),
    or the codes would not fit 64 bits.

    Cheaper than comparing the task's strings row by row: each string column is hashed or
    run-length encoded once, and nothing but integers is compared."""
    if frame.height == 0:
        return np.zeros(0, dtype=np.uint16), np.zeros(0, dtype=np.int64)
    stretches = frame.get_column("run_id").rle()
    ids = [(value is None, value or "") for value in stretches.struct.field("value").to_list()]
    if any(a >= b for a, b in itertools.pairwise(ids)):
        return None
    # the roles' ranks in order (nulls last), looked up by the hash of each stretch's role
    roles = frame.get_column("role").rle()
    values = roles.struct.field("value")
    names = values.unique()
    hashes = names.hash().to_numpy()
    if np.unique(hashes).size != names.len():  # two roles of one hash: their rows cannot be told apart
        return None
    index = frame.get_column("task_index")
    low, high = index.min(), index.max()
    if low is None:  # no task index at all: one value, null
        low = high = 0
    width = int(high) - int(low) + 2  # the indexes, then null
    per_run = names.len() * width
    lengths = stretches.struct.field("len").to_numpy()
    if len(lengths) * per_run > 1 << 63:
        return None
    # the narrowest type the codes fit (a uint16 sorts by radix), each part built in it
    kind = next(t for t in (np.uint16, np.uint32, np.uint64) if len(lengths) * per_run <= np.iinfo(t).max + 1)
    ranked = sorted(range(names.len()), key=lambda i: (names[i] is None, names[i]))
    rank_of = np.empty(names.len(), dtype=kind)
    rank_of[ranked] = np.arange(names.len(), dtype=kind)
    by_hash = np.argsort(hashes)
    role = rank_of[by_hash][np.searchsorted(hashes[by_hash], values.hash().to_numpy())] * kind(width)
    codes = np.repeat(role, roles.struct.field("len").to_numpy())
    dtype = {np.uint16: pl.UInt16, np.uint32: pl.UInt32, np.uint64: pl.UInt64}[kind]
    codes += (index.cast(pl.Int64) - low).fill_null(width - 1).cast(dtype).to_numpy()
    codes += np.repeat(np.arange(len(lengths), dtype=kind) * kind(per_run), lengths)
    return codes, lengths


def _one_per_run(column: pl.Series, runs: np.ndarray, look: bool) -> bool:
    """Whether ``column`` is all null, or (``look``: where it is worth a pass, a run's source) holds one
    value in each run (``runs``: the runs' numbers of rows, in row order; adjacent runs of one value
    are taken as not)."""
    if column.null_count() == column.len():
        return True
    if not look:
        return False
    lengths = column.rle().struct.field("len").to_numpy()
    return lengths.size == runs.size and bool((lengths == runs).all())


def _starts_of(codes: np.ndarray) -> np.ndarray:
    """True on each row whose task code differs from the previous row's, and on the first row."""
    starts = np.empty(codes.size, dtype=bool)
    starts[:1] = True
    np.not_equal(codes[1:], codes[:-1], out=starts[1:])
    return starts


def _gathered_rows(frame: pl.DataFrame, order: np.ndarray, same: list[str]) -> pl.DataFrame:
    """``frame``'s rows in ``order``, a permutation that keeps each run's rows where they were: the
    ``same`` columns (one value in each run) are kept as they are, the others gathered (from one
    chunk each: polars gathers from several chunks many times slower)."""
    index = pl.Series(order.astype(np.uint32 if order.size < 1 << 32 else np.uint64))
    moved = frame.drop(same).rechunk()[index]
    return pl.concat([moved, frame.select(same)], how="horizontal").select(frame.columns)


def by_task(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame.sort(TASK, nulls_last=True, maintain_order=True)``: each task's rows together, in their
    order, tasks in order. Taken apart by task and put back in task order, which costs a third of
    polars' stable sort on string keys."""
    parts = frame.partition_by(list(TASK), maintain_order=True, as_dict=True)
    if len(parts) < 2:
        return frame
    order = sorted(parts, key=lambda task: tuple((value is None, value) for value in task))
    return pl.concat([parts[task] for task in order])
