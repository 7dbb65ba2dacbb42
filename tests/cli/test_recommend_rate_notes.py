"""recommend's notes on the rates its rows are planned on: the predicted rows' share of their steady rate names
each measured run's own (sustained / steady), and a measured run planned on its steady rate for want of a
sustained one (no clock to time its life) is said to be, with why (tierscope.cli.output.predicted_basis)."""

from __future__ import annotations

import polars as pl

from tierscope.cli.output import left_out, predicted_basis


def _candidates(rows: list[tuple[str, str, float, str, float]]) -> pl.DataFrame:
    names = ["candidate", "basis", "global_steps_per_s", "rate_basis", "steady_global_steps_per_s"]
    return pl.DataFrame(rows, schema=names, orient="row")


def test_the_predicted_share_names_each_measured_runs_and_the_run_without_a_clock() -> None:
    candidates = _candidates(
        [
            ("t4", "measured", 0.93, "sustained", 1.0),  # 0.93 / 1.0 = 0.930
            ("a100", "measured", 3.94, "sustained", 4.0),  # 3.94 / 4.0 = 0.985
            ("x100", "measured", 2.0, "steady", 2.0),  # no clock: its steady rate, out of the median
            # the median of 0.930 and 0.985 = 0.9575: 8.0 predicted steady steps/s x 0.9575 = 7.66
            ("a100x2", "predicted (usl)", 7.66, "sustained", 8.0),
        ]
    )
    summary = pl.DataFrame({"run_id": ["t4", "a100", "x100"], "goodput_reason": [None, None, None]})
    shares = (
        "Predicted rows: the predicted steady rate x 0.958, the median share of their steady rate the measured runs "
        "sustained (a100 0.985, t4 0.930; checkpoints, evaluations, restarts, at most 1); "
    )
    steady = (
        "Planned on the steady rate, no sustained rate measured (x100: its log has no clock or elapsed time to time "
        "its life): checkpoints, evaluations and restarts are not in its hours, nor in the median share."
    )
    # the note names the column the table shows: 'hours at steady' is a --wide column, 'steady steps/s' is not
    assert predicted_basis(candidates, summary, wide=True) == [
        shares + "'hours at steady' is on the predicted steady rate.",
        steady,
    ]
    assert predicted_basis(candidates, summary) == [
        shares + "'steady steps/s' is the predicted steady rate (--wide shows the hours at it).",
        steady,
    ]


def test_a_run_whose_elapsed_clock_restarts_is_not_said_to_have_no_clock() -> None:
    # a resumed tqdm bar: its elapsed times start again at the restart, which summary's clock_missing says
    candidates = _candidates([("hf", "measured", 3.69, "steady", 3.69), ("bare", "measured", 2.0, "steady", 2.0)])
    cut = (
        "its elapsed times start again at its restarts and no timestamp joins its attempts: the time between "
        "them is unknown"
    )
    summary = pl.DataFrame(
        {"run_id": ["hf", "bare"], "goodput_reason": [None, None], "clock_missing": ["restarted", None]}
    )
    # the runs in their name order: bare, then hf
    assert predicted_basis(candidates, summary) == [
        "Planned on the steady rate, no sustained rate measured (bare: its log has no clock or elapsed time to "
        f"time its life; hf: {cut}): checkpoints, evaluations and restarts are not in their hours."
    ]


def test_a_run_whose_clock_contradicts_its_steps_says_so() -> None:
    # the near miss: a clock there is, but goodput is withheld for it; no predicted row: no share to name
    candidates = _candidates([("a", "measured", 2.0, "steady", 2.0), ("b", "measured", 1.8, "steady", 1.8)])
    reason = "the log's clock shows a lifetime of 0 s"
    summary = pl.DataFrame({"run_id": ["a", "b"], "goodput_reason": [reason, None]})
    assert predicted_basis(candidates, summary) == [
        f"Planned on the steady rate, no sustained rate measured (a: {reason}; b: its log has no clock or elapsed "
        "time to time its life): checkpoints, evaluations and restarts are not in their hours."
    ]


def test_every_run_sustained_says_nothing_of_the_steady_rate() -> None:
    candidates = _candidates([("t4", "measured", 0.93, "sustained", 1.0)])
    assert predicted_basis(candidates) == []


def test_a_measured_run_with_no_steady_rate_is_named_as_not_planned() -> None:
    # hf: a Hugging Face log of loss dicts and its closing summary: a whole-run mean, no steady rate, so no
    # candidate; warm: a config's run still speeding up. Both are named with why; t4 is a candidate: not named.
    candidates = _candidates([("t4", "measured", 0.93, "sustained", 1.0)])
    summary = pl.DataFrame(
        {
            "run_id": ["t4", "hf", "warm"],
            "config": [None, None, "a100x8"],
            "steady_global_steps_per_s": [1.0, None, None],
            "steady_reason": [None, "only the log's closing summary states a speed", None],
        }
    )
    assert left_out(candidates, summary) == [
        "Not planned, no steady rate: hf (only the log's closing summary states a speed); warm (no steady rate)."
    ]
    assert left_out(candidates, summary.head(1)) == []
