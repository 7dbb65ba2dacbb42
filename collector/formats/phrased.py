"""A line format that is one regular expression of :mod:`~tierscope.collector.formats.vocabulary` phrases.

Most step lines of the field are one line, one record: a pattern with named groups
(:data:`~tierscope.collector.formats.vocabulary.GROUPS`) read by
:func:`~tierscope.collector.formats.vocabulary.record_columns`. A family module then says
only what is its own: the ``mark`` that finds its lines cheaply, the ``pattern``, the
``scope`` of its step times, and constant columns (a role the line implies). Lines that
carry the mark but not the pattern are rejects (``cut``: the reason given), so a line cut
off mid-record is kept aside rather than lost; a line that matches becomes a record only
when it carries a figure (a rate, a time or an ``examples_per_s``: a step alone is no report).
"""

from __future__ import annotations

import re
from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import TAG, ParseContext, Parsed, SingleLineFormat, empty_parsed, reject_frame
from tierscope.collector.formats.vocabulary import LOCAL, Meaning, derive_rates, record_columns, stepless_position

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
    ``mark``, ``pattern`` and optionally ``scope``, ``constants`` and ``cut``."""

    pattern: ClassVar[str]
    scope: ClassVar[Meaning] = LOCAL
    #: Columns every record of the format has, e.g. ``{"role": "worker"}``.
    constants: ClassVar[dict[str, object]] = {}
    #: The reject reason of a marked line the pattern does not match.
    cut: ClassVar[str] = "a line of this format cut off or with fields missing"
    #: Derive the rates the line does not print from its own clock (see ``derive_rates``).
    derive: ClassVar[bool] = False

    def groups(self) -> list[str]:
        return list(re.compile(self.pattern).groupindex)

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        if not lines.get_column("line").str.contains(self.mark, literal=self.mark_is_literal).any():
            return empty_parsed(lines)
        hit = self.marked()
        marked, rest = lines.filter(hit), lines.filter(~hit)
        read = marked.with_columns(
            _g=pl.col("line").str.extract_groups(self.pattern), _ok=pl.col("line").str.contains(self.pattern)
        ).unnest("_g")
        steps = self.records(read.filter(pl.col("_ok")), context)
        rejects = reject_frame(read.filter(~pl.col("_ok")), self.cut, self.name)
        return Parsed(steps=steps, events=pl.DataFrame(), rejects=rejects, rest=rest)

    def convert(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        """Hook: turn the format's own raw groups (a clock, an epoch) into columns; default none."""
        return matched

    def records(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        """Step records from the matched lines (with their group columns, as Strings).

        A ``timestamp`` column that :meth:`convert` made a Datetime is kept; with ``derive``
        the rates the line does not print come from it (per task)."""
        matched = self.convert(matched, context)
        columns = record_columns(self.groups(), self.scope)
        timed = matched.schema.get("timestamp") == pl.Datetime("us", "UTC")
        frame = matched.select(
            "source_offset",
            pl.col(TAG).alias("_tag"),
            *(["timestamp"] if timed else []),
            **{k: v for k, v in columns.items() if k != "timestamp"},
            **{k: pl.lit(v) for k, v in self.constants.items()},
            format=pl.lit(self.name),
        )
        if self.derive and timed:
            frame = derive_rates(frame, ["_tag", *(["task_index"] if "task_index" in frame.columns else [])])
        return finish(frame.drop("_tag"))


def finish(frame: pl.DataFrame) -> pl.DataFrame:
    """Records that carry a figure (:data:`FIGURES`), with ``position`` for the step-less ones."""
    present = [c for c in FIGURES if c in frame.columns]
    has_figure = pl.any_horizontal(pl.col(c).is_not_null() for c in present) if present else pl.lit(False)
    return frame.filter(has_figure).with_columns(stepless_position())
