"""A change of process id (``pid``) within one task's records is a new process: a new segment, and no
interval, rate or goodput spans the two processes (the schema's ``pid``, read where a log line names it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support import SHARED
from tierscope.analysis.steady_sql import steady_state_query
from tierscope.cli import app
from tierscope.collector.formats.vocabulary import derive_rates
from tierscope.dataset.store import Dataset

runner = CliRunner()
CASE07 = SHARED / "cases" / "inputs" / "case07.log"
START = datetime(2017, 12, 7, 19, 0, 0, tzinfo=UTC)


def _tfcnn_lines(pid: int, step: int, seconds: float, tag: str = "[worker-0] ") -> list[str]:
    """A tf_cnn_benchmarks record (of worker 0 by a launcher tag; with ``tag=""`` of a process naming no
    role): its ``global step`` line, then the throughput line ``seconds`` after START."""
    at = START + timedelta(seconds=seconds)
    stamp = lambda t: t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"  # noqa: E731
    return [
        f"{tag}{stamp(at - timedelta(seconds=0.5))} INFO {pid} global step {step}",
        f"{tag}{stamp(at)} INFO {pid} {step}\timages/sec: 500.0 +/- 0.3 (jitter = 6.0)\t3.512\t0.422\t0.648",
    ]


def _summary(dataset: Path, run: str) -> dict[str, Any]:
    shown = runner.invoke(app, ["summary", "-d", str(dataset), "--json"])
    assert shown.exit_code == 0, shown.output
    return {r["run_id"]: r for r in json.loads(shown.stdout)}[run]


def _collect(path: Path, dataset: Path, run: str) -> None:
    got = runner.invoke(app, ["collect", "files", str(path), "--run-id", run, "-d", str(dataset), "--quiet"])
    assert got.exit_code == 0, got.output


@pytest.fixture(params=["[worker-0] ", ""], ids=["worker", "no-role"])
def two_processes(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """One log, one task, two processes: pid 7 logs steps 100, 200, 300 at 0, 10, 20 s; pid 8 then logs
    steps 400, 600, 800 at 100, 110, 120 s. The task is worker 0, or (``no-role``) a log naming no
    role, which ``summary`` and the steady-state query both read as the run's one training task."""
    lines: list[str] = []
    for pid, step, seconds in [(7, 100, 0), (7, 200, 10), (7, 300, 20), (8, 400, 100), (8, 600, 110), (8, 800, 120)]:
        lines += _tfcnn_lines(pid, step, seconds, request.param)
    log = tmp_path / "bench.log"
    log.write_text("\n".join(lines) + "\n")
    dataset = tmp_path / "ds"
    _collect(log, dataset, "bench")
    return dataset


def test_a_new_pid_starts_a_segment_and_no_rate_spans_it(two_processes: Path) -> None:
    stored = Dataset(two_processes).read("steps").sort("source_offset")
    assert stored["pid"].to_list() == [7, 7, 7, 8, 8, 8]
    row = _summary(two_processes, "bench")
    assert (row["records"], row["tasks"], row["segments"], row["restarts"]) == (6, 1, 2, 1)
    # Intervals within a process: pid 7 100/10 = 10, 10 steps/s; pid 8 200/10 = 20, 20 steps/s (each
    # process's first record is its warm-up). Mean = 600 steps / 40 s = 15. Steady: step times 0.1, 0.1, 0.05,
    # 0.05 s, median 0.075 s; pid 7's are 1.333x it, within the stall taper (1.25x-1.5x): kept by (1.5 - 4/3) /
    # 0.25 = 2/3 each. (2/3 x 200 + 400) steps / (2/3 x 20 + 20) s = 533.3 / 33.33 = 16.0 (the median was 15).
    # Read as one process there was a fifth interval, 300 -> 400 over 80 s = 1.25 steps/s: steady was
    # median(10, 10, 1.25, 20, 20) = 10 and mean 700 / 120 = 5.833.
    assert row["steady_global_steps_per_s"] == pytest.approx(16.0)
    assert row["mean_global_steps_per_s"] == pytest.approx(15.0)


