"""Rank-prefixed iteration lines of PyTorch DLRM-style trainers (Intel e2eAIOK, MLPerf DLRM):
``Finished training it 16/150 of epoch 0, 439.65 ms/it, loss 0.552633, accuracy 75.560 %``.

``it N/M of epoch E`` (E from 0) is the global step ``E * M + N``; ``ms/it`` is the rank's
average iteration time over the print interval. Ranks run synchronously (all-reduce), so
1000 / ms_per_it is the job's global steps/s as well as the rank's local rate; rates of
different ranks are never added. The accuracy is a percentage. The rank comes from the
envelope (``[1] ``).
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import ParseContext
from tierscope.collector.formats.phrased import PhrasedFormat
from tierscope.collector.formats.vocabulary import SHARED, WHOLE, Meaning, number, phrase


class DLRMIterations(PhrasedFormat):
    name: ClassVar[str] = "dlrm"
    example: ClassVar[str] = "Finished training it 16/150 of epoch 0, 439.65 ms/it, loss 0.552633, accuracy 75.560 %"
    meaning: ClassVar[str] = (
        "step is epoch*M+N of 'it N/M'; 1000 / ms/it is the global (synchronous ranks) and local steps/s"
    )
    mark: ClassVar[str] = "Finished training it "
    mark_is_literal: ClassVar[bool] = True
    pattern: ClassVar[str] = (
        rf"Finished training {phrase('it N/M', total='total_steps')} of epoch (?P<epoch>{WHOLE}),\s*"
        rf"{phrase('X ms/it')}(?:,\s*{phrase('loss X')})?(?:,\s*{phrase('accuracy X %')})?"
    )
    scope: ClassVar[Meaning] = SHARED
    cut: ClassVar[str] = "a 'Finished training it N/M of epoch E, X ms/it' line cut off or with fields missing"

    def convert(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        step = number("epoch", pl.Int64) * number("total_steps", pl.Int64) + number("step", pl.Int64)
        return matched.with_columns(step=step.cast(pl.String))
