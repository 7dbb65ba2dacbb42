"""Altair chart specs for the report. Each function takes analysis frames and returns a
Vega-Lite spec (a dict); data is aggregated or downsampled here, before it is embedded,
so a report's size does not grow with the number of step records."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from analysis.throughput import interval_rates
from reports.i18n import Catalog

#: At most this many points per run in the throughput chart.
MAX_POINTS_PER_RUN = 400

Spec = dict[str, Any]


def _spec(chart: alt.TopLevelMixin) -> Spec:
    return chart.to_dict(validate=False)


def speedup_chart(summary: pl.DataFrame, t: Catalog) -> Spec | None:
    """Bars of each run's speedup against the baseline; None when no run has one."""
    data = summary.filter(pl.col("speedup_vs_baseline").is_not_null()).select(
        "run_id", "tier", pl.col("speedup_vs_baseline").round(3).alias("speedup")
    )
    if data.height == 0:
        return None
    bars = (
        alt.Chart(alt.Data(values=data.to_dicts()))
        .mark_bar()
        .encode(
            x=alt.X("run_id:N", title=t("chart.run"), sort="-y"),
            y=alt.Y("speedup:Q", title=t("chart.speedup")),
            color=alt.Color("tier:N", title=t("chart.tier")),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("tier:N", title=t("chart.tier")),
                alt.Tooltip("speedup:Q", title=t("chart.speedup"), format=".2f"),
            ],
        )
    )
    rule = alt.Chart(alt.Data(values=[{"y": 1}])).mark_rule(strokeDash=[4, 4]).encode(y="y:Q")
    return _spec((bars + rule).properties(width=420, height=260, title=t("chart.speedup_title")))


def throughput_points(steps: pl.LazyFrame, max_points: int = MAX_POINTS_PER_RUN) -> pl.DataFrame:
    """Interval global steps/s against global step per run, at most ``max_points`` per run.

    Returns ``run_id`` (String), ``step`` (Int64, the bucket's first step), ``rate``
    (Float64, median interval rate in the bucket, warm-up excluded) and ``records`` (UInt32).
    """
    rates = interval_rates(steps).filter(~pl.col("warmup") & pl.col("rate").is_not_null())
    span = rates.group_by("run_id").agg(lo=pl.col("step").min(), hi=pl.col("step").max())
    return (
        rates.join(span, on="run_id")
        .with_columns(
            bucket=((pl.col("step") - pl.col("lo")) * max_points // (pl.col("hi") - pl.col("lo") + 1)).cast(pl.Int64)
        )
        .group_by("run_id", "bucket")
        .agg(step=pl.col("step").min(), rate=pl.col("rate").median(), records=pl.len().cast(pl.UInt32))
        .sort("run_id", "step")
        .select("run_id", "step", "rate", "records")
        .collect()
    )


def throughput_chart(points: pl.DataFrame, t: Catalog) -> Spec | None:
    """Lines of interval global steps/s over the global step, one per run."""
    if points.height == 0:
        return None
    chart = (
        alt.Chart(alt.Data(values=points.with_columns(pl.col("rate").round(3)).to_dicts()))
        .mark_line(point=True)
        .encode(
            x=alt.X("step:Q", title=t("chart.global_step")),
            y=alt.Y("rate:Q", title=t("chart.global_steps_per_s")),
            color=alt.Color("run_id:N", title=t("chart.run")),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("step:Q", title=t("chart.global_step")),
                alt.Tooltip("rate:Q", title=t("chart.global_steps_per_s"), format=".2f"),
            ],
        )
        .properties(width=520, height=280, title=t("chart.throughput_title"))
    )
    return _spec(chart)
