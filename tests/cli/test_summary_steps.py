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
    # basic: 1,000,000 steps / 4.731 steps/s / 3600 s/h = 58.71 h; the 2016 table has ML units only: no USD.
    # standard_1: 1,000,000 / 22.8075 / 3600 = 12.18 h.
    # run, tier, status, tasks, steady, mean, speedup, ML units/h, steps/ML unit-h, hours to N
    assert _row(result.output, "basic")[9] == "58.71"
    assert _row(result.output, "standard_1")[9] == "12.18"
    assert _row(result.output, "premium_1")[9] == "-"


def test_summary_without_steps_has_no_target_columns(dataset_2016: Dataset) -> None:
    result = runner.invoke(app, ["summary", "-d", str(dataset_2016.root)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "hours to" not in result.output
    assert len(_row(result.output, "basic")) == 9
