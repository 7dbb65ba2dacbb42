"""The libraries behind ``tierscope predict`` and ``tierscope recommend``: dataset in, frames out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from tierscope.analysis.batches import interval_figures
from tierscope.analysis.plan import Recommendation, choose, frontier
from tierscope.analysis.scaling import ScalingFit, fit_scaling, fit_table, predictions, scaling_points
from tierscope.analysis.summary import SummaryOptions, run_index, summary
from tierscope.dataset.store import Dataset


@dataclass
class Scaling:
    """``points``: :data:`tierscope.analysis.scaling.POINTS_SCHEMA`; ``fits``: both models;
    ``table``: :data:`tierscope.analysis.scaling.FIT_SCHEMA`; ``summary``:
    :func:`tierscope.analysis.summary.summary`."""

    points: pl.DataFrame
    fits: list[ScalingFit]
    table: pl.DataFrame
    summary: pl.DataFrame
    runs: pl.DataFrame


def scaling(dataset: Dataset, options: SummaryOptions | None = None) -> Scaling:
    """Fit Amdahl and the USL to the dataset's runs (the laptop excluded, :func:`scaling_points`)."""
    options = options or SummaryOptions()
    figures = interval_figures(dataset.scan("steps"), options.seed)
    frame = summary(dataset, options, figures=figures)
    runs = run_index(dataset)
    points = scaling_points(frame, runs)
    fits = fit_scaling(points, figures.samples, options.seed)
    return Scaling(points, fits, fit_table(fits), frame, runs)


def predict(dataset: Dataset, tasks: int, options: SummaryOptions | None = None) -> tuple[Scaling, pl.DataFrame]:
    """The fits and the predicted throughput at ``tasks`` training tasks
    (:data:`tierscope.analysis.scaling.PREDICTION_SCHEMA`, one row per model).
    Raises :class:`ValueError` for ``tasks < 1``."""
    if tasks < 1:
        raise ValueError(f"--tasks must be at least 1, got {tasks}")
    fitted = scaling(dataset, options)
    return fitted, predictions(fitted.fits, [tasks])


def recommend(
    dataset: Dataset,
    steps: int,
    deadline_h: float | None = None,
    budget_usd: float | None = None,
    options: SummaryOptions | None = None,
) -> Recommendation:
    """The cheapest tier reaching ``steps`` within ``deadline_h`` hours, or the fastest within
    ``budget_usd``, among measured runs and predicted tiers, priced on ``options.price_date``
    (default today). Raises :class:`tierscope.analysis.plan.RecommendError`
    (see :func:`tierscope.analysis.plan.choose`)."""
    options = options or SummaryOptions()
    fitted = scaling(dataset, options)
    when = options.price_date or datetime.now(UTC).date()
    table = frontier(fitted.summary, fitted.runs, fitted.fits, steps, when, options.region)
    return choose(table, deadline_h, budget_usd)
