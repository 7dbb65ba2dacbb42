"""Altair chart specs for the report: each function takes one documented frame (see
:mod:`tierscope.reports.frames`) and returns a Vega-Lite spec (a dict) with its data inline.

A chart function raises :class:`tierscope.reports.frames.MissingColumnsError` when its frame lacks
a column it needs (the report then says "not available"), returns None when the frame
holds nothing to draw, and raises ValueError if handed more than :data:`MAX_ROWS` rows:
frames are bounded in :mod:`tierscope.reports.frames`, so a report's size does not grow with the
number of step records. Every visible string comes from the message catalog; user data
(run ids, tiers, task names) is only ever a data value, which Vega draws as text.

Every encoding channel is given as its class (``alt.Y2("high:Q")``, ``alt.StrokeWidthValue(2)``), never as a
shorthand string or an ``alt.value`` dict: Altair finds the class of those by hashing every class of its schema
anew (2 ms of CPU each, eleven times a report), and the spec is the same.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import altair as alt
import polars as pl
from altair.utils.schemapi import debug_mode

from tierscope.reports.frames import GOODPUT_PARTS, require
from tierscope.reports.i18n import Catalog, number_locale, time_locale

#: A chart refuses more rows than this (Altair's own default limit).
MAX_ROWS = 5000

Spec = dict[str, Any]
P = ParamSpec("P")

#: Charts take the width of the page (``"container"``); :data:`WIDTH` is what figures, which have no page,
#: and the label placement assume. Heights are fixed.
WIDTH, HEIGHT = 560, 280
_LABEL_LIMIT = 180  # px: long run ids are cut with an ellipsis on axes and legends
#: Colours of runs, in the order of the report's run list (Tableau 20, bright ones first): a run keeps its
#: colour in every chart, and the list wraps after 20 runs.
PALETTE = (
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d", "#ff9da6", "#bab0ac",
    "#9ecae9", "#ffbf79", "#88d27a", "#ff9d98", "#439894", "#d6a5c9", "#f2cf5b", "#d8b5a5", "#79706e", "#83bcb6",
)  # fmt: skip
#: Text labels next to points: font size and the height a label takes (px), and the width one character takes.
_LABEL_FONT, _LABEL_LINE, _CHAR_PX = 11, 14, 6.2


class _Rows(alt.Data):
    """A chart's inline rows, which Altair carries but never walks: no copy, no conversion, no validation.

    Altair validates and converts every value of ``alt.Data(values=...)`` (each time a chart is
    built, copied and turned into a dict): on a few thousand points that was most of a report's
    time. The rows are plain JSON values already (:func:`_values`), and the specs' shape is
    validated against the Vega-Lite schema by the tests (tests/reports/test_render.py).
    """

    def __init__(self, values: list[dict[str, Any]]) -> None:
        with debug_mode(False):
            super().__init__(values=values)

    def __deepcopy__(self, memo: object) -> _Rows:
        return self  # never changed after it is made

    def to_dict(self, validate: bool = True, **_: Any) -> dict[str, Any]:
        return {"values": self._kwds["values"]}


def _unchecked(chart: Callable[P, Spec | None]) -> Callable[P, Spec | None]:
    """``chart`` built without Altair's checks of each object as it is made (its "debug mode"): they cost
    more than the chart, and the specs are checked against the Vega-Lite schema by the tests instead."""

    @functools.wraps(chart)
    def build(*args: P.args, **kwargs: P.kwargs) -> Spec | None:
        with debug_mode(False):
            return chart(*args, **kwargs)

    return build


def _values(frame: pl.DataFrame, digits: int = 4) -> alt.Data:
    if frame.height > MAX_ROWS:
        raise ValueError(f"{frame.height} rows for one chart (at most {MAX_ROWS}); bucket the frame first")
    rounded = frame.with_columns(pl.col(pl.Float64, pl.Float32).round_sig_figs(digits))
    return _Rows(rounded.to_dicts())


def _spec(chart: alt.TopLevelMixin, t: Catalog) -> Spec:
    """The chart's spec, as wide as the element it is drawn in, with the report's locale and axis rules.

    Every chart function ends here, so the shared rules live once: ``width: "container"`` (the
    chart follows the page; :func:`fixed_width` for an image), axis labels that never touch (Vega
    hides a label that would overlap its neighbour, keeping the first and the last; labels keep
    a gap from the ticks and the title), and long labels cut with an ellipsis.
    """
    spec = chart.properties(width="container").to_dict(validate=False)
    spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    config = spec.setdefault("config", {})
    config["locale"] = {"number": number_locale(t.lang), "time": time_locale(t.lang)}
    config.setdefault("axis", {}).update(
        labelLimit=_LABEL_LIMIT,
        labelOverlap="greedy",
        labelSeparation=8,
        labelPadding=4,
        titlePadding=10,
        labelFlush=False,
    )
    config.setdefault("axisX", {}).update(tickCount=6)
    config.setdefault("legend", {})["labelLimit"] = _LABEL_LIMIT
    return spec


def fixed_width(spec: Spec, width: int = WIDTH) -> Spec:
    """``spec`` drawn ``width`` px wide instead of following its element (for image files: no page there)."""
    if spec.get("width") != "container":
        return spec
    return {**spec, "width": width, "autosize": {"type": "pad"}}


def run_ids(frame: pl.DataFrame) -> list[str]:
    """The run ids of ``frame`` (column ``run_id``) in their first order: the colour domain of a report."""
    return frame["run_id"].unique(maintain_order=True).to_list()


def run_color(t: Catalog, runs: Sequence[str], legend: bool = True, present: Sequence[str] | None = None) -> alt.Color:
    """Colour by ``run_id`` over a fixed domain: ``runs`` (every run of the report, in its order), so a run
    has one colour in every chart whatever runs a chart shows. Every chart colours runs through this. The
    legend lists ``present`` alone (the runs the chart draws, in the report's order; None: every run)."""
    domain = list(runs)
    scale = alt.Scale(domain=domain, range=[PALETTE[i % len(PALETTE)] for i in range(len(domain))])
    shown = domain if present is None else [r for r in domain if r in set(present)]
    return alt.Color(
        "run_id:N",
        title=t("chart.run"),
        scale=scale,
        # under the plot, two runs a row: a legend at the right took two thirds of a phone's width
        legend=alt.Legend(orient="bottom", columns=2, labelLimit=150, values=shown) if legend else None,
    )


def _present(frame: pl.DataFrame) -> list[str]:
    return frame["run_id"].unique(maintain_order=True).to_list()


def _domain(frame: pl.DataFrame, runs: Sequence[str] | None) -> list[str]:
    return list(runs) if runs is not None else sorted(frame["run_id"].unique().to_list())


def label_rows(
    x: Sequence[float], y: Sequence[float], labels: Sequence[str], x_top: float, y_top: float
) -> list[float]:
    """Where the text label of each point goes, as a y value (data units of a scale from 0 to ``y_top``), so
    that no two labels overlap: each label sits right of and just above its point; one that would cover a
    label already placed (the points taken from the top down) moves down a line at a time, and its chart
    then draws a leader line from the point to it. Geometry is the chart's assumed size (:data:`WIDTH` x
    :data:`HEIGHT`); ``x_top`` is the x scale's upper end (it starts at 0). Two runs at one point: the
    first label at the point, the second a line below it.
    """
    # a scale's top of 0 (every rate 0) or not finite would put every label at one pixel, or divide by 0
    px_x = WIDTH / (x_top if x_top > 0 and math.isfinite(x_top) else 1.0)
    px_y = HEIGHT / (y_top if y_top > 0 and math.isfinite(y_top) else 1.0)
    placed: list[tuple[float, float, float, float]] = []
    out = [0.0] * len(x)
    for i in sorted(range(len(x)), key=lambda i: (-y[i], x[i], labels[i])):
        left = x[i] * px_x + 8
        right = left + min(len(labels[i]) * _CHAR_PX, _LABEL_LIMIT)
        top = HEIGHT - y[i] * px_y - 6 - _LABEL_LINE  # px from the top of the plot
        for _ in range(40):
            if not any(left < r and x0 < right and top < b and t < top + _LABEL_LINE for x0, r, t, b in placed):
                break
            top += _LABEL_LINE
        placed.append((left, right, top, top + _LABEL_LINE))
        out[i] = (HEIGHT - (top + _LABEL_LINE + 6)) / px_y
    return out


def _point_labels(
    frame: pl.DataFrame, x_field: str, y_field: str, x: alt.X, y: alt.Y, runs: Sequence[str], t: Catalog
) -> list[alt.Chart]:
    """Text labels naming each point's run, placed by :func:`label_rows`, with leader lines to the moved ones.
    ``frame`` holds ``run_id``, ``x_field`` and ``y_field``; ``x`` and ``y`` are the chart's encodings, their
    scales from 0 to a fixed top (:func:`_roomy`)."""
    x_top = float(x["scale"]["domain"][1])
    y_top = float(y["scale"]["domain"][1])
    rows = label_rows(frame[x_field].to_list(), frame[y_field].to_list(), frame["run_id"].to_list(), x_top, y_top)
    placed = frame.select("run_id", x_field, y_field).with_columns(label_y=pl.Series(rows, dtype=pl.Float64))
    base = alt.Chart(_values(placed, digits=6))
    at_label = alt.Y("label_y:Q", title=y["title"], scale=y["scale"])
    leaders = (
        base.transform_filter(f"abs(datum.label_y - datum.{y_field}) > {y_top * 0.01}")
        .mark_rule(color="#888", strokeWidth=1)
        .encode(x=x, y=alt.Y(f"{y_field}:Q", title=y["title"], scale=y["scale"]), y2=alt.Y2("label_y:Q"))
    )
    text = base.mark_text(align="left", baseline="bottom", dx=8, dy=-6, fontSize=_LABEL_FONT).encode(
        x=x, y=at_label, text=alt.Text("run_id:N"), color=run_color(t, runs, legend=False)
    )
    return [leaders, text]


def _roomy(values: pl.Series) -> alt.Scale:
    """A scale from 0 to 15% past the largest value, so the text label of the rightmost (or top) point stays
    inside. Not "nice": its ends are what :func:`label_rows` computes with."""
    top = float(values.max() or 0)
    return alt.Scale(domain=[0, top * 1.15 if top > 0 else 1], nice=False)


#: Runs whose figures on one axis lie further apart than this factor (the largest run's over the smallest's) share
#: it on a log scale: on a linear one, a run with 100x another's steps or rate flattens the other against the
#: axis. Within it (the 2016 demo's 4.6 to 22.4 global steps/s) the scale stays linear, from 0.
LOG_SPAN = 10.0


def spans_runs(frame: pl.DataFrame, column: str, how: str = "max") -> bool:
    """Whether the runs of ``frame`` (``run_id``, ``column``) lie more than :data:`LOG_SPAN` apart on ``column``:
    each run's ``how`` (``max``: its extent, ``median``: its typical value) of its values above 0 (a log
    scale has no 0), the largest over the smallest. One run, or none above 0: False."""
    figure = getattr(pl.col(column).filter(pl.col(column) > 0), how)()
    per_run = frame.group_by("run_id").agg(figure.alias("v"))["v"].drop_nulls()
    return per_run.len() > 1 and float(per_run.max()) > LOG_SPAN * float(per_run.min())  # type: ignore[arg-type]


def _scaled(log: bool, title: str, t: Catalog) -> dict[str, Any]:
    """An axis' ``title`` and ``scale``: on a log scale where ``log`` (the title says so), else Vega's default."""
    if not log:
        return {"title": title}
    return {"title": t("chart.log_scale", title=title), "scale": alt.Scale(type="log")}


def time_unit(max_seconds: float) -> tuple[float, str]:
    """(seconds per unit, catalog key of the unit) that keeps an axis up to ``max_seconds`` readable."""
    if max_seconds >= 2 * 3600:
        return 3600.0, "unit.hours"
    if max_seconds >= 120:
        return 60.0, "unit.minutes"
    return 1.0, "unit.seconds"


@_unchecked
def throughput_steps_chart(points: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Lines of interval global steps/s over the global step, one per run.

    ``points``: ``run_id`` (String), ``step`` (Int64), ``rate`` (Float64, global steps/s);
    see :func:`tierscope.analysis.series.throughput_series`. ``runs``: the colour domain (:func:`run_color`;
    None: the frame's runs). The same ``runs`` argument, with the same meaning, on every chart function.
    """
    points = require(points, ("run_id", "step", "rate"), "throughput over steps")
    log_x, log_y = spans_runs(points, "step"), spans_runs(points, "rate", "median")
    if log_x or log_y:  # a log scale has no 0: a point there cannot be drawn
        points = points.filter(((pl.col("step") > 0) | ~pl.lit(log_x)) & ((pl.col("rate") > 0) | ~pl.lit(log_y)))
    if points.height == 0:
        return None
    chart = (
        alt.Chart(_values(points.select("run_id", "step", "rate")))
        .mark_line(point=alt.OverlayMarkDef(size=18))
        .encode(
            x=alt.X("step:Q", **_scaled(log_x, t("chart.global_step"), t)),
            y=alt.Y("rate:Q", **_scaled(log_y, t("chart.global_steps_per_s"), t)),
            color=run_color(t, _domain(points, runs), present=_present(points)),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("step:Q", title=t("chart.global_step"), format=","),
                alt.Tooltip("rate:Q", title=t("chart.global_steps_per_s"), format=",.2f"),
            ],
        )
        .properties(height=HEIGHT, title=t("chart.throughput_steps_title"))
    )
    return _spec(chart, t)


@_unchecked
def throughput_time_chart(points: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Lines of interval global steps/s over time since the run began, one per run.

    ``points``: ``run_id`` (String), ``seconds`` (Float64, since the run began), ``rate``
    (Float64, global steps/s); see :func:`tierscope.analysis.series.throughput_series`.
    """
    points = require(points, ("run_id", "seconds", "rate"), "throughput over time")
    log_x, log_y = spans_runs(points, "seconds"), spans_runs(points, "rate", "median")
    if log_x or log_y:  # a log scale has no 0: a point there cannot be drawn
        points = points.filter(((pl.col("seconds") > 0) | ~pl.lit(log_x)) & ((pl.col("rate") > 0) | ~pl.lit(log_y)))
    if points.height == 0:
        return None
    per, unit = time_unit(float(points["seconds"].max() or 0))
    data = points.select("run_id", (pl.col("seconds") / per).alias("time"), "rate")
    chart = (
        alt.Chart(_values(data))
        .mark_line(point=alt.OverlayMarkDef(size=18))
        .encode(
            x=alt.X("time:Q", **_scaled(log_x, t("chart.time_since_start", unit=t(unit)), t)),
            y=alt.Y("rate:Q", **_scaled(log_y, t("chart.global_steps_per_s"), t)),
            color=run_color(t, _domain(points, runs), present=_present(points)),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("time:Q", title=t("chart.time_since_start", unit=t(unit)), format=",.2f"),
                alt.Tooltip("rate:Q", title=t("chart.global_steps_per_s"), format=",.2f"),
            ],
        )
        .properties(height=HEIGHT, title=t("chart.throughput_time_title"))
    )
    return _spec(chart, t)


@_unchecked
def speedup_chart(frame: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Bars of each run's speedup against the baseline, with its interval where known.

    ``frame``: ``run_id``, ``tier`` (String), ``speedup``, ``low``, ``high`` (Float64;
    ``low``/``high`` may be null); see :func:`tierscope.reports.frames.speedup_frame`.
    """
    frame = require(frame, ("run_id", "tier", "speedup", "low", "high"), "speedup")
    if frame.height == 0:
        return None
    order = frame.sort("speedup", descending=True)["run_id"].to_list()
    base = alt.Chart(_values(frame.select("run_id", "tier", "speedup", "low", "high")))
    x = alt.X("run_id:N", title=t("chart.run"), sort=order, axis=_RUN_AXIS)
    bars = base.mark_bar().encode(
        x=x,
        y=alt.Y("speedup:Q", title=t("chart.speedup")),
        color=run_color(t, _domain(frame, runs), legend=False),  # the axis names the runs
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
            .encode(x=x, y=alt.Y("low:Q"), y2=alt.Y2("high:Q"))
        )
    rule = alt.Chart(alt.Data(values=[{"y": 1}])).mark_rule(strokeDash=[4, 4], color="#555").encode(y=alt.Y("y:Q"))
    chart = alt.layer(*layers, rule).properties(height=HEIGHT, title=t("chart.speedup_title"))
    return _spec(chart, t)


@_unchecked
def cost_time_chart(frame: pl.DataFrame, t: Catalog, steps: int, runs: Sequence[str] | None = None) -> Spec | None:
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
    steady_title = t("chart.steady_time_to_n", n=t.number(steps), unit=t(unit))
    steady = pl.col("steady_seconds_to_n") if "steady_seconds_to_n" in priced.columns else pl.lit(None, pl.Float64)
    data = priced.select(
        "run_id", "tier", (pl.col("seconds_to_n") / per).alias("time"), (steady / per).alias("steady_time"),
        pl.col(cost).alias("cost"), on,
    )  # fmt: skip
    base = alt.Chart(_values(data))
    x = alt.X("time:Q", title=time_title, scale=_roomy(data["time"]))
    y = alt.Y("cost:Q", title=cost_title, scale=_roomy(data["cost"]))
    domain = _domain(priced, runs)
    frontier = (
        base.transform_filter(f"datum.{on}")
        .mark_line(interpolate="step-after", color="#2b6cb0", strokeDash=[6, 3])
        .encode(x=x, y=y, order=alt.Order("time:Q"))
    )
    points = base.mark_point(filled=True, size=90).encode(
        x=x,
        y=y,
        color=run_color(t, domain, present=_present(priced)),
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
            alt.Tooltip("steady_time:Q", title=steady_title, format=",.3~f"),
            alt.Tooltip("cost:Q", title=cost_title, format=",.4~f"),
        ],
    )
    labels = _point_labels(data, "time", "cost", x, y, domain, t)
    chart = alt.layer(frontier, points, *labels).properties(
        height=HEIGHT, title=t("chart.cost_time_title", n=t.number(steps))
    )
    return _spec(chart, t)


@_unchecked
def task_rates_chart(frame: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Local steps/s of every training task, one row of dots per run in the run's colour; stragglers stand out
    as larger triangles ringed in red.

    ``frame``: ``run_id``, ``task`` (String, ``role/index``), ``local_steps_per_s``
    (Float64), ``straggler`` (Boolean); see :func:`tierscope.reports.frames.task_local_rates`.
    """
    frame = require(frame, ("run_id", "task", "local_steps_per_s", "straggler"), "local rates per task")
    log = spans_runs(frame, "local_steps_per_s", "median")  # a run's straggler stays visible beside a 100x run
    if log:
        frame = frame.filter(pl.col("local_steps_per_s") > 0)
    if frame.height == 0:
        return None
    shown = frame["run_id"].n_unique()
    data = frame.select("run_id", "task", "local_steps_per_s", "straggler")
    rates = {"scale": alt.Scale(zero=True), **_scaled(log, t("chart.local_steps_per_s"), t)}  # log: no zero
    chart = (
        alt.Chart(_values(data))
        .mark_point(filled=True, size=70, opacity=0.85)
        .encode(
            x=alt.X("local_steps_per_s:Q", **rates),
            y=alt.Y("run_id:N", title=t("chart.run")),
            color=run_color(t, _domain(frame, runs), legend=False),  # the axis names the runs
            shape=alt.Shape(
                "straggler:N",
                title=t("chart.task_kind"),
                scale=alt.Scale(domain=[False, True], range=["circle", "triangle-down"]),
                legend=alt.Legend(labelExpr=_yes_no(t("chart.straggler"), t("chart.normal"))),
            ),
            stroke=alt.Stroke(
                "straggler:N", scale=alt.Scale(domain=[False, True], range=["transparent", "#d62728"]), legend=None
            ),
            strokeWidth=alt.StrokeWidthValue(2),
            size=alt.Size("straggler:N", scale=alt.Scale(domain=[False, True], range=[60, 160]), legend=None),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("task:N", title=t("chart.task")),
                alt.Tooltip("local_steps_per_s:Q", title=t("chart.local_steps_per_s"), format=",.3f"),
            ],
        )
        .properties(height=max(60, 28 * shown), title=t("chart.tasks_title"))
    )
    return _spec(chart, t)


@_unchecked
def scaling_chart(
    points: pl.DataFrame,
    model: pl.DataFrame | None,
    t: Catalog,
    runs: Sequence[str] | None = None,
    predicted: pl.DataFrame | None = None,
) -> Spec | None:
    """Steady global steps/s against the number of training tasks: measured points, and the
    fitted model's prediction with its band when ``model`` is given; a hollow diamond, labelled, at each run
    never measured that the answer box predicts (``predicted``: ``run_id``, ``tier`` String, ``tasks``
    integer, ``rate`` Float64, the :func:`tierscope.analysis.forecast.unmeasured` rows with a prediction).

    ``points``: ``run_id``, ``tier`` (String), ``tasks`` (integer), ``rate`` (Float64); see
    :func:`tierscope.reports.frames.scaling_points`. ``model``: ``tasks`` (integer), ``predicted``,
    ``low``, ``high`` (Float64), ``model`` (String); see :func:`tierscope.reports.frames.scaling_model`.
    """
    points = require(points, ("run_id", "tier", "tasks", "rate"), "scaling curve")
    if points.height == 0:
        return None
    has_model = model is not None and model.height > 0
    domain = _domain(points, runs)
    if has_model:
        model = require(model, ("tasks", "predicted", "low", "high", "model"), "scaling model")
    sizes = (
        pl.concat([points["tasks"].cast(pl.Float64), model["tasks"].cast(pl.Float64)]) if has_model else points["tasks"]
    )
    guessed = predicted.filter(pl.col("rate").is_not_null()) if predicted is not None and predicted.height else None
    if guessed is not None and guessed.height:
        sizes = pl.concat([sizes.cast(pl.Float64), guessed["tasks"].cast(pl.Float64)])
    else:
        guessed = None
    x = alt.X("tasks:Q", title=t("chart.training_tasks"), scale=_roomy(sizes))
    tops = [points["rate"], *([model["high"].drop_nulls(), model["predicted"]] if has_model else [])]
    tops += [guessed["rate"]] if guessed is not None else []
    y_scale = _roomy(pl.concat([v.cast(pl.Float64) for v in tops]))
    y = alt.Y("rate:Q", title=t("chart.steady_global_steps_per_s"), scale=y_scale)
    layers: list[alt.Chart] = []
    if has_model:
        band = alt.Chart(_values(model.select("tasks", "predicted", "low", "high", "model")))
        low = alt.Y("low:Q", title=y["title"], scale=y["scale"])
        layers.append(band.mark_area(opacity=0.2, color="#2b6cb0").encode(x=x, y=low, y2=alt.Y2("high:Q")))
        layers.append(
            band.mark_line(color="#2b6cb0").encode(
                x=x,
                y=alt.Y("predicted:Q", title=y["title"], scale=y["scale"]),
                strokeDash=alt.StrokeDash("model:N", title=t("chart.model")),
            )
        )
    with_bounds = "low" in points.columns and "high" in points.columns
    base = alt.Chart(
        _values(points.select("run_id", "tier", "tasks", "rate", *(["low", "high"] if with_bounds else [])))
    )
    if with_bounds and points["low"].is_not_null().any():
        layers.append(
            base.transform_filter("isValid(datum.low)")
            .mark_rule(color="#222")
            .encode(x=x, y=alt.Y("low:Q", title=y["title"], scale=y["scale"]), y2=alt.Y2("high:Q"))
        )
    layers.append(
        base.mark_point(filled=True, size=90).encode(
            x=x,
            y=y,
            color=run_color(t, domain, present=_present(points)),
            tooltip=[
                alt.Tooltip("run_id:N", title=t("chart.run")),
                alt.Tooltip("tier:N", title=t("chart.tier")),
                alt.Tooltip("tasks:Q", title=t("chart.training_tasks")),
                alt.Tooltip("rate:Q", title=t("chart.steady_global_steps_per_s"), format=",.3f"),
            ],
        )
    )
    layers += _point_labels(points.with_columns(pl.col("tasks").cast(pl.Float64)), "tasks", "rate", x, y, domain, t)
    if guessed is not None:
        label = t("chart.predicted_label")
        marks = alt.Chart(
            _values(
                guessed.select(
                    "run_id", "tier", pl.col("tasks").cast(pl.Float64), "rate",
                    pl.format(label, "tier").alias("label"),
                )
            )
        )  # fmt: skip
        layers.append(
            marks.mark_point(shape="diamond", filled=False, size=160, strokeWidth=2).encode(
                x=x,
                y=y,
                color=run_color(t, domain, legend=False),
                tooltip=[
                    alt.Tooltip("run_id:N", title=t("chart.run")),
                    alt.Tooltip("tier:N", title=t("chart.tier")),
                    alt.Tooltip("tasks:Q", title=t("chart.training_tasks")),
                    alt.Tooltip("rate:Q", title=t("chart.predicted"), format=",.3f"),
                ],
            )
        )
        layers.append(
            marks.mark_text(align="right", baseline="middle", dx=-10, fontSize=_LABEL_FONT).encode(
                x=x, y=y, text=alt.Text("label:N")
            )
        )
    chart = alt.layer(*layers).properties(height=HEIGHT, title=t("chart.scaling_title"))
    return _spec(chart, t)


#: The run axis of a bar chart: every bar keeps its label (Vega's overlap rule, on for the other axes, hid
#: one on a phone), turned so long run ids fit under narrow bars, cut with an ellipsis past the limit.
_RUN_AXIS = alt.Axis(labelAngle=-45, labelOverlap=False, labelLimit=120)


def _yes_no(yes: str, no: str) -> str:
    """A legend label expression naming a Boolean field's values (catalog text, quoted as JSON literals)."""
    return f"datum.value ? {json.dumps(yes)} : {json.dumps(no)}"


@_unchecked
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
            x=alt.X("run_id:N", title=t("chart.run"), axis=_RUN_AXIS),
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


@_unchecked
def metric_time_chart(
    points: pl.DataFrame,
    reached: pl.DataFrame | None,
    t: Catalog,
    metric: str,
    target: float | None = None,
    runs: Sequence[str] | None = None,
) -> Spec | None:
    """Lines of the training loss (``metric`` ``loss``) or accuracy (``accuracy``) over time since the run began,
    one per run; with a ``target``, a dashed rule at it and a diamond where each run reached it.

    ``points``: ``run_id`` (String), ``seconds`` (Float64), ``value`` (Float64); see
    :class:`tierscope.analysis.target.MetricSeries`. ``reached``: ``run_id``, ``seconds``, ``value``, ``step``
    (see :func:`tierscope.reports.frames.time_to_target_frame`; None: no target).
    """
    points = require(points, ("run_id", "seconds", "value"), "metric over time")
    if points.height == 0:
        return None
    ends = [float(points["seconds"].max() or 0)]
    if reached is not None and reached.height:
        ends.append(float(reached["seconds"].max() or 0))
    per, unit = time_unit(max(ends))
    time_title, value_title = t("chart.time_since_start", unit=t(unit)), t(f"chart.metric_{metric}")
    x = alt.X("time:Q", title=time_title)
    y = alt.Y("value:Q", title=value_title, scale=alt.Scale(zero=False))
    domain = _domain(points, runs)
    data = points.select("run_id", (pl.col("seconds") / per).alias("time"), "value")
    tooltip = [
        alt.Tooltip("run_id:N", title=t("chart.run")),
        alt.Tooltip("time:Q", title=time_title, format=",.2f"),
        alt.Tooltip("value:Q", title=value_title, format=",.4~f"),
    ]
    layers: list[alt.Chart] = [
        alt.Chart(_values(data))
        .mark_line(point=alt.OverlayMarkDef(size=18))
        .encode(x=x, y=y, color=run_color(t, domain, present=_present(points)), tooltip=tooltip)
    ]
    if target is not None:
        rule = alt.Chart(alt.Data(values=[{"value": target}])).mark_rule(strokeDash=[6, 4], color="#555")
        layers.append(rule.encode(y=alt.Y("value:Q", title=value_title)))
        if reached is not None and reached.height:
            at = reached.select("run_id", (pl.col("seconds") / per).alias("time"), "value", "step")
            step = alt.Tooltip("step:Q", title=t("chart.global_step"), format=",")
            layers.append(
                alt.Chart(_values(at, digits=6))
                .mark_point(shape="diamond", filled=True, size=150, stroke="#222", strokeWidth=1)
                .encode(x=x, y=y, color=run_color(t, domain, legend=False), tooltip=[*tooltip, step])
            )
    title = t(f"chart.metric_{metric}_title")
    return _spec(alt.layer(*layers).properties(height=HEIGHT, title=title), t)


@_unchecked
def target_chart(frame: pl.DataFrame, t: Catalog, target: str, runs: Sequence[str] | None = None) -> Spec | None:
    """A bar per run: its time to the ``target`` (its text, e.g. ``loss ≤ 2``), labelled with what that time
    cost (USD where any run has a dollar price, else ML unit-hours).

    ``frame``: ``run_id``, ``tier`` (String), ``seconds``, ``usd``, ``ml_unit_hours`` (Float64), ``step`` (Int64);
    see :func:`tierscope.reports.frames.time_to_target_frame`.
    """
    frame = require(frame, ("run_id", "tier", "seconds", "usd", "ml_unit_hours", "step"), "time to target")
    if frame.height == 0:
        return None
    per, unit = time_unit(float(frame["seconds"].max() or 0))
    usd = frame["usd"].is_not_null().any()
    cost, cost_title = (
        ("usd", t("chart.cost_to_target_usd")) if usd else ("ml_unit_hours", t("chart.cost_to_target_units"))
    )
    time_title = t("chart.time_to_target", target=target, unit=t(unit))
    data = frame.select("run_id", "tier", (pl.col("seconds") / per).alias("time"), pl.col(cost).alias("cost"), "step")
    order = data.sort("time", "run_id")["run_id"].to_list()
    suffix = json.dumps(" " + t(f"chart.cost_unit_{cost}"))  # catalog text as a JSON literal in the expression
    base = alt.Chart(_values(data)).transform_calculate(
        label=f"isValid(datum.cost) ? format(datum.cost, ',.3~f') + {suffix} : ''"
    )
    x = alt.X("run_id:N", title=t("chart.run"), sort=order, axis=_RUN_AXIS)
    y = alt.Y("time:Q", title=time_title, scale=_roomy(data["time"]))
    bars = base.mark_bar().encode(
        x=x,
        y=y,
        color=run_color(t, _domain(frame, runs), legend=False),  # the axis names the runs
        tooltip=[
            alt.Tooltip("run_id:N", title=t("chart.run")),
            alt.Tooltip("tier:N", title=t("chart.tier")),
            alt.Tooltip("time:Q", title=time_title, format=",.3~f"),
            alt.Tooltip("step:Q", title=t("chart.global_step"), format=","),
            alt.Tooltip("cost:Q", title=cost_title, format=",.4~f"),
        ],
    )
    labels = base.mark_text(baseline="bottom", dy=-4, fontSize=_LABEL_FONT).encode(x=x, y=y, text=alt.Text("label:N"))
    chart = alt.layer(bars, labels).properties(height=HEIGHT, title=t("chart.target_title", target=target))
    return _spec(chart, t)
