"""The libraries behind ``tierscope predict`` and ``tierscope recommend``: an analysis in, frames out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from tierscope.analysis.configurations import configuration_runs, configurations, plan_rows
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.plan import Group, Recommendation, RecommendError, choose, frontier
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
    :func:`tierscope.analysis.scaling.scaling_points`; ``tasks`` counts the fitted group's devices: GPUs or
    TPU chips, else training tasks); ``fits``: both models; ``table``: :data:`tierscope.analysis.scaling.FIT_SCHEMA`;
    ``basis``: what the points count (``GPU``, ``TPU chip``, ``task``); ``accelerator``: the one accelerator type
    fitted (None: CPU tasks); ``left_out``: why the measured runs of other device types are not in the fit."""

    points: pl.DataFrame
    fits: list[ScalingFit]
    table: pl.DataFrame
    basis: str = "task"
    accelerator: str | None = None
    left_out: list[str] = field(default_factory=list)


def _excluded(summary: pl.DataFrame, basis: str, accelerator: str | None) -> str | None:
    """The measured runs of ``summary`` not of the fitted device type, in words: ``a, b (NVIDIA_TESLA_A100);
    c (CPU tasks)``; None: none."""
    measured = summary.filter(pl.col("steady_global_steps_per_s").is_not_null() & pl.col("device_basis").is_not_null())
    other = measured.filter(
        (pl.col("device_basis") != basis) | ~pl.col("accelerator").eq_missing(pl.lit(accelerator, pl.String))
    )
    groups = other.group_by("accelerator").agg(pl.col("run_id").sort()).sort("accelerator", nulls_last=True)
    said = [f"{', '.join(ids)} ({kind or 'CPU tasks'})" for kind, ids in groups.iter_rows()]
    return "; ".join(said) or None


def fit_group(summary: pl.DataFrame) -> tuple[str, str | None, list[str]]:
    """The one device type a scaling model is fitted over: ``(basis, accelerator, left_out)``.

    A model of throughput against devices speaks for one kind of device: a T4 and an A100 are not two sizes
    of one machine. Among the measured runs (a steady rate), the group with the most distinct device counts
    (then the most runs; CPU tasks first, then by name) is fitted; ``left_out`` says, per other group, which
    runs it has and what would make a fit of it (runs of at least two sizes)."""
    measured = summary.filter(pl.col("steady_global_steps_per_s").is_not_null() & pl.col("device_basis").is_not_null())
    if measured.height == 0:
        return "task", None, []
    groups = (
        measured.group_by("device_basis", "accelerator")
        .agg(sizes=pl.col("devices").n_unique(), runs=pl.len(), ids=pl.col("run_id").sort(),
             counts=pl.col("devices").unique().sort())
        .with_columns(cpu=pl.col("device_basis") != "task")
        .sort(["sizes", "runs", "cpu", "accelerator"], descending=[True, True, False, False], nulls_last=True)
    )  # fmt: skip
    chosen = groups.row(0, named=True)
    left = []
    for g in groups.slice(1).iter_rows(named=True):
        kind = g["accelerator"] or "CPU tasks"
        sizes = ", ".join(str(c) for c in g["counts"])
        left.append(
            f"{kind} runs ({', '.join(g['ids'])}; {sizes} {g['device_basis']}) are not in the fit over "
            f"{chosen['accelerator'] or 'CPU tasks'}: a prediction across accelerator types is not a fit; "
            f"measured {kind} runs of two sizes or more would make one of their own"
        )
    return chosen["device_basis"], chosen["accelerator"], left


def fit(
    summary: pl.DataFrame, runs: pl.DataFrame, samples: dict, seed: int, drawn: dict[str, np.ndarray] | None = None
) -> Scaling:
    """Fit Amdahl and the USL to the runs of ``summary`` (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`)
    of one device type (:func:`fit_group`), against their devices, with ``runs`` (the run index) and their
    steady interval rates ``samples`` (``{run_id: array}``, global steps/s) for the bootstrap seeded by
    ``seed`` (``drawn``: runs' bootstrap medians already drawn under ``seed``,
    :func:`tierscope.analysis.scaling.bootstrap_medians`)."""
    # a run that failed is evidence, not a measurement to plan from: its rate stays out of the fit
    if "status" in summary.columns:
        summary = summary.filter(pl.col("status").ne_missing("failed"))
    # a run kept apart from the baseline (another job's work, not compared with it) is no size of that job
    other_job = pl.lit(False)
    if {"baseline_note", "speedup_vs_baseline"} <= set(summary.columns):
        other_job = pl.col("baseline_note").is_not_null() & pl.col("speedup_vs_baseline").is_null()
    others = summary.filter(other_job)["run_id"].sort().to_list()
    summary = summary.filter(~other_job)
    basis, accelerator, left_out = fit_group(summary)
    if others:
        left_out.append(
            f"{', '.join(others)} {'is' if len(others) == 1 else 'are'} not in the fit: another job's work than "
            "the baseline's (its note says how), so no size of the same job"
        )
    if "device_basis" in summary.columns:
        group = summary.filter(
            (pl.col("device_basis") == basis) & pl.col("accelerator").eq_missing(pl.lit(accelerator, pl.String))
        ).with_columns(tasks=pl.col("devices"))
    else:
        group = summary
    points = scaling_points(group, runs)
    excluded = _excluded(summary, basis, accelerator) if "device_basis" in summary.columns else None
    fits = fit_scaling(points, samples, seed, drawn, runs, excluded, basis)
    return Scaling(points, fits, fit_table(fits), basis, accelerator, left_out)


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
    quotas: dict[str, float] | None = None,
    deadline_said: str | None = None,
) -> Recommendation:
    """The cheapest configuration reaching ``steps`` within ``deadline_h`` hours, or the fastest within
    ``budget_usd``: among the measured runs that did not fail first, then among the configurations predicted
    within the fitted device type; priced on the analysis' ``price_date`` (default today) in its region, none
    above ``quotas`` (:func:`tierscope.analysis.quotas.parse`); ``deadline_said``: the deadline in the user's
    words. Raises :class:`tierscope.analysis.plan.RecommendError` (see :func:`tierscope.analysis.plan.choose`)."""
    options = analysis.options
    unmeasured_why = analysis.summary.filter(pl.col("steady_reason").is_not_null() & (pl.col("status") != "failed"))
    if unmeasured_why.height == analysis.summary.height > 0:
        # nothing to plan from: each run's own reason (a zero rate, a rate beyond any machine), not a guess
        said = "; ".join(
            f"run {run}: {why}" for run, why in unmeasured_why.select("run_id", "steady_reason").iter_rows()
        )
        raise RecommendError(
            f"no run in the dataset has a steady-state rate to plan from ({said}); collect the step logs of a "
            "finished run first"
        )
    fitted = scaling(analysis)
    # the candidates measured are configurations: repeats of one job are one candidate at their mean rate
    configs = analysis.configurations if analysis.configurations is not None else configurations(analysis.summary)
    rows = plan_rows(analysis.summary, configs)
    table = frontier(
        rows,
        configuration_runs(analysis.runs, rows, analysis.summary),
        fitted.fits,
        steps,
        options.price_day(),
        options.region,
        options.price_table(),
        Group(fitted.basis, fitted.accelerator),
        quotas,
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
    fitted = scaling(analysis)
    model = best_fit(fitted.fits)
    unmeasured_runs = analysis.summary.filter(pl.col("steady_global_steps_per_s").is_null()).select("run_id", "status")
    # a fit against GPUs or TPU chips says nothing of a run's training tasks
    if model is None or unmeasured_runs.height == 0 or fitted.basis != "task":
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
