"""What a collect of a small append would cost without polars, as a whole process (a bound, not a collector):

    python benchmarks/spawn.py OUT.json 0 python -m benchmarks.small_append_floor LOG

Imports what a command-line collect imports besides polars (typer, tierscope's command line and the modules
that read the dataset's state: offsets, positions, the lock) and pyarrow without numpy, as a collect does
(:func:`tierscope.dataset.store.import_writer_without_numpy`); reads LOG's lines (the 2016 format, e.g. the
last 10,000 lines of the ingest benchmark's log) with one compiled stdlib pattern; writes the records as one
Parquet file in memory with page checksums and zstd level 1, and hashes it. No state is read or written, no
line is checked beyond the pattern, nothing is deduplicated: the figure is what a second, pure-Python path for
small appends could not go below, beside the collect's own (:mod:`benchmarks.incremental`).
"""

from __future__ import annotations

import hashlib
import io
import re
import sys

import typer  # noqa: F401  (imported as the command line imports it)

import tierscope.cli.collect  # noqa: F401
from tierscope.collector.unchanged import collect_unchanged  # noqa: F401  (the state modules)
from tierscope.dataset.store import import_writer_without_numpy

_LINE = re.compile(
    r"Train \[(?P<role>[a-z]+)/(?P<task>\d+)\], step (?P<step>\d+):loss:(?P<loss>[^,\s]+), "
    r"accuracy:(?P<acc>\S+) \((?P<elapsed>[^\s)]+) sec\) (?P<g>\S+) global_steps/s, (?P<l>\S+) local_steps/s$"
)


def main(log: str) -> int:
    """Parse and write ``log``'s step lines; returns the records written."""
    import_writer_without_numpy()
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = ("role", "task_index", "step", "loss", "accuracy", "elapsed_s", "global_steps_per_s", "local_steps_per_s")
    casts = (str, int, int, float, float, float, float, float)
    columns: dict[str, list[object]] = {name: [] for name in (*names, "source_offset")}
    with open(log, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            found = _LINE.match(line.rstrip("\n"))
            if found is None:
                continue
            for name, cast, value in zip(names, casts, found.groups(), strict=True):
                columns[name].append(cast(value))
            columns["source_offset"].append(number)
    table = pa.table(columns)
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd", compression_level=1, write_statistics=True, write_page_checksum=True)
    hashlib.sha256(out.getvalue()).hexdigest()
    return table.num_rows


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(main(sys.argv[1]))
