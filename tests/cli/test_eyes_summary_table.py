"""``tierscope summary --steps N`` prints the hours and USD to N steps in its table, as the README says."""

from __future__ import annotations

from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def _row(output: str, run: str) -> list[str]:
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] == run:
            return cells
    raise AssertionError(f"no row for {run} in\n{output}")


def test_summary_steps_adds_hours_and_usd_columns(dataset_2016: Dataset) -> None:
    result = runner.invoke(app, ["summary", "-d", str(dataset_2016.root), "--steps", "1000000"])
    assert result.exit_code == 0, result.output
    assert "speedup against basic; N = 1,000,000 steps)" in result.output
    assert "hours to N" in result.output and "USD to N" in result.output
    # basic: 1,000,000 steps / 4.731 steps/s / 3600 s/h = 58.71 h; the 2016 table has ML units only: no USD.
    # standard_1: 1,000,000 / 22.8075 / 3600 = 12.18 h.
    assert _row(result.output, "basic")[10:12] == ["58.71", "-"]
    assert _row(result.output, "standard_1")[10:12] == ["12.18", "-"]
    assert _row(result.output, "premium_1")[10:12] == ["-", "-"]


def test_summary_without_steps_has_no_target_columns(dataset_2016: Dataset) -> None:
    result = runner.invoke(app, ["summary", "-d", str(dataset_2016.root)])
    assert result.exit_code == 0, result.output
    assert "hours to" not in result.output
    assert len(_row(result.output, "basic")) == 11
