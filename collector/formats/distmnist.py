"""TensorFlow's between-graph replication example (``mnist_replica.py``, Kubeflow's dist-mnist):
``1514344770.659784: Worker 2: training step 52 done (global step: 201)``.

The line carries its own clock (Unix seconds), the worker's index, its *local* step and the
shared *global* step. No rate is printed: both are derived from the clock between the
task's consecutive lines (``rate_derived``). A worker's local rate is a fraction of the
job's global rate (the other workers advance the global step too).
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import ParseContext
from tierscope.collector.formats.phrased import PhrasedFormat
from tierscope.collector.formats.vocabulary import NOT_UNIX_TIME, NUMBER, WHOLE, not_unix_time, phrase, unix_time


class DistMnist(PhrasedFormat):
    name: ClassVar[str] = "dist-mnist"
    example: ClassVar[str] = "1514344770.659784: Worker 2: training step 52 done (global step: 201)"
    meaning: ClassVar[str] = (
        "step is the global step, local_step the worker's own; rates are derived from the "
        "line's Unix time between the worker's consecutive lines"
    )
    mark: ClassVar[str] = r"Worker \d+: training step \d+ done"
    pattern: ClassVar[str] = (
        rf"(?P<timestamp>{NUMBER}):\s*Worker (?P<task>{WHOLE}): training step (?P<local_step>{WHOLE}) done\s*"
        rf"{phrase('(global step: N)')}"
    )
    cut: ClassVar[str] = "a 'T: Worker N: training step N done (global step: G)' line cut off or with fields missing"

    constants: ClassVar[dict[str, object]] = {"role": "worker"}
    derive: ClassVar[bool] = True

    def broken(self) -> pl.Expr | None:
        time = pl.col("timestamp")
        too_big = pl.when(not_unix_time(time)).then(pl.format(f"timestamp '{{}}' {NOT_UNIX_TIME}", time))
        return pl.coalesce(super().broken(), too_big)

    def convert(self, matched: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        return matched.with_columns(timestamp=unix_time("timestamp"))
