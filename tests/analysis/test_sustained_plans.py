"""Plans on the sustained rate: a run that checkpoints within every 5th logging interval takes a sixth longer
than its steady rate says, and a deadline between the two is missed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.dataset.store import Dataset

runner = CliRunner()

# The log: a BASIC master logging every 100 steps at 10 global steps/s (10 s an interval), its first record
# (step 100) 10 s after its start, and every 5th record (steps 600, 1100, ..., 5100) 20 s after the one before
# (a checkpoint within the interval): 51 records, 50 intervals, 10 of them 2x.
# Steady: the median step time is 0.1 s; the 2x intervals are stalls past the bound (left out): 40 x 100 steps
# in 40 x 10 s = 10.0 global steps/s. No start-up: step 200 at 20 s is 200 / 10 s in.
# Goodput (the lead's elapsed_s clock, no end event): lifetime 10 + 40 x 10 + 10 x 20 = 610 s; productive at
# the steady rate 400 s (the steady intervals) + 10 x 10 s (the stalled intervals' steps at 10/s) + 10 s (the
# first record's 100 steps) = 510 s. Sustained = 10 x 510 / (610 - 0 start-up) = 8.3607 global steps/s: the
# run's 5100 steps over its 610 s.
# 100,000 steps: 100,000 / 8.3607 / 3600 = 3.3224 h sustained, 100,000 / 10 / 3600 = 2.7778 h steady.
# BASIC on 2019-12-01: 0.3878 ML units/h x USD 0.49 = USD 0.19002/h: USD 0.6313 sustained, USD 0.5278 steady.
STEADY = 10.0
SUSTAINED = STEADY * 510 / 610
PRICE = 0.3878 * 0.49


def _dataset(tmp_path: Path) -> Path:
    elapsed, lines = 10.0, []
    for k in range(1, 52):
        if k > 1:
            elapsed += 20.0 if k % 5 == 1 else 10.0
        rate = 100 / (20.0 if k > 1 and k % 5 == 1 else 10.0)
        lines.append(
            f"Train [master/0], step {100 * k}:loss:1.0, accuracy:0.5 ({elapsed:.3f} sec) {rate:.3f} global_steps/s, "
            f"{rate:.3f} local_steps/s"
        )
    log = tmp_path / "ckpt.log"
    log.write_text("\n".join(lines) + "\n")
    ds = tmp_path / "ds"
    collect_runs(Dataset(ds), runs_from_paths([log], "ckpt", "BASIC", None))
    return ds


def test_summary_steps_plans_on_the_sustained_rate_with_the_steady_one_beside(tmp_path: Path) -> None:
    ds = _dataset(tmp_path)
    done = runner.invoke(app, ["summary", "-d", str(ds), "--steps", "100000", "--price-date", "2019-12-01", "--json"])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.stdout)
    assert row["steady_global_steps_per_s"] == pytest.approx(STEADY)
    assert row["steady_stalls"] == 10
    assert row["lifetime_s"] == pytest.approx(610) and row["productive_at_steady_s"] == pytest.approx(510)
    assert row["sustained_global_steps_per_s"] == pytest.approx(SUSTAINED)  # 8.3607
    assert row["plan_basis"] == "sustained"
    assert row["hours_to_target"] == pytest.approx(100_000 / SUSTAINED / 3600)  # 3.3224 h
    assert row["hours_to_target"] == pytest.approx(3.3224, abs=1e-4)
    assert row["steady_hours_to_target"] == pytest.approx(100_000 / STEADY / 3600)  # 2.7778 h
    table = runner.invoke(
        app, ["summary", "-d", str(ds), "--steps", "100000", "--price-date", "2019-12-01"], env={"COLUMNS": "250"}
    )
    assert table.exit_code == 0, table.output
    assert "hours to N" in table.output and "hours at steady" in table.output
    assert "3.32" in table.output and "2.78" in table.output


def test_recommend_misses_a_deadline_between_the_two_on_the_sustained_figure(tmp_path: Path) -> None:
    ds = _dataset(tmp_path)
    args = ["recommend", "-d", str(ds), "--steps", "100000", "--price-date", "2019-12-01"]
    done = runner.invoke(app, [*args, "--deadline", "3h", "--json"])
    assert done.exit_code == 3, done.output  # nothing meets 3 h: said by the exit status too
    doc = json.loads(done.stdout)
    (basic,) = [c for c in doc["candidates"] if c["candidate"] == "ckpt"]
    assert (basic["rate_basis"], basic["meets"]) == ("sustained", False)
    assert basic["global_steps_per_s"] == pytest.approx(SUSTAINED)
    assert basic["steady_global_steps_per_s"] == pytest.approx(STEADY)
    assert basic["hours"] == pytest.approx(100_000 / SUSTAINED / 3600)  # 3.32 h: over 3 h
    assert basic["steady_hours"] == pytest.approx(100_000 / STEADY / 3600)  # 2.78 h: would have met it
    assert basic["usd"] == pytest.approx(100_000 / SUSTAINED / 3600 * PRICE, rel=1e-4)  # USD 0.6313
    assert doc["choice"] is None
    table = runner.invoke(app, [*args, "--deadline", "3h"], env={"COLUMNS": "250"})
    assert table.exit_code == 3, table.output
    said = " ".join(table.output.split())
    assert "missed: 3.32 h > 3h at the sustained rate (the steady rate's 2.78 h would meet it)" in said
    # within the sustained figure's hours it is met
    assert json.loads(runner.invoke(app, [*args, "--deadline", "3.4h", "--json"]).stdout)["choice"]["candidate"] == (
        "ckpt"
    )
