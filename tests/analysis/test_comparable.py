"""A dataset holding unrelated jobs (analysis/comparable.py): a run whose logs show other work than the baseline's (read
by other formats, or counting tokens where the baseline counts examples) gets no speedup or efficiency, and a note
says why and how to compare it anyway; runs of one job are compared as before, and ``--baseline`` compares all."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.analysis.test_interval_clock import KERAS
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.comparable import unlike
from tierscope.cli import app
from tierscope.dataset.store import Dataset

DEMO = Path(__file__).parents[2] / "src" / "tierscope" / "data" / "cloudml-tiers-2016"


def _dataset(root: Path, *names: str) -> Dataset:
    """The 2016 demo's logs ``names`` (``basic``, ``local``...) and ``keras`` (:data:`KERAS`), each its own run."""
    ds = root / "ds"
    (root / "keras.log").write_text(KERAS)
    paths = [str(root / "keras.log") if n == "keras" else str(DEMO / f"{n}.log") for n in names]
    result = CliRunner().invoke(app, ["collect", "files", *paths, "-d", str(ds), "-q", "--settle", "0"])
    assert result.exit_code == 0, result.output
    return Dataset(ds)


def _rows(ds: Dataset, baseline: str | None = None) -> dict[str, dict]:
    summary = analyze(ds, AnalysisOptions(baseline=baseline)).summary
    return {r["run_id"]: r for r in summary.iter_rows(named=True)}


def test_a_run_read_by_another_format_is_not_compared_with_the_baseline(tmp_path: Path) -> None:
    rows = _rows(_dataset(tmp_path, "basic", "keras"))
    # neither is priced, both one task: the baseline is the first by run id, basic (steady 4.640 global steps/s)
    assert rows["basic"]["baseline_run_id"] == "basic" and rows["basic"]["speedup_vs_baseline"] == pytest.approx(1.0)
    keras = rows["keras"]
    # its own figures stand: 2 epochs past the first at 261 and 265 ms a step, 2 / (0.261 + 0.265) = 3.80228 steps/s
    assert keras["steady_global_steps_per_s"] == pytest.approx(2 / 0.526)
    # but 3.80 / 4.64 = 0.82 would compare a Keras model's step with the 2016 MNIST model's: no figure of the kind
    for figure in ("speedup_vs_baseline", "speedup_ci_low", "scaling_efficiency_tasks", "scaling_efficiency_devices"):
        assert keras[figure] is None, figure
    assert keras["baseline_run_id"] is None
    assert keras["baseline_note"] == (
        "not compared with basic: its records were read as keras, the baseline's as cloudml; another job's work, it "
        "seems (--baseline basic compares them)"
    )
    assert rows["basic"]["baseline_note"] is None


def test_runs_read_by_the_same_format_are_compared_as_before(tmp_path: Path) -> None:
    # near-miss: the laptop and BASIC ran one job, both logs cloudml: 18.838 / 4.640 = 4.06 (the README's table)
    rows = _rows(_dataset(tmp_path, "basic", "local"))
    assert rows["local"]["speedup_vs_baseline"] == pytest.approx(4.06, abs=0.005)
    assert rows["local"]["baseline_note"] is None


def test_a_baseline_the_user_names_compares_every_run_and_says_how_they_differ(tmp_path: Path) -> None:
    rows = _rows(_dataset(tmp_path, "basic", "keras"), baseline="basic")
    # 3.80228 / 4.63964 = 0.8195 (basic: 9 steady intervals, README)
    assert rows["keras"]["speedup_vs_baseline"] == pytest.approx(
        rows["keras"]["steady_global_steps_per_s"] / rows["basic"]["steady_global_steps_per_s"]
    )
    assert rows["keras"]["speedup_vs_baseline"] == pytest.approx(0.8195, abs=5e-4)
    assert rows["keras"]["baseline_note"] == (
        "compared with basic as --baseline asks, though its records were read as keras, the baseline's as cloudml"
    )


def test_the_summary_says_why_under_its_table(tmp_path: Path) -> None:
    _dataset(tmp_path, "basic", "keras")
    result = CliRunner().invoke(app, ["summary", "-d", str(tmp_path / "ds")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "run keras: not compared with basic: its records were read as keras" in result.output


def test_examples_counted_in_other_units_keep_runs_apart() -> None:
    # tokens/s against images/s: no one job; a run whose logs state no examples/s says nothing of it (null)
    frame = pl.DataFrame(
        {"log_formats": [["grammar"], ["grammar"], ["grammar"]], "log_examples_unit": ["tokens", None, "examples"]},
        schema={"log_formats": pl.List(pl.String), "log_examples_unit": pl.String},
    )
    said = frame.select(unlike({"log_formats": ["grammar"], "log_examples_unit": "examples"})).to_series().to_list()
    assert said == ["its examples/s count tokens, the baseline's examples", None, None]


def test_recommend_plans_only_the_baselines_job(tmp_path: Path) -> None:
    from tests.analysis.test_whole_run_mean import D2_STEPS

    ds = str(tmp_path / "ds")
    (tmp_path / "keras.log").write_text(KERAS)
    (tmp_path / "d2.log").write_text(D2_STEPS)
    runner = CliRunner()
    for log, hardware in (("keras.log", ["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:1"]),
                          ("d2.log", ["--machine", "a2-highgpu-1g"])):  # fmt: skip
        assert runner.invoke(app, ["collect", "files", str(tmp_path / log), "-d", ds, "-q", *hardware]).exit_code == 0
    result = runner.invoke(
        app, ["recommend", "-d", ds, "--steps", "100000", "--deadline", "72h", "--price-date", "2026-12-01"],
        terminal_width=200,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    # the T4 (USD 0.379998 + 0.35 an hour) is the baseline, cheapest an hour: 100,000 steps / 3.80228 steps/s (its
    # sustained rate, the steady one: every epoch validated) = 26,300 s = 7.31 h, x USD 0.729998 = USD 5.33
    assert (
        "keras (measured) is the cheapest measured run that can reach 100,000 steps within 72h: 7.31 h, USD 5.33"
        in (said)
    )
    # detectron2's iterations are no steps of the Keras model: not a candidate, and said so
    assert not any(line.startswith("d2 ") for line in result.output.splitlines())
    assert (
        "Not planned: run d2 is not compared with keras: its records were read as grammar, the baseline's as keras"
        in (said)
    )
