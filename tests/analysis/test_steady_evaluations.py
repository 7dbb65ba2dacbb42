"""Intervals holding a logged evaluation are not steady: the real excerpt case05 (../shared/cases) and built
runs, through the reference definition, the batched and pieced paths and the SQL twin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support import SHARED
from tierscope.analysis.batches import interval_figures
from tierscope.analysis.steady_sql import steady_state_query
from tierscope.analysis.throughput import collect_intervals, interval_rates, run_throughput
from tierscope.cli import app
from tierscope.dataset.schema import EVENT_SCHEMA, STEP_SCHEMA, conform

runner = CliRunner()
CASE05 = SHARED / "cases" / "inputs" / "case05.log"


def _summary(tmp_path: Path, log: Path, run: str) -> tuple[dict[str, Any], str]:
    """``summary --json``'s row of ``log`` collected as ``run``, and the table's notes."""
    dataset = tmp_path / "ds"
    got = runner.invoke(app, ["collect", "files", str(log), "--run-id", run, "-d", str(dataset), "--quiet"])
    assert got.exit_code == 0, got.output
    shown = runner.invoke(app, ["summary", "-d", str(dataset), "--json"])
    assert shown.exit_code == 0, shown.output
    table = runner.invoke(app, ["summary", "-d", str(dataset)])
    return {r["run_id"]: r for r in json.loads(shown.stdout)}[run], table.output


def test_case05_steady_rate_is_the_one_interval_without_an_evaluation(tmp_path: Path) -> None:
    if not CASE05.exists():
        pytest.skip(f"{CASE05} is absent (the real excerpts live in ../shared/cases beside the repository)")
    row, table = _summary(tmp_path, CASE05, "case05")
    # Train records at steps 1, 118, 237, 327 (elapsed 0.084, 4.041, 7.807, 9.313 s; stated 11.9, 29.6, 31.6,
    # 59.8 global steps/s), 'Eval, step 1' and 'Eval, step 118' blocks after the first two. Step 1's record is
    # warm-up (from the process start); 1 -> 118 holds the eval at 1 (1 <= 1 < 118), 118 -> 237 the eval at
    # 118, 237 -> 327 none: the steady rate
    # is its own, the stated 59.8 (90 steps / (9.313 - 7.807) s = 90 / 1.506 = 59.76). Before: all three
    # kept (the median step time was an evaluation's), 326 / 9.229 = 35.3.
    assert row["steady_global_steps_per_s"] == pytest.approx(59.8)
    assert (row["steady_intervals"], row["steady_pauses"]) == (3, 2)
    assert "steady rate leaves out 2 intervals holding an evaluation" in table


def _run(evaluations: list[int], evaluator_index: int | None = None) -> pl.LazyFrame:
    """A master and worker 0, each logging steps 100, 200, ..., 700 at elapsed 20, 24, 30, 36, 42, 46, 50 s:
    the intervals to 300, 400, 500 take 6 s, those to 200, 600 and 700 4 s (a clock of whole seconds at
    intervals long enough for a second to be within the stall bound's margin: each interval its own); evaluator
    records (held-out loss, no rate; task index ``evaluator_index``) at ``evaluations``."""
    steps, clock = [100, 200, 300, 400, 500, 600, 700], [20.0, 24.0, 30.0, 36.0, 42.0, 46.0, 50.0]
    rows = [
        {"role": role, "task_index": 0, "step": s, "elapsed_s": t, "source": f"{role}.log", "source_offset": n}
        for role in ("master", "worker")
        for n, (s, t) in enumerate(zip(steps, clock, strict=True))
    ]
    rows += [
        {"role": "evaluator", "task_index": evaluator_index, "step": e, "eval_loss": 0.5, "source": "master.log",
         "source_offset": 100 + e}
        for e in evaluations
    ]  # fmt: skip
    frame = pl.DataFrame(rows).with_columns(run_id=pl.lit("r"), tier=pl.lit("BASIC"), format=pl.lit("cloudml"))
    return conform(frame, STEP_SCHEMA).lazy()


def _every_path(steps: pl.LazyFrame, tmp_path: Path) -> list[float]:
    """The steady rate by the reference definition, the batched path, the pieced path (one task a piece)
    and the SQL query (DuckDB, where installed)."""
    got = [run_throughput(steps)["steady_global_steps_per_s"][0]]
    got += [interval_figures(steps, max_records=m).throughput["steady_global_steps_per_s"][0] for m in (10**6, 1)]
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    steps.collect().write_parquet(tmp_path / "steps.parquet")
    query = steady_state_query(f"read_parquet('{tmp_path / 'steps.parquet'}')", "duckdb")
    got += [rate for _, rate, _ in duckdb.sql(query).fetchall()]
    return got


def test_intervals_holding_an_evaluation_are_left_out(tmp_path: Path) -> None:
    steps = _run([200, 300, 400])
    # Each task: 100 (warm-up), then 100 steps in 4, 6, 6, 6, 4, 4 s. The evaluations at 200, 300, 400 lie in
    # 200 -> 300, 300 -> 400, 400 -> 500 (prev <= e < step): left out. Kept: 100 -> 200, 500 -> 600, 600 -> 700,
    # 300 steps in 12 s a task: 600 / 24 = 25.0 (before: 600 / 30 = 20.0, the 6 s ones being the median).
    assert _every_path(steps, tmp_path) == pytest.approx([25.0] * 4)
    flags = interval_rates(steps).filter(pl.col("role") == "master").select("step", "paused").collect().rows()
    assert flags == [(100, False), (200, False), (300, True), (400, True), (500, True), (600, False), (700, False)]
    row = run_throughput(steps).row(0, named=True)
    assert (row["steady_intervals"], row["steady_pauses"]) == (12, 6)


def test_every_interval_holding_an_evaluation_keeps_them_all(tmp_path: Path) -> None:
    steps = _run([100, 200, 300, 400, 500, 600])
    # Every interval past warm-up holds one (a trainer evaluating at each logged step): all kept, 600 steps
    # in 4 + 6 + 6 + 6 + 4 + 4 = 30 s a task: 1200 / 60 = 20.0.
    assert _every_path(steps, tmp_path) == pytest.approx([20.0] * 4)
    row = run_throughput(steps).row(0, named=True)
    assert (row["steady_intervals"], row["steady_pauses"]) == (12, 12)


def test_the_batched_intervals_pause_at_the_evaluations_among_the_records_they_read() -> None:
    # collect_intervals takes the records' pauses from the rows it reads for the log order (no second read of
    # the steps). The in-line evaluator's loss at 300 pauses each training task's 300 -> 400 (300 <= 300 < 400);
    # a parameter server's record with a held-out loss at 500 is neither a training task's nor an in-line
    # evaluator's: it pauses nothing (the near miss).
    ps = pl.DataFrame(
        [{"role": "ps", "task_index": 0, "step": 500, "eval_loss": 0.5, "source": "ps.log", "source_offset": 0}]
    ).with_columns(run_id=pl.lit("r"), tier=pl.lit("BASIC"), format=pl.lit("cloudml"))
    steps = pl.concat([_run([300]).collect(), conform(ps, STEP_SCHEMA)]).lazy()
    intervals = collect_intervals(steps)
    for role in ("master", "worker"):
        flags = intervals.filter(pl.col("role") == role).select("step", "paused").rows()
        assert flags == [(s, s == 400) for s in (100, 200, 300, 400, 500, 600, 700)]


def test_an_evaluator_replica_of_its_own_stops_no_training_task(tmp_path: Path) -> None:
    # An evaluator task with an index runs beside training (its own machine): nothing left out, 20.0 as above.
    steps = _run([200, 300, 400], evaluator_index=0)
    assert _every_path(steps, tmp_path) == pytest.approx([20.0] * 4)
    assert run_throughput(steps)["steady_pauses"][0] == 0


def test_checkpoint_and_evaluation_events_pause_their_own_task() -> None:
    steps = _run([])
    # The reference trainer's events: each task saves at 200 and evaluates at 300 and 400 (`checkpoint_begin`
    # / `eval_end` with their step); the master also at 600, in a role of its own only. The worker's
    # intervals ending 300, 400, 500 hold them: 300 steps in 4 + 4 + 4 = 12 s kept (25.0); the master's also
    # 600 -> 700: 200 steps in 8 s kept (25.0). 500 / 20 s = 25.0 (with no events: 1200 / 60 = 20.0).
    pauses = ((200, "checkpoint_begin"), (300, "eval_end"), (400, "eval_begin"))
    marks = [(role, e, name) for role in ("master", "worker") for e, name in pauses]
    marks.append(("master", 600, "checkpoint_begin"))
    events = conform(
        pl.DataFrame({"run_id": ["r"] * len(marks), "role": [m[0] for m in marks], "task_index": [0] * len(marks),
                      "step": [m[1] for m in marks], "event": [m[2] for m in marks]}),
        EVENT_SCHEMA,
    )  # fmt: skip
    assert run_throughput(steps)["steady_global_steps_per_s"][0] == pytest.approx(20.0)
    got = [run_throughput(steps, events=events)["steady_global_steps_per_s"][0]]
    got += [interval_figures(steps, max_records=m, events=events).throughput["steady_global_steps_per_s"][0]
            for m in (10**6, 1)]  # fmt: skip
    assert got == pytest.approx([500 / 20] * 3)
    assert run_throughput(steps, events=events)["steady_pauses"][0] == 7
