"""The libraries behind ``tierscope predict`` and ``tierscope recommend``: an analysis in, frames out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.plan import Recommendation, choose, frontier
from tierscope.analysis.scaling import (
    EXTRAPOLATION_LIMIT,
    ScalingFit,
    best_fit,
    fit_scaling,
    fit_table,
    predictions,
    scaling_points,
)
from tierscope.analysis.topology import run_topology, training_tasks

if TYPE_CHECKING:
    from tierscope.analysis.analyze import Analysis


class TasksError(AnalysisError, ValueError):
    """A prediction asked for fewer than one training task."""


@dataclass
class Scaling:
    """``points``: :data:`tierscope.analysis.scaling.POINTS_SCHEMA` (the laptop excluded,
    :func:`tierscope.analysis.scaling.scaling_points`); ``fits``: both models; ``table``:
    :data:`tierscope.analysis.scaling.FIT_SCHEMA`."""

    points: pl.DataFrame
    fits: list[ScalingFit]
    table: pl.DataFrame


def fit(
    summary: pl.DataFrame, runs: pl.DataFrame, samples: dict, seed: int, drawn: dict[str, np.ndarray] | None = None
) -> Scaling:
    """Fit Amdahl and the USL to the runs of ``summary`` (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`)
    with ``runs`` (the run index) and their steady interval rates ``samples`` (``{run_id: array}``,
    global steps/s) for the bootstrap seeded by ``seed`` (``drawn``: runs' bootstrap medians already
    drawn under ``seed``, :func:`tierscope.analysis.scaling.bootstrap_medians`)."""
    points = scaling_points(summary, runs)
    fits = fit_scaling(points, samples, seed, drawn)
    return Scaling(points, fits, fit_table(fits))


def scaling(analysis: Analysis) -> Scaling:
    """The analysis' fits (computed by :func:`tierscope.analysis.analyze` with ``fits=True``, else now
    from what it holds; the dataset is not read again, nor a bootstrap the summary drew redrawn)."""
    if analysis.scaling is None:
        figures, seed = analysis.figures, analysis.options.seed
        drawn = figures.draws if figures.draws_seed == seed else None
        analysis.scaling = fit(analysis.summary, analysis.runs, figures.samples, seed, drawn)
    return analysis.scaling


def predict(analysis: Analysis, tasks: int) -> tuple[Scaling, pl.DataFrame]:
    """The fits and the predicted throughput at ``tasks`` training tasks
    (:data:`tierscope.analysis.scaling.PREDICTION_SCHEMA`, one row per model).
    Raises :class:`TasksError` for ``tasks < 1``."""
    if tasks < 1:
        raise TasksError(f"--tasks must be at least 1, got {tasks}")
    fitted = scaling(analysis)
    return fitted, predictions(fitted.fits, [tasks])


def recommend(
    analysis: Analysis,
    steps: int,
    deadline_h: float | None = None,
    budget_usd: float | None = None,
    deadline_said: str | None = None,
) -> Recommendation:
    """The cheapest tier reaching ``steps`` within ``deadline_h`` hours, or the fastest within
    ``budget_usd``, among measured runs and predicted tiers, priced on the analysis'
    ``price_date`` (default today) in its region; ``deadline_said``: the deadline in the user's words.
    Raises :class:`tierscope.analysis.plan.RecommendError`
    (see :func:`tierscope.analysis.plan.choose`)."""
    options = analysis.options
    table = frontier(
        analysis.summary, analysis.runs, scaling(analysis).fits, steps, options.price_day(), options.region
    )
    return choose(table, deadline_h, budget_usd, deadline_said)


#: Columns of :func:`unmeasured`.
UNMEASURED_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tier": pl.String(),
    "status": pl.String(),  # the run's: failed / empty
    "tasks": pl.UInt32(),  # training tasks of its topology (manifest, else tier table)
    "model": pl.String(),  # amdahl / usl: the model predicting (scaling.best_fit)
    "fit_status": pl.String(),  # fitted / exactly determined
    "fit_runs": pl.UInt32(),  # runs behind the fit
    "fit_sizes": pl.List(pl.UInt32()),  # their task counts
    "global_steps_per_s": pl.Float64(),  # the prediction at ``tasks``
    "ci_low": pl.Float64(),  # with the model's error (null: exactly determined)
    "ci_high": pl.Float64(),
    "noise_ci_low": pl.Float64(),  # measurement noise alone
    "noise_ci_high": pl.Float64(),
    "extrapolation": pl.Float64(),  # tasks / the largest measured task count
    "beyond_limit": pl.Boolean(),  # extrapolation > EXTRAPOLATION_LIMIT
    "settling_tasks": pl.UInt32(),  # a task count between the largest measured and ``tasks`` to measure next
}


def unmeasured(analysis: Analysis) -> pl.DataFrame:
    """What the runs without a steady rate (a failed PREMIUM_1) would have done: :data:`UNMEASURED_SCHEMA`,
    one row per such run whose topology gives its training tasks, when a model could be fitted.

    ``settling_tasks`` is the geometric middle of the largest measured task count and the run's
    (``round(sqrt(max x tasks))``): one more measured size there leaves a point for the model to be
    checked against (leave-one-out) and lets the USL be fitted, halfway (in ratio) to the prediction.
    """
    model = best_fit(scaling(analysis).fits)
    unmeasured_runs = analysis.summary.filter(pl.col("steady_global_steps_per_s").is_null()).select("run_id", "status")
    if model is None or unmeasured_runs.height == 0:
        return pl.DataFrame(schema=UNMEASURED_SCHEMA)
    sized = training_tasks(run_topology(analysis.runs.join(unmeasured_runs, on="run_id", how="semi")))
    rows = []
    for run_id, tier, status, tasks in (
        analysis.runs.join(unmeasured_runs, on="run_id")
        .join(sized, on="run_id")
        .sort("run_id")
        .select("run_id", "tier", "status", "training_tasks")
        .iter_rows()
    ):
        point, low, high = model.predict(tasks)
        noise_low, noise_high = model.noise_interval(tasks)
        ratio = model.extrapolation(tasks)
        rows.append(
            {
                "run_id": run_id, "tier": tier, "status": status, "tasks": tasks, "model": model.model,
                "fit_status": model.status, "fit_runs": model.runs, "fit_sizes": model.sizes,
                "global_steps_per_s": point, "ci_low": low, "ci_high": high,
                "noise_ci_low": noise_low, "noise_ci_high": noise_high, "extrapolation": ratio,
                "beyond_limit": ratio is not None and ratio > EXTRAPOLATION_LIMIT,
                "settling_tasks": round((max(model.sizes) * tasks) ** 0.5),
            }
        )  # fmt: skip
    return pl.DataFrame(rows, schema=UNMEASURED_SCHEMA)
