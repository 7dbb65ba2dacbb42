"""The intervals computed without windows (masked shifts and running counts on rows grouped by task)
are those of the windowed definition, row for row, on records that exercise every break."""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from tierscope.analysis.bootstrap import steady_rate, steady_rates
from tierscope.analysis.coarse_clock import COARSE_CLOCK_S
from tierscope.analysis.printed_rates import (
    AGREEMENT,
    CLOCK_TOLERANCE,
    FINE_CLOCK,
    MAX_DECIMALS,
    MAX_RATIO,
    MIN_COMPARED_SECONDS,
    WHOLE_SECOND,
)
from tierscope.analysis.records import (
    TASK,
    by_task,
    distinct_in_log_order,
    in_log_order,
    merge_duplicates,
    training_steps,
)
from tierscope.analysis.tasks import own_figures
from tierscope.analysis.throughput import (
    EVALUATION,
    GAP_FACTOR,
    INTERVAL_COLUMNS,
    JUMP_FACTOR,
    JUMP_MEDIAN,
    SEGMENT,
    STEADY_WEIGHT,
    WARM_MEDIAN,
    WARMUP_FRACTION,
    collect_intervals,
    interval_rates,
    run_parts,
)
from tierscope.dataset.schema import STEP_SCHEMA, conform


def half_unit(rate: pl.Expr) -> pl.Expr:
    """Half a unit of the last decimal ``rate`` was printed with (the fewest up to MAX_DECIMALS; 0 past)."""
    half = pl.lit(0.0)
    for decimals in range(MAX_DECIMALS, -1, -1):  # the fewest decimals tested first: built inside out
        scaled = rate * 10.0**decimals
        exact = (scaled - scaled.round()).abs() <= 1e-6 * pl.max_horizontal(scaled.abs(), pl.lit(1.0))
        half = pl.when(exact).then(pl.lit(0.5 * 10.0**-decimals)).otherwise(half)
    return pl.when(rate.is_not_null()).then(half)


