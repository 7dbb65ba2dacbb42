"""A stated global rate that measures nothing (tierscope.analysis.stated_rates): 0 global steps/s times no step
and 1e300 is beyond any machine; both are left out of the rates with a note, and a run left with no rate says
which it was, never a steady 0 planned at "inf h" nor 1e300 recommended. A run whose every elapsed time is
impossible says so, not "only ps or evaluator records"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.support.lead_records import lead_frame
from tierscope.analysis import analyze
from tierscope.analysis.analyze import beyond
from tierscope.analysis.clock import LONGEST_ELAPSED_S
from tierscope.analysis.stated_rates import MAX_STEPS_PER_S
from tierscope.analysis.summary import STEADY_REASONS
from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def _rate_lines(tmp_path: Path, rate: str) -> Path:
    """Six Estimator ``global_step/sec`` lines stating ``rate`` (no step; behind absl's glog header, a second
    apart: six reports, where six lines alike byte for byte would be one report printed six times) collected on one
    n1-standard-8 as run ``r``: the dataset's root."""
    log = tmp_path / "r.log"
    head = "I1105 10:00:{:02d}.000000 140000 basic_session_run_hooks.py:692] global_step/sec: "
    log.write_text("".join(f"{head.format(second)}{rate}\n" for second in range(6)))
    ds = tmp_path / "ds"
    # --settle 0: the log is whole (a log just written that ends in a rate line holds that line for its record)
    done = runner.invoke(app, ["collect", "files", str(log), "--run-id", "r", "-d", str(ds), "-q",
                               "--machine", "n1-standard-8", "--settle", "0"])  # fmt: skip
    assert done.exit_code == 0, done.output
    return ds


def _row(ds: Path) -> dict[str, Any]:
    done = runner.invoke(app, ["summary", "-d", str(ds), "--json", "--steps", "1000"])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.stdout)
    return row


def test_a_stated_zero_rate_is_no_measurement_and_no_plan(tmp_path: Path) -> None:
    ds = _rate_lines(tmp_path, "0")
    row = _row(ds)
    # By hand: six records of 0 global steps/s and nothing else: no step was timed, so no rate (it was a steady
    # 0.0 and a plan of 1000 / 0 = inf h, USD inf)
    assert row["steady_global_steps_per_s"] is None and row["hours_to_target"] is None
    assert (row["steady_status"], row["steady_reason"]) == ("rate_zero", STEADY_REASONS["rate_zero"])
    shown = runner.invoke(app, ["summary", "-d", str(ds)], env={"COLUMNS": "200"})
    said = " ".join(shown.output.split())
    assert "run r: 6 records stating 0 global steps/s, which times no step: left out of its rates" in said
    assert f"run r: no steady rate: {STEADY_REASONS['rate_zero']}" in said
    planned = runner.invoke(app, ["recommend", "-d", str(ds), "--steps", "1000", "--deadline", "72h"])
    assert planned.exit_code != 0 and "inf" not in planned.output
    # the error names the run's reason (it guessed "no step records, or too few")
    assert f"(run r: {STEADY_REASONS['rate_zero']})" in " ".join(planned.output.split())


def test_a_rate_beyond_any_machine_is_left_out_not_recommended(tmp_path: Path) -> None:
    ds = _rate_lines(tmp_path, "1e300")
    row = _row(ds)
    # 1e300 > 1e6 global steps/s (a step a microsecond): left out; it was the steady rate, printed in full, and
    # recommended at 1000 / 1e300 / 3600 = 2.78e-301 h
    assert row["steady_global_steps_per_s"] is None and row["hours_to_target"] is None
    assert row["steady_status"] == "rate_implausible"
    shown = runner.invoke(app, ["summary", "-d", str(ds)], env={"COLUMNS": "200"})
    said = " ".join(shown.output.split())
    assert "6 records stating global steps/s beyond any machine (up to 1e+300; over 1,000,000" in said
    assert "1,000,000,000,000" not in said  # never printed in full
    planned = runner.invoke(app, ["recommend", "-d", str(ds), "--steps", "1000", "--deadline", "72h"])
    assert planned.exit_code != 0 and "cheapest" not in planned.output


