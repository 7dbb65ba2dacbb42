"""The line ``tierscope collect`` ends with accounts for every line read: nothing is lost."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()

RECORD = "Train [master/0], step {step}:loss:2.3, accuracy:0.2 ({s} sec) 4.644 global_steps/s, 4.644 local_steps/s\n"


def test_the_closing_line_counts_lines_without_a_metric(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    # 6 lines: 2 step records, 1 reject (cut off), 3 without a metric (text, a JSON array, a blank line).
    log.write_text(
        RECORD.format(step=100, s=21.5)
        + "INFO saving checkpoint\n"
        + "Train [master/0], step 150:loss\n"
        + "[1, 2, 3]\n"
        + "\n"
        + RECORD.format(step=200, s=42.7)
    )
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    # 6 = 2 stored + 0 events + 0 duplicates + 1 rejected + 3 with no metric
    assert result.output.splitlines()[-1] == (
        "read 6 lines: stored 2 step records and 0 events, 0 duplicates already stored, "
        "kept aside 1 rejected line (see `tierscope rejects`), 3 lines had no metric"
    )
