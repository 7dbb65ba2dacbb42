"""The caveat of a prediction left without an interval names the task count whose leaving out
breaks the model, and the runs that remain: "the runs left ... without the run left out" said neither."""

from __future__ import annotations

from tests.analysis.test_forecast_intervals import _points
from tierscope.analysis.scaling import fit_model, prediction_caveat


def test_the_caveat_names_the_left_out_and_the_remaining_task_counts() -> None:
    # 1 task 10/s, 2 tasks 20/s, 4 tasks 8/s (test_forecast_intervals has the fits by hand): only the
    # refit without the 1-task run is at its bound (~1e12 global steps/s at 1 task, over the ceiling
    # 1000 x 1 x 10 = 10,000); without 2 (sigma 4/3) or 4 (10 N) the refits give 10 at 1 task.
    caveat = prediction_caveat(fit_model("amdahl", *_points([1, 2, 4], [10.0, 20.0, 8.0])), 1)
    assert caveat is not None
    assert caveat.startswith(
        "no interval at 1 training task: a leave-one-out refit of Amdahl's law, leaving out the runs of 1 task, "
        "predicts more than 1000 times linear scaling from the fastest per-task rate measured (10 global steps/s): "
        "the runs of 2 and 4 tasks fall off faster than the model allows"
    )
    assert caveat.endswith("and the model does not hold without the runs of 1 task")
