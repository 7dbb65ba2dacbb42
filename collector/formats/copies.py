"""A message printed twice by one process: a logging handler attached twice writes each line twice, byte for byte,
one right after the other.

A record with a step is one record whichever copy it is read from (the dataset keeps one row per step of a task).
A step-less record (TensorFlow's ``global_step/sec: 0.841667``) is told apart by the line it was read from (its
``position``), so each copy would count as a report of its own: two reports of one interval. Here the copies of a
line take the position of the first copy, and the dataset keeps one. TF-slim's loop, doubled (tensorflow/models
issue 5817, 2018-11)::

    INFO:tensorflow:global_step/sec: 0.841667
    INFO:tensorflow:global_step/sec: 0.841667

Only whole lines alike byte for byte, envelope and all, are copies: two reports whose times differ (``I1105
10:00:01`` then ``I1105 10:01:01``, the same rate each) are two reports, and so are two lines with a line between them.
"""

from __future__ import annotations

import polars as pl

#: The state key of the last line a batch counted and the line number of the first copy of it (a run of copies
#: the next batch goes on with).
_LAST = "copies-last-line"


def first_copies(steps: pl.DataFrame, lines: pl.DataFrame, state: dict[str, object], end: int | None) -> pl.DataFrame:
    """``steps`` with each step-less record's ``position`` (its line number) made that of the first of the run of
    byte-identical lines its line is in (:data:`LINES_SCHEMA` ``lines``, the batch as written, in file order).

    ``state``: the file's parse state, carrying the run the batch ended in; ``end``: the first line of the batch's
    look-ahead (None: none), which the carried run stops before. A frame without ``position`` is returned as is."""
    if steps.height == 0 or "position" not in steps.columns or lines.height == 0:
        return steps
    ordered = lines.select("source_offset", "line").sort("source_offset")
    carried = state.get(_LAST)
    line = pl.col("line")
    prev = line.shift(1)
    if carried is not None:
        text, first = carried  # type: ignore[misc]
        prev = prev.fill_null(pl.lit(text, dtype=pl.String))
    # a line between two alike, even one read aside (a reject over the length bound), makes them two reports
    apart = pl.col("source_offset").diff().fill_null(1) != 1
    starts = ordered.with_columns(_new=line.ne_missing(prev) | apart)
    starts = starts.with_columns(_first=pl.when("_new").then("source_offset").forward_fill())
    if carried is not None:
        starts = starts.with_columns(_first=pl.col("_first").fill_null(pl.lit(first, dtype=pl.Int64)))
    counted = starts if end is None else starts.filter(pl.col("source_offset") < end)
    if counted.height:
        last = counted.row(-1, named=True)
        state[_LAST] = (last["line"], last["_first"])
    firsts = starts.select("source_offset", "_first")
    return (
        steps.join(firsts, on="source_offset", how="left")
        .with_columns(position=pl.when(pl.col("position").is_not_null()).then(pl.coalesce("_first", "position")))
        .drop("_first")
    )
