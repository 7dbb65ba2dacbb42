"""Which polars engine the analysis runs a query on.

polars' default engine (``"auto"``) runs a query on its streaming engine, which cuts the rows into
morsels: a query over a frame already in memory (a batch's records, its intervals) comes back in as
many chunks, and the next eager step (a slice, a column to numpy, a window) copies them into one
again. On the frames the analysis holds whole, the in-memory engine gives the same rows in one or
two chunks at less CPU (the 10 M-record dataset of ``benchmarks/analysis_report.py``, medians of 3
interleaved runs: ``summary`` 6.23 -> 5.34 CPU-s, the report 7.77 -> 7.17, every figure the same to
the bit). A query that reduces a scan
too large to hold (a run's or the dataset's records to a few rows a run) keeps the streaming
engine: it never holds the whole input.
"""

from __future__ import annotations

from typing import Final, Literal

#: The engine of every query whose input and result are held whole anyway (``LazyFrame.collect(engine=...)``).
IN_MEMORY: Final[Literal["in-memory"]] = "in-memory"
