"""A line format that is one regular expression of :mod:`~tierscope.collector.formats.vocabulary` phrases.

Most step lines of the field are one line, one record: a pattern with named groups
(:data:`~tierscope.collector.formats.vocabulary.GROUPS`) read by
:func:`~tierscope.collector.formats.vocabulary.record_columns`. A family module then says
only what is its own: the ``mark`` that finds its lines cheaply, the ``pattern``, the
``scope`` of its step times, and constant columns (a role the line implies). Lines that
carry the mark but not the pattern are rejects (``cut``: the reason given), so a line cut
off mid-record is kept aside rather than lost; a line that matches becomes a record only
when it carries a figure (a rate, a time or an ``examples_per_s``: a step alone is no report).

A family whose lines open with the step phrase (``Step 700 per-step time ...``) names it as
its ``lead``: a line cut right after it (``Step 700``, a stored copy cut short) still says
which step the task reached, and *when* if its envelope gave the line a time of its own (a
glog header; :data:`~tierscope.collector.formats.base.STAMP`). That step and time are a
record (the time is its figure) with no rate of its own: the rate at the task's next record
that prints none is derived from the two times (:func:`~tierscope.collector.formats.vocabulary.derive_rates`,
``rate_derived``). Without a time of its own such a line is a reject like any cut line.
"""

from __future__ import annotations

import re
from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import (
    STAMP,
    TAG,
    ParseContext,
    Parsed,
    SingleLineFormat,
    empty_parsed,
    reject_frame,
)
from tierscope.collector.formats.vocabulary import (
    LOCAL,
    WHOLE_GROUPS,
    Meaning,
    derive_rates,
    loss_reason,
    record_columns,
    stepless_position,
    value_reason,
    whole_reason,
)

#: Columns that make a matched line a report: at least one must be non-null.
FIGURES: tuple[str, ...] = (
    "global_steps_per_s",
    "local_steps_per_s",
    "examples_per_s",
    "elapsed_s",
    "interval_s",
    "timestamp",
)


