"""TensorFlow Estimator / TF1 ``MonitoredSession`` hook lines.

- ``INFO:tensorflow:loss = 0.734, step = 1500 (2.688 sec)`` (``LoggingTensorHook``): ``step``
  is the global step; ``(x sec)`` is seconds since the hook's previous such line (usually
  100 steps earlier), stored as ``interval_s``. The first line has no seconds; some
  setups print ``step = 0, loss = 2.301`` (reversed).
- ``INFO:tensorflow:global_step/sec: 37.2`` (``StepCounterHook``) and ``examples/sec: 3720``
  (TPUEstimator) report one logging interval. Printed just before a loss line of the same
  task (Estimator), they are folded into that record as ``global_steps_per_s`` /
  ``examples_per_s``. A report with no loss line after it before the next
  ``global_step/sec`` (TPUEstimator prints no step at all) is a record of its own with a
  null step, identified and ordered by its line (``position``): the step is not invented.
  Where the lines carry times, a report printed just *after* a loss line at the same moment
  (within :data:`~tierscope.collector.formats.ranks.SAME_MOMENT_S`; TPUEstimator's hooks run in
  that order) with no loss line after it is that record's rate: both hooks report the same step.
  Without times, the pairing the figures state decides: a task whose every report printed just after a record
  states that record's period (its ``global_step/sec`` x the record's seconds = the steps since the task's previous
  record, within :data:`PERIOD_TOLERANCE`), better than the same reports state the next record's, prints its
  reports after their records (TPUEstimator on a TPU: ``loss = 0.31445312, step = 1000100 (45.773 sec)`` then
  ``global_step/sec: 2.18469``, 2.18469 x 45.773 = 100.0 steps, the iterations per loop).
- A loss line with its seconds but no rate before it (the first of an excerpt, whose
  ``global_step/sec`` line was cut off) covers the hooks' period: Estimator runs both hooks every
  ``RunConfig.log_step_count_steps`` (default 100) steps, so where the task's other reports agree
  on how many steps an interval holds (``global_step/sec`` x seconds, within
  :data:`PERIOD_TOLERANCE`), its rate is that many steps over its seconds
  (``step = 5800 (145.448 sec)`` with a period of 100: 0.6875 steps/s). The steps between two
  records are never taken for the period: lines may be missing between them.
- ``ERROR:tensorflow:Model diverged with loss = NaN.`` (``NanTensorHook``) is a failed-run
  event with no step.

The ``INFO:tensorflow:`` header is optional: with absl the glog header replaces it (see
:mod:`tierscope.collector.formats.envelopes`).
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import (
    LOOKAHEAD_LINES,
    STAMP,
    TAG,
    ParseContext,
    Parsed,
    SingleLineFormat,
    empty_parsed,
    finite_nonneg,
    number,
    reject_frame,
    split_by,
)
from tierscope.collector.formats.ranks import SAME_MOMENT_S
from tierscope.collector.formats.vocabulary import loss_reason, stated_rate, stepless_position

_HEADER = r"^(?:[A-Z]+:tensorflow:)?"
_RECORD = _HEADER + r"(?:loss|step) ="
_RATE = _HEADER + r"(?P<what>global_step|examples)/sec:(?P<rate>.*)$"
_DIVERGED = _HEADER + r"(?P<reason>Model diverged with loss = .*?)\s*$"
_MARK = _HEADER + r"(?:(?:loss|step) =|global_step/sec:|examples/sec:|Model diverged with loss)"

_FIELD = r"(?:^|, )(?:[A-Z]+:tensorflow:)?{} = ?(?P<v>[^,(]*?)\s*(?:,|\(|$)"
#: Anything after the fields: `` (2.688 sec)`` or nothing. An opening bracket without
#: ``sec)`` is a line cut off mid-number.
_SECONDS = r"\((?P<sec>[^)]*?)\s*sec\)\s*$"


class TFEstimator(SingleLineFormat):
    name: ClassVar[str] = "tf-estimator"
    example: ClassVar[str] = "INFO:tensorflow:loss = 0.734, step = 1500 (2.688 sec)"
    meaning: ClassVar[str] = (
        "step is the global step; (x sec) is seconds since the hook's previous line (interval_s); "
        "global_step/sec and examples/sec lines attach to the next record (to the one before them where the "
        "task prints its reports after its records)"
    )

    mark: ClassVar[str] = _MARK

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        """Where the last report among the batch's last lines starts, if it may still change: its record (with the
        rate lines just before it: printed before their record, they are its rates) where only hook lines follow
        it, or where rate lines follow it, whatever other lines do (an Estimator may print a checkpoint's lines
        between a ``global_step/sec`` line and its record); without a record, from its last ``global_step/sec``
        line on (the copies of one line, a logger's and absl's, count once); a run of ``examples/sec`` lines alone
        is held whole. Rate lines attach to the record after them, or, printed just after theirs, to the one
        before: a report the lines end in may still gain its record or its rates."""
        hooks, ends_with_hooks = _hook_tail(lines)
        if hooks.height == 0:
            return None
        kinds = hooks.get_column("_kind").to_list()
        if kinds[-1] == "record" and not ends_with_hooks:
            return None  # a record other lines follow: its rates, printed after it, would have come by now
        if "record" in kinds:
            at = _report_start(kinds)
        else:
            starts = [i for i, k in enumerate(kinds) if k == "global_step" and (i == 0 or kinds[i - 1] != k)]
            at = starts[-1] if starts else 0
        return int(hooks.get_column("source_offset")[at])

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        ours, rest = split_by(lines, self.marked())
        if ours.height == 0:
            return empty_parsed(rest)
        line = pl.col("line")
        ours = ours.with_columns(
            is_record=line.str.contains(_RECORD),
            diverged=line.str.extract(_DIVERGED, 1),
            rate_kind=line.str.extract(_RATE, 1),
            rate_raw=line.str.extract(_RATE, 2),
            step_raw=line.str.extract(_FIELD.format("step"), 1),
            loss_raw=line.str.extract(_FIELD.format("loss"), 1),
            sec_raw=line.str.extract(_SECONDS, 1),
            has_paren=line.str.contains("(", literal=True),
        ).with_columns(
            step=number("step_raw", pl.Int64()),
            loss=number("loss_raw"),
            interval_s=number("sec_raw"),
            rate=stated_rate(number("rate_raw")),
        )
        reason = (
            pl.when(pl.col("is_record") & pl.col("step_raw").is_null())
            .then(pl.lit("a loss line without 'step = N'"))
            .when(pl.col("is_record") & (pl.col("step_raw") == ""))
            .then(pl.lit("'step = ' has no value (line cut off?)"))
            .when(pl.col("is_record") & (pl.col("step").is_null() | (pl.col("step") < 0)))
            .then(pl.format("step '{}' is not a whole number >= 0", "step_raw"))
            .when(pl.col("is_record") & pl.col("loss_raw").is_not_null() & pl.col("loss").is_null())
            .then(pl.format("loss '{}' is not a number", "loss_raw"))
            .when(pl.col("is_record") & loss_reason(pl.col("loss_raw")).is_not_null())
            .then(loss_reason(pl.col("loss_raw")))
            .when(pl.col("is_record") & pl.col("has_paren") & pl.col("sec_raw").is_null())
            .then(pl.lit("the '(x sec)' part is cut off"))
            .when(pl.col("is_record") & pl.col("sec_raw").is_not_null() & ~finite_nonneg(pl.col("interval_s")))
            .then(pl.format("seconds '{}' is not a finite number >= 0", "sec_raw"))
            .when(~pl.col("is_record") & pl.col("diverged").is_null() & pl.col("rate_kind").is_null())
            .then(pl.lit("a TensorFlow hook line cut off before its value"))
            .when(pl.col("rate_kind").is_not_null() & ~finite_nonneg(pl.col("rate")))
            .then(
                pl.format("{}/sec '{}' is not a finite number >= 0", "rate_kind", pl.col("rate_raw").str.strip_chars())
            )
        )
        ours = ours.with_columns(reason=reason)
        bad = ours.filter(pl.col("reason").is_not_null())
        good = ours.filter(pl.col("reason").is_null())
        events = good.filter(pl.col("diverged").is_not_null()).select(
            "source_offset",
            pl.lit("failed").alias("event"),
            pl.col("diverged").alias("reason"),
            pl.lit(self.name).alias("format"),
        )
        steps = self._attach_rates(good.filter(pl.col("diverged").is_null()))
        rejects = reject_frame(bad, pl.col("reason"), self.name)
        return Parsed(steps=steps, events=events, rejects=rejects, rest=rest)

    def _attach_rates(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Records with the rates reported before them (same tag), and step-less reports."""
        # A report (block) starts at every global_step/sec line and after every record: a
        # block is [global_step/sec] [examples/sec ...] [record]; where the task prints its reports after their
        # records, at every record: [record] [global_step/sec] [examples/sec ...].
        after = _reports_after_records(frame)
        before_starts = (pl.col("rate_kind") == "global_step").fill_null(False) | pl.col("is_record").shift(1).over(
            TAG
        ).fill_null(False)
        starts = (
            pl.when(pl.col(TAG).fill_null("").is_in(pl.lit(sorted(after), dtype=pl.List(pl.String))))
            .then(pl.col("is_record"))
            .otherwise(before_starts)
            if after
            else before_starts
        )
        frame = frame.with_columns(block=starts.cast(pl.Int64).cum_sum().over(TAG)).with_columns(
            has_record=pl.col("is_record").any().over(TAG, "block"),
        )
        rates = (
            frame.filter(~pl.col("is_record"))
            .group_by(TAG, "block")
            .agg(
                pl.col("source_offset").min(),
                pl.col("rate").filter(pl.col("rate_kind") == "global_step").last().alias("global_steps_per_s"),
                pl.col("rate").filter(pl.col("rate_kind") == "examples").last().alias("examples_per_s"),
            )
        )
        records = (
            frame.filter(pl.col("is_record"))
            .join(rates.drop("source_offset"), on=[TAG, "block"], how="left", nulls_equal=True)
            .select("source_offset", "step", "loss", "interval_s", "global_steps_per_s", "examples_per_s")
        )
        alone = rates.join(
            frame.filter(pl.col("has_record")).select(TAG, "block").unique(),
            on=[TAG, "block"],
            how="anti",
            nulls_equal=True,
        ).select("source_offset", pl.lit(None, dtype=pl.Int64).alias("step"), "global_steps_per_s", "examples_per_s")
        records, alone = _after_their_record(records, alone, frame)
        records = _rate_of_the_period(records, frame)
        steps = (
            pl.concat([records, alone], how="diagonal_relaxed")
            .sort("source_offset")
            .with_columns(stepless_position(), pl.lit(self.name).alias("format"))
        )
        return steps


