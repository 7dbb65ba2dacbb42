"""Altair chart specs for the report: each function takes one documented frame (see
:mod:`tierscope.reports.frames`) and returns a Vega-Lite spec (a dict) with its data inline.

A chart function raises :class:`tierscope.reports.frames.MissingColumnsError` when its frame lacks
a column it needs (the report then says "not available"), returns None when the frame
holds nothing to draw, and raises ValueError if handed more than :data:`MAX_ROWS` rows:
frames are bounded in :mod:`tierscope.reports.frames`, so a report's size does not grow with the
number of step records. Every visible string comes from the message catalog; user data
(run ids, tiers, task names) is only ever a data value, which Vega draws as text.
"""

from __future__ import annotations

import json
from typing import Any

import altair as alt
import polars as pl

from tierscope.reports.frames import GOODPUT_PARTS, require
from tierscope.reports.i18n import Catalog, number_locale, time_locale

#: A chart refuses more rows than this (Altair's own default limit).
MAX_ROWS = 5000

Spec = dict[str, Any]

WIDTH, HEIGHT = 560, 280
_LABEL_LIMIT = 180  # px: long run ids are cut with an ellipsis on axes and legends


def _values(frame: pl.DataFrame, digits: int = 4) -> alt.Data:
    if frame.height > MAX_ROWS:
        raise ValueError(f"{frame.height} rows for one chart (at most {MAX_ROWS}); bucket the frame first")
    rounded = frame.with_columns(pl.col(pl.Float64, pl.Float32).round_sig_figs(digits))
    return alt.Data(values=rounded.to_dicts())


def _spec(chart: alt.TopLevelMixin, t: Catalog) -> Spec:
    spec = chart.to_dict(validate=False)
    config = spec.setdefault("config", {})
    config["locale"] = {"number": number_locale(t.lang), "time": time_locale(t.lang)}
    config.setdefault("axis", {})["labelLimit"] = _LABEL_LIMIT
    config.setdefault("legend", {})["labelLimit"] = _LABEL_LIMIT
    return spec


def _roomy(values: pl.Series) -> alt.Scale:
    """A scale from 0 to 15% past the largest value, so the text label of the rightmost point stays inside."""
    top = float(values.max() or 0)
    return alt.Scale(domain=[0, top * 1.15 if top > 0 else 1], nice=True)


def time_unit(max_seconds: float) -> tuple[float, str]:
    """(seconds per unit, catalog key of the unit) that keeps an axis up to ``max_seconds`` readable."""
    if max_seconds >= 2 * 3600:
        return 3600.0, "unit.hours"
    if max_seconds >= 120:
        return 60.0, "unit.minutes"
    return 1.0, "unit.seconds"


def _run_color(t: Catalog) -> alt.Color:
    return alt.Color("run_id:N", title=t("chart.run"), legend=alt.Legend(orient="right"))


