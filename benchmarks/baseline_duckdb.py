"""The analysis baseline: one DuckDB query of each run's steady-state global steps/s.

``python -m benchmarks.baseline_duckdb DATASET`` reads the dataset's step files with DuckDB
(hive-partitioned Parquet, as any reader sees them) and prints JSON ``{run_id: median}``: per
run, the median logged global steps/s of its training tasks' records, each task's first record
(its warm-up interval) left out, in log order (source, line). On the generated dataset
(:func:`benchmarks.generate.write_step_dataset`: one source per run, no restarts, no slow
start) that is exactly tierscope's steady-state rate; tierscope computes much more (segments,
copies, bootstrap intervals, per-task figures, goodput). DuckDB is a benchmark-only
dependency (``pip install '.[bench]'``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

QUERY = """
with ranked as (
    select run_id, global_steps_per_s as rate,
           row_number() over (partition by run_id, role, task_index order by source, source_offset) as k
    from read_parquet(?, hive_partitioning = true)
    where role in ('master', 'chief', 'worker') or role is null
)
select run_id, median(rate) as steady from ranked where k > 1 group by run_id order by run_id
"""


def main(dataset: Path) -> dict[str, float]:
    import duckdb

    rows = duckdb.execute(QUERY, [str(dataset / "steps" / "run_id=*" / "part-*.parquet")]).fetchall()
    return dict(rows)


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
