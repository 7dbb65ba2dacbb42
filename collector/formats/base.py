"""The interface every log-format parser implements.

A parser takes a frame of lines and splits it four ways: step records, run events,
rejects (lines that look like this format's records but are broken) and the rest
(lines it does not recognise, handed to the next parser). Parsers are chained, so a
file that interleaves two formats is read line by line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import polars as pl

#: The input of every parser: ``source_offset`` (Int64, 1-based line number) and ``line`` (String).
LINES_SCHEMA: dict[str, pl.DataType] = {"source_offset": pl.Int64(), "line": pl.String()}


@dataclass
class Parsed:
    """What one parser made of a frame of lines.

    ``steps``, ``events`` and ``rejects`` hold a subset of the columns of
    :data:`collector.schema.STEP_SCHEMA`, ``EVENT_SCHEMA`` and ``REJECT_SCHEMA`` (always
    ``source_offset``); the caller adds run, tier and source and conforms them.
    ``rest`` is the lines the parser did not recognise, in :data:`LINES_SCHEMA`.
    """

    steps: pl.DataFrame
    events: pl.DataFrame
    rejects: pl.DataFrame
    rest: pl.DataFrame
    skipped: int = 0
    notes: list[str] = field(default_factory=list)


class LineFormat(Protocol):
    """A step-log format. Implementations are stateless singletons."""

    name: ClassVar[str]
    #: One real-looking line of the format, shown by ``tierscope formats``.
    example: ClassVar[str]
    #: What the format's step and seconds mean, in one sentence.
    meaning: ClassVar[str]

    def sniff(self, lines: pl.Series) -> int:
        """How many of ``lines`` (a String series) this format recognises."""
        ...

    def parse(self, lines: pl.DataFrame) -> Parsed:
        """Split ``lines`` (:data:`LINES_SCHEMA`) into records, events, rejects and the rest."""
        ...


def reject_frame(frame: pl.DataFrame, reason: pl.Expr | str, fmt: str) -> pl.DataFrame:
    """Rejects from ``frame`` (which has ``source_offset`` and ``line``) with ``reason``."""
    reason_expr = pl.lit(reason) if isinstance(reason, str) else reason
    return frame.select(
        pl.col("source_offset"),
        pl.lit(fmt).alias("format"),
        reason_expr.alias("reason"),
        pl.col("line").alias("raw"),
    )