class PhrasedFormat(SingleLineFormat):
    """One ``pattern`` per record line; subclasses set ``name``, ``example``, ``meaning``,
    ``mark``, ``pattern`` and optionally ``scope``, ``constants``, ``cut``, ``derive`` and ``lead``."""

    pattern: ClassVar[str]
    scope: ClassVar[Meaning] = LOCAL
    #: Columns every record of the format has, e.g. ``{"role": "worker"}``.
    constants: ClassVar[dict[str, object]] = {}
    #: The reject reason of a marked line the pattern does not match.
    cut: ClassVar[str] = "a line of this format cut off or with fields missing"
    #: Derive the rates the line does not print from its clock (its own ``timestamp`` group,
    #: else its envelope's time; see ``derive_rates``).
    derive: ClassVar[bool] = False
    #: The step phrase the format's lines open with (its one group named as in ``pattern``), or
    #: None: a line that ends right after it is that step reported alone (see the module docstring).
    #: Only for a phrase no other format's line ends with (TF-slim's ``global step N`` is not:
    #: tf_cnn_benchmarks prints ``INFO 31 global step 381280`` alone on its line).
    lead: ClassVar[str | None] = None

    def groups(self) -> list[str]:
        return list(re.compile(self.pattern).groupindex)

    def _cut_after_lead(self) -> pl.Expr:
        """True for a line that ends right after the ``lead`` step phrase."""
        if self.lead is None:
            return pl.lit(False)
        return pl.col("line").str.contains(rf"{self.lead}\s*$")

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        ours = self.marked() | self._cut_after_lead()
        if not lines.select(ours.any()).item():
            return empty_parsed(lines)
        marked, rest = lines.filter(ours), lines.filter(~ours)
        read = marked.with_columns(
            _g=pl.col("line").str.extract_groups(self.pattern), _ok=pl.col("line").str.contains(self.pattern)
        ).unnest("_g")
        stamp = pl.col(STAMP) if STAMP in read.columns else pl.lit(None, dtype=pl.Datetime("us", "UTC"))
        # A step alone is a record only with a time of its own; the pattern's lines come first.
        alone = ~pl.col("_ok") & self._cut_after_lead() & stamp.is_not_null()
        if self.lead is not None:
            step = next(iter(re.compile(self.lead).groupindex))
            lead_step = pl.col("line").str.extract(rf"{self.lead}\s*$", 1)
            read = read.with_columns(pl.when(alone).then(lead_step).otherwise(pl.col(step)).alias(step))
        read = read.with_columns(_read=pl.col("_ok") | alone)
        rejects = reject_frame(read.filter(~pl.col("_read")), self.cut, self.name)
        broken = self.broken()
        if broken is not None:
            read = read.with_columns(_broken=pl.when(pl.col("_read")).then(broken))
            if read.select(pl.col("_broken").is_not_null().any()).item():
                bad = read.filter(pl.col("_broken").is_not_null())
                rejects = pl.concat([rejects, reject_frame(bad, pl.col("_broken"), self.name)]).sort("source_offset")
                read = read.filter(pl.col("_broken").is_null())
        steps = self.records(read.filter(pl.col("_read")), context)
        return Parsed(steps=steps, events=pl.DataFrame(), rejects=rejects, rest=rest)

    def broken(self) -> pl.Expr | None:
        """Why a line the pattern read is a reject all the same, null where it is good (None: nothing
        to check): a whole-number capture that is not one a step record holds
        (:func:`~tierscope.collector.formats.vocabulary.whole_reason`), an infinite loss
        (:func:`~tierscope.collector.formats.vocabulary.loss_reason`), a time or an accuracy out of its range
        (:func:`~tierscope.collector.formats.vocabulary.value_reason`); the declared formats' reasons."""
        groups = self.groups()
        checks = [whole_reason(g, pl.col(g)) for g in groups if g in WHOLE_GROUPS]
        checks += [loss_reason(pl.col("loss"))] if "loss" in groups else []
        checks += [why for g in groups if (why := value_reason(g, pl.col(g))) is not None]
        return pl.coalesce(checks) if checks else None

    def convert(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        """Hook: turn the format's own raw groups (a clock, an epoch) into columns; default none."""
        return matched

    def records(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        """Step records from the matched lines (with their group columns, as Strings).

        A ``timestamp`` column that :meth:`convert` made a Datetime is kept; a format with
        ``derive`` or a ``lead`` takes the envelope's time (:data:`STAMP`) where the line has
        none of its own, and with ``derive`` the rates the line does not print come from
        those times (per task)."""
        matched = self.convert(matched, context)
        columns = record_columns(self.groups(), self.scope)
        own = matched.schema.get("timestamp") == pl.Datetime("us", "UTC")
        stamped = (self.derive or self.lead is not None) and STAMP in matched.columns
        times = [pl.col(c) for c, use in (("timestamp", own), (STAMP, stamped)) if use]
        frame = matched.select(
            "source_offset",
            pl.col(TAG).alias("_tag"),
            *([pl.coalesce(times).alias("timestamp")] if times else []),
            **{k: v for k, v in columns.items() if k != "timestamp"},
            **{k: pl.lit(v) for k, v in self.constants.items()},
            format=pl.lit(self.name),
        )
        if self.derive and times:
            keys = ["_tag", *(["task_index"] if "task_index" in frame.columns else [])]
            frame = _derived(frame, keys, context, f"{self.name}-last-timed")
        return finish(frame.drop("_tag"))


def _derived(frame: pl.DataFrame, keys: list[str], context: ParseContext, where: str) -> pl.DataFrame:
    """``frame`` with :func:`derive_rates`' rates, a task's first record of the batch timed against its newest of
    the batches (and collects) before, kept in ``context.state[where]`` (one row per task: its keys, process, time,
    steps): a log read in pieces derives the rate one read derives."""
    last = context.state.get(where)
    if isinstance(last, pl.DataFrame) and last.height:
        both = pl.concat(
            [last.with_columns(_carried=pl.lit(True)), frame.with_columns(_carried=pl.lit(False))],
            how="diagonal_relaxed",
        )
        frame = derive_rates(both, keys).filter(~pl.col("_carried")).drop("_carried")
    else:
        frame = derive_rates(frame, keys)
    timed = frame.filter(
        context.counts(pl.col("source_offset")) & pl.col("step").is_not_null() & pl.col("timestamp").is_not_null()
    )
    if timed.height:
        kept = [c for c in (*keys, "pid", "timestamp", "step", "local_step") if c in timed.columns]
        newest = timed.sort("timestamp").group_by(keys, maintain_order=True).last().select(kept)
        merged = newest if not isinstance(last, pl.DataFrame) else pl.concat([last, newest], how="diagonal_relaxed")
        context.state[where] = merged.unique(keys, keep="last", maintain_order=True)
    return frame


def finish(frame: pl.DataFrame) -> pl.DataFrame:
    """Records that carry a figure (:data:`FIGURES`), with ``position`` for the step-less ones."""
    present = [c for c in FIGURES if c in frame.columns]
    has_figure = pl.any_horizontal(pl.col(c).is_not_null() for c in present) if present else pl.lit(False)
    return frame.filter(has_figure).with_columns(stepless_position())
