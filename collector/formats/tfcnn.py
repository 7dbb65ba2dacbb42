"""tf_cnn_benchmarks (``tensorflow/benchmarks``) in distributed mode, Python logging with its own clock::

    2017-12-07 19:34:21,283 INFO 31 global step 381280
    2017-12-07 19:34:21,942 INFO 31 47650	images/sec: 198.1 +/- 0.1 (jitter = 18.9)	2.359	0.617	0.781

One record per throughput line, joined with the ``global step N`` line just before it
(same task; that line is folded into the record, a skipped line no other format reads):
``step`` the global step, ``local_step`` the number the throughput line starts with
(``step N`` in single-worker runs), ``examples_per_s`` the images/sec (this worker's),
``timestamp`` the throughput line's clock. The number after the level is the process id
(``pid``): a ``global step`` line of another process is not this line's step. No
steps/s is printed, and the global step is framework bookkeeping (here 2 x workers x local
steps), so none is derived. The trailing unlabeled columns are not read.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import TAG, ParseContext, Parsed, empty_parsed
from tierscope.collector.formats.phrased import PhrasedFormat
from tierscope.collector.formats.vocabulary import WHOLE, clock, phrase, stepless_position, whole_reason

# The clock and level are optional: the envelope strips a Python-logging header when it sees one.
# A single-process run (``python tf_cnn_benchmarks.py``, or under ``mpirun`` without its logger) prints
# no process id: ``1\timages/sec: 205.3 +/- 0.0 (jitter = 0.0)\t9.111``.
_HEADER = r"^(?:(?P<clock>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) [A-Z]+ )?(?:(?P<pid>\d+) )?"
_GLOBAL = rf"{_HEADER}global step (?P<g>{WHOLE})\s*$"


class TFCnnBenchmarks(PhrasedFormat):
    name: ClassVar[str] = "tf-cnn-benchmarks"
    example: ClassVar[str] = (
        "2017-12-07 19:34:21,942 INFO 31 47650\timages/sec: 198.1 +/- 0.1 (jitter = 18.9)\t2.359\t0.617\t0.781"
    )
    meaning: ClassVar[str] = (
        "step is the global step of the line before, local_step the worker's; images/sec is "
        "this worker's examples/s; no steps/s"
    )
    mark: ClassVar[str] = r"\timages/sec: "
    pattern: ClassVar[str] = rf"{_HEADER}(?:step )?(?P<local_step>{WHOLE})\t.*?{phrase('images/sec: X')}"
    cut: ClassVar[str] = "a tf_cnn_benchmarks images/sec line cut off or with fields missing"

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        """The batch's last line if it is a ``global step N`` line: its throughput line, which takes its step, comes
        next."""
        last = lines.tail(1)
        if last.height and last.select(pl.col("line").str.contains(_GLOBAL).any()).item():
            return int(last.get_column("source_offset")[0])
        return None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        # Nearly every batch reaching here has no throughput line: then the line before each line
        # need not be read (two patterns over every line), and nothing is folded.
        if not lines.select(self.marked().any()).item():
            return empty_parsed(lines)
        before = pl.col("line").shift(1).over(TAG).str.extract_groups(_GLOBAL)
        pid = pl.col("line").str.extract(_HEADER, 2)
        own = pl.when(before.struct.field("pid") == pid).then(before.struct.field("g"))
        joined = lines.with_columns(_global=own, _before=pl.col("source_offset").shift(1).over(TAG))
        parsed = super().parse(joined.drop("_before"), context)
        # A ``global step`` line whose step a record took is read (folded into that record), not
        # left to the other formats as a line none recognises.
        took = parsed.steps.get_column("source_offset").to_list() if parsed.steps.height else []
        folded = joined.filter(pl.col("_global").is_not_null() & pl.col("source_offset").is_in(took))
        used = folded.get_column("_before").implode()
        parsed.rest = parsed.rest.filter(~pl.col("source_offset").is_in(used)).drop("_global")
        return parsed

    def broken(self) -> pl.Expr | None:
        # the header's pid (the pattern's), and the global step the line before gave
        return pl.coalesce(super().broken(), whole_reason("step", pl.col("_global")))

    def convert(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        return matched.with_columns(timestamp=clock(pl.col("clock"), "%Y-%m-%d %H:%M:%S,%3f"))

    def records(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        # Without a ``global step`` line before it (one process, no distributed mode) the step it
        # starts with is the global step.
        alone = pl.col("_global").is_null() & pl.col("pid").is_null()
        step = pl.when(alone).then(pl.col("local_step")).otherwise(pl.col("_global")).cast(pl.Int64, strict=False)
        steps = matched.select("source_offset", step=step)
        frame = super().records(matched, context).drop("step", "position")
        return frame.join(steps, on="source_offset").with_columns(stepless_position())
