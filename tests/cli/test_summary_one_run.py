"""A new user's first summary holds one run: a speedup of 1.00 against itself answers nothing, so the title says there
is no speedup yet and a note says what to collect to get one (it said which baseline was chosen and why)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app

DEMO = Path(__file__).parents[2] / "src" / "tierscope" / "data" / "cloudml-tiers-2016"
runner = CliRunner()


def _summary(tmp_path: Path, *names: str) -> str:
    ds = str(tmp_path / "ds")
    paths = [str(DEMO / f"{n}.log") for n in names]
    assert runner.invoke(app, ["collect", "files", *paths, "-d", ds, "-q"]).exit_code == 0
    result = runner.invoke(app, ["summary", "-d", ds], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_one_measured_run_says_what_to_collect_next(tmp_path: Path) -> None:
    said = _summary(tmp_path, "basic")
    assert said.startswith("tierscope summary (global steps/s; one measured run: no speedup yet)")
    # its rate stands: 9 steady intervals of the 2016 BASIC log, 4.640 global steps/s (the README's table)
    assert "4.640" in said
    assert (
        "note: basic is the one run measured, so nothing says yet what a bigger machine buys: collect a run of the "
        "same job on another configuration into this dataset (tierscope collect files LOG --run-id NAME --machine "
        "TYPE, or --tier TIER) and summary shows its speedup and price per step"
    ) in said
    assert "is the baseline; choose one with --baseline" not in said


def test_two_runs_of_one_job_name_their_baseline(tmp_path: Path) -> None:
    # near-miss: the laptop beside BASIC, both of the 2016 job: 18.838 / 4.640 = 4.06 against basic
    said = _summary(tmp_path, "basic", "local")
    assert said.startswith("tierscope summary (global steps/s; speedup against basic)")
    assert "4.06" in said and "one measured run" not in said
