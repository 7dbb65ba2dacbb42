"""Runs whose global steps process different numbers of examples: the batch each log states reaches the
summary, which compares them on examples/s, plans a target of N steps as N steps of the baseline's work,
and the report's headline ranks them the same way.

The logs are written here in the shapes the tools print: Hugging Face Trainer's banner and tqdm bar
(huggingface/transformers src/transformers/trainer.py, read 2026-12-06) and an absl-logged JAX loop. Their
rates are exact (a step every 0.25 s, 1/3.6 s, 0.4 s) so that each expected figure is worked out by hand."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.analysis import AnalysisOptions, analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.reports.headline import headline
from tierscope.reports.i18n import Catalog


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes:02d}:{rest:02d}"


def _trainer_log(path: Path, per_device: int, total_batch: int, rate: float, every: int, steps: int) -> None:
    """A Hugging Face Trainer log: its banner, then a tqdm bar every ``every`` steps at ``rate`` it/s, each
    on a whole second (``every / rate`` is whole)."""
    lines = [
        "***** Running training *****",
        f"  Instantaneous batch size per device = {per_device}",
        f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch}",
        f"  Total optimization steps = {steps:,}",
    ]
    for n in range(every, steps + 1, every):
        left = _clock((steps - n) / rate)
        lines.append(f" {100 * n // steps:3d}%|#         | {n}/{steps} [{_clock(n / rate)}<{left}, {rate:5.2f}it/s]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _jax_log(path: Path, global_batch: int, rate: float, every: int, steps: int) -> None:
    """An absl-logged JAX loop stating its global batch, then ``steps_per_sec`` every ``every`` steps."""
    start = datetime(2026, 11, 22, 10, 12, 5)

    def line(at: datetime, where: str, message: str) -> str:
        return f"I{at:%m%d %H:%M:%S.%f} 140234871 {where}] {message}"

    lines = [line(start, "train.py:120", f"Global batch size {global_batch} (32 per device x 8 devices)")]
    for n in range(every, steps + 1, every):
        lines.append(line(start + timedelta(seconds=n / rate), "logging_writer.py:48", f"[{n}] steps_per_sec={rate:f}"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def user_runs(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """One A100 at 4.0 steps/s x 32, four A100s (torchrun, one task) at 3.6 x 128, a v5e-8 at 2.5 x 256; the
    manifest states no batch: each comes from its log."""
    root = tmp_path_factory.mktemp("batches")
    _trainer_log(root / "a100x1.log", 32, 32, 4.0, 4, 400)
    _trainer_log(root / "a100x4.log", 32, 128, 3.6, 18, 360)
    _jax_log(root / "v5e8.log", 256, 2.5, 5, 300)
    (root / "runs.toml").write_text(
        '[[run]]\nid = "a100x1"\nfiles = ["a100x1.log"]\nmachine = "a2-highgpu-1g"\n\n'
        '[[run]]\nid = "a100x4"\nfiles = ["a100x4.log"]\nmachine = "a2-highgpu-4g"\n\n'
        '[[run]]\nid = "v5e8"\nfiles = ["v5e8.log"]\ntpu = "v5litepod-8"\n',
        encoding="utf-8",
    )
    out = root / "ds"
    done = CliRunner().invoke(
        app, ["collect", "files", "--manifest", str(root / "runs.toml"), "-d", str(out), "--settle", "0", "-q"]
    )
    assert done.exit_code == 0, done.output
    return Dataset(out)


def _rows(dataset: Dataset, steps: int | None = None) -> dict[str, dict[str, object]]:
    summary = analyze(dataset, AnalysisOptions(baseline="a100x1", steps=steps)).summary
    return {r["run_id"]: r for r in summary.iter_rows(named=True)}


def test_the_batch_each_log_states_makes_the_comparison_one_of_examples(user_runs: Dataset) -> None:
    rows = _rows(user_runs)
    # each run's batch is the examples its one task processes a step: the banner's total, the JAX global batch
    assert [rows[r]["batch_size"] for r in ("a100x1", "a100x4", "v5e8")] == [32.0, 128.0, 256.0]
    # a100x1: 4.0 steps/s x 32 = 128 examples/s; a100x4: 3.6 x 128 = 460.8; v5e8: 2.5 x 256 = 640
    assert rows["a100x1"]["examples_per_s"] == pytest.approx(128.0, rel=1e-3)
    assert rows["a100x4"]["examples_per_s"] == pytest.approx(460.8, rel=1e-3)
    assert rows["v5e8"]["examples_per_s"] == pytest.approx(640.0, rel=1e-3)
    # speedup on examples/s: 460.8 / 128 = 3.6 (per step it would read 3.6 / 4.0 = 0.90); per device
    # 3.6 / (4 GPUs / 1) = 0.90; v5e8: 640 / 128 = 5.0 (no efficiency per device: a TPU chip is no A100)
    assert rows["a100x4"]["speedup_basis"] == "examples/s"
    assert rows["a100x4"]["speedup_vs_baseline"] == pytest.approx(3.6, rel=1e-3)
    assert rows["a100x4"]["scaling_efficiency_devices"] == pytest.approx(0.9, rel=1e-3)
    assert rows["v5e8"]["speedup_vs_baseline"] == pytest.approx(5.0, rel=1e-3)
    assert rows["v5e8"]["scaling_efficiency_devices"] is None
    # a million examples on v5e8: 9.60 USD/h (8 chips x 1.20) / (640 x 3,600) x 10^6 = 4.1667 USD
    assert rows["v5e8"]["usd_per_million_examples"] == pytest.approx(9.60 / (640 * 3600) * 1e6, rel=1e-3)


def test_a_target_of_steps_is_steps_of_the_baselines_work(user_runs: Dataset) -> None:
    rows = _rows(user_runs, steps=6000)
    # 6,000 steps of 32 examples = 192,000 examples: 192,000 / 128 = 1,500 steps on a100x4, / 256 = 750 on v5e8
    assert {r: rows[r]["target_steps"] for r in rows} == {"a100x1": 6000, "a100x4": 1500, "v5e8": 750}
    assert {rows[r]["target_examples"] for r in rows} == {192000.0}
    # the time follows the run's own steps: 750 / 2.5 steps/s = 300 s of steady stepping on v5e8
    assert rows["v5e8"]["steady_hours_to_target"] * 3600 == pytest.approx(300.0 + (rows["v5e8"]["startup_s"] or 0.0))
    # a100x1: 6,000 / 4.0 = 1,500 s
    assert rows["a100x1"]["steady_hours_to_target"] * 3600 == pytest.approx(
        1500.0 + (rows["a100x1"]["startup_s"] or 0.0), rel=1e-3
    )


def test_recommend_plans_each_candidates_own_steps(user_runs: Dataset) -> None:
    done = CliRunner().invoke(
        app,
        ["recommend", "-d", str(user_runs.root), "--steps", "6000", "--budget", "100", "--baseline", "a100x1",
         "--price-date", "2026-12-01", "--json"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    steps = {c["candidate"]: c["steps"] for c in doc["candidates"]}
    assert steps == {"a100x1": 6000, "a100x4": 1500, "v5e8": 750}
    # v5e8: 750 steps / 2.5 steps/s = 300 s = 0.0833 h at 9.60 USD/h (8 chips x 1.20) = 0.80 USD, the fastest
    # (a100x1: 6,000 / 4.0 = 1,500 s; a100x4: 1,500 / 3.6 = 417 s)
    assert doc["choice"]["candidate"] == "v5e8"
    assert doc["choice"]["steady_global_steps_per_s"] == pytest.approx(2.5, rel=1e-3)
    assert doc["choice"]["usd"] == pytest.approx(doc["choice"]["hours"] * 9.60)
    assert "6,000 steps of the baseline's work (192,000 examples)" in doc["reason"]
    table = CliRunner().invoke(
        app, ["recommend", "-d", str(user_runs.root), "--steps", "6000", "--budget", "100", "--baseline", "a100x1"]
    )
    said = " ".join(table.output.split())
    assert "Basis examples/s: 6,000 steps of a100x1 (192,000 examples)" in said
    assert (
        "Prices of region us-central1: Compute Engine on-demand list prices (Vertex AI custom training bills more"
        in said
    )


def test_the_summary_table_shows_each_runs_own_steps_and_the_basis(user_runs: Dataset) -> None:
    done = CliRunner().invoke(
        app, ["summary", "-d", str(user_runs.root), "--baseline", "a100x1", "--steps", "6000", "-w"]
    )
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "steps to N" in said
    assert "N is work, not steps: 6,000 steps of a100x1 = 192,000 examples" in said
    assert "Prices: Compute Engine on-demand list prices (Vertex AI custom training bills more" in said


def test_the_headline_ranks_on_examples_where_the_summary_does(user_runs: Dataset) -> None:
    analysis = analyze(user_runs, AnalysisOptions(baseline="a100x1", steps=6000))
    sentences = headline(analysis.summary, None, 6000, Catalog("en"))
    # fastest by examples/s: v5e8 at 640 examples/s, 640 / 128 = 5.00x a100x1 (by steps/s a100x1's 4.0 would win)
    assert sentences[0].startswith("Fastest: v5e8 ")
    assert "at 640 examples/s, 5.00× the baseline a100x1 (compared on examples/s" in sentences[0]
    # USD per million examples: v5e8 9.60 / (640 x 3,600) x 10^6 = 4.17; a100x1 3.673385 / (128 x 3,600) x 10^6
    # = 7.97; a100x4 (4 A100s: 14.69 USD/h) / (460.8 x 3,600) x 10^6 = 8.86
    assert sentences[1].startswith("Cheapest per example: v5e8 ")
    assert "at 4.17 USD per million examples" in sentences[1]
    assert any("Compute Engine on-demand list prices" in s for s in sentences)


def test_a_declared_batch_the_log_contradicts_is_named() -> None:
    import polars as pl

    from tierscope.analysis.summary import batch_notes

    runs = pl.DataFrame({"run_id": ["a100x1", "a100x4", "old"], "batch_size": [32, 32, None]})
    logged = pl.DataFrame({"run_id": ["a100x1", "a100x4", "old"], "log_batch_size": [32.0, 128.0, 64.0]})
    # a100x4 declares 32 per GPU where its log shows 128 a step (4 x 32): named; a100x1 agrees; "old" declares none
    notes = batch_notes(runs, logged)
    assert [run for run, _ in notes] == ["a100x4"]
    assert notes[0][1].startswith("its declared batch_size 32 is not the 128 examples a step its log shows")


def test_the_reports_hours_to_n_name_each_runs_own_steps(user_runs: Dataset, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = CliRunner().invoke(
        app, ["report", "-d", str(user_runs.root), "-o", str(out), "--baseline", "a100x1", "--steps", "6000"]
    )
    assert done.exit_code == 0, done.output
    page = out.read_text(encoding="utf-8")
    # 6,000 x 32 / 128 = 1,500 and 6,000 x 32 / 256 = 750 (a100x1's own are N: not repeated)
    assert "its own 1,500 steps: the same examples" in page and "its own 750 steps" in page
    assert "its own 6,000 steps" not in page
    assert "does the work of 6,000 steps of a100x1 (192,000 examples)" in page
