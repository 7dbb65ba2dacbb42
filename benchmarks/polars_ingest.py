"""The ingest section's polars baselines, each a whole process on the same log as the collect.

``python -m benchmarks.polars_ingest floor LOG`` is the floor: polars reading the lines into one
column, nothing else (no parsing, no writing). ``python -m benchmarks.polars_ingest script LOG OUT``
is the 20-line script a user would write instead of tierscope: one regex
(``str.extract_groups``) over every line, casts, and one zstd Parquet file at OUT; no rejects,
no dedupe, no offsets, no fsync. ``python -m benchmarks.polars_ingest stream LOG OUT`` is the
streaming-plan bound: the collector's own fast-path expressions for the 2016 line
(:mod:`tierscope.collector.formats.cloudml`) in one plan of polars' streaming engine, from a scan
of the lines to ``sink_parquet`` (zstd level 1), keeping the lines the fast path accepts: what a
collect would cost as one streaming plan without rejects, dedupe, page checksums, offsets and
fsync. Each prints JSON: ``rows`` (lines read, or records written).
"""

from __future__ import annotations

import json
import sys

import polars as pl

#: The 2016 variant, fields named as the step records' columns.
PATTERN = (
    r"Train \[(?P<role>\w+)/(?P<task_index>\d+)\], step (?P<step>\d+):loss:(?P<loss>[^,]+), "
    r"accuracy:(?P<accuracy>\S+) \((?P<elapsed_s>\S+) sec\) (?P<global_steps_per_s>\S+) global_steps/s, "
    r"(?P<local_steps_per_s>\S+) local_steps/s"
)
CASTS = {"task_index": pl.Int32, "step": pl.Int64} | dict.fromkeys(
    ("loss", "accuracy", "elapsed_s", "global_steps_per_s", "local_steps_per_s"), pl.Float64
)


def read_lines(log: str) -> pl.DataFrame:
    """Every line of ``log`` as column ``line`` (a separator and quote that never occur: one field a line)."""
    return pl.read_csv(log, has_header=False, separator="\x1f", quote_char=None, schema={"line": pl.String})


def stream(log: str, out: str) -> int:
    """The fast path's plan in one streaming pass: scan, split and check, filter, sink."""
    from tierscope.collector.formats.cloudml import _STEP_COLUMNS, _canonical

    lines = pl.scan_csv(log, has_header=False, separator="\x1f", quote_char=None, schema={"line": pl.String})
    plan = _canonical(lines.with_row_index("source_offset")).filter("_ok").select(_STEP_COLUMNS)
    plan.sink_parquet(out, compression="zstd", compression_level=1)
    return pl.scan_parquet(out).select(pl.len()).collect().item()


def script(log: str, out: str) -> int:
    """The user's script: extract, cast, drop the lines that did not match, write zstd Parquet."""
    records = (
        read_lines(log)
        .select(pl.col("line").str.extract_groups(PATTERN).alias("r"))
        .unnest("r")
        .filter(pl.col("role").is_not_null())
        .with_columns(pl.col(name).cast(dtype, strict=False) for name, dtype in CASTS.items())
    )
    records.write_parquet(out, compression="zstd")
    return records.height


if __name__ == "__main__":
    mode, log = sys.argv[1], sys.argv[2]
    rows = read_lines(log).height if mode == "floor" else {"script": script, "stream": stream}[mode](log, sys.argv[3])
    print(json.dumps({"rows": rows}))
