"""One row per run: status, throughput, cost and speedup. The library behind ``tierscope summary``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

import polars as pl

from analysis.cost import tier_costs
from analysis.throughput import run_throughput
from collector.dataset import Dataset
from collector.schema import conform

#: The columns of :func:`summary`, in order, with their dtypes and meaning.
SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tier": pl.String(),
    "status": pl.String(),  # ok / failed / empty (no step records and no failure)
    "records": pl.UInt32(),  # step records stored for the run
    "tasks": pl.UInt32(),  # distinct training tasks (master/chief, workers) that logged
    "steady_global_steps_per_s": pl.Float64(),  # median interval rate, warm-up excluded
    "mean_global_steps_per_s": pl.Float64(),  # pooled steps / seconds, warm-up excluded
    "last_step": pl.Int64(),  # highest global step logged
    "ml_units_per_hour": pl.Float64(),  # from the price table on price_date
    "usd_per_hour": pl.Float64(),  # ml_units_per_hour x USD per ML unit-hour in the region
    "steps_per_ml_unit_hour": pl.Float64(),  # steady rate x 3600 / ML units per hour
    "usd_per_1000_steps": pl.Float64(),  # USD per hour / (steady rate x 3600) x 1000
    "speedup_vs_baseline": pl.Float64(),  # steady rate / the baseline run's steady rate
    "scaling_efficiency_tasks": pl.Float64(),  # speedup / (tasks / baseline tasks)
    "scaling_efficiency_units": pl.Float64(),  # speedup / (ML units / baseline ML units)
    "baseline_run_id": pl.String(),
    "failure_reason": pl.String(),  # the first failed event's reason
    "price_date": pl.Date(),
    "ran_on": pl.String(),
    "note": pl.String(),
}


class BaselineError(ValueError):
    """``--baseline`` names a run the dataset does not hold, or one without a steady rate."""


@dataclass
class SummaryOptions:
    """``baseline``: a run id (default: the first BASIC run that has a steady rate, by run id).
    ``price_date``: the date for runs whose date is unknown (default: today, UTC).
    ``region``: the price table's region (``us``, ``europe``, ``asia``)."""

    baseline: str | None = None
    price_date: date | None = None
    region: str = "us"


def latest_runs(dataset: Dataset) -> pl.DataFrame:
    """The newest facts collected about each run: ``run_id, tier, ran_on, date, note, topology``."""
    return (
        dataset.read("runs")
        .sort("collected_at")
        .group_by("run_id", maintain_order=True)
        .last()
        .select("run_id", "tier", "ran_on", "date", "note", "topology")
    )


def run_index(dataset: Dataset) -> pl.DataFrame:
    """Every run the dataset knows of (from run facts, steps or events), with its tier."""
    facts = latest_runs(dataset)
    seen = (
        pl.concat(
            [
                dataset.scan("steps").select("run_id", "tier").unique().collect(),
                dataset.scan("events").select("run_id", "tier").unique().collect(),
            ]
        )
        .group_by("run_id")
        .agg(pl.col("tier").drop_nulls().first().alias("seen_tier"))
    )
    return (
        seen.join(facts, on="run_id", how="full", coalesce=True)
        .with_columns(pl.coalesce("tier", "seen_tier").alias("tier"))
        .select("run_id", "tier", "ran_on", "date", "note", "topology")
    )


def failures(dataset: Dataset) -> pl.DataFrame:
    """``run_id, failure_reason``: the first failed event of each run that has one."""
    return (
        dataset.scan("events")
        .filter(pl.col("event") == "failed")
        .sort("run_id", "source", "source_offset")
        .group_by("run_id", maintain_order=True)
        .agg(pl.col("reason").fill_null("failed (no reason logged)").first().alias("failure_reason"))
        .collect()
    )


def pick_baseline(frame: pl.DataFrame, baseline: str | None) -> pl.DataFrame:
    """The baseline row of ``frame`` (steady rate, tasks, units). Raises :class:`BaselineError`."""
    if baseline is not None:
        row = frame.filter(pl.col("run_id") == baseline)
        if row.height == 0:
            known = ", ".join(frame["run_id"].to_list())
            raise BaselineError(f"baseline run {baseline!r} is not in the dataset (runs: {known})")
        if row["steady_global_steps_per_s"][0] is None:
            raise BaselineError(f"baseline run {baseline!r} has no steady-state rate (it logged too few steps)")
        return row
    candidates = frame.filter(
        (pl.col("tier").str.to_uppercase() == "BASIC") & pl.col("steady_global_steps_per_s").is_not_null()
    ).sort("run_id")
    return candidates.head(1)


def summary(dataset: Dataset, options: SummaryOptions | None = None) -> pl.DataFrame:
    """One row per run with :data:`SUMMARY_SCHEMA`'s columns, sorted by run id.

    Raises :class:`collector.errors.DatasetCorruptError` if a data file is unreadable
    and :class:`BaselineError` for a bad ``options.baseline``.
    """
    options = options or SummaryOptions()
    runs = run_index(dataset)
    throughput = run_throughput(dataset.scan("steps"))
    costs = tier_costs(runs, options.price_date or datetime.now(UTC).date(), options.region)
    frame = (
        runs.join(throughput, on="run_id", how="left")
        .join(costs, on="run_id", how="left")
        .join(failures(dataset), on="run_id", how="left")
        .with_columns(
            pl.col("records", "tasks").fill_null(0),
            status=pl.when(pl.col("failure_reason").is_not_null())
            .then(pl.lit("failed"))
            .when(pl.col("records").fill_null(0) > 0)
            .then(pl.lit("ok"))
            .otherwise(pl.lit("empty")),
            steps_per_ml_unit_hour=pl.col("steady_global_steps_per_s") * 3600 / pl.col("ml_units_per_hour"),
            usd_per_1000_steps=pl.col("usd_per_hour") / (pl.col("steady_global_steps_per_s") * 3600) * 1000,
        )
    )
    base = pick_baseline(frame, options.baseline)
    if base.height:
        b = base.row(0, named=True)
        frame = frame.with_columns(
            baseline_run_id=pl.lit(b["run_id"]),
            speedup_vs_baseline=pl.col("steady_global_steps_per_s") / b["steady_global_steps_per_s"],
        ).with_columns(
            scaling_efficiency_tasks=pl.col("speedup_vs_baseline") / (pl.col("tasks") / b["tasks"]),
            scaling_efficiency_units=pl.col("speedup_vs_baseline")
            / (pl.col("ml_units_per_hour") / b["ml_units_per_hour"]),
        )
    return conform(frame, SUMMARY_SCHEMA).sort("run_id")