def test_the_steady_state_query_breaks_at_a_new_pid_too(two_processes: Path) -> None:
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    steps = f"read_parquet('{two_processes}/steps/*/*.parquet', hive_partitioning = true)"
    got = duckdb.sql(steady_state_query(steps, "duckdb")).fetchall()
    assert [(run, round(rate, 9), n) for run, rate, n in got] == [("bench", 16.0, 4)]  # as computed above


def test_no_rate_is_derived_across_a_change_of_pid() -> None:
    steps = pl.DataFrame(
        {
            "tag": ["w"] * 3,
            "step": [100, 200, 300],
            "timestamp": [START, START + timedelta(seconds=10), START + timedelta(seconds=20)],
            "pid": [1, 1, 2],
        }
    )
    # 100 steps / 10 s = 10 within pid 1; pid 2's first record has no previous one of its process
    assert derive_rates(steps, "tag")["global_steps_per_s"].to_list() == [None, 10.0, None]


@pytest.mark.skipif(not CASE07.is_file(), reason=f"no real case at {CASE07}")
def test_case07_two_runs_in_one_file_are_two_segments_with_no_rate_between(tmp_path: Path) -> None:
    _collect(CASE07, tmp_path, "case07")
    row = _summary(tmp_path, "case07")
    stored = Dataset(tmp_path).read("steps").sort("source_offset")
    assert stored.select("step", "local_step", "pid").rows() == [(94840, 94840, 35), (381280, 47650, 31)]
    # Run A (pid 35) and run B (pid 31) each logged one record: no interval, so no rate and no goodput.
    # Read as one process the two gave (381280 - 94840) / 577.084 s (19:24:44.858 -> 19:34:21.942) =
    # 496.358 steps/s "steady", and goodput 1.0.
    assert (row["records"], row["segments"], row["restarts"]) == (2, 2, 1)
    assert row["steady_global_steps_per_s"] is None and row["mean_global_steps_per_s"] is None
    assert row["goodput"] is None and row["speedup_vs_baseline"] is None


def test_a_global_step_line_of_another_process_is_not_the_records_step(tmp_path: Path) -> None:
    # pid 7's `global step 100` line, then a throughput line of pid 8: the step is not pid 8's
    lines = _tfcnn_lines(7, 100, 0)[:1] + _tfcnn_lines(8, 50, 1)[1:]
    log = tmp_path / "bench.log"
    log.write_text("\n".join(lines) + "\n")
    _collect(log, tmp_path / "ds", "bench")
    stored = Dataset(tmp_path / "ds").read("steps")
    assert stored.select("step", "local_step", "pid", "position").rows() == [(None, 50, 8, 2)]


def test_a_record_naming_no_pid_does_not_hide_a_change_of_process(tmp_path: Path) -> None:
    """pid 7 logs steps 100, 200 at 0, 10 s; a record naming no pid (a layout whose pid group is
    optional) step 300 at 20 s; pid 8 then logs 400, 600, 800 at 100, 110, 120 s. 7 -> 8 is a new process
    whatever lies between: the change is judged against the last pid the task named."""
    from tierscope.analysis.throughput import interval_rates
    from tierscope.dataset.schema import STEP_SCHEMA, conform

    timeline = [(100, 0.0, 7), (200, 10.0, 7), (300, 20.0, None), (400, 100.0, 8), (600, 110.0, 8), (800, 120.0, 8)]
    rows = [
        {"run_id": "r", "role": "worker", "task_index": 0, "step": s, "elapsed_s": t, "pid": p} for s, t, p in timeline
    ]
    frame = conform(
        pl.DataFrame(rows).with_columns(
            source=pl.lit("a.log"), source_offset=pl.int_range(pl.len()), format=pl.lit("x")
        ),
        STEP_SCHEMA,
    )
    intervals = interval_rates(frame.lazy()).collect()
    # Segments: 100, 200, 300 (the pid-less record continues pid 7's: 10 steps/s twice), then 400, 600,
    # 800 (20 steps/s twice). Compared with the pid-less record alone, 400 spanned the processes: 100 steps over
    # 80 s = 1.25 steps/s, in the same segment.
    assert intervals.select("step", "segment", "rate").rows() == [
        (100, 0, None),
        (200, 0, 10.0),
        (300, 0, 10.0),
        (400, 1, None),
        (600, 1, 20.0),
        (800, 1, 20.0),
    ]
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    path = tmp_path / "steps.parquet"
    frame.write_parquet(path)
    got = duckdb.sql(steady_state_query(f"read_parquet('{path}')", "duckdb")).fetchall()
    # steady: 16.0 as above (pid 7's 10 steps/s kept by 2/3); with the span it was median(10, 10, 1.25, 20, 20) = 10
    assert [(run, round(rate, 9), n) for run, rate, n in got] == [("r", 16.0, 4)]