@pytest.mark.parametrize(("rate", "kept"), [(MAX_STEPS_PER_S, True), (1.0000001e6, False)])
def test_the_bound_itself_is_a_rate(tmp_path: Path, rate: float, kept: bool) -> None:
    # the near miss: 1,000,000 global steps/s stated on every record (no clock) is the steady rate; just above
    # it is none
    ds = _rate_lines(tmp_path, repr(rate))
    row = _row(ds)
    assert row["steady_global_steps_per_s"] == (pytest.approx(rate) if kept else None)


def test_a_clock_times_the_steps_a_zero_rate_does_not(tmp_path: Path) -> None:
    # 50 records at steps 1..50 and elapsed 1..50 s, each stating 0 global steps/s: the clock gives 1 step in
    # 1 s an interval, 1.0 global steps/s (the stated 0 was read as a steady 0.0)
    Dataset(tmp_path).append("steps", lead_frame("r", list(range(1, 51)), [float(s) for s in range(1, 51)], 0.0))
    analysis = analyze(Dataset(tmp_path))
    (row,) = analysis.summary.iter_rows(named=True)
    assert row["steady_global_steps_per_s"] == pytest.approx(1.0)
    assert row["steady_status"] is None
    assert ("r", "50 records stating 0 global steps/s, which times no step: left out of its rates "
            "(a zero rate is no measurement)") in analysis.notes  # fmt: skip


def _json_log(tmp_path: Path, records: list[dict[str, float]]) -> Path:
    log = tmp_path / "r.log"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    ds = tmp_path / "ds"
    done = runner.invoke(app, ["collect", "files", str(log), "--run-id", "r", "-d", str(ds), "-q"])
    assert done.exit_code == 0, done.output
    return ds


def test_every_elapsed_time_impossible_says_so(tmp_path: Path) -> None:
    # ten records whose elapsed times are 1e23 .. 1e24 s (3e15 years and more): all left out, so no training
    # record is left; the reason was "only ps or evaluator records", of records that were never there
    ds = _json_log(tmp_path, [{"step": 100 * i, "elapsed_time": 1e23 * i} for i in range(1, 11)])
    row = _row(ds)
    assert (row["steady_status"], row["steady_reason"]) == (
        "elapsed_impossible", STEADY_REASONS["elapsed_impossible"],
    )  # fmt: skip
    shown = runner.invoke(app, ["summary", "-d", str(ds)], env={"COLUMNS": "200"})
    said = " ".join(shown.output.split())
    # 1000 years x 365.25 days x 86,400 s = 31,557,600,000 s
    assert "10 records stating an elapsed time of 1e+24 s at most, beyond any run's length (over " in said
    assert "(over 31,557,600,000 s, 1,000 years)" in said
    assert "only ps or evaluator records" not in said


def test_the_largest_elapsed_time_reads_above_the_limit(tmp_path: Path) -> None:
    # The note printed the limit as 3.156e+10 (4 digits, rounded up) and the largest as 3.15576e+10 (6 digits):
    # 31,557,600,001 s read as below the limit it was over. Now the limit is exact, 1000 years x 365.25 days x
    # 86,400 s = 31,557,600,000 s, and the largest takes the fewest digits from 4 that read above it: 3.156e+10.
    assert LONGEST_ELAPSED_S == 1000 * 365.25 * 86400 == 31_557_600_000
    assert beyond(31_557_600_001.0, LONGEST_ELAPSED_S) == "3.156e+10"
    # a bound that 4 digits reach: 1000.4 over 1000 reads "1000" at 4 digits (not above), "1000.4" at 5
    assert beyond(1000.4, 1000.0) == "1000.4"
    assert beyond(float("inf"), LONGEST_ELAPSED_S) == "inf"
    # the whole note on such a record: its figure is above the limit it is said to be over
    records = [{"step": 100 * i, "elapsed_time": 20.0 * i} for i in range(1, 11)]
    records.insert(5, {"step": 550, "elapsed_time": 31_557_600_001.0})
    analysis = analyze(Dataset(_json_log(tmp_path, records)))
    assert any("an elapsed time of 3.156e+10 s, beyond any run's length (over 31,557,600,000 s" in note
               for _, note in analysis.notes)  # fmt: skip