def _hook_tail(lines: pl.DataFrame) -> tuple[pl.DataFrame, bool]:
    """The hook lines among ``lines``' last :data:`LOOKAHEAD_LINES` (``source_offset``, ``_kind``: ``"record"``,
    ``"global_step"`` or ``"examples"``, ``_timed``: it states ``(x sec)``), and whether the last line is one."""
    line = pl.col("line")
    kind = pl.when(line.str.contains(_RECORD)).then(pl.lit("record")).otherwise(line.str.extract(_RATE, 1))
    timed = line.str.contains(_SECONDS).alias("_timed")
    tail = lines.tail(LOOKAHEAD_LINES).select("source_offset", kind.alias("_kind"), timed)
    ends_with_hooks = tail.height > 0 and tail.get_column("_kind")[-1] is not None
    return tail.filter(pl.col("_kind").is_not_null()), ends_with_hooks


def _report_start(kinds: list[str]) -> int:
    """The index in ``kinds`` (hook lines' kinds, one a record) where the last record's report starts: its copies
    and the rate lines printed before it (the rate lines after it may be its own, printed after it, or the next
    record's, which only the lines to come tell)."""
    at = len(kinds) - 1 - kinds[::-1].index("record")
    while at > 0 and kinds[at - 1] == "record":  # the copies of the record
        at -= 1
    while at > 0 and kinds[at - 1] != "record":
        at -= 1
    return at


