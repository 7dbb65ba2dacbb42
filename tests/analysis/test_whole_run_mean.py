"""A run whose only speed is its log's closing summary (a Hugging Face Trainer's ``train_steps_per_second``,
detectron2's ``Overall training speed``, a benchmark's ``total images/sec``) shows that speed as its mean global
steps/s (and its examples/s), said to be a whole-run mean, and its global steps/s as the steady rate with that
assumption said (examples/s alone make none: no steady rate, and the reason why); a run with step records keeps every
figure its records give, the closing summary or not."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.summary import STEADY_REASONS
from tierscope.analysis.whole_run import WHOLE_RUN_MEAN, WHOLE_RUN_MEAN_NOTE
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.reports.render import analysis_options, render_report

# Hugging Face Trainer's lines, its bar off, as a public GitHub log of a LoRA fine-tuning shows them (stored GitHub
# index, read 2026-12-07; its bar ends 200/200 [03:45]): 200 steps / 225.8005 s = 0.88574 -> the printed 0.886
# steps/s; 3.543 samples/s = 4 samples a step x 0.886.
HF = """\
{'loss': 1.1406, 'learning_rate': 2.2222222222222223e-05, 'epoch': 0.29}
{'loss': 1.1728, 'learning_rate': 0.0, 'epoch': 0.32}
{'train_runtime': 225.8005, 'train_samples_per_second': 3.543, 'train_steps_per_second': 0.886, \
'train_loss': 1.211241865158081, 'epoch': 0.32}
"""
# detectron2's end of training, a tutorial's log of 2020-01-29 (a Jekyll post "Detectron2 - How to use Instance
# Image Segmentation for Building Recognition", read 2026-12-07): 1 / 0.6804 s/it = 1.46972 steps/s.
D2_END = """\
[01/29 06:25:28 d2.engine.hooks]: Overall training speed: 997 iterations in 0:11:18 (0.6804 s / it)
[01/29 06:25:28 d2.engine.hooks]: Total training time: 0:11:21 (0:00:02 on hooks)
"""
# tf_cnn_benchmarks' end, tensorflow/benchmarks PR 63 (2017-10-05): images/s alone, no steps/s.
TFCNN_END = """\
----------------------------------------------------------------
total images/sec: 138.95
----------------------------------------------------------------
"""
# detectron2's step lines, facebookresearch/d2go issue 19 (2021-03-15): iterations 19 to 99, 20 apart.
D2_STEPS = """\
[03/15 07:48:04 d2.utils.events]:  eta: 0:01:23  iter: 19  total_loss: 1.475  loss_cls: 0.7214  time: 0.2951  \
data_time: 0.0589  lr: 6.1638e-06  max_mem: 824M
[03/15 07:48:10 d2.utils.events]:  eta: 0:01:17  iter: 39  total_loss: 1.383  loss_cls: 0.7036  time: 0.3084  \
data_time: 0.0369  lr: 1.2389e-05  max_mem: 824M
[03/15 07:48:16 d2.utils.events]:  eta: 0:01:09  iter: 59  total_loss: 1.339  loss_cls: 0.6572  time: 0.3054  \
data_time: 0.0348  lr: 1.8614e-05  max_mem: 824M
[03/15 07:48:22 d2.utils.events]:  eta: 0:01:04  iter: 79  total_loss: 1.348  loss_cls: 0.606  time: 0.3071  \
data_time: 0.0296  lr: 2.4839e-05  max_mem: 824M
[03/15 07:48:29 d2.utils.events]:  eta: 0:00:58  iter: 99  total_loss: 1.163  loss_cls: 0.5328  time: 0.3080  \
data_time: 0.0389  lr: 3.1064e-05  max_mem: 824M
"""


def _summary(root: Path, **logs: str) -> dict[str, dict]:
    """The summary rows by run of ``logs`` (run name -> text), each collected as its own file."""
    ds = root / "ds"
    for name, text in logs.items():
        (root / f"{name}.log").write_text(text)
        result = CliRunner().invoke(app, ["collect", "files", str(root / f"{name}.log"), "-d", str(ds), "-q"])
        assert result.exit_code == 0, result.output
    return {r["run_id"]: r for r in analyze(Dataset(ds)).summary.iter_rows(named=True)}


@pytest.mark.parametrize(
    ("log", "steps_per_s", "examples_per_s", "said"),
    [
        (HF, 0.886, 3.543, "0.886 global steps/s, 3.543 examples/s"),
        (D2_END, 1 / 0.6804, None, "1.46972 global steps/s"),
        (TFCNN_END, None, 138.95, "138.95 examples/s"),
    ],
    ids=["huggingface", "detectron2", "tf_cnn_benchmarks"],
)
def test_a_run_timed_only_by_its_closing_summary_shows_that_mean(
    tmp_path: Path, log: str, steps_per_s: float | None, examples_per_s: float | None, said: str
) -> None:
    row = _summary(tmp_path, run=log)["run"]
    assert row["status"] == "ok" and row["records"] == 0
    assert row["mean_global_steps_per_s"] == (pytest.approx(steps_per_s, rel=1e-12) if steps_per_s else None)
    assert row["stated_examples_per_s"] == examples_per_s
    assert row["mean_note"] == f"mean stated by the log's closing summary over the whole run: {said}"
    if steps_per_s:
        # the steady rate is that mean where nothing in the log says better, the assumption said (the hand verdicts
        # of such logs take 1 / 2.8448 s/it, the printed train_steps_per_second)
        assert row["steady_global_steps_per_s"] == pytest.approx(steps_per_s, rel=1e-12)
        assert row["steady_status"] is None and row["steady_assumption"] == WHOLE_RUN_MEAN
        assert row["steady_assumption_note"] == WHOLE_RUN_MEAN_NOTE
    else:
        # examples/s alone make no global steps/s (no global batch): no steady rate, the reason said
        assert row["steady_global_steps_per_s"] is None and row["examples_per_s"] is None
        assert row["steady_status"] == "whole_run_only" and row["steady_reason"] == STEADY_REASONS["whole_run_only"]
    # no tier, no machine: nothing priced
    assert row["usd_per_1000_steps"] is None


def test_the_summary_and_the_report_say_where_the_mean_comes_from(tmp_path: Path) -> None:
    _summary(tmp_path, hf=HF)
    ds = tmp_path / "ds"
    table = CliRunner().invoke(app, ["summary", "-d", str(ds)], env={"COLUMNS": "2000"}).output
    said = " ".join(table.split())
    assert f"run hf: {WHOLE_RUN_MEAN_NOTE}" in said
    assert "run hf: mean stated by the log's closing summary over the whole run: 0.886 global steps/s" in said
    html = render_report(analyze(Dataset(ds), analysis_options(AnalysisOptions())))
    assert "closing summary&#39;s mean over the whole run stands for it" in html


def test_a_run_with_step_records_keeps_its_figures_beside_a_closing_summary(tmp_path: Path) -> None:
    # the same step lines with and without detectron2's closing lines (another real run's, appended): every figure
    # of the run with records is its records', the closing summary's 1.47 steps/s never replaces one
    rows = _summary(tmp_path, plain=D2_STEPS, ended=D2_STEPS + D2_END)
    plain, ended = rows["plain"], rows["ended"]
    assert ended["records"] == plain["records"] == 5
    assert ended["status"] == "ok" and plain["status"] == "unknown"
    for column in ("steady_global_steps_per_s", "mean_global_steps_per_s", "examples_per_s", "steady_status"):
        assert ended[column] == plain[column], column
    # detectron2's time: is seconds per iteration: 4 intervals of 20 iterations past warm-up, 80 / (20 x (0.3084 +
    # 0.3054 + 0.3071 + 0.3080) s) = 80 / 24.578 = 3.25494; the mean on the lines' clock 80 / 25 s = 3.2
    assert ended["steady_global_steps_per_s"] == pytest.approx(80 / 24.578, rel=1e-9)
    assert ended["mean_global_steps_per_s"] == pytest.approx(3.2, rel=1e-9)
    assert ended["mean_note"] is None and ended["stated_examples_per_s"] is None


def test_a_closing_summary_beyond_any_machine_states_no_rate(tmp_path: Path) -> None:
    # a garbled closing dict: 1e308 steps/s is beyond any machine (more than one step a microsecond, as a step
    # record's stated rate is judged): no mean and no steady rate from it
    log = (
        "{'train_runtime': 1e-300, 'train_samples_per_second': 1e308, 'train_steps_per_second': 1e308, "
        "'train_loss': 1.2, 'epoch': 3.0}\n"
    )
    row = _summary(tmp_path, run=log)["run"]
    assert row["steady_global_steps_per_s"] is None


def test_a_run_with_step_records_is_the_baseline_before_one_measured_by_its_summary_alone(tmp_path: Path) -> None:
    # neither is BASIC nor priced: the fewest training tasks would pick the closing summary's run (0 tasks); the
    # run measured by its records (detectron2's iterations 19-99: one task) is the baseline, 1.0 against itself
    rows = _summary(tmp_path, a_hf=HF, b_d2=D2_STEPS)
    assert {r["baseline_run_id"] for r in rows.values()} == {"b_d2"}
    assert rows["b_d2"]["speedup_vs_baseline"] == pytest.approx(1.0)
