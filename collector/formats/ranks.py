"""Ranks nobody labelled: several processes printing the same step lines into one file with no tag.

Horovod or ``mpirun`` without ``--tag-output``, or one pod's stdout shared by several processes,
give every progress line once per process, one after another: ``loss = 3.54, step = 5800 (145.448
sec)`` four times, the copies differing in their last digits or their logger's time. Read as one
task, that is four times the records (and a rate derived between copies that is no rate at all).

A *run* is consecutive untagged lines that say the same thing (equal once the digits after a
decimal point are dropped: ``3.5446548`` and ``3.5446541`` are one figure of two ranks). A progress bar
printed twice at one position is one process refreshing its postfix (``loss=0.0195`` after
``loss=0.00492``): no line of a run.

Rule, learnt once per file from its head (:func:`rank_count`): the file has *k* untagged ranks when
its head holds at least two runs of *k* >= 2 lines that are not all byte-identical (a handler
attached twice prints identical copies: those stay copies of one record), all of the same *k*
(the last run of the head may be cut short, also the second of two where it ends the head: four
hosts' copies of one step, then two of the next where an excerpt stops); where the lines carry a
time, a run spans at most :data:`SAME_MOMENT_S`. Two lines per step that differ only in decimals over a whole head are
read as two ranks, not as a smoothed second copy: the text cannot tell them apart, a rank's rate is
never added to another's, so the job's steps/s is the same either way, and no record is dropped.

Reading (:func:`label_ranks`), in every batch of such a file: the *i*-th line of a run is rank *i*
(``worker`` *i*, as a bare rank prefix would), a line that no other repeats is rank 0's, and a run
of byte-identical copies is rank 0's copies of one record. A run cut by the end of a batch goes on
in the next one (:class:`RankCarry`), so a file reads the same wherever its batches end. A run of
another size than *k* (ranks that stopped printing, or more that joined) is read the same way,
conservatively, and said once in a note. A job-wide figure stays what it is: each rank's record
keeps its own rate, and rates of tasks are never added.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from tierscope.collector.formats.base import STAMP, TAG
from tierscope.collector.formats.vocabulary import BAR

#: A progress bar and its counter (``38%|███▊      | 30497/80000``, ``100% 42/42`` without glyphs).
_BAR = rf"{BAR}\d+/\d+"
#: The longest span of one run's times for its lines to be the ranks' copies of one report.
SAME_MOMENT_S = 2.0
#: The role of a rank found this way (as a bare ``[1]`` rank prefix's).
RANK_ROLE = "worker"
#: Lines at a batch's end whose runs are kept for the next batch: more than the look-ahead a batch
#: hands on unparsed, so a run cut there or inside the look-ahead is whole in the next batch.
CARRY_LINES = 4096
#: Lines printed once in a batch of a file of ranks (more than its copied runs) that make a change worth a note.
SINGLES_NOTED = 8


@dataclass
class RankCarry:
    """What one batch of a file tells the next about its untagged ranks: ``k`` (the ranks its head
    shows), ``tail`` (the keyed lines of the runs at the batch's end) and ``notes`` not yet handed out."""

    k: int
    tail: pl.DataFrame | None = None
    noted: bool = False
    notes: list[str] = field(default_factory=list)


def _runs(body: pl.DataFrame) -> pl.DataFrame:
    """``body``'s lines with ``_key`` (null for a tagged line or one without a digit) and ``_run``."""
    line = pl.col("line")
    key = line.str.replace_all(r"\.\d+", "")
    return body.select(
        "source_offset",
        line,
        STAMP,
        # a progress bar printed again at the same position is one process refreshing it (its postfix, a
        # loss, changed), not ranks' copies
        _key=pl.when(pl.col(TAG).is_null() & line.str.contains(r"\d") & ~line.str.contains(_BAR)).then(key),
    )


def _with_run_stats(rows: pl.DataFrame) -> pl.DataFrame:
    rows = rows.with_columns(_run=(pl.col("_key").ne_missing(pl.col("_key").shift(1))).cum_sum())
    return rows.filter(pl.col("_key").is_not_null()).with_columns(
        _k=pl.len().over("_run"),
        _i=pl.int_range(pl.len()).over("_run"),
        # copies differ in their text, or in their times where every copy has one: the same message once
        # with a time and once without is one process's two handlers (TensorFlow's and absl's), no ranks
        _distinct=pl.max_horizontal(
            pl.col("line").n_unique(),
            pl.when(pl.col(STAMP).is_not_null().all()).then(pl.col(STAMP).n_unique()).otherwise(1),
        ).over("_run"),
        _span=(pl.col(STAMP).max() - pl.col(STAMP).min()).over("_run").dt.total_microseconds() / 1e6,
        _timed=pl.col(STAMP).is_not_null().all().over("_run"),
    )


def rank_count(head: pl.DataFrame) -> int | None:
    """The number of untagged ranks the lines ``head`` (a file's first lines, with :data:`TAG` and
    :data:`STAMP`) show by the rule above; None when they show none."""
    if head.height < 2:
        return None
    runs = _with_run_stats(_runs(head))
    copies = runs.filter((pl.col("_k") >= 2) & (pl.col("_distinct") > 1))
    if copies.height == 0:
        return None
    sizes = copies.group_by("_run", "_timed", "_span").agg(pl.col("_k").first()).sort("_run")
    # a timed run spanning more than a moment is one task's own reports, no ranks' copies
    kept = sizes.filter(~pl.col("_timed") | (pl.col("_span") <= SAME_MOMENT_S))
    runs_k = kept.get_column("_k")
    if runs_k.len() < 2:
        return None
    # the head's end may cut its last run short: of three runs or more, or of two where the last is the head's
    # last lines (an excerpt of four hosts' lines cut after two copies of its last step)
    at_end = kept.get_column("_run")[-1] == runs.get_column("_run").max()
    if runs_k[-1] < runs_k.max() and (runs_k.len() > 2 or at_end):  # type: ignore[operator]
        runs_k = runs_k.head(-1)
    if runs_k.n_unique() != 1:
        return None
    return int(runs_k[0])


def ends_in_copies(head: pl.DataFrame) -> bool:
    """Whether the lines ``head`` (as :func:`rank_count` takes them) end in a run of ranks' copies (two lines or
    more that say the same thing, not byte-identical, within a moment): a head that shows too few runs to tell how
    many ranks there are, and ends in copies, may tell it once the lines after them are written."""
    if head.height < 2:
        return False
    runs = _with_run_stats(_runs(head))
    if runs.height == 0 or runs.get_column("source_offset")[-1] != head.get_column("source_offset")[-1]:
        return False
    k, distinct, timed, span = runs.select("_k", "_distinct", "_timed", "_span").row(-1)
    return k >= 2 and distinct > 1 and (not timed or span <= SAME_MOMENT_S)


def label_ranks(body: pl.DataFrame, carry: RankCarry) -> pl.DataFrame | None:
    """``source_offset``, ``role``, ``task_index`` and ``tag`` of the untagged lines of ``body`` (a batch's
    messages after their envelopes, with :data:`TAG` and :data:`STAMP`) in a file of ``carry.k`` ranks;
    None when there are none. Updates ``carry`` for the next batch (pass the same object for every batch)."""
    if body.height == 0:
        return None
    rows = _runs(body).with_columns(_new=pl.lit(True))
    start = int(body.get_column("source_offset").min())  # type: ignore[arg-type]
    if carry.tail is not None:
        # lines handed on unparsed come again in this batch: only the earlier ones are carried
        before = carry.tail.filter(pl.col("source_offset") < start).with_columns(_new=pl.lit(False))
        rows = pl.concat([before, rows])
    runs = _with_run_stats(rows)
    last_runs = runs.filter(pl.col("source_offset") >= rows.get_column("source_offset").tail(CARRY_LINES).min())
    first_kept = int(last_runs.get_column("_run").min()) if last_runs.height else None  # type: ignore[arg-type]
    carry.tail = (
        rows.join(runs.select("source_offset", "_run"), on="source_offset", how="left")
        .filter(pl.col("_run") >= first_kept)
        .select(rows.columns)
        .drop("_new")
        if first_kept is not None
        else None
    )
    # a timed run spanning more than a moment is one task's own repeated report: left as written
    ranked = runs.filter(pl.col("_new") & ~(pl.col("_timed") & (pl.col("_span") > SAME_MOMENT_S)))
    if ranked.height == 0:
        return None
    rank = pl.when(pl.col("_distinct") > 1).then(pl.col("_i")).otherwise(0)
    if not carry.noted:
        # the last run of the batch may still go on in the next one: judged there
        whole = ranked.filter(
            (pl.col("_run") != pl.col("_run").max()) & (pl.col("_k") >= 2) & (pl.col("_distinct") > 1)
        )
        other = whole.filter(pl.col("_k") != carry.k).sort("source_offset")
        singles = ranked.filter((pl.col("_run") != pl.col("_run").max()) & (pl.col("_k") == 1))
        # a few lines only rank 0 prints are normal; most lines printed once is a change of the copy count
        if (
            other.height == 0
            and singles.height >= SINGLES_NOTED
            and singles.height > whole.get_column("_run").n_unique()
        ):
            other = singles.sort("source_offset")
        if other.height:
            carry.noted = True
            carry.notes.append(
                f"untagged ranks: {carry.k} copies of each line at the file's start, {other['_k'][0]} from line "
                f"{other['source_offset'][0]}: each copy read as the rank of its place, the figures of ranks "
                "that printed no copy are missing"
            )
    return ranked.select(
        "source_offset",
        pl.lit(RANK_ROLE).alias("role"),
        rank.cast(pl.Int32).alias("task_index"),
        pl.format(f"{RANK_ROLE}/{{}}", rank).alias(TAG),
    )
