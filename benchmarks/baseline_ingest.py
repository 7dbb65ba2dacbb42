"""The ingest baseline: a plain Python loop with one compiled ``re``, into the same Parquet.

``python -m benchmarks.baseline_ingest LOG DATASET RUN_ID`` reads LOG line by line, matches
each line with one compiled pattern, converts the groups with ``int``/``float`` and writes
the records, :data:`FLUSH_ROWS` at a time, as step records (:data:`tierscope.dataset.schema.STEP_SCHEMA`)
into the dataset's hive layout with the dataset's own writer. Prints JSON: ``loop_s`` (the
read-match-convert loop), ``write_s``, ``rows``. No validation and no dedupe: this is the
code one would write first.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import polars as pl

from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.dataset.store import partition_dir_name, write_atomic

PATTERN = re.compile(
    r"Train \[(\w+)/(\d+)\], step (\d+):loss:([^,]+), accuracy:(\S+) \((\S+) sec\) "
    r"(\S+) global_steps/s, (\S+) local_steps/s"
)
COLUMNS = ("role", "task_index", "step", "loss", "accuracy", "elapsed_s", "global_steps_per_s", "local_steps_per_s")
CASTS = (str, int, int, float, float, float, float, float)
#: Rows held before a write: about what one 64 MB batch of the collector holds.
FLUSH_ROWS = 500_000


def main(log: Path, dataset: Path, run_id: str) -> dict[str, float]:
    loop_s = write_s = 0.0
    rows = 0
    cols: dict[str, list[object]] = {c: [] for c in (*COLUMNS, "source_offset")}

    def flush() -> float:
        start = time.perf_counter()
        frame = pl.DataFrame(cols).with_columns(
            run_id=pl.lit(run_id), source=pl.lit(str(log)), format=pl.lit("cloudml")
        )
        write_atomic(conform(frame, STEP_SCHEMA).drop("run_id"), dataset / "steps" / partition_dir_name(run_id))
        for values in cols.values():
            values.clear()
        return time.perf_counter() - start

    start = time.perf_counter()
    with log.open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            match = PATTERN.search(line)
            if match is None:
                continue
            try:
                values = [cast(text) for cast, text in zip(CASTS, match.groups(), strict=True)]
            except ValueError:
                continue
            for name, value in zip(COLUMNS, values, strict=True):
                cols[name].append(value)
            cols["source_offset"].append(number)
            rows += 1
            if rows % FLUSH_ROWS == 0:
                write_s += flush()
    if cols["step"]:
        write_s += flush()
    loop_s = time.perf_counter() - start - write_s
    return {"loop_s": loop_s, "write_s": write_s, "rows": rows}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])))
