"""tensorpack's epoch lines: ``[0807 11:46:26 @base.py:210] Epoch 96 (global_step 955000) finished,
time:3074.13 sec.``, after the epoch's tqdm bar ``100%|####|5000/5000[51:14<00:00, 0.66it/s]``.

``global_step`` is the global step at the epoch's end; ``time`` the epoch's wall seconds
(``interval_s``). The bar printed just before (same task) gives the iterations the epoch
ran: ``global_steps_per_s`` = iterations / epoch seconds (flagged ``rate_derived``; tqdm's
own ``it/s`` is a smoothed recent rate, not the epoch's). A resumed run's first epoch
reports the resumed step, so the step jump is never a rate. The logger's clock has no
year: it comes from :attr:`ParseContext.year`.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import TAG, ParseContext
from tierscope.collector.formats.phrased import PhrasedFormat
from tierscope.collector.formats.vocabulary import SHARED, WHOLE, Meaning, clock, number, phrase

#: tqdm's bar: ``5000/5000[51:14<00:00, 0.66it/s]``.
_BAR = rf"\|\s*(?P<k>{WHOLE})/(?P<n>{WHOLE})\s*\[[^\]]*\]\s*$"


class Tensorpack(PhrasedFormat):
    name: ClassVar[str] = "tensorpack"
    example: ClassVar[str] = "[0807 11:46:26 @base.py:210] Epoch 96 (global_step 955000) finished, time:3074.13 sec."
    meaning: ClassVar[str] = (
        "step is the global step at the epoch's end; interval_s the epoch's seconds; the rate is "
        "the epoch's tqdm iterations over them"
    )
    mark: ClassVar[str] = r"Epoch \d+ \(global_step \d+\) finished"
    pattern: ClassVar[str] = (
        r"^(?:\[(?P<clock>\d{4} \d\d:\d\d:\d\d) @[^\]]*\]\s*)?Epoch \d+ "
        rf"{phrase('(global_step N)')} finished,\s*{phrase('time: X sec')}"
    )
    scope: ClassVar[Meaning] = SHARED
    cut: ClassVar[str] = "a tensorpack 'Epoch N (global_step G) finished, time:X sec.' line cut off"

    def parse(self, lines: pl.DataFrame, context: ParseContext):  # type: ignore[override]
        # The bar sits on the line before (same task): read its count onto the epoch line.
        bar = pl.col("line").shift(1).over(TAG).str.extract_groups(_BAR)
        # The bar is folded into the epoch's record: it is no record of its own (for the grammar).
        folded = pl.col("line").str.contains(_BAR) & pl.col("line").shift(-1).over(TAG).str.contains(self.mark)
        lines = lines.with_columns(_bar=bar, _folded=folded.fill_null(False))
        parsed = super().parse(lines.drop("_folded"), context)
        bars = lines.filter(pl.col("_folded")).get_column("source_offset").implode()
        parsed.rest = parsed.rest.filter(~pl.col("source_offset").is_in(bars)).drop("_bar")
        return parsed

    def convert(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        return matched.with_columns(timestamp=clock(pl.col("clock"), "%m%d %H:%M:%S", context.year))

    def records(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        done = pl.col("_bar").struct.field("k")
        iterations = pl.when(done == pl.col("_bar").struct.field("n")).then(number(done))
        got = matched.select("source_offset", _it=iterations, _sec=number("interval_s"))
        frame = super().records(matched, context).join(got, on="source_offset", how="left")
        rate = pl.when(pl.col("_sec") > 0).then(pl.col("_it") / pl.col("_sec"))
        return frame.with_columns(
            global_steps_per_s=rate, local_steps_per_s=rate, rate_derived=rate.is_not_null()
        ).drop("_it", "_sec")
