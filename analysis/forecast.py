"""The libraries behind ``tierscope predict`` and ``tierscope recommend``: an analysis in, frames out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.plan import Recommendation, choose, frontier
from tierscope.analysis.scaling import ScalingFit, fit_scaling, fit_table, predictions, scaling_points

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


def fit(summary: pl.DataFrame, runs: pl.DataFrame, samples: dict, seed: int) -> Scaling:
    """Fit Amdahl and the USL to the runs of ``summary`` (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`)
    with ``runs`` (the run index) and their steady interval rates ``samples`` (``{run_id: array}``,
    global steps/s) for the bootstrap seeded by ``seed``."""
    points = scaling_points(summary, runs)
    fits = fit_scaling(points, samples, seed)
    return Scaling(points, fits, fit_table(fits))


def scaling(analysis: Analysis) -> Scaling:
    """The analysis' fits (computed by :func:`tierscope.analysis.analyze` with ``fits=True``, else now
    from what it holds; the dataset is not read again)."""
    if analysis.scaling is None:
        analysis.scaling = fit(analysis.summary, analysis.runs, analysis.figures.samples, analysis.options.seed)
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
    analysis: Analysis, steps: int, deadline_h: float | None = None, budget_usd: float | None = None
) -> Recommendation:
    """The cheapest tier reaching ``steps`` within ``deadline_h`` hours, or the fastest within
    ``budget_usd``, among measured runs and predicted tiers, priced on the analysis'
    ``price_date`` (default today) in its region. Raises :class:`tierscope.analysis.plan.RecommendError`
    (see :func:`tierscope.analysis.plan.choose`)."""
    options = analysis.options
    table = frontier(
        analysis.summary, analysis.runs, scaling(analysis).fits, steps, options.price_day(), options.region
    )
    return choose(table, deadline_h, budget_usd)
