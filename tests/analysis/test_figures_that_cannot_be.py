"""Figures that cannot be are withheld with their reason: goodput above 1, a price per step at 0
steps/s, a rate times 3,600 past a float's range. Charts of zero rates draw; JSON holds no Infinity."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support.lead_records import lead_frame
from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.reports.charts import label_rows

runner = CliRunner()


def write_lead(
    root: Path, steps: list[int], elapsed: list[float], rate: float, run_id: str = "r", tier: str = "BASIC"
) -> None:
    Dataset(root).append("steps", lead_frame(run_id, steps, elapsed, rate, tier))


def test_steps_that_outrun_the_clock_withhold_goodput(tmp_path: Path) -> None:
    # A mutated log: the lead's first record is at step 1,000,000 with no restore, 100 records 10 steps
    # and 1 s apart, at 10 steps/s. Lifetime: elapsed 0 -> 100 s. Productive: the first record's steps at
    # R, 1,000,000 / 10 = 100,000 s, plus 99 steady intervals of 1 s = 100,099 s: a goodput of 1,001.
    write_lead(tmp_path, [1_000_000 + 10 * k for k in range(100)], [1.0 + k for k in range(100)], 10.0)
    (row,) = analyze(Dataset(tmp_path)).summary.iter_rows(named=True)
    assert row["lifetime_s"] == pytest.approx(100.0)
    assert row["goodput"] is None and row["productive_s"] is None
    assert row["goodput_reason"] == (
        "the log's clock contradicts its steps: they take 100100.0 s at the steady rate, more than the 100.0 s "
        "its clock spans"
    )


def test_productive_time_within_the_slack_is_the_lifetime(tmp_path: Path) -> None:
    # First record at step 15: 15 / 10 = 1.5 s of progress before it, + 99 s = 100.5 s in a 100 s
    # lifetime, 0.5 % over (the clock's rounding): productive time is the lifetime, goodput 1.
    write_lead(tmp_path, [15 + 10 * k for k in range(100)], [1.0 + k for k in range(100)], 10.0)
    (row,) = analyze(Dataset(tmp_path)).summary.iter_rows(named=True)
    assert row["goodput_reason"] is None
    assert row["productive_s"] == pytest.approx(100.0)
    assert row["goodput"] == 1.0


def test_zero_rates_are_no_measurement_and_the_report_draws(tmp_path: Path) -> None:
    # Records stating 0 global steps/s at steps 1..50, elapsed 1..50 s: a zero rate times no step
    # (tierscope.analysis.stated_rates), so the clock does: 1 step / 1 s = 1.0 global steps/s in both runs
    ds = tmp_path / "ds"
    for run, tier in (("a", "BASIC"), ("b", "STANDARD_1")):
        write_lead(ds, list(range(1, 51)), [float(s) for s in range(1, 51)], 0.0, run, tier)
    summary = analyze(Dataset(ds)).summary
    assert summary["steady_global_steps_per_s"].to_list() == [pytest.approx(1.0), pytest.approx(1.0)]
    assert summary["withheld_figures"].to_list() == [None, None]
    done = runner.invoke(app, ["report", "-d", str(ds), "--out", str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    text = runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout
    assert "Infinity" not in text and "NaN" not in text


def test_a_steady_rate_of_0_withholds_prices_and_speedups() -> None:
    # No stated rate reaches a steady 0 any more; the rule stays for any other way to one: USD/h / (0 steps/s x
    # 3600) and 0 / 0 are withheld with the reason, not inf and NaN
    from tierscope.analysis.summary import SUMMARY_SCHEMA, withhold_non_finite

    rows = pl.DataFrame(
        {"run_id": ["a"], "baseline_run_id": ["a"], "steady_global_steps_per_s": [0.0],
         "usd_per_1000_steps": [math.inf], "speedup_vs_baseline": [math.nan]}
    ).with_columns(**{c: pl.lit(None, t) for c, t in SUMMARY_SCHEMA.items() if c not in
                      ("run_id", "baseline_run_id", "steady_global_steps_per_s", "usd_per_1000_steps",
                       "speedup_vs_baseline")})  # fmt: skip
    (row,) = withhold_non_finite(rows).iter_rows(named=True)
    assert (row["usd_per_1000_steps"], row["speedup_vs_baseline"]) == (None, None)
    assert row["withheld_figures"] == (
        "usd_per_1000_steps, speedup_vs_baseline: its steady rate is 0 steps/s (no step to price or compare)"
    )


def test_a_1e308_rate_is_left_out_for_the_clock_and_never_infinity_in_json(tmp_path: Path) -> None:
    write_lead(tmp_path, list(range(1, 51)), [float(s) for s in range(1, 51)], 1e308)
    done = runner.invoke(app, ["summary", "-d", str(tmp_path), "--json"])
    assert done.exit_code == 0, done.output
    assert "Infinity" not in done.stdout and "NaN" not in done.stdout
    (row,) = json.loads(done.stdout)
    # 1e308 is beyond any machine (over 1e6, tierscope.analysis.stated_rates): left out; the clock gives 1 step
    # a second, 1.0 global steps/s (the 1e308 was kept, and x 3600 withheld as past a float's range)
    assert row["steady_global_steps_per_s"] == pytest.approx(1.0)
    assert row["withheld_figures"] is None
    assert all(not isinstance(v, float) or math.isfinite(v) for v in row.values())


@pytest.mark.parametrize("top", [0.0, math.inf])
def test_labels_of_a_chart_at_zero_or_without_a_finite_top(top: float) -> None:
    rows = label_rows([0.0, 0.0], [0.0, 0.0], ["a", "b"], top, top)
    assert all(math.isfinite(r) for r in rows)
    assert rows[0] != rows[1]  # two runs at one point: the second label a line below


def test_a_lifetime_of_0_s_has_no_badput_shares_and_withholds_nothing_else(tmp_path: Path) -> None:
    # One record (step 11 at 23.91 steps/s, elapsed 0 s): the clock spans 0 s, so goodput and each badput
    # share (badput seconds / 0 s) have no value; the reason says why, and no share is "withheld" as a NaN
    write_lead(tmp_path, [11], [0.0], 23.91)
    (row,) = analyze(Dataset(tmp_path)).summary.iter_rows(named=True)
    assert row["lifetime_s"] == 0.0 and row["goodput"] is None
    assert "lifetime of 0 s" in row["goodput_reason"]
    assert [row[c] for c in row if c.startswith("badput_") and c.endswith("_share")] == [None] * sum(
        1 for c in row if c.startswith("badput_") and c.endswith("_share")
    )
    assert row["withheld_figures"] is None
