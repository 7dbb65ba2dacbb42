"""Intervals timed by a record's own step time where the log has no clock (TF-slim's ``sec/step`` lines):
the real excerpt case24 (../shared/cases), the rule on built records (local steps named or one a line,
a clock present, a stated global rate, a rate that cannot time a step), the SQL query and the note."""

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
from tierscope.analysis.summary import STEADY_ASSUMPTIONS, STEADY_REASONS
from tierscope.analysis.throughput import interval_rates, run_throughput
from tierscope.cli import app
from tierscope.dataset.schema import STEP_SCHEMA, conform

runner = CliRunner()
CASE24 = SHARED / "cases" / "inputs" / "case24.log"
T0 = datetime(2018, 7, 3, tzinfo=UTC)
EVERY_STEP = STEADY_ASSUMPTIONS["logs_every_step"]


def _collect(log: Path, dataset: Path, run: str) -> dict[str, Any]:
    """``summary --json``'s row of ``log`` collected as ``run`` into ``dataset``."""
    got = runner.invoke(app, ["collect", "files", str(log), "--run-id", run, "-d", str(dataset), "--quiet"])
    assert got.exit_code == 0, got.output
    shown = runner.invoke(app, ["summary", "-d", str(dataset), "--json"])
    assert shown.exit_code == 0, shown.output
    return {r["run_id"]: r for r in json.loads(shown.stdout)}[run]


@pytest.fixture
def case24(tmp_path: Path) -> Path:
    """A dataset holding case24 as run ``case24``."""
    if not CASE24.is_file():
        pytest.skip(f"{CASE24} is absent (the real excerpts live in ../shared/cases beside the repository)")
    _collect(CASE24, tmp_path / "ds", "case24")
    return tmp_path / "ds"


def test_case01_step_times_contradicted_by_the_local_rates_give_no_rate(tmp_path: Path) -> None:
    case01 = SHARED / "cases" / "inputs" / "case01.log"
    if not case01.is_file():
        pytest.skip(f"{case01} is absent (the real excerpts live in ../shared/cases beside the repository)")
    row = _collect(case01, tmp_path / "ds", "case01")
    # By hand: worker-replica-2 logs global step 52329 then 52338 at 0.480 sec/step: 9 / 0.48 = 18.75 global
    # steps/s, its only interval (the other replicas log one step each). The three tasks' local rates add up
    # to 1/0.464 + 1/0.480 + 1/1.102 = 5.14 steps/s (the latest line of each): 0.27 of 18.75, neither 1 (async)
    # nor 3 (sync): lines are missing between worker 2's two lines. The rate was printed with its speedup
    # (and fitted by predict); it is withheld with the reason, and every figure valued at it with it.
    assert row["local_to_global"] == pytest.approx((1 / 0.464 + 1 / 0.480 + 1 / 1.102) / 18.75, rel=1e-9)
    assert row["training_mode"] == "inconsistent"
    assert (row["steady_global_steps_per_s"], row["mean_global_steps_per_s"], row["speedup_vs_baseline"]) == (
        None, None, None,
    )  # fmt: skip
    assert (row["steady_status"], row["steady_reason"]) == (
        "step_time_contradicted", STEADY_REASONS["step_time_contradicted"],
    )  # fmt: skip
    assert row["productive_s"] is None and row["steady_assumption"] is None


def test_one_task_logging_every_10_steps_is_timed_over_its_10_steps(tmp_path: Path) -> None:
    # train_image_classifier.py logs every 10 steps: global step 100, 110, ... at 0.5 sec/step. One local step
    # a line made 10 / 0.5 = 20 global steps/s (and BASIC's withheld it as contradicted); the task alone made the
    # 10 global steps between two lines, each at 0.5 s: 10 / (10 x 0.5) = 2 global steps/s, its own 1 / 0.5.
    # BASIC is one training task (its topology says so: step_time_alone); without a topology, the lines 10 apart
    # at multiples of 10 read as one task logging every 10 (logs_every_n_alone, the note giving the other way).
    log = tmp_path / "slim10.log"
    log.write_text(
        "".join(f"INFO:tensorflow:global step {s}: loss = 1.0 (0.500 sec/step)\n" for s in range(100, 1100, 10))
    )
    for tier, run in ((["--tier", "BASIC"], "basic"), ([], "unknown")):
        got = runner.invoke(
            app, ["collect", "files", str(log), "--run-id", run, "-d", str(tmp_path / run), "-q", *tier]
        )
        assert got.exit_code == 0, got.output
    basic = json.loads(runner.invoke(app, ["summary", "-d", str(tmp_path / "basic"), "--json"]).stdout)[0]
    assert basic["steady_global_steps_per_s"] == pytest.approx(2.0, rel=1e-12)
    assert (basic["steady_status"], basic["steady_assumption"]) == (None, "step_time_alone")
    unknown = json.loads(runner.invoke(app, ["summary", "-d", str(tmp_path / "unknown"), "--json"]).stdout)[0]
    assert unknown["steady_global_steps_per_s"] == pytest.approx(2.0, rel=1e-12)
    assert unknown["steady_assumption"] == "logs_every_n_alone"