def throughput_steps_chart(points: pl.DataFrame, t: Catalog) -> Spec | None:
    """Lines of interval global steps/s over the global step, one per run.

    ``points``: ``run_id`` (String), ``step`` (Int64), ``rate`` (Float64, global steps/s);
    see :func:`tierscope.analysis.series.throughput_series`.
    """
    points = require(points, ("run_id", "step", "rate"), "throughput over steps")
    if points.height == 0:
        return None
    chart = (
        alt.Chart(_values(points.select("run_id", "step", "rate")))
        .mark_line(point=alt.OverlayMarkDef(size=18))
        .encode(
            x=alt.X("step:Q", title=t("chart.global_step")),
            y=alt.Y("rate:Q", title=t("chart.global_steps_per_s")),
            color=_run_color(t),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("step:Q", title=t("chart.global_step"), format=","),
                alt.Tooltip("rate:Q", title=t("chart.global_steps_per_s"), format=",.2f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT, title=t("chart.throughput_steps_title"))
    )
    return _spec(chart, t)


def throughput_time_chart(points: pl.DataFrame, t: Catalog) -> Spec | None:
    """Lines of interval global steps/s over time since the run began, one per run.

    ``points``: ``run_id`` (String), ``seconds`` (Float64, since the run began), ``rate``
    (Float64, global steps/s); see :func:`tierscope.analysis.series.throughput_series`.
    """
    points = require(points, ("run_id", "seconds", "rate"), "throughput over time")
    if points.height == 0:
        return None
    per, unit = time_unit(float(points["seconds"].max() or 0))
    data = points.select("run_id", (pl.col("seconds") / per).alias("time"), "rate")
    chart = (
        alt.Chart(_values(data))
        .mark_line(point=alt.OverlayMarkDef(size=18))
        .encode(
            x=alt.X("time:Q", title=t("chart.time_since_start", unit=t(unit))),
            y=alt.Y("rate:Q", title=t("chart.global_steps_per_s")),
            color=_run_color(t),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("time:Q", title=t("chart.time_since_start", unit=t(unit)), format=",.2f"),
                alt.Tooltip("rate:Q", title=t("chart.global_steps_per_s"), format=",.2f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT, title=t("chart.throughput_time_title"))
    )
    return _spec(chart, t)


def speedup_chart(frame: pl.DataFrame, t: Catalog) -> Spec | None:
    """Bars of each run's speedup against the baseline, with its interval where known.

    ``frame``: ``run_id``, ``tier`` (String), ``speedup``, ``low``, ``high`` (Float64;
    ``low``/``high`` may be null); see :func:`tierscope.reports.frames.speedup_frame`.
    """
    frame = require(frame, ("run_id", "tier", "speedup", "low", "high"), "speedup")
    if frame.height == 0:
        return None
    order = frame.sort("speedup", descending=True)["run_id"].to_list()
    base = alt.Chart(_values(frame.select("run_id", "tier", "speedup", "low", "high")))
    x = alt.X("run_id:N", title=t("chart.run"), sort=order, axis=alt.Axis(labelAngle=-30))
    bars = base.mark_bar().encode(
        x=x,
        y=alt.Y("speedup:Q", title=t("chart.speedup")),
        color=alt.Color("tier:N", title=t("chart.tier")),
        tooltip=[
            alt.Tooltip("run_id:N", title=t("chart.run")),
            alt.Tooltip("tier:N", title=t("chart.tier")),
            alt.Tooltip("speedup:Q", title=t("chart.speedup"), format=",.2f"),
            alt.Tooltip("low:Q", title=t("chart.interval_low"), format=",.2f"),
            alt.Tooltip("high:Q", title=t("chart.interval_high"), format=",.2f"),
        ],
    )
    layers = [bars]
    if frame["low"].is_not_null().any():
        layers.append(
            base.transform_filter("isValid(datum.low)")
            .mark_rule(strokeWidth=2, color="#222")
            .encode(x=x, y="low:Q", y2="high:Q")
        )
    rule = alt.Chart(alt.Data(values=[{"y": 1}])).mark_rule(strokeDash=[4, 4], color="#555").encode(y="y:Q")
    chart = alt.layer(*layers, rule).properties(width=WIDTH, height=HEIGHT, title=t("chart.speedup_title"))
    return _spec(chart, t)


def cost_time_chart(frame: pl.DataFrame, t: Catalog, steps: int) -> Spec | None:
    """Price against time to ``steps`` global steps, one point per run, with the cheapest-for-each-deadline frontier.

    ``frame``: ``run_id``, ``tier`` (String), ``seconds_to_n``, ``usd_to_n``,
    ``ml_unit_hours_to_n`` (Float64), ``frontier_usd``, ``frontier_units`` (Boolean); see
    :func:`tierscope.reports.frames.time_and_cost_to_steps`. The cost axis is USD when any run has
    a dollar price, else ML unit-hours. None when no run has a cost.
    """
    cols = ("run_id", "tier", "seconds_to_n", "usd_to_n", "ml_unit_hours_to_n", "frontier_usd", "frontier_units")
    frame = require(frame, cols, "price against time")
    usd = frame["usd_to_n"].is_not_null().any()
    cost, on, cost_title = (
        ("usd_to_n", "frontier_usd", t("chart.cost_usd", n=t.number(steps)))
        if usd
        else ("ml_unit_hours_to_n", "frontier_units", t("chart.cost_units", n=t.number(steps)))
    )
    priced = frame.filter(pl.col(cost).is_not_null())
    if priced.height == 0:
        return None
    per, unit = time_unit(float(priced["seconds_to_n"].max() or 0))
    time_title = t("chart.time_to_n", n=t.number(steps), unit=t(unit))
    data = priced.select("run_id", "tier", (pl.col("seconds_to_n") / per).alias("time"), pl.col(cost).alias("cost"), on)
    base = alt.Chart(_values(data))
    x = alt.X("time:Q", title=time_title, scale=_roomy(data["time"]))
    y = alt.Y("cost:Q", title=cost_title, scale=alt.Scale(zero=True))
    frontier = (
        base.transform_filter(f"datum.{on}")
        .mark_line(interpolate="step-after", color="#2b6cb0", strokeDash=[6, 3])
        .encode(x=x, y=y, order="time:Q")
    )
    points = base.mark_point(filled=True, size=90).encode(
        x=x,
        y=y,
        color=alt.Color("tier:N", title=t("chart.tier")),
        shape=alt.Shape(
            f"{on}:N",
            title=t("chart.frontier"),
            scale=alt.Scale(domain=[True, False], range=["diamond", "circle"]),
            legend=alt.Legend(labelExpr=_yes_no(t("chart.on_frontier"), t("chart.off_frontier"))),
        ),
        tooltip=[
            alt.Tooltip("run_id:N", title=t("chart.run")),
            alt.Tooltip("tier:N", title=t("chart.tier")),
            alt.Tooltip("time:Q", title=time_title, format=",.3~f"),
            alt.Tooltip("cost:Q", title=cost_title, format=",.4~f"),
        ],
    )
    labels = base.mark_text(align="left", dx=8, dy=-6, fontSize=11).encode(x=x, y=y, text="run_id:N")
    chart = alt.layer(frontier, points, labels).properties(
        width=WIDTH, height=HEIGHT, title=t("chart.cost_time_title", n=t.number(steps))
    )
    return _spec(chart, t)


def task_rates_chart(frame: pl.DataFrame, t: Catalog) -> Spec | None:
    """Local steps/s of every training task, one row of dots per run; stragglers stand out in red.

    ``frame``: ``run_id``, ``task`` (String, ``role/index``), ``local_steps_per_s``
    (Float64), ``straggler`` (Boolean); see :func:`tierscope.reports.frames.task_local_rates`.
    """
    frame = require(frame, ("run_id", "task", "local_steps_per_s", "straggler"), "local rates per task")
    if frame.height == 0:
        return None
    runs = frame["run_id"].n_unique()
    data = frame.select("run_id", "task", "local_steps_per_s", "straggler")
    chart = (
        alt.Chart(_values(data))
        .mark_point(filled=True, size=70, opacity=0.85)
        .encode(
            x=alt.X("local_steps_per_s:Q", title=t("chart.local_steps_per_s"), scale=alt.Scale(zero=True)),
            y=alt.Y("run_id:N", title=t("chart.run")),
            color=alt.Color(
                "straggler:N",
                title=t("chart.task_kind"),
                scale=alt.Scale(domain=[False, True], range=["#4a7fb5", "#d62728"]),
                legend=alt.Legend(labelExpr=_yes_no(t("chart.straggler"), t("chart.normal"))),
            ),
            size=alt.Size("straggler:N", scale=alt.Scale(domain=[False, True], range=[60, 160]), legend=None),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("task:N", title=t("chart.task")),
                alt.Tooltip("local_steps_per_s:Q", title=t("chart.local_steps_per_s"), format=",.3f"),
            ],
        )
        .properties(width=WIDTH, height=max(60, 28 * runs), title=t("chart.tasks_title"))
    )
    return _spec(chart, t)


def scaling_chart(points: pl.DataFrame, model: pl.DataFrame | None, t: Catalog) -> Spec | None:
    """Steady global steps/s against the number of training tasks: measured points, and the
    fitted model's prediction with its band when ``model`` is given.

    ``points``: ``run_id``, ``tier`` (String), ``tasks`` (integer), ``rate`` (Float64); see
    :func:`tierscope.reports.frames.scaling_points`. ``model``: ``tasks`` (integer), ``predicted``,
    ``low``, ``high`` (Float64), ``model`` (String); see :func:`tierscope.reports.frames.scaling_model`.
    """
    points = require(points, ("run_id", "tier", "tasks", "rate"), "scaling curve")
    if points.height == 0:
        return None
    has_model = model is not None and model.height > 0
    if has_model:
        model = require(model, ("tasks", "predicted", "low", "high", "model"), "scaling model")
    sizes = (
        pl.concat([points["tasks"].cast(pl.Float64), model["tasks"].cast(pl.Float64)]) if has_model else points["tasks"]
    )
    x = alt.X("tasks:Q", title=t("chart.training_tasks"), scale=_roomy(sizes))
    y = alt.Y("rate:Q", title=t("chart.steady_global_steps_per_s"), scale=alt.Scale(zero=True))
    layers: list[alt.Chart] = []
    if has_model:
        band = alt.Chart(_values(model.select("tasks", "predicted", "low", "high", "model")))
        layers.append(band.mark_area(opacity=0.2, color="#2b6cb0").encode(x=x, y="low:Q", y2="high:Q"))
        layers.append(
            band.mark_line(color="#2b6cb0").encode(
                x=x,
                y=alt.Y("predicted:Q", title=t("chart.steady_global_steps_per_s")),
                strokeDash=alt.StrokeDash("model:N", title=t("chart.model")),
            )
        )
    with_bounds = "low" in points.columns and "high" in points.columns
    base = alt.Chart(
        _values(points.select("run_id", "tier", "tasks", "rate", *(["low", "high"] if with_bounds else [])))
    )
    if with_bounds and points["low"].is_not_null().any():
        layers.append(
            base.transform_filter("isValid(datum.low)").mark_rule(color="#222").encode(x=x, y="low:Q", y2="high:Q")
        )
    layers.append(
        base.mark_point(filled=True, size=90).encode(
            x=x,
            y=y,
            color=alt.Color("tier:N", title=t("chart.tier")),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("tier:N", title=t("chart.tier")),
                alt.Tooltip("tasks:Q", title=t("chart.training_tasks")),
                alt.Tooltip("rate:Q", title=t("chart.steady_global_steps_per_s"), format=",.3f"),
            ],
        )
    )
    layers.append(base.mark_text(align="left", dx=8, dy=-6, fontSize=11).encode(x=x, y=y, text="run_id:N"))
    chart = alt.layer(*layers).properties(width=WIDTH, height=HEIGHT, title=t("chart.scaling_title"))
    return _spec(chart, t)


def _yes_no(yes: str, no: str) -> str:
    """A legend label expression naming a Boolean field's values (catalog text, quoted as JSON literals)."""
    return f"datum.value ? {json.dumps(yes)} : {json.dumps(no)}"


def goodput_chart(frame: pl.DataFrame, t: Catalog) -> Spec | None:
    """A stacked bar per run: its lifetime split into productive time and the badput buckets, as shares.

    ``frame``: ``run_id``, ``part`` (String, :data:`tierscope.reports.frames.GOODPUT_PARTS`), ``order`` (integer),
    ``seconds``, ``share``, ``goodput`` (Float64); see :func:`tierscope.reports.frames.goodput_frame`.
    """
    frame = require(frame, ("run_id", "part", "order", "seconds", "share", "goodput"), "goodput")
    if frame.height == 0:
        return None
    names = {p: t(f"goodput.{p}") for p in frame["part"].unique().to_list()}
    shown = frame.with_columns(label=pl.col("part").replace_strict(names)).select(
        "run_id", "label", "order", "seconds", "share", "goodput"
    )
    legend_order = [t(f"goodput.{p}") for p in GOODPUT_PARTS if p in names]
    chart = (
        alt.Chart(_values(shown))
        .mark_bar()
        .encode(
            x=alt.X("run_id:N", title=t("chart.run"), axis=alt.Axis(labelAngle=-30)),
            y=alt.Y("share:Q", title=t("chart.lifetime_share"), stack="zero", axis=alt.Axis(format="%")),
            color=alt.Color("label:N", title=t("chart.goodput_part"), sort=legend_order),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("label:N", title=t("chart.goodput_part")),
                alt.Tooltip("seconds:Q", title=t("chart.seconds"), format=",.1f"),
                alt.Tooltip("share:Q", title=t("chart.lifetime_share"), format=".1%"),
                alt.Tooltip("goodput:Q", title=t("chart.goodput"), format=".1%"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT, title=t("chart.goodput_title"))
    )
    return _spec(chart, t)
