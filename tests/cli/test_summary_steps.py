"""``tierscope summary --steps N`` prints the hours and USD to N steps in its table, as docs/cli.md says."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.support.cli_helpers import table_row as _row
from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def test_summary_steps_adds_hours_and_usd_columns(dataset_2016: Dataset) -> None:
    result = runner.invoke(app, ["summary", "-d", str(dataset_2016.root), "--steps", "1000000"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "speedup against basic; N = 1,000,000 steps)" in result.output
    # USD to N is empty for every 2016 run (the beta quoted ML units only): left out
    assert "hours to N" in result.output and "USD to N" not in result.output
    # On the sustained rates (tests/analysis/test_scaling.py): basic 1,000,000 steps / 4.6400 steps/s / 3600 s/h =
    # 59.87 h (no start-up); the 2016 table has ML units only: no USD. standard_1: (13.996 s of start-up +
    # 1,000,000 / 22.3894) / 3600 = 12.41 h. The hours at the steady rate beside: 59.87 and 12.41.
    # run, tier, status, tasks, steady, mean, speedup, ML units/h, steps/ML unit-h, hours to N
    assert _row(result.output, "basic")[9:11] == ["59.87", "59.87"]
    assert _row(result.output, "standard_1")[9:11] == ["12.41", "12.41"]
    assert _row(result.output, "premium_1")[9] == "-"


def test_summary_without_steps_has_no_target_columns(dataset_2016: Dataset) -> None:
    result = runner.invoke(app, ["summary", "-d", str(dataset_2016.root)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "hours to" not in result.output
    assert len(_row(result.output, "basic")) == 9