_RATES = ("global_steps_per_s", "examples_per_s")
#: How far a task's reports may disagree on the steps one interval holds for them to state its period.
PERIOD_TOLERANCE = 0.01


def _reports_after_records(frame: pl.DataFrame) -> set[str]:
    """The tasks (:data:`TAG`, ``""`` for the untagged one) that print each ``global_step/sec`` report just after
    the record it reports: every report that follows a record with seconds, the task's previous record known,
    states that record's period (report x seconds = the steps between the two records, within
    :data:`PERIOD_TOLERANCE`), and those reports state it better (a smaller sum of relative errors) than they
    state the period of the record after them. A task with no such pair keeps the Estimator's order."""
    rate_lines = frame.filter(pl.col("rate_kind") == "global_step")
    if rate_lines.height == 0 or frame.get_column("is_record").sum() < 2:
        return set()
    tagged = frame.with_columns(_tag=pl.col(TAG).fill_null(""))
    records = (
        tagged.filter(pl.col("is_record"))
        .select("source_offset", "_tag", "step", "interval_s")
        .with_columns(_delta=(pl.col("step") - pl.col("step").shift(1).over("_tag")).cast(pl.Float64))
    )
    rates = (
        tagged.filter(pl.col("rate_kind") == "global_step")
        .select("source_offset", "_tag", "rate")
        .sort("source_offset")
    )

    def error(strategy: str) -> pl.DataFrame:
        """Each report's relative error against the record just before (backward) or after (forward) it."""
        near = (
            rates.join_asof(
                records.select(pl.col("source_offset").alias("_record"), "_tag", "interval_s", "_delta").sort(
                    "_record"
                ),
                left_on="source_offset",
                right_on="_record",
                by="_tag",
                strategy=strategy,
                check_sortedness=False,
            )
            .filter(pl.col("_record").is_not_null())
            # one report per record: the one printed next to it
            .sort("source_offset", descending=strategy == "forward")
            .unique("_record", keep="first", maintain_order=True)
        )
        return near.select(
            "source_offset",
            "_tag",
            ((pl.col("rate") * pl.col("interval_s") - pl.col("_delta")).abs() / pl.col("_delta")).alias("_err"),
        )

    backward = error("backward").filter(pl.col("_err").is_not_null())
    if backward.height == 0:
        return set()
    forward = error("forward").filter(pl.col("_err").is_not_null())
    agreed = backward.group_by("_tag").agg(
        (pl.col("_err") <= PERIOD_TOLERANCE).all().alias("_all"), pl.col("_err").mean().alias("_back")
    )
    # Each order is judged by the reports it pairs: the last report of lines still being written has no record
    # after it yet, and a report of the first record (no seconds) none before it. Comparing only the reports both
    # orders pair would leave a file cut just after a report with nothing against the order of its records after
    # (one report, paired backward only), and its lines read as the other order until the next collect.
    against = forward.group_by("_tag").agg(pl.col("_err").mean().alias("_fwd"))
    chosen = agreed.join(against, on="_tag", how="left").filter(
        pl.col("_all") & (pl.col("_fwd").is_null() | (pl.col("_back") < pl.col("_fwd")))
    )
    return set(chosen.get_column("_tag").to_list())