def _table(dataset: Path) -> list[str]:
    shown = runner.invoke(app, ["summary", "-d", str(dataset)], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    return shown.stdout.splitlines()


def test_the_summary_table_says_a_runs_restarts(two_processes: Path, tmp_path: Path) -> None:
    # pid 7 then pid 8: 2 segments of one task, 1 restart (above); a third process, pid 9, logging
    # steps 900, 1000 at 200, 210 s makes 3 segments and 2 restarts (the plural)
    assert "run bench: 1 restart (2 segments; no rate spans a restart)" in _table(two_processes)
    lines: list[str] = []
    for pid, step, seconds in [(7, 100, 0), (7, 200, 10), (8, 400, 100), (8, 600, 110), (9, 900, 200), (9, 1000, 210)]:
        lines += _tfcnn_lines(pid, step, seconds)
    log = tmp_path / "three.log"
    log.write_text("\n".join(lines) + "\n")
    _collect(log, tmp_path / "three", "three")
    assert (_summary(tmp_path / "three", "three")["restarts"]) == 2
    table = _table(tmp_path / "three")
    assert "run three: 2 restarts (3 segments; no rate spans a restart)" in table
    assert max(map(len, table)) <= 80


CASE06 = SHARED / "cases" / "inputs" / "case06.log"


@pytest.mark.skipif(not CASE06.is_file(), reason=f"no real case at {CASE06}")
def test_a_log_without_a_clock_has_no_restart_note(tmp_path: Path) -> None:
    # case06's 9 records name no time and no global rate: each starts a segment (9 segments), none of
    # them a restart (0 in --json; 8 before: segments beyond the task's first); the table says why
    # there is no steady rate instead
    _collect(CASE06, tmp_path, "case06")
    assert (_summary(tmp_path, "case06")["segments"], _summary(tmp_path, "case06")["restarts"]) == (9, 0)
    table = _table(tmp_path)
    assert not [line for line in table if "restart" in line]
    assert (
        "run case06: no steady rate: no time or global rate: no record states a time, a clock or global steps/s "
        "(examples/s make none without the global batch)" in " ".join(" ".join(table).split())
    )


def test_a_record_without_a_time_splits_a_segment_but_is_no_restart(tmp_path: Path) -> None:
    # One chief's structured records (step, elapsed_s; no rates, no timestamps): 100 @ 10 s, 200 @ 20 s,
    # 300 with no time, 400 @ 40 s, 500 @ 50 s, then a restart (step and elapsed_s go back): 450 @ 5 s,
    # 550 @ 15 s. Segments: [100, 200], [300] (no time), [400, 500] (its interval has no start time),
    # [450, 550] (the restart): 4 segments, 1 restart (3 before: every segment beyond the first).
    # Steady: each segment's first is warm-up; 100 steps / 10 s = 10 steps/s in three segments: 10.
    def line(step: int, elapsed: float | None) -> str:
        record = {"tierscope": "step", "run_id": "p", "role": "chief", "task_index": 0, "step": step}
        return json.dumps(record | ({} if elapsed is None else {"elapsed_s": elapsed}))

    log = tmp_path / "p.jsonl"
    points = [(100, 10.0), (200, 20.0), (300, None), (400, 40.0), (500, 50.0), (450, 5.0), (550, 15.0)]
    log.write_text("".join(line(step, at) + "\n" for step, at in points))
    _collect(log, tmp_path / "ds", "p")
    row = _summary(tmp_path / "ds", "p")
    assert (row["records"], row["segments"], row["restarts"]) == (7, 4, 1)
    assert row["steady_global_steps_per_s"] == pytest.approx(10.0)
    assert "run p: 1 restart (4 segments; no rate spans a restart)" in _table(tmp_path / "ds")
