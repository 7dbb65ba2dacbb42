"""Time and price to reach N steps on each tier, measured or predicted, and the recommendation.

A **candidate** is a measured run (its steady rate and interval) or a scale tier nobody
measured, predicted by the scaling model (:func:`tierscope.analysis.scaling.best_fit`) at the
tier's number of training tasks (the tier table, :mod:`tierscope.tiertable`). Only CPU tiers are predicted: the
model is throughput against task count on like machines, and says nothing about a GPU
or TPU. Every candidate is priced on one date (``price_date``, default today) in one
region, since the question is what a job would cost now, whenever the run was measured.

Time to N steps: ``startup_s + N / rate`` hours for a measured run (``startup_s``, the
warm-up the run's lead task lost, :func:`tierscope.analysis.throughput.run_throughput`), ``N / rate``
for a predicted tier (no start-up known). Its interval uses the rate's interval.
Price: hours x USD/hour (ML units x USD per ML unit-hour).

A predicted candidate carries its fit's status (``exactly determined``: nothing checks it, and
it has no interval) and caveat (:func:`tierscope.analysis.scaling.prediction_caveat`); a
recommendation resting on a caveated prediction says so before anything else
(:attr:`Recommendation.caveat`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from tierscope.analysis.cost import tier_costs
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.scaling import EXACT, ScalingFit, best_fit, prediction_caveat
from tierscope.analysis.topology import load_tiers, training_tasks
from tierscope.decimals import two_decimals
from tierscope.tiertable import ACCELERATOR

#: Columns of :func:`frontier`.
FRONTIER_SCHEMA: dict[str, pl.DataType] = {
    "candidate": pl.String(),  # the run id (measured) or the tier name (predicted)
    "tier": pl.String(),
    "basis": pl.String(),  # "measured" or "predicted (usl)" / "predicted (amdahl)"
    "tasks": pl.UInt32(),  # training tasks
    "global_steps_per_s": pl.Float64(),  # steady state, measured or predicted
    "rate_ci_low": pl.Float64(),
    "rate_ci_high": pl.Float64(),
    "ml_units_per_hour": pl.Float64(),  # on price_date; null: no price (a laptop)
    "usd_per_hour": pl.Float64(),
    "steps": pl.Int64(),  # the target N
    "hours": pl.Float64(),  # to reach N steps
    "hours_low": pl.Float64(),  # at the rate's interval high end
    "hours_high": pl.Float64(),  # at the rate's interval low end
    "ml_unit_hours": pl.Float64(),  # ML units consumed to reach N
    "usd": pl.Float64(),  # price to reach N steps
    "usd_low": pl.Float64(),
    "usd_high": pl.Float64(),
    "status": pl.String(),  # "measured", or the fit's status (fitted / exactly determined)
    "extrapolation": pl.Float64(),  # predicted: tasks / the largest measured task count
    "caveat": pl.String(),  # predicted: tierscope.analysis.scaling.prediction_caveat (null: none)
}


class RecommendError(AnalysisError, ValueError):
    """Neither or both of deadline and budget given, a target below one step, or no candidate can be priced or timed."""


def _to_steps(frame: pl.DataFrame, steps: int) -> pl.DataFrame:
    startup = pl.col("startup_s").fill_null(0.0) / 3600
    per_hour = pl.col("usd_per_hour")
    return frame.with_columns(
        steps=pl.lit(steps, pl.Int64),
        hours=startup + steps / pl.col("global_steps_per_s") / 3600,
        hours_low=startup + steps / pl.col("rate_ci_high") / 3600,
        hours_high=startup + steps / pl.col("rate_ci_low") / 3600,
    ).with_columns(
        ml_unit_hours=pl.col("hours") * pl.col("ml_units_per_hour"),
        usd=pl.col("hours") * per_hour,
        usd_low=pl.col("hours_low") * per_hour,
        usd_high=pl.col("hours_high") * per_hour,
    )


def frontier(
    summary: pl.DataFrame,
    runs: pl.DataFrame,
    fits: list[ScalingFit],
    steps: int,
    price_date: date,
    region: str = "us",
) -> pl.DataFrame:
    """Every candidate's time and price to ``steps`` global steps: :data:`FRONTIER_SCHEMA`, fastest first.

    ``summary``: the summary frame (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`; the measured runs
    with a steady rate); ``runs``: ``run_id, tier, topology`` (:func:`tierscope.analysis.summary.run_index`); ``fits``:
    :func:`tierscope.analysis.scaling.fit_scaling`. Raises :class:`RecommendError` for ``steps < 1``.
    """
    if steps < 1:
        raise RecommendError(f"steps must be at least 1, got {steps}")
    measured = summary.filter(pl.col("steady_global_steps_per_s").is_not_null())
    priced_now = tier_costs(
        runs.filter(pl.col("run_id").is_in(measured["run_id"].to_list())).with_columns(date=pl.lit(price_date)),
        price_date,
        region,
    )
    measured_rows = measured.join(priced_now.select("run_id", "ml_units_per_hour", "usd_per_hour"), on="run_id",
                                  how="left", suffix="_now").select(
        candidate="run_id",
        tier="tier",
        basis=pl.lit("measured"),
        tasks="tasks",
        global_steps_per_s="steady_global_steps_per_s",
        rate_ci_low=pl.coalesce("steady_ci_low", "steady_global_steps_per_s"),
        rate_ci_high=pl.coalesce("steady_ci_high", "steady_global_steps_per_s"),
        ml_units_per_hour="ml_units_per_hour_now",
        usd_per_hour="usd_per_hour_now",
        startup_s="startup_s",
        status=pl.lit("measured"),
    )  # fmt: skip
    frames = [measured_rows]
    model = best_fit(fits)
    if model is not None:
        frames.append(_predicted(model, measured, price_date, region))
    if not any(f.height for f in frames):
        return pl.DataFrame(schema=FRONTIER_SCHEMA)
    rows = _to_steps(pl.concat([f for f in frames if f.height], how="diagonal_relaxed"), steps)
    # measured rows have no extrapolation or caveat: without a predicted row (one task count, or every
    # predictable tier measured) those columns are missing, not null
    columns = [(pl.col(n) if n in rows.columns else pl.lit(None)).cast(t).alias(n) for n, t in FRONTIER_SCHEMA.items()]
    return rows.select(columns).sort("hours", "candidate", nulls_last=True)


def _predicted(model: ScalingFit, measured: pl.DataFrame, price_date: date, region: str) -> pl.DataFrame:
    tiers = load_tiers()
    cpu_only = tiers.group_by("tier").agg(accel=pl.col("machine_type").str.contains(ACCELERATOR).any())
    seen = {t.upper() for t in measured["tier"].drop_nulls().to_list()}
    sizes = (
        training_tasks(tiers, key="tier")
        .join(cpu_only, on="tier")
        .filter(~pl.col("accel") & ~pl.col("tier").is_in(list(seen)))
        .sort("tier")
    )
    if sizes.height == 0:
        return pl.DataFrame()
    costs = tier_costs(sizes.select(run_id="tier", tier="tier", date=pl.lit(price_date)), price_date, region).select(
        tier="run_id", ml_units_per_hour="ml_units_per_hour", usd_per_hour="usd_per_hour"
    )
    rows = []
    for tier, tasks in sizes.select("tier", "training_tasks").iter_rows():
        point, low, high = model.predict(tasks)
        rows.append(
            {
                "candidate": tier,
                "tier": tier,
                "basis": f"predicted ({model.model})",
                "tasks": tasks,
                "global_steps_per_s": point,
                "rate_ci_low": low,
                "rate_ci_high": high,
                "status": model.status,
                "extrapolation": model.extrapolation(tasks),
                "caveat": prediction_caveat(model, tasks),
            }
        )
    schema = {"rate_ci_low": pl.Float64, "rate_ci_high": pl.Float64, "caveat": pl.String}  # nulls when exact
    return pl.DataFrame(rows, schema_overrides=schema).join(costs, on="tier", how="left")


@dataclass
class Recommendation:
    """The chosen candidate (a :data:`FRONTIER_SCHEMA` row as a dict, or None) and why.

    ``caveat``: the sentence to say first when the choice rests on a prediction nothing checks
    or on an extrapolation (``Caveat: the choice rests on an unchecked extrapolation: ...``), else None.
    """

    choice: dict | None
    reason: str
    candidates: pl.DataFrame  # the frontier with ``meets`` (Boolean) and ``meets_at_interval`` added
    caveat: str | None = None


def choose(
    frontier_frame: pl.DataFrame,
    deadline_h: float | None = None,
    budget_usd: float | None = None,
    deadline_said: str | None = None,
) -> Recommendation:
    """The cheapest candidate meeting ``deadline_h`` hours, or the fastest within ``budget_usd``.
    ``deadline_said``: the deadline as the user gave it (``10m``), echoed in the reason (default: in hours).

    Chosen on the point estimates; ``meets_at_interval`` says whether the pessimistic end
    of the interval meets the constraint too. Candidates without a price are left out.
    Raises :class:`RecommendError` unless exactly one of the two is given, when no candidate
    has a rate (no time to N steps), or when no candidate has a price.
    """
    if (deadline_h is None) == (budget_usd is None):
        raise RecommendError("give exactly one of a deadline (hours) or a budget (USD)")
    if frontier_frame.filter(pl.col("hours").is_not_null()).height == 0:
        # Nothing to time: blaming the price table (below) would send the user the wrong way.
        raise RecommendError(
            "no run in the dataset has a steady-state rate to plan from (no step records, or too few); "
            "collect the step logs of a finished run first"
        )
    priced = frontier_frame.filter(pl.col("usd").is_not_null())
    if priced.height == 0:
        raise RecommendError(
            "no candidate has a price on that date and region (the 2016 beta table gives ML units only): "
            "pass --price-date 2018-01-01 or later"
        )
    if deadline_h is not None:
        marked = priced.with_columns(
            meets=pl.col("hours") <= deadline_h, meets_at_interval=pl.col("hours_high") <= deadline_h
        ).sort("usd", "hours")
        within = deadline_said or f"{_as_given(deadline_h)} h"
        wanted = f"reach {priced['steps'][0]:,} steps within {within}"
        pick_order = "cheapest"
    else:
        marked = priced.with_columns(
            meets=pl.col("usd") <= budget_usd, meets_at_interval=pl.col("usd_high") <= budget_usd
        ).sort("hours", "usd")
        wanted = f"reach {priced['steps'][0]:,} steps for at most USD {two_decimals(budget_usd)}"
        pick_order = "fastest"
    meeting = marked.filter(pl.col("meets"))
    if meeting.height == 0:
        return Recommendation(None, f"no measured or predicted tier can {wanted}", marked)
    choice = meeting.row(0, named=True)
    if choice["meets_at_interval"] is None:
        hedge = " (no interval: the prediction is exactly determined)"
    else:
        hedge = "" if choice["meets_at_interval"] else " (but not at the pessimistic end of its interval)"
    basis = f"{choice['basis']}, {EXACT}" if choice["status"] == EXACT else choice["basis"]
    reason = (
        f"{choice['candidate']} ({basis}) is the {pick_order} that can {wanted}: "
        f"{two_decimals(choice['hours'])} h, USD {two_decimals(choice['usd'])}{hedge}"
    )
    caveat = f"Caveat: the choice rests on {choice['caveat']}." if choice.get("caveat") else None
    return Recommendation(choice, reason, marked, caveat)


def _as_given(hours: float) -> str:
    """A deadline in hours as a user states one: ``1``, ``1.5``, ``1,234.5`` (two decimals at most, no
    trailing zeros), and below 0.1 with 3 significant digits (``--deadline 1s``: ``0.000278``, where ``:g``
    printed ``0.000277778``)."""
    text = two_decimals(hours)
    return text.rstrip("0").rstrip(".") if abs(hours) >= 0.1 and "." in text else text
