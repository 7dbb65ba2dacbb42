"""The times a grammar record states, as intervals: bare seconds, a run's clock, and stated times of day.

A line may time its step by seconds since the last report, seconds since the start, or a clock reading;
these functions tell which, from how the readings of a file grow with its steps."""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.base import (
    STAMP,
    TAG,
    ParseContext,
)
from tierscope.collector.formats.statements import epoch_statements
from tierscope.collector.formats.vocabulary import (
    DAY_S,
    TIME_OF_DAY,
    UNNAMED_TIMES,
    number,
)


def bare_intervals(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` (the grammar's, with ``_bare_s``, ``_per_s``, ``_interval_s``, ``_measure``, ``step``, ``_order``)
    with each time that says no unit of work and no span (``Time 1153.11s``, ``_bare_s``) read as the time since the
    task's previous report (``interval_s``, no step time) where the file shows it is one; so too a unit-less
    ``time: X`` (:data:`~tierscope.collector.formats.vocabulary.UNNAMED_TIMES`, read first as a step's seconds).

    A line does not say whether its bare time is one step's or its report interval's; the file's clock does:
    where a report advances the position by more than one step and its bare time is the time its envelope's clock
    advanced since the previous report (within a tenth, or a second: clocks printed to the second), in most of
    the reports that show it, the file's bare times are intervals (kept for the file in ``context``). Reading
    them as step times would make Marian's 2000 updates in 1153 s one update per 1153 s. Where reports come
    every step, both readings agree. A unit-less ``time: X`` is most often a step's mean seconds over the report
    (mmcv's ``time: 0.387`` every 50 iterations), so it is an interval only where it is also nearer the clock's
    advance than that advance per step: BasicSR-derived loggers print the seconds of the last 100 iterations
    (HDRUNet's ``<epoch:193, iter: 505,300, lr:5.000e-05, , time:85.917>`` 85.917 s after ``iter: 505,200``,
    chxy95/HDRUNet issue 12, 2021-08-10), and reports a second apart would otherwise pass the one-second
    tolerance with a step's 0.05 s."""
    if records.height == 0 or "_bare_s" not in records.columns:
        return records
    bare = pl.col("_bare_s").is_not_null()
    unnamed = (
        pl.col("_measure").is_in(list(UNNAMED_TIMES)).fill_null(False)
        & ~bare
        & pl.col("_per_s").is_not_null()
        & pl.col("_interval_s").is_null()
        & pl.col("_span").is_null()
        if "_measure" in records.columns
        else pl.lit(False)
    )
    for key, which in (("grammar-bare-interval", bare), ("grammar-unnamed-interval", unnamed)):
        shown = not context.state.get(key) and STAMP in records.columns
        if shown and _clock_shows_intervals(records, which, strict=which is unnamed):
            context.state[key] = True
    if context.state.get("grammar-unnamed-interval"):
        records = records.with_columns(
            _interval_s=pl.when(unnamed).then(1.0 / pl.col("_per_s")).otherwise("_interval_s"),
            _per_s=pl.when(unnamed).then(None).otherwise("_per_s"),
        )
    if not context.state.get("grammar-bare-interval"):
        return records
    return records.with_columns(
        _interval_s=pl.when(bare).then(pl.coalesce("_interval_s", "_bare_s")).otherwise("_interval_s"),
        _per_s=pl.when(bare).then(None).otherwise("_per_s"),
    )


def _clock_shows_intervals(records: pl.DataFrame, which: pl.Expr, *, strict: bool) -> bool:
    """Whether, in most of ``records``' reports ``which`` selects that advance the step by more than one since the
    task's previous report, their time (``_bare_s``, else ``1 / _per_s``) is what the envelope's clock advanced
    (within a tenth, or a second); ``strict``: and nearer that advance than the advance per step."""
    tag = pl.col(TAG).fill_null("")
    ordered = records.sort("_order").with_columns(
        _gap=(pl.col(STAMP) - pl.col(STAMP).shift(1).over(tag)).dt.total_microseconds() / 1e6,
        _advance=pl.col("step") - pl.col("step").shift(1).over(tag),
        _said=pl.coalesce("_bare_s", 1.0 / pl.col("_per_s")),
    )
    shown = ordered.filter(which & pl.col("_gap").is_not_null() & (pl.col("_advance") > 1))
    if not shown.height:
        return False
    gap, said = pl.col("_gap"), pl.col("_said")
    near = (gap - said).abs() <= pl.max_horizontal(0.1 * said, 1.0)
    if strict:
        near = near & ((gap - said).abs() < (gap / pl.col("_advance") - said).abs())
    return 2 * shown.filter(near).height > shown.height


#: The fewest readings of a task's time before it can be told a clock (see :func:`cumulative_times`): three rises.
_CLOCK_READINGS = 4


def _clock_positions(records: pl.DataFrame) -> list[pl.Expr]:
    """The steps since the start a record of ``records`` may be at, for :func:`cumulative_times`: its step as read
    (an epoch's record: its epoch), and where the line states its epoch and its counter's total but the file has
    not shown the counter starting again (one epoch's lines: ``Epoch: [14] [ 398/1093]``), the counter counted over
    the run, epochs from 0 and from 1 (``14 x 1093 + 398``, ``13 x 1093 + 398``)."""
    read = pl.coalesce(
        pl.col("step").cast(pl.Float64), pl.when("_epoch_record").then(number(pl.col("_epoch_only"), pl.Float64))
    )
    stated = epoch_statements(pl.col("_piece"), pl.col("_position"))
    epoch, total = number(stated["epoch"], pl.Float64), number(stated["inner_total"], pl.Float64)
    inner = pl.col("_inner").fill_null(False) & (total > 0)
    return [read, pl.when(inner).then(epoch * total + read), pl.when(inner).then((epoch - 1) * total + read)]


def cumulative_times(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` with a task's times that name no unit of work (``time: 101.3380``, ``Time 4981.4s``) read as
    its clock where they are one: seconds since the start (``elapsed_s``), not each report's step time.

    A hand-written loop often prints ``time.time() - start_time`` under the bare word ``time`` (DCGAN-tensorflow's
    ``Epoch: [ 2/200] [   0/   4] time: 101.3380, d_loss: ..``, carpedm20/DCGAN-tensorflow issues 276 and 175;
    Cellpose's ``Epoch 5, Time 4981.4s, Loss ..``, MouseLand/cellpose issue 450). Read as a step's seconds it makes
    one step per 101 s of a loop that does one per 11 s. A task's times are its clock where, over at least
    :data:`_CLOCK_READINGS` reports, each report's time and step are larger than the one's before, and the seconds
    per step they grow by agree, within a factor of two, with the seconds per step the first reading gives since
    step 0: a clock started with the run. A step time that drifts up (a loop slowing down) fails the second test:
    its first reading is one step's seconds, not all the steps' before it. An epoch's record keeps its duration:
    the time since the previous reading (none for the first)."""
    spelled = pl.col("_measure").is_in(list(UNNAMED_TIMES)).fill_null(False)
    free = spelled & pl.col("_interval_s").is_null() & pl.col("_elapsed_s").is_null() & pl.col("_span").is_null()
    if records.height == 0 or not records.select(free.any()).item():
        return records
    tag = pl.col(TAG).fill_null("")
    positions = _clock_positions(records)
    timed = records.filter(free).sort("_order")
    timed = timed.select(
        "_order",
        _t=tag,
        _v=pl.coalesce("_bare_s", 1.0 / pl.col("_per_s")),
        **{f"_x{i}": x for i, x in enumerate(positions)},
    )
    clocks: set[str] = set()
    for i in range(len(positions)):
        x = pl.col(f"_x{i}")
        rises = ((pl.col("_v").diff() > 0) & (x.diff() > 0)).slice(1).all()
        per_step = (pl.col("_v").last() - pl.col("_v").first()) / (x.last() - x.first())
        since_zero = (pl.col("_v") / x).filter(x > 0).first()
        tasks = (
            timed.filter(x.is_not_null())
            .group_by("_t")
            .agg(_n=pl.len(), _rises=rises, _per_step=per_step, _since_zero=since_zero)
            .filter(
                (pl.col("_n") >= _CLOCK_READINGS)
                & pl.col("_rises")
                & (pl.col("_per_step") > 0)
                & pl.col("_since_zero").is_between(0.5 * pl.col("_per_step"), 2 * pl.col("_per_step"))
            )
        )
        clocks.update(tasks.get_column("_t").to_list())
    if not clocks:
        return records
    on_clock = pl.col("_t").is_in(list(clocks))
    readings = timed.filter(on_clock).select("_order", _clock="_v", _since_last=pl.col("_v").diff().over("_t"))
    clocked = pl.col("_clock").is_not_null()
    return (
        records.join(readings, on="_order", how="left", maintain_order="left")
        .with_columns(
            _elapsed_s=pl.when(clocked).then("_clock").otherwise("_elapsed_s"),
            _per_s=pl.when(clocked).then(None).otherwise("_per_s"),
            _bare_s=pl.when(clocked).then(pl.when("_epoch_record").then("_since_last")).otherwise("_bare_s"),
        )
        .drop("_clock", "_since_last")
    )


def stated_clock_intervals(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` (the grammar's, with ``_piece``, ``step``, ``_order``, ``_interval_s``, ``_elapsed_s``) with the time
    since the task's previous report (``_interval_s``) where their lines state a time of day and no logger's time
    (:data:`~tierscope.collector.formats.vocabulary.TIME_OF_DAY`): the seconds between the two readings, a day added
    where the reading went back by more than half a day (midnight passed). Only for a record that advances the
    step past the previous step's, each copy of a step (ranks printing untagged) read at its first line, and only in
    a task whose readings never go back otherwise: times that fall between reports are durations, no clock, and
    time nothing."""
    if records.height == 0:
        return records
    unstamped = pl.col(STAMP).is_null() if STAMP in records.columns else pl.lit(True)
    parts = pl.col("_piece").str.extract_groups(TIME_OF_DAY)
    seconds = (
        number(parts.struct.field("h")) * 3600 + number(parts.struct.field("m")) * 60 + number(parts.struct.field("s"))
    )
    read = records.filter(unstamped).select("_order", "step", _t=pl.col(TAG).fill_null(""), _tod=seconds)
    read = read.filter(pl.col("_tod").is_not_null() & pl.col("step").is_not_null())
    # a step's reading is its first line's: the copies of one step (ranks printing untagged, a bar redrawn) share it
    steps = (
        read.sort("_order")
        .group_by("_t", "step", maintain_order=True)
        .agg(pl.col("_order").first(), _tod=pl.first("_tod"))
    )
    if steps.height < 2:
        return records
    fall = pl.col("_tod") - pl.col("_tod").shift(1).over("_t")
    steps = steps.sort("_order").with_columns(_fall=fall, _advance=pl.col("step") - pl.col("step").shift(1).over("_t"))
    # a reading that went back less than half a day is no clock's: that task's readings are durations
    durations = steps.filter((pl.col("_fall") < 0) & (pl.col("_fall") > -DAY_S / 2)).get_column("_t").unique()
    gap = pl.when(pl.col("_fall") < 0).then(pl.col("_fall") + DAY_S).otherwise("_fall")
    steps = steps.filter(~pl.col("_t").is_in(durations.implode())).select(
        "_t", "step", _stated_interval=pl.when((gap > 0) & (pl.col("_advance") > 0)).then(gap)
    )
    read = read.join(steps, on=["_t", "step"], how="inner").select("_order", "_stated_interval")
    free = pl.col("_interval_s").is_null() & pl.col("_elapsed_s").is_null()
    return (
        records.join(read, on="_order", how="left", maintain_order="left")
        .with_columns(_interval_s=pl.when(free).then("_stated_interval").otherwise("_interval_s"))
        .drop("_stated_interval")
    )
