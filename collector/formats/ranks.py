"""Ranks nobody labelled: several processes printing the same step lines into one file with no tag.

Horovod or ``mpirun`` without ``--tag-output``, or one pod's stdout shared by several processes,
give every progress line once per process, one after another: ``loss = 3.54, step = 5800 (145.448
sec)`` four times, the copies differing in their last digits or their logger's time. Read as one
task, that is four times the records (and a rate derived between copies that is no rate at all).

Rule: a run of *k* >= 2 consecutive untagged lines that say the same thing (equal once the digits
after a decimal point are dropped: ``3.5446548`` and ``3.5446541`` are one figure of two ranks) and
that are not all byte-identical (a handler attached twice prints identical copies: those stay
copies of one record) is *k* ranks: its *i*-th line gets the task tag of rank *i* (``worker``
*i*, as a bare rank prefix would). The runs must look like ranks, not like a task's own
consecutive reports: where the lines carry a time, a run spans at most :data:`SAME_MOMENT_S`;
without times, the batch holds at least two such runs and all have the same *k*. A job-wide
figure stays what it is: each rank's record keeps its own rate, and rates of tasks are never added.
"""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.base import STAMP, TAG

#: The longest span of one run's times for its lines to be the ranks' copies of one report.
SAME_MOMENT_S = 2.0
#: The role of a rank found this way (as a bare ``[1]`` rank prefix's).
RANK_ROLE = "worker"


def unlabelled_ranks(body: pl.DataFrame) -> pl.DataFrame | None:
    """``source_offset``, ``role``, ``task_index`` and ``tag`` of the lines of ``body`` (the messages after
    their envelopes, with :data:`TAG` and :data:`STAMP`) that are copies of one report by several ranks;
    None when there are none."""
    if body.height < 2:
        return None
    line = pl.col("line")
    key = line.str.replace_all(r"\.\d+", "")
    runs = body.select(
        "source_offset",
        line,
        STAMP,
        _key=pl.when(pl.col(TAG).is_null() & line.str.contains(r"\d")).then(key),
    ).with_columns(_run=(pl.col("_key").ne_missing(pl.col("_key").shift(1))).cum_sum())
    runs = runs.filter(pl.col("_key").is_not_null()).with_columns(
        _k=pl.len().over("_run"),
        _i=pl.int_range(pl.len()).over("_run"),
        _distinct=pl.struct(line, STAMP).n_unique().over("_run"),
        _span=(pl.col(STAMP).max() - pl.col(STAMP).min()).over("_run").dt.total_microseconds() / 1e6,
        _timed=pl.col(STAMP).is_not_null().all().over("_run"),
    )
    copies = runs.filter((pl.col("_k") >= 2) & (pl.col("_distinct") > 1))
    if copies.height == 0:
        return None
    timed = copies.filter(pl.col("_timed") & (pl.col("_span") <= SAME_MOMENT_S))
    untimed = copies.filter(~pl.col("_timed"))
    if untimed.height:
        sizes = untimed.group_by("_run").agg(pl.col("_k").first())
        if sizes.height < 2 or sizes.get_column("_k").n_unique() != 1:
            untimed = untimed.clear()
    found = pl.concat([timed, untimed])
    if found.height == 0:
        return None
    return found.select(
        "source_offset",
        pl.lit(RANK_ROLE).alias("role"),
        pl.col("_i").cast(pl.Int32).alias("task_index"),
        pl.format(f"{RANK_ROLE}/{{}}", "_i").alias(TAG),
    )