def _rate_of_the_period(records: pl.DataFrame, frame: pl.DataFrame) -> pl.DataFrame:
    """``records`` with each one that states seconds but no rate given the rate of its task's period."""
    covered = pl.col("global_steps_per_s") * pl.col("interval_s")
    wanted = (covered > 0).any() & (pl.col("global_steps_per_s").is_null() & (pl.col("interval_s") > 0)).any()
    if records.height < 2 or not records.select(wanted).item():
        return records
    tagged = records.join(frame.select("source_offset", pl.col(TAG).fill_null("")), on="source_offset", how="left")
    period = (
        tagged.filter(covered > 0)
        .group_by(TAG)
        .agg(_n=covered.median().round(0), _lo=covered.min(), _hi=covered.max())
        .filter(
            (pl.col("_n") >= 1)
            & (pl.col("_lo") >= pl.col("_n") * (1 - PERIOD_TOLERANCE))
            & (pl.col("_hi") <= pl.col("_n") * (1 + PERIOD_TOLERANCE))
        )
    )
    return (
        tagged.join(period.select(TAG, "_n"), on=TAG, how="left")
        .with_columns(
            global_steps_per_s=pl.coalesce(
                "global_steps_per_s", pl.when(pl.col("interval_s") > 0).then(pl.col("_n") / pl.col("interval_s"))
            )
        )
        .drop(TAG, "_n")
    )


def _after_their_record(
    records: pl.DataFrame, alone: pl.DataFrame, frame: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(records, alone)`` with each step-less report that follows a record of its task without a
    rate, at the same moment, folded into that record."""
    if alone.height == 0 or records.height == 0 or STAMP not in frame.columns:
        return records, alone
    # an untagged line's task is the untagged one (a null key matches nothing in a join)
    where = frame.select("source_offset", pl.col(TAG).fill_null(""), STAMP)
    ahead = records.join(where, on="source_offset", how="left").filter(
        pl.col("global_steps_per_s").is_null() & pl.col("examples_per_s").is_null() & pl.col(STAMP).is_not_null()
    )
    if ahead.height == 0:
        return records, alone
    paired = (
        alone.join(where, on="source_offset", how="left")
        .filter(pl.col(STAMP).is_not_null())
        .sort("source_offset")
        .join_asof(
            ahead.select(pl.col("source_offset").alias("_record"), TAG, pl.col(STAMP).alias("_at")).sort("_record"),
            left_on="source_offset",
            right_on="_record",
            by=TAG,
            strategy="backward",
            check_sortedness=False,  # both sides sorted by offset above, hence within each task too
        )
        .filter(
            pl.col("_record").is_not_null()
            & ((pl.col(STAMP) - pl.col("_at")).dt.total_microseconds() <= SAME_MOMENT_S * 1e6)
        )
        # the first report after a record is its own; a later one stays a report of its own
        .unique("_record", keep="first", maintain_order=True)
    )
    if paired.height == 0:
        return records, alone
    rates = paired.select(pl.col("_record").alias("source_offset"), *[pl.col(c).alias(f"_{c}") for c in _RATES])
    records = (
        records.join(rates, on="source_offset", how="left")
        .with_columns(*[pl.coalesce(c, f"_{c}").alias(c) for c in _RATES])
        .drop([f"_{c}" for c in _RATES])
    )
    alone = alone.join(paired.select("source_offset"), on="source_offset", how="anti")
    return records, alone
