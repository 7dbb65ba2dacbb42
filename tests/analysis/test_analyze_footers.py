"""The step overview taken from the files' footers is the one the query of every record gives."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

import tierscope.analysis.analyze  # noqa: F401  (the module, not the function the package exports)
from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset, partition_dir_name, write_atomic

overview = sys.modules["tierscope.analysis.analyze"]


def _steps(run_id: str, tiers: list[str | None], sources: list[str | None], steps: list[int | None]) -> pl.DataFrame:
    frame = pl.DataFrame(
        {"run_id": run_id, "tier": tiers, "role": "worker", "task_index": 0, "step": steps, "source": sources}
    )
    return conform(frame.with_columns(source_offset=pl.int_range(pl.len())), STEP_SCHEMA)


def test_overview_from_footers_equals_the_query(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    files = {
        # one tier and one source a file, two files: told by the footers (records 3 + 2, last step 900)
        "told": [
            _steps("told", ["BASIC"] * 3, ["a.log"] * 3, [100, 900, 300]),
            _steps("told", [None] * 2, ["b.log"] * 2, [None, 50]),
        ],
        # two tiers in one file: read (the footer says BASIC..STANDARD_1, not which)
        "mixed": [_steps("mixed", ["BASIC", "STANDARD_1"], ["c.log"] * 2, [1, 2])],
        # no step at all and no tier: told (last step null, no tier)
        "bare": [_steps("bare", [None], [None], [None])],
        # a long run id: a short-named partition with its .run_id file
        "x" * 300: [_steps("x" * 300, ["CUSTOM"], ["d.log"], [7])],
    }
    for run_id, parts in files.items():
        ds = Dataset(root)
        directory = ds._partition("steps", run_id)
        for frame in parts:
            write_atomic(frame.drop("run_id"), directory)
    ds = Dataset(root)
    steps = ds.scan("steps")
    footers = ds.footers("steps", overview.OVERVIEW_COLUMNS)
    stated = overview._stated_values(footers)
    assert sorted(set(stated["run_id"])) == sorted(["told", "bare", "x" * 300])
    got = overview.step_overview(steps, footers)
    assert_frame_equal(got, overview.step_overview(steps))
    told = got.filter(pl.col("run_id") == "told").row(0, named=True)
    assert (told["records"], told["last_step"], told["tiers"], told["sources"]) == (
        5,
        900,
        ["BASIC"],
        ["a.log", "b.log"],
    )
    assert partition_dir_name("x" * 300) != "run_id=" + "x" * 300  # the long id's partition is short-named


def test_footers_are_read_without_importing_pyarrow_parquet(tmp_path: Path) -> None:
    # pyarrow.parquet imports pyarrow.fs (S3, HDFS, ssl) to open a local path: ~0.05 CPU-s of every summary
    import subprocess

    root = tmp_path / "ds"
    write_atomic(
        _steps("r", ["BASIC"] * 2, ["a.log"] * 2, [5, 9]).drop("run_id"), Dataset(root)._partition("steps", "r")
    )
    code = (
        "import sys\n"
        "from tierscope.dataset.store import Dataset\n"
        f"ds = Dataset({str(root)!r}); ds.scan('steps')\n"
        "f = ds.footers('steps', ['step', 'tier'])\n"
        "print(f['rows'][0], f['step_min'][0], f['step_max'][0], f['tier_min'][0], 'pyarrow.parquet' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    # two rows, steps 5..9, one tier; the module not loaded
    assert done.stdout.split() == ["2", "5", "9", "BASIC", "False"]
