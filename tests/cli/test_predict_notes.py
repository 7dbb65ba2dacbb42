"""`tierscope predict`'s notes read as text: each prediction's caveat and verdict on lines of their
own (they came out as one note joined by newlines, which the notes' control-character escaping
printed as a literal ``\\x0a``), and the USL named in lower case in the middle of a sentence."""

from __future__ import annotations

import numpy as np
import polars as pl
from typer.testing import CliRunner

from tierscope.analysis.scaling import fit_model, prediction_caveat
from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def test_predict_prints_caveat_and_verdict_as_lines_not_escapes(dataset_2016: Dataset) -> None:
    # The 2016 Amdahl fit by hand: lambda = 4.6396, sigma = (5 x 4.6396 / 22.3894 - 1) / 4 = 0.0090305;
    # at 20 tasks 92.793 / 1.171580 = 79.20 global steps/s, 20 / 5 = 4.0x the largest measured.
    for fmt in ("table", "markdown"):
        result = runner.invoke(app, ["predict", "-d", str(dataset_2016.root), "--format", fmt], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        assert "\\x0a" not in result.output
        # each note starts a line of its own (the table wraps a long one at the terminal's width), in order
        starts = [
            "amdahl: 79.20 global steps/s at 20 tasks (no 95 % interval: exactly determined",
            "  Caveat: an unchecked extrapolation: 20 training tasks, 4.0x the largest measured (5)",
            "  Amdahl's law has 2 parameters and the data 2 task counts",
            "usl: The USL needs runs of at least 3 different task counts; the data has 2 (runs of 1 and 5 tasks)",
        ]
        lines = result.output.splitlines()
        at = [next(i for i, line in enumerate(lines) if line.startswith(start)) for start in starts]
        assert at == sorted(at)


def test_usl_caveat_names_the_usl_in_lower_case_mid_sentence() -> None:
    # Three sizes through X(N) = N / (1 + 0.1 (N - 1) + 0.01 N (N - 1)): X(1) = 1, X(2) = 2 / 1.12,
    # X(4) = 4 / 1.42; the USL's three parameters are exactly determined by them; 20 / 4 = 5.0x.
    sizes = [1, 2, 4]
    rates = [n / (1 + 0.1 * (n - 1) + 0.01 * n * (n - 1)) for n in sizes]
    runs = [f"r{n}" for n in sizes]
    points = pl.DataFrame(
        {"run_id": runs, "tasks": sizes, "steady_global_steps_per_s": rates},
        schema={"run_id": pl.String, "tasks": pl.UInt32, "steady_global_steps_per_s": pl.Float64},
    )
    fit = fit_model("usl", points, {r: np.full(5, x) for r, x in zip(runs, rates, strict=True)})
    assert prediction_caveat(fit, 20) == (
        "an unchecked extrapolation: 20 training tasks, 5.0x the largest measured (4), by the USL exactly "
        "determined by three runs (of 1, 2 and 4 tasks), which nothing checks"
    )
    assert prediction_caveat(fit, 4) == (
        "an unchecked prediction: the USL is exactly determined by three runs (of 1, 2 and 4 tasks), "
        "which nothing checks"
    )
    assert fit.message.startswith("The USL has 3 parameters and the data 3 task counts")


def test_a_prediction_at_one_task_says_task_not_tasks(dataset_2016: Dataset) -> None:
    # Amdahl at 1 task is lambda itself, 4.640 global steps/s (the BASIC run's steady rate); the
    # table's row said "at 1 task" and the note "at 1 tasks".
    result = runner.invoke(app, ["predict", "-d", str(dataset_2016.root), "--tasks", "1"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "amdahl: 4.64 global steps/s at 1 task (" in result.output
    assert "at 1 tasks" not in result.output