def test_case24_global_rate_from_each_lines_step_time(case24: Path) -> None:
    row = _collect(CASE24, case24, "case24")
    # By hand. The master's six lines: global steps 819, 822, 825, 828, 831, 834 at 19.898, 18.507, 17.088,
    # 18.033, 17.739, 16.493 sec/step; no timestamp, elapsed or interval_s, no global rate. slim logs every
    # step: between two lines the master made one local step of the later line's sec/step, while the global
    # step gained 3 (the other replica's steps too). Intervals: 3/18.507 = 0.162101, 3/17.088 = 0.175562,
    # 3/18.033 = 0.166362, 3/17.739 = 0.169119, 3/16.493 = 0.181895 global steps/s.
    # Warm-up: the segment's first interval is 819's, the one that runs from the process start (its time and
    # steps are not in the log: 819 is the task's first record, interval_index 0). 822's interval is the
    # master's step 819 -> 822, no start-up in it, so it stays (excluding it too would give (3/17.739 +
    # 3/17.088) / 2 = 0.17234). WARMUP_FRACTION: the median of the 5 in-segment rates is 0.169119, half of it
    # 0.0846, and none is below: no slow start. JUMP_FACTOR: none above 10 x 0.169: no resume, 1 segment.
    # Steady: the 5 intervals' step times, 18.507 .. 16.493 s per 3 steps, lie within 0.93x-1.05x of their
    # median 17.739 s (no stall): all kept, 15 steps / (18.507 + 17.088 + 18.033 + 17.739 + 16.493 = 87.860 s)
    # = 0.170726, the case's window figure 0.1707 (the plain median was 3/17.739 = 0.169119). Mean: the same.
    assert row["steady_global_steps_per_s"] == pytest.approx(15 / 87.860, rel=1e-9)
    assert row["steady_global_steps_per_s"] == pytest.approx(0.1707, rel=0.01)
    assert row["mean_global_steps_per_s"] == pytest.approx(15 / 87.86, rel=1e-9)
    assert (row["records"], row["segments"], row["restarts"]) == (6, 1, 0)
    assert (row["steady_status"], row["steady_reason"]) == (None, None)
    # one logging task, no topology: its global step gains 3 a step (the worker not in the excerpt)
    assert (row["steady_assumption"], row["steady_assumption_note"]) == (
        "logs_every_step_unchecked", STEADY_ASSUMPTIONS["logs_every_step_unchecked"],
    )  # fmt: skip
    # 1/18.507 = 0.054 steps/s is the master's local rate, a third of the global one (the trap of the case)
    assert row["local_sum_steps_per_s"] < row["steady_global_steps_per_s"] / 2