def clock_judgement(printed: pl.Expr, steps: pl.Expr, seconds: pl.Expr, clocked: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Per interval, the printed rate set aside for the clock and the clock off its rounding (null: not
    compared), as the rule of tierscope.analysis.printed_rates states it, row by row."""
    whole = (seconds - seconds.round()).abs() < 1e-9
    resolution = pl.when(whole).then(pl.lit(WHOLE_SECOND)).otherwise(pl.lit(FINE_CLOCK))
    ratio = steps / seconds / printed
    comparable = (
        clocked
        & (printed > 0)
        & (steps > 0)
        & (seconds >= MIN_COMPARED_SECONDS)
        & (ratio < MAX_RATIO)
        & (ratio > 1 / MAX_RATIO)
    )
    low = steps / (seconds + resolution)
    high = pl.when(seconds > resolution).then(steps / (seconds - resolution)).otherwise(pl.lit(float("inf")))
    half = half_unit(printed)
    band = (high < printed * (1 - CLOCK_TOLERANCE)) | (low > printed * (1 + CLOCK_TOLERANCE))
    off = (high < (printed - half) * (1 - CLOCK_TOLERANCE)) | (low > (printed + half) * (1 + CLOCK_TOLERANCE))
    finer = resolution / seconds < half / printed
    return pl.when(comparable).then(band & (off | finer)), pl.when(comparable).then(off)


def windowed(ordered: pl.LazyFrame) -> pl.LazyFrame:
    """The intervals as defined, every per-task and per-segment figure a window (``.over``), each run's
    two medians taken over the run first (a median window nested in a task's or segment's window would be
    the task's or the segment's: the run's is what the definition, the pieces and the SQL query take)."""
    prev = {c: pl.col(c).shift(1).over(TASK) for c in ("step", "local_step", "elapsed_s", "timestamp", "_named_pid")}
    file_clock = pl.coalesce(
        pl.col("elapsed_s") - prev["elapsed_s"],
        (pl.col("timestamp") - prev["timestamp"]).dt.total_microseconds() / 1e6,
    )
    # a stated time and no rate, after lines the file lacks: the gain over 1.5x the one before and the file's
    # clock over 1.5x the stated time (beyond the clock's slack): the file's clock times the gain
    gain = pl.col("step") - prev["step"]
    before = gain.shift(1).over(TASK)
    missing = (
        pl.col("interval_s").is_not_null()
        & pl.col("global_steps_per_s").is_null()
        & (gain > GAP_FACTOR * before)
        & (before > 0)
        & (file_clock > GAP_FACTOR * pl.col("interval_s") + COARSE_CLOCK_S)
    )
    clock = pl.coalesce(pl.when(~missing.fill_null(False)).then(pl.col("interval_s")), file_clock)
    # no clock, no global rate: the local steps since the task's previous record (one where either names
    # none; none where the local step went back or stood still) at the record's own local rate (> 0, finite)
    d_local = pl.col("local_step") - prev["local_step"]
    local = pl.col("local_steps_per_s")
    step_time = pl.when(
        (pl.int_range(pl.len()).over(TASK) > 0)
        & pl.col("global_steps_per_s").is_null()
        & local.is_finite()
        & (local > 0)
    ).then(pl.when(d_local.is_null()).then(1).when(d_local > 0).then(d_local) / local)
    seconds = pl.coalesce(clock, step_time)
    # a change of process is judged against the last pid the task named (a record may name none)
    raw = (
        ordered.with_columns(_named_pid=pl.col("pid").forward_fill().over(TASK))
        .with_columns(
            _d_step=pl.col("step") - prev["step"],
            _d_seconds=seconds,
            _step_timed=clock.is_null() & step_time.is_not_null(),
            _elapsed_back=(pl.col("elapsed_s") < prev["elapsed_s"] - COARSE_CLOCK_S).fill_null(False),
            _new_process=(pl.col("pid") != prev["_named_pid"]).fill_null(False),
            _first=pl.int_range(pl.len()).over(TASK) == 0,
        )
        .with_columns(
            _raw_rate=pl.when((pl.col("_d_step") > 0) & (pl.col("_d_seconds") > 0)).then(
                pl.col("_d_step") / pl.col("_d_seconds")
            ),
            _jump_rate=pl.when((pl.col("_d_step") > 0) & (pl.col("_d_seconds") > 0)).then(
                pl.col("_d_step") / (pl.col("_d_seconds") + COARSE_CLOCK_S)
            ),
        )
    )
    raw = raw.with_columns(_jump=JUMP_MEDIAN.over("run_id"))
    # a clock reading that stood still or ran back is a coarse clock, not an unknown time
    read = pl.col("interval_s").is_null() & ~pl.col("_step_timed")
    unknown = pl.col("_d_seconds").is_null() | ((pl.col("_d_seconds") <= 0) & ~read)
    # a restart: the step or elapsed_s went back, a new pid, a step jump (a task's first record is none)
    restart = ~pl.col("_first") & (
        (pl.col("_d_step") <= 0).fill_null(False)
        | pl.col("_elapsed_back")
        | pl.col("_new_process")
        | (pl.col("_jump_rate") > JUMP_FACTOR * pl.col("_jump")).fill_null(False)
    )
    breaks = pl.col("_first") | restart | (unknown & pl.col("global_steps_per_s").is_null())
    inside = pl.col("interval_index") > 0
    rated = (
        raw.with_columns(segment=(breaks.cast(pl.UInt32).cum_sum().over(TASK) - 1).cast(pl.UInt32), restart=restart)
        .with_columns(interval_index=pl.int_range(pl.len(), dtype=pl.UInt32).over(SEGMENT))
        # lines missing between records: the step gain over 1.5x what the record's own rate x interval_s cover
        .with_columns(_stated=pl.col("global_steps_per_s") * pl.col("interval_s"))
        .with_columns(_gap=inside & (pl.col("_d_step") > GAP_FACTOR * pl.col("_stated")))
        .with_columns(
            d_step=pl.when("_gap")
            .then((pl.col("_stated") + 0.5).floor().cast(pl.Int64))
            .when(inside)
            .then(pl.col("_d_step")),
            step_timed=inside & pl.col("_step_timed"),
            # a clock set back while the step rises, with no elapsed_s to time the interval: its stamps' time
            # is unknown (the jump ahead a setback undoes is not modelled: these tasks' stamps are their
            # elapsed_s', so none is ever set back)
            clock_back=(
                pl.col("elapsed_s").diff().over(TASK).is_null()
                & (pl.col("_d_step") > 0)
                & (pl.col("timestamp").diff().over(TASK).dt.total_microseconds() < -COARSE_CLOCK_S * 1e6)
            ).fill_null(False),
        )
        .with_columns(
            d_seconds=pl.when(inside & ~(pl.col("clock_back") & pl.col("interval_s").is_null())).then("_d_seconds")
        )
    )
    # a task's printed global rates set aside where most of its comparable intervals' clocks contradict them
    clock_rate = pl.when(pl.col("d_seconds") > 0).then(pl.col("d_step") / "d_seconds")
    clocked = inside & ~pl.col("step_timed") & ~EVALUATION.fill_null(False) & pl.col("interval_s").is_null()
    printed, steps, seconds = pl.col("global_steps_per_s"), pl.col("d_step"), pl.col("d_seconds")
    ratio = steps / seconds / printed
    measured = (clocked & (printed > 0) & (steps > 0) & seconds.is_not_null()).fill_null(False) & (
        (seconds <= 0) | ((ratio < MAX_RATIO) & (ratio > 1 / MAX_RATIO))
    ).fill_null(False)
    # the measured intervals under 5 s judged by their stretch: consecutive ones of the task, those that begin
    # within one 5 s of their run's clock together
    short = pl.col("_short")
    rated = rated.with_columns(_short=measured & (seconds < MIN_COMPARED_SECONDS).fill_null(False))
    rated = rated.with_columns(_run=(~short).cum_sum().over(TASK), _in=pl.when(short).then(seconds).otherwise(0.0))
    rated = rated.with_columns(_began=pl.col("_in").cum_sum().over([*TASK, "_run"]) - pl.col("_in"))
    rated = rated.with_columns(_bucket=(pl.col("_began") / MIN_COMPARED_SECONDS).floor())
    stretch = [*TASK, "_short", "_run", "_bucket"]
    total = pl.when(short).then(steps.sum().over(stretch)).otherwise(steps)
    aside, off = clock_judgement(
        pl.when(short).then(total / (steps / printed).sum().over(stretch)).otherwise(printed),
        total,
        pl.when(short).then(seconds.sum().over(stretch)).otherwise(seconds),
        pl.when(short).then(True).otherwise(clocked),
    )
    comparable = aside.is_not_null().sum().over(TASK)
    majority = (2 * aside.fill_null(False).sum().over(TASK) > comparable) & (comparable > 0)
    # unless the task's clock over every interval it measures agrees with its printed rates over those steps
    total = steps.filter(measured).sum().over(TASK)
    clock = total / seconds.filter(measured).sum().over(TASK)
    stated = total / (steps / printed).filter(measured).sum().over(TASK)
    wins = majority & ((clock - stated).abs() > AGREEMENT * stated).fill_null(False)
    rated = rated.with_columns(_wins=wins, _aside=aside, _off=off).with_columns(
        rate=pl.when("_wins").then(clock_rate).otherwise(pl.coalesce("global_steps_per_s", clock_rate)),
        printed_rate=pl.when(pl.col("_wins") & pl.col("_aside").is_not_null()).then("global_steps_per_s"),
        printed_off=pl.when(pl.col("_wins") & pl.col("_aside").is_not_null()).then("_off"),
        local_rate=pl.coalesce(
            "local_steps_per_s",
            pl.when(inside & ~pl.col("_gap") & (pl.col("d_seconds") > 0)).then(
                (pl.col("local_step") - pl.col("local_step").shift(1).over(SEGMENT)) / pl.col("d_seconds")
            ),
        ),
    )
    rated = rated.with_columns(_warm=WARM_MEDIAN.over("run_id"))
    slow = ~inside | (pl.col("rate") < WARMUP_FRACTION * pl.col("_warm")).fill_null(False)
    kept = [c for c in rated.collect_schema().names() if not c.startswith("_") and c not in INTERVAL_COLUMNS]
    return rated.with_columns(warmup=slow.cast(pl.UInt8).cum_min().over(SEGMENT).cast(pl.Boolean)).select(
        *kept, *INTERVAL_COLUMNS
    )


def awkward_steps(rows: int = 4000, seed: int = 13) -> pl.LazyFrame:
    """Two runs of six tasks (one with no role or index, a ps), interleaved in one log: steps that
    mostly rise by 100 but go back (restarts), stay put, jump far ahead (resumes) or are missing;
    clocks that go back or a process id that changes (a new process); some records with their own
    rate or interval, some copies; one task with timestamps, one with no clock (its intervals timed by
    its local rate, some records naming no local step)."""
    rng = np.random.default_rng(seed)
    tasks = [("master", 0), ("worker", 0), ("worker", 1), (None, None), ("ps", 0), ("worker", 2)]
    pick = rng.integers(0, len(tasks), rows)
    run = np.where(np.arange(rows) < rows // 2, "r1", "r2")
    step = (np.arange(rows) // len(tasks) + 1) * 100 + rng.choice([0, 0, 0, 0, 0, 0, -300, 0, 50_000], rows)
    elapsed = np.arange(rows) * 0.9 + rng.random(rows) * 0.5 - np.where(rng.random(rows) < 0.01, 100.0, 0.0)
    frame = pl.DataFrame(
        {
            "run_id": run,
            "role": [tasks[k][0] for k in pick],
            "task_index": [tasks[k][1] for k in pick],
            "step": pl.Series(step).set(pl.Series(rng.random(rows) < 0.01), None),
            "local_step": np.arange(rows) // 3,
            "elapsed_s": elapsed,
            "interval_s": pl.Series(rng.random(rows) * 5).set(pl.Series(rng.random(rows) < 0.8), None),
            "global_steps_per_s": pl.Series(20 + rng.random(rows)).set(pl.Series(rng.random(rows) < 0.7), None),
            "local_steps_per_s": pl.Series(5 + rng.random(rows)).set(pl.Series(rng.random(rows) < 0.5), None),
            "source": "job.log",
            "source_offset": np.arange(rows) + 1,
            "tier": "STANDARD_1",
            "format": "cloudml",
            # a new process id every 700 lines, unknown on some lines (a pid only where the line names one)
            "pid": pl.Series(1000 + np.arange(rows) // 700).set(pl.Series(rng.random(rows) < 0.1), None),
        }
    ).with_columns(
        timestamp=pl.when(pl.col("role") == "worker", pl.col("task_index") == 2).then(
            pl.datetime(2026, 1, 1, time_zone="UTC") + pl.duration(seconds=pl.col("elapsed_s").abs())
        )
    )
    # the task with no role logs no elapsed_s (nor a timestamp): a step time is its only time (and its
    # lines of one step, which no time tells apart, are copies of one record); ~4.5 s a local step, so
    # that one a line is about the others' pace (~100 global steps in 5.4 s), not a resume
    unlabeled = pl.col("role").is_null()
    frame = frame.with_columns(
        elapsed_s=pl.when(~unlabeled).then("elapsed_s"),
        local_steps_per_s=pl.when(unlabeled).then(pl.col("local_steps_per_s") / 25).otherwise("local_steps_per_s"),
        local_step=pl.when(~unlabeled | pl.Series(rng.random(rows) < 0.5)).then("local_step"),
    )
    copies = frame.filter(pl.col("source_offset") % 17 == 0).with_columns(pl.col("source_offset") + rows)
    return conform(pl.concat([frame, copies], how="diagonal_relaxed"), STEP_SCHEMA).lazy()


def test_intervals_without_windows_are_the_windowed_ones() -> None:
    steps = awkward_steps()
    reference = windowed(in_log_order(merge_duplicates(training_steps(steps)))).collect()
    # the generated records do reach every kind of break, warm-up beyond the first interval and copies
    assert reference["segment"].max() > 5 and reference.filter(pl.col("role").is_not_null())["copies"].max() == 2
    assert reference.filter(pl.col("warmup") & (pl.col("interval_index") > 0)).height > 0
    # and intervals timed by a step time, over named local steps and over one step a line
    named = pl.col("local_step").is_not_null() & pl.col("local_step").shift(1).over(TASK).is_not_null()
    timed = reference.with_columns(_named=named).filter("step_timed")["_named"]
    assert timed.sum() > 0 and (~timed).sum() > 0
    # (the pauses an interval holds come after the intervals, from other records: compared path to path)
    slow = interval_rates(steps).collect()
    assert_frame_equal(slow.drop("paused"), reference)
    fast = collect_intervals(steps)  # the stored order checked, not re-sorted: the same rows
    assert_frame_equal(fast, slow.select(fast.columns))


def test_counts_from_first_rows_are_the_distinct_counts() -> None:
    intervals = interval_rates(awkward_steps()).collect()
    parts = run_parts(intervals.lazy()).collect().sort("run_id")
    distinct = intervals.group_by("run_id").agg(
        tasks=pl.struct("role", "task_index").n_unique().cast(pl.UInt32),
        segments=pl.struct("role", "task_index", "segment").n_unique().cast(pl.UInt32),
    )
    assert_frame_equal(parts.select("run_id", "tasks", "segments"), distinct.sort("run_id"))
    own = own_figures(intervals.lazy()).sort(TASK, nulls_last=True)
    by_window = intervals.group_by(TASK).agg(segments=pl.col("segment").n_unique().cast(pl.UInt32))
    assert own["segments"].to_list() == by_window.sort(TASK, nulls_last=True)["segments"].to_list()


def test_tasks_put_in_order_as_a_stable_sort_does() -> None:
    frame = awkward_steps().collect()
    assert_frame_equal(by_task(frame), frame.sort(TASK, nulls_last=True, maintain_order=True))


def test_log_order_restored_alike_with_runs_out_of_order_and_roles_outside_training() -> None:
    # distinct_in_log_order packs each task in an integer code only where each run's rows are one
    # stretch in run id order; r2's rows before r1's (or split in two) take the string comparisons.
    # Either way: the rows of in_log_order(merge_duplicates(...)), in that order (ties broken alike).
    frame = awkward_steps().collect()
    half = frame.height // 2
    shuffled = {
        "grouped": frame,
        "runs reversed": pl.concat([frame.slice(half), frame.slice(0, half)]),
        "a run split": pl.concat(
            [frame.slice(0, half // 2), frame.slice(half), frame.slice(half // 2, half - half // 2)]
        ),
    }
    for name, steps in shuffled.items():
        reference = in_log_order(merge_duplicates(steps.lazy())).collect()
        got = distinct_in_log_order(steps)
        keys = [*TASK, "step", "source_offset"]
        (
            assert_frame_equal(
                got.sort(keys, nulls_last=True, maintain_order=True),
                reference.sort(keys, nulls_last=True, maintain_order=True),
                check_column_order=False,
            ),
            name,
        )
        assert got.select(TASK).equals(reference.select(TASK)), name


def test_task_figures_are_the_steady_estimator_of_each_tasks_intervals() -> None:
    # own_figures slices each task where it lies: its steady global rate is what the run's estimator
    # (bootstrap.steady_rate) gives over that task's steady intervals and their weights, the pauses left out
    # as for the run, nulls and NaN rates included.
    intervals = interval_rates(awkward_steps()).collect()
    intervals = intervals.with_columns(
        rate=pl.when(pl.col("source_offset") % 101 == 0).then(float("nan")).otherwise(pl.col("rate"))
    )
    own = own_figures(intervals.lazy()).sort(TASK, nulls_last=True)
    assert own.height == 10  # r1 and r2, five training tasks each (the ps left out)
    steady = intervals.filter(~pl.col("warmup") & pl.col("rate").is_not_null())
    for row in own.iter_rows(named=True):
        mine = steady.filter(*(pl.col(k).eq_missing(row[k]) for k in TASK))
        mine = mine.filter(~pl.col("paused")) if not mine["paused"].all() else mine
        sample = steady_rates(mine["rate"].to_numpy(), mine.select(STEADY_WEIGHT)["weight"].to_numpy())
        want = steady_rate(sample.rates, None if sample.alike() else sample.weights)
        assert row["steady_global_steps_per_s"] == want, row
