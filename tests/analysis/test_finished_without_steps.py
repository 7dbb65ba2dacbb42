"""A run whose log says it finished but states no step with a time or a rate (a Hugging Face Trainer log of
loss dicts and its end-of-training line, the progress bar off) is ``ok`` with no steady rate: the summary
and the report say why, where its row was empty without a word (``no_records`` goes unsaid for a run with no
records: its status says so, but ``finished`` does not)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tierscope.analysis import AnalysisOptions, analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.reports.render import analysis_options, render_report

# The Trainer's own lines as a public GitHub log of a fine-tuning shows them (read 2026-12-07; its tqdm bar
# left out, as with disable_tqdm=True): loss dicts, then its end.
LOG = """\
{'loss': 1.3114, 'learning_rate': 6.666666666666667e-05, 'epoch': 0.22}
{'loss': 0.9876, 'learning_rate': 4.4444444444444447e-05, 'epoch': 0.26}
{'loss': 1.1406, 'learning_rate': 2.2222222222222223e-05, 'epoch': 0.29}
{'loss': 1.1728, 'learning_rate': 0.0, 'epoch': 0.32}
Training completed. Do not forget to share your model on huggingface.co/models =)
"""
# (its closing ``{'train_runtime': ...}`` dict states a whole-run rate: tests/analysis/test_whole_run_mean.py; here the
# Trainer's end line alone, as a LLaMA-Factory log in the stored GitHub index prints it before that dict, read
# 2026-12-07)

REASON = (
    "no step records: its log says it finished, but none of its lines states a step with a time or a rate "
    "(`tierscope formats --try` on its log shows how each line was read)"
)


def _collect(root: Path) -> Path:
    (root / "hf.log").write_text(LOG)
    ds = root / "ds"
    result = CliRunner().invoke(app, ["collect", "files", str(root / "hf.log"), "-d", str(ds), "-q"])
    assert result.exit_code == 0, result.output
    return ds


def test_a_finished_run_of_loss_lines_alone_says_why_it_has_no_rate(tmp_path: Path) -> None:
    ds = _collect(tmp_path)
    summary = analyze(Dataset(ds)).summary.row(0, named=True)
    # the end line is its finish (status ok); no line is a step report: 0 records
    assert summary["status"] == "ok" and summary["records"] == 0
    assert summary["steady_status"] == "finished_without_steps" and summary["steady_reason"] == REASON
    table = CliRunner().invoke(app, ["summary", "-d", str(ds)], env={"COLUMNS": "2000"}).output
    assert f"run hf: no steady rate: {REASON}" in table
    html = render_report(analyze(Dataset(ds), analysis_options(AnalysisOptions())))
    assert "no step records: its log says it finished" in html


def test_a_run_with_no_records_and_no_end_keeps_its_status_alone(tmp_path: Path) -> None:
    # the near miss: the same loss lines without the end line: no end, no records: status empty says it all
    (tmp_path / "hf.log").write_text("".join(LOG.splitlines(keepends=True)[:4]))
    ds = tmp_path / "ds"
    assert CliRunner().invoke(app, ["collect", "files", str(tmp_path / "hf.log"), "-d", str(ds), "-q"]).exit_code == 0
    table = CliRunner().invoke(app, ["summary", "-d", str(ds)], env={"COLUMNS": "2000"}).output
    assert "no steady rate" not in table