def test_case24_table_notes_the_assumption_and_the_query_agrees(case24: Path) -> None:
    shown = runner.invoke(app, ["summary", "-d", str(case24)], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert f"run case24: {STEADY_ASSUMPTIONS['logs_every_step_unchecked']}" in " ".join(shown.stdout.split())
    assert "no steady rate" not in shown.stdout
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    steps = f"read_parquet('{case24}/steps/*/part-*.parquet', hive_partitioning = true)"
    ((run, rate, intervals),) = duckdb.sql(steady_state_query(steps, "duckdb")).fetchall()
    assert (run, intervals) == ("case24", 5)
    assert rate == pytest.approx(15 / 87.860, rel=1e-12)


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """One master's records (no clock unless a row gives one), in line order."""
    base = {"run_id": "r", "role": "master", "task_index": 0, "source": "r.log", "format": "slim"}
    full = [{**base, "source_offset": i + 1, **row} for i, row in enumerate(rows)]
    return conform(pl.DataFrame(full, infer_schema_length=None), STEP_SCHEMA)


#: Lines naming the task's local step (and one that does not), no clock, no global rate: step, local step,
#: local steps/s. Times: 140: 5 local steps / 2.5 = 2.0 s; 180: 5 / 2.0 = 2.5 s; 220: 4 / 2.0 = 2.0 s; 260:
#: the local step went back (61 -> 3: a new process) -> no time, a new segment; 300 names none: one step,
#: 1 / 0.5 = 2.0 s.
NAMED = [(100, 50, 2.0), (140, 55, 2.5), (180, 60, 2.0), (220, 64, 2.0), (260, 3, 2.0), (300, None, 0.5)]


def _named(**clock: list[Any]) -> pl.DataFrame:
    rows = [{"step": s, "local_step": k, "local_steps_per_s": r} for s, k, r in NAMED]
    return _frame([{**row, **{name: values[i] for name, values in clock.items()}} for i, row in enumerate(rows)])


def test_named_local_steps_time_the_interval_at_the_records_local_rate(tmp_path: Path) -> None:
    steps = _named()
    got = interval_rates(steps.lazy()).collect()
    assert got["d_seconds"].to_list() == pytest.approx([None, 2.0, 2.5, 2.0, None, 2.0], nan_ok=True)
    assert got["step_timed"].to_list() == [False, True, True, True, False, True]
    # rates: 40/2.0 = 20, 40/2.5 = 16, 40/2.0 = 20; 260 starts a segment (time unknown, no stated rate: no
    # restart); 300: 40/2.0 = 20
    assert got["rate"].to_list() == [None, 20.0, 16.0, 20.0, None, 20.0]
    assert got["segment"].to_list() == [0, 0, 0, 0, 1, 1]
    row = run_throughput(steps.lazy()).row(0, named=True)
    # steady: 20, 16, 20, 20 over 40 steps each (each segment's first record is warm-up; none below half the
    # median 20); 2.5 s is 1.25x the median 2.0 s, kept whole: 160 / 8.5 s = 18.82 (the median was 20);
    # mean (40 x 4) / (2.0 + 2.5 + 2.0 + 2.0) = 160 / 8.5
    assert row["steady_global_steps_per_s"] == pytest.approx(160 / 8.5)
    assert row["mean_global_steps_per_s"] == pytest.approx(160 / 8.5)
    assert (row["segments"], row["restarts"], row["step_timed_intervals"]) == (2, 0, 4)
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    path = tmp_path / "steps.parquet"
    steps.write_parquet(path)
    ((run, rate, intervals),) = duckdb.sql(steady_state_query(f"read_parquet('{path}')", "duckdb")).fetchall()
    assert (run, intervals) == ("r", 4) and rate == pytest.approx(160 / 8.5, rel=1e-12)


@pytest.mark.parametrize(
    "clock",
    [
        {"timestamp": [T0 + timedelta(seconds=10 * k) for k in range(6)]},
        {"elapsed_s": [10.0 * k for k in range(6)]},
        {"interval_s": [10.0] * 6},
    ],
    ids=["timestamp", "elapsed_s", "interval_s"],
)
def test_a_clock_wins_over_the_step_time(clock: dict[str, list[Any]], tmp_path: Path) -> None:
    # The same lines 10 s apart by the clock: every interval 40 steps / 10 s = 4 global steps/s (the step times
    # would say 20, 16, ...), no step-timed interval and nothing assumed. 260 (its local step back) is no
    # longer a break: its time is known.
    steps = _named(**clock)
    got = interval_rates(steps.lazy()).collect()
    assert got["d_seconds"].to_list()[1:] == [10.0] * 5
    assert got["rate"].to_list()[1:] == [4.0] * 5
    assert not got["step_timed"].any()
    row = run_throughput(steps.lazy()).row(0, named=True)
    assert (row["steady_global_steps_per_s"], row["step_timed_intervals"]) == (4.0, 0)
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    path = tmp_path / "steps.parquet"
    steps.write_parquet(path)
    assert duckdb.sql(steady_state_query(f"read_parquet('{path}')", "duckdb")).fetchall() == [("r", 4.0, 5)]


def test_no_step_time_where_the_record_states_its_global_rate_or_the_local_rate_cannot_time() -> None:
    # A global rate with a local one (DLRM's ms/it, case11: averaged over 16 iterations a line): the interval's
    # rate is the stated one, and one step a line would time 16 as one: no time, no mean made up.
    rows = [{"step": 16 * k, "global_steps_per_s": 2.2, "local_steps_per_s": 2.2} for k in range(1, 5)]
    row = run_throughput(_frame(rows).lazy()).row(0, named=True)
    assert row["steady_global_steps_per_s"] == 2.2
    assert (row["mean_global_steps_per_s"], row["step_timed_intervals"]) == (None, 0)
    # A local rate of 0, infinity or NaN times nothing: the second record's time is unknown (a new segment);
    # nor one above a million steps/s (`1e-308 sec/step`: 100 / 1e-308 s was an infinite rate that crashed
    # the report and printed Infinity in --json)
    for bad in (0.0, float("inf"), float("nan"), 1e308, 1.0000001e6):
        rows = [{"step": 100, "local_steps_per_s": 1.0}, {"step": 200, "local_steps_per_s": bad}]
        got = interval_rates(_frame(rows).lazy()).collect()
        assert got["d_seconds"].to_list() == [None, None] and got["segment"].to_list() == [0, 1], bad


def test_a_run_without_step_timed_intervals_assumes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "est.log"
    # Estimator-style lines with their own time: nothing assumed
    log.write_text(
        "".join(f"INFO:tensorflow:global_step/sec: 10\nINFO:tensorflow:loss = 0.5, step = {100 * k} (10.000 sec)\n"
                for k in range(1, 5))
    )  # fmt: skip
    row = _collect(log, tmp_path / "ds", "est")
    assert row["steady_global_steps_per_s"] == pytest.approx(10.0)
    assert (row["steady_assumption"], row["steady_assumption_note"]) == (None, None)
