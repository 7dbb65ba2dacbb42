"""What a collect of a small append costs without polars, as a whole process (a bound, not a collector):

    python benchmarks/spawn.py OUT.json 0 python -m benchmarks.small_append_floor LOG

Imports what a command-line collect imports besides polars (typer, tierscope's command line and the modules
that read the dataset's state: offsets, positions, the lock) and pyarrow without numpy, as a collect does
(:func:`tierscope.dataset.store_options.import_writer_without_numpy`); reads LOG's lines (the 2016 format, e.g.
the last 10,000 lines of the ingest benchmark's log) as a small append (:mod:`tierscope.collector.small_append`:
every line classified, the values checked as the chain checks them); builds the step file the store writes
(:mod:`tierscope.dataset.arrow_steps`) in memory, and hashes it. No state is read or written and nothing is
deduplicated: the figure is the parse and write of a polars-free path for small appends, beside the collect's
own (:mod:`benchmarks.incremental`). The process must not import polars: it says so if it did.
"""

from __future__ import annotations

import hashlib
import io
import sys

import typer  # noqa: F401  (imported as the command line imports it)

import tierscope.cli.collect  # noqa: F401
from tierscope.collector.small_append import parse_append
from tierscope.collector.unchanged import collect_unchanged  # noqa: F401  (the state modules)
from tierscope.dataset.arrow_steps import step_table, write_step_file
from tierscope.dataset.store_options import import_writer_without_numpy


def main(log: str) -> int:
    """Read ``log``'s lines as a small append (:func:`tierscope.collector.small_append.parse_append`) and write
    the step file a collect stores (:mod:`tierscope.dataset.arrow_steps`) to memory; returns the records written."""
    import_writer_without_numpy("pyarrow._parquet")
    with open(log, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    parsed = parse_append(lines, 1)
    if parsed is None:
        raise SystemExit(f"{log}: not a small append the polars-free path reads")
    table = step_table(parsed.columns, {"tier": "STANDARD_1", "source": log})
    out = io.BytesIO()
    write_step_file(table, out)  # type: ignore[arg-type]
    hashlib.sha256(out.getvalue()).hexdigest()
    return table.num_rows


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(main(sys.argv[1]))
    if "polars" in sys.modules:
        raise SystemExit("polars was imported: the figure is not of a path without it")
