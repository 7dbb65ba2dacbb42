"""Vega-Lite chart specs for the report, built as plain dicts: each function takes one documented frame (see
:mod:`tierscope.reports.frames`) and returns a Vega-Lite spec (a dict) with its data inline.

The specs are the ones Altair built for these charts (Altair's own spelling: every channel with its
field and type, the default view config, a layer's common data on the layer), written directly:
importing Altair and building its objects cost half a second a report, more than the specs are
worth; their shape is validated against the Vega-Lite schema by the tests
(tests/reports/test_reports_render.py).

A chart function raises :class:`tierscope.reports.frames.MissingColumnsError` when its frame lacks
a column it needs (the report then says "not available"), returns None when the frame
holds nothing to draw, and raises ValueError if handed more than :data:`MAX_ROWS` rows:
frames are bounded in :mod:`tierscope.reports.frames`, so a report's size does not grow with the
number of step records. Every visible string comes from the message catalog; user data
(run ids, tiers, task names) is only ever a data value, which Vega draws as text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import polars as pl

from tierscope.reports.frames import GOODPUT_PARTS, require
from tierscope.reports.i18n import Catalog, number_locale, time_locale

#: A chart refuses more rows than this (Altair's own default limit).
MAX_ROWS = 5000
#: The Vega-Lite version the specs are written for (Altair 5's).
SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.4.1.json"

Spec = dict[str, Any]

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
_TYPES = {"Q": "quantitative", "N": "nominal", "O": "ordinal"}


def field(shorthand: str, **props: Any) -> dict[str, Any]:
    """An encoding channel of ``shorthand`` (``name:Q`` / ``:N`` / ``:O``, Altair's spelling) with ``props``
    (``title``, ``scale``, ``legend``: None draws none, ...)."""
    name, kind = shorthand.rsplit(":", 1)
    return {"field": name, "type": _TYPES[kind], **props}


def tooltip(shorthand: str, title: str, fmt: str | None = None) -> dict[str, Any]:
    return field(shorthand, title=title, **({"format": fmt} if fmt is not None else {}))


def _second(name: str) -> dict[str, Any]:
    """A ``y2`` channel: the field alone (it takes its type from ``y``)."""
    return {"field": name}


def _values(frame: pl.DataFrame, digits: int = 4) -> dict[str, Any]:
    """The chart's inline data: the rows as JSON values, floats cut to ``digits`` significant figures."""
    if frame.height > MAX_ROWS:
        raise ValueError(f"{frame.height} rows for one chart (at most {MAX_ROWS}); bucket the frame first")
    rounded = frame.with_columns(pl.col(pl.Float64, pl.Float32).round_sig_figs(digits))
    return {"values": rounded.to_dicts()}


def _layer(*layers: dict[str, Any], **props: Any) -> Spec:
    """Layers drawn one over another; data every layer shares (one object) is moved to the layer, as Altair does."""
    data = layers[0].get("data")
    if data is not None and all(layer.get("data") is data for layer in layers):
        return {"data": data, "layer": [{k: v for k, v in layer.items() if k != "data"} for layer in layers], **props}
    return {"layer": list(layers), **props}


def _spec(chart: Spec, t: Catalog) -> Spec:
    """The chart's spec, as wide as the element it is drawn in, with the report's locale and axis rules.

    Every chart function ends here, so the shared rules live once: ``width: "container"`` (the
    chart follows the page; :func:`fixed_width` for an image), axis labels that never touch (Vega
    hides a label that would overlap its neighbour, keeping the first and the last; labels keep
    a gap from the ticks and the title), and long labels cut with an ellipsis.
    """
    spec = {"$schema": SCHEMA_URL, **chart, "width": "container"}
    spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    spec["config"] = {
        "view": {"continuousWidth": 300, "continuousHeight": 300},  # Altair's default theme
        "locale": {"number": number_locale(t.lang), "time": time_locale(t.lang)},
        "axis": {
            "labelLimit": _LABEL_LIMIT,
            "labelOverlap": "greedy",
            "labelSeparation": 8,
            "labelPadding": 4,
            "titlePadding": 10,
            "labelFlush": False,
        },
        "axisX": {"tickCount": 6},
        "legend": {"labelLimit": _LABEL_LIMIT},
    }
    return spec


def fixed_width(spec: Spec, width: int = WIDTH) -> Spec:
    """``spec`` drawn ``width`` px wide instead of following its element (for image files: no page there)."""
    if spec.get("width") != "container":
        return spec
    return {**spec, "width": width, "autosize": {"type": "pad"}}


def run_ids(frame: pl.DataFrame) -> list[str]:
    """The run ids of ``frame`` (column ``run_id``) in their first order: the colour domain of a report."""
    return frame["run_id"].unique(maintain_order=True).to_list()


def run_color(t: Catalog, runs: Sequence[str], legend: bool = True) -> dict[str, Any]:
    """Colour by ``run_id`` over a fixed domain: ``runs`` (every run of the report, in its order), so a run
    has one colour in every chart whatever runs a chart shows. Every chart colours runs through this."""
    domain = list(runs)
    scale = {"domain": domain, "range": [PALETTE[i % len(PALETTE)] for i in range(len(domain))]}
    return field("run_id:N", title=t("chart.run"), scale=scale, legend={"orient": "right"} if legend else None)


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
    px_x = WIDTH / (x_top or 1.0)
    px_y = HEIGHT / (y_top or 1.0)
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
    frame: pl.DataFrame,
    x_field: str,
    y_field: str,
    x: dict[str, Any],
    y: dict[str, Any],
    runs: Sequence[str],
    t: Catalog,
) -> list[Spec]:
    """Text labels naming each point's run, placed by :func:`label_rows`, with leader lines to the moved ones.
    ``frame`` holds ``run_id``, ``x_field`` and ``y_field``; ``x`` and ``y`` are the chart's encodings, their
    scales from 0 to a fixed top (:func:`_roomy`)."""
    x_top = float(x["scale"]["domain"][1])
    y_top = float(y["scale"]["domain"][1])
    rows = label_rows(frame[x_field].to_list(), frame[y_field].to_list(), frame["run_id"].to_list(), x_top, y_top)
    placed = frame.select("run_id", x_field, y_field).with_columns(label_y=pl.Series(rows, dtype=pl.Float64))
    data = _values(placed, digits=6)
    at_label = field("label_y:Q", title=y["title"], scale=y["scale"])
    leaders = {
        "data": data,
        "mark": {"type": "rule", "color": "#888", "strokeWidth": 1},
        "encoding": {
            "x": x,
            "y": field(f"{y_field}:Q", title=y["title"], scale=y["scale"]),
            "y2": _second("label_y"),
        },
        "transform": [{"filter": f"abs(datum.label_y - datum.{y_field}) > {y_top * 0.01}"}],
    }
    text = {
        "data": data,
        "mark": {"type": "text", "align": "left", "baseline": "bottom", "dx": 8, "dy": -6, "fontSize": _LABEL_FONT},
        "encoding": {"x": x, "y": at_label, "text": field("run_id:N"), "color": run_color(t, runs, legend=False)},
    }
    return [leaders, text]


def _roomy(values: pl.Series) -> dict[str, Any]:
    """A scale from 0 to 15% past the largest value, so the text label of the rightmost (or top) point stays
    inside. Not "nice": its ends are what :func:`label_rows` computes with."""
    top = float(values.max() or 0)
    return {"domain": [0, top * 1.15 if top > 0 else 1], "nice": False}


def time_unit(max_seconds: float) -> tuple[float, str]:
    """(seconds per unit, catalog key of the unit) that keeps an axis up to ``max_seconds`` readable."""
    if max_seconds >= 2 * 3600:
        return 3600.0, "unit.hours"
    if max_seconds >= 120:
        return 60.0, "unit.minutes"
    return 1.0, "unit.seconds"


def _line_over(
    data: dict[str, Any], x: dict[str, Any], y: dict[str, Any], color: dict[str, Any], tips: list[dict[str, Any]]
) -> Spec:
    """Lines with a small dot at each point, one per run: the throughput and metric charts."""
    return {
        "data": data,
        "mark": {"type": "line", "point": {"size": 18}},
        "encoding": {"x": x, "y": y, "color": color, "tooltip": tips},
    }


def throughput_steps_chart(points: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Lines of interval global steps/s over the global step, one per run.

    ``points``: ``run_id`` (String), ``step`` (Int64), ``rate`` (Float64, global steps/s);
    see :func:`tierscope.analysis.series.throughput_series`. ``runs``: the colour domain (:func:`run_color`;
    None: the frame's runs). The same ``runs`` argument, with the same meaning, on every chart function.
    """
    points = require(points, ("run_id", "step", "rate"), "throughput over steps")
    if points.height == 0:
        return None
    tips = [
        tooltip("run_id:N", t("chart.run")),
        tooltip("step:Q", t("chart.global_step"), ","),
        tooltip("rate:Q", t("chart.global_steps_per_s"), ",.2f"),
    ]
    chart = _line_over(
        _values(points.select("run_id", "step", "rate")),
        field("step:Q", title=t("chart.global_step")),
        field("rate:Q", title=t("chart.global_steps_per_s")),
        run_color(t, _domain(points, runs)),
        tips,
    )
    return _spec({**chart, "height": HEIGHT, "title": t("chart.throughput_steps_title")}, t)


def throughput_time_chart(points: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Lines of interval global steps/s over time since the run began, one per run.

    ``points``: ``run_id`` (String), ``seconds`` (Float64, since the run began), ``rate``
    (Float64, global steps/s); see :func:`tierscope.analysis.series.throughput_series`.
    """
    points = require(points, ("run_id", "seconds", "rate"), "throughput over time")
    if points.height == 0:
        return None
    per, unit = time_unit(float(points["seconds"].max() or 0))
    data = points.select("run_id", (pl.col("seconds") / per).alias("time"), "rate")
    time_title = t("chart.time_since_start", unit=t(unit))
    tips = [
        tooltip("run_id:N", t("chart.run")),
        tooltip("time:Q", time_title, ",.2f"),
        tooltip("rate:Q", t("chart.global_steps_per_s"), ",.2f"),
    ]
    chart = _line_over(
        _values(data),
        field("time:Q", title=time_title),
        field("rate:Q", title=t("chart.global_steps_per_s")),
        run_color(t, _domain(points, runs)),
        tips,
    )
    return _spec({**chart, "height": HEIGHT, "title": t("chart.throughput_time_title")}, t)


def speedup_chart(frame: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Bars of each run's speedup against the baseline, with its interval where known.

    ``frame``: ``run_id``, ``tier`` (String), ``speedup``, ``low``, ``high`` (Float64;
    ``low``/``high`` may be null); see :func:`tierscope.reports.frames.speedup_frame`.
    """
    frame = require(frame, ("run_id", "tier", "speedup", "low", "high"), "speedup")
    if frame.height == 0:
        return None
    order = frame.sort("speedup", descending=True)["run_id"].to_list()
    data = _values(frame.select("run_id", "tier", "speedup", "low", "high"))
    x = field("run_id:N", title=t("chart.run"), sort=order, axis={"labelAngle": -30})
    bars = {
        "data": data,
        "mark": {"type": "bar"},
        "encoding": {
            "x": x,
            "y": field("speedup:Q", title=t("chart.speedup")),
            "color": run_color(t, _domain(frame, runs), legend=False),  # the axis names the runs
            "tooltip": [
                tooltip("run_id:N", t("chart.run")),
                tooltip("tier:N", t("chart.tier")),
                tooltip("speedup:Q", t("chart.speedup"), ",.2f"),
                tooltip("low:Q", t("chart.interval_low"), ",.2f"),
                tooltip("high:Q", t("chart.interval_high"), ",.2f"),
            ],
        },
    }
    layers = [bars]
    if frame["low"].is_not_null().any():
        layers.append(
            {
                "data": data,
                "mark": {"type": "rule", "strokeWidth": 2, "color": "#222"},
                "encoding": {"x": x, "y": field("low:Q"), "y2": _second("high")},
                "transform": [{"filter": "isValid(datum.low)"}],
            }
        )
    rule = {
        "data": {"values": [{"y": 1}]},
        "mark": {"type": "rule", "strokeDash": [4, 4], "color": "#555"},
        "encoding": {"y": field("y:Q")},
    }
    return _spec(_layer(*layers, rule, height=HEIGHT, title=t("chart.speedup_title")), t)


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
    data = priced.select("run_id", "tier", (pl.col("seconds_to_n") / per).alias("time"), pl.col(cost).alias("cost"), on)
    rows = _values(data)
    x = field("time:Q", title=time_title, scale=_roomy(data["time"]))
    y = field("cost:Q", title=cost_title, scale=_roomy(data["cost"]))
    domain = _domain(priced, runs)
    frontier = {
        "data": rows,
        "mark": {"type": "line", "interpolate": "step-after", "color": "#2b6cb0", "strokeDash": [6, 3]},
        "encoding": {"x": x, "y": y, "order": field("time:Q")},
        "transform": [{"filter": f"datum.{on}"}],
    }
    shape = field(
        f"{on}:N",
        title=t("chart.frontier"),
        scale={"domain": [True, False], "range": ["diamond", "circle"]},
        legend={"labelExpr": _yes_no(t("chart.on_frontier"), t("chart.off_frontier"))},
    )
    points = {
        "data": rows,
        "mark": {"type": "point", "filled": True, "size": 90},
        "encoding": {
            "x": x,
            "y": y,
            "color": run_color(t, domain),
            "shape": shape,
            "tooltip": [
                tooltip("run_id:N", t("chart.run")),
                tooltip("tier:N", t("chart.tier")),
                tooltip("time:Q", time_title, ",.3~f"),
                tooltip("cost:Q", cost_title, ",.4~f"),
            ],
        },
    }
    labels = _point_labels(data, "time", "cost", x, y, domain, t)
    title = t("chart.cost_time_title", n=t.number(steps))
    return _spec(_layer(frontier, points, *labels, height=HEIGHT, title=title), t)


def task_rates_chart(frame: pl.DataFrame, t: Catalog, runs: Sequence[str] | None = None) -> Spec | None:
    """Local steps/s of every training task, one row of dots per run in the run's colour; stragglers stand out
    as larger triangles ringed in red.

    ``frame``: ``run_id``, ``task`` (String, ``role/index``), ``local_steps_per_s``
    (Float64), ``straggler`` (Boolean); see :func:`tierscope.reports.frames.task_local_rates`.
    """
    frame = require(frame, ("run_id", "task", "local_steps_per_s", "straggler"), "local rates per task")
    if frame.height == 0:
        return None
    shown = frame["run_id"].n_unique()
    data = frame.select("run_id", "task", "local_steps_per_s", "straggler")
    kinds = [False, True]
    chart = {
        "data": _values(data),
        "mark": {"type": "point", "filled": True, "size": 70, "opacity": 0.85},
        "encoding": {
            "x": field("local_steps_per_s:Q", title=t("chart.local_steps_per_s"), scale={"zero": True}),
            "y": field("run_id:N", title=t("chart.run")),
            "color": run_color(t, _domain(frame, runs), legend=False),  # the axis names the runs
            "shape": field(
                "straggler:N",
                title=t("chart.task_kind"),
                scale={"domain": kinds, "range": ["circle", "triangle-down"]},
                legend={"labelExpr": _yes_no(t("chart.straggler"), t("chart.normal"))},
            ),
            "stroke": field("straggler:N", scale={"domain": kinds, "range": ["transparent", "#d62728"]}, legend=None),
            "strokeWidth": {"value": 2},
            "size": field("straggler:N", scale={"domain": kinds, "range": [60, 160]}, legend=None),
            "tooltip": [
                tooltip("run_id:N", t("chart.run")),
                tooltip("task:N", t("chart.task")),
                tooltip("local_steps_per_s:Q", t("chart.local_steps_per_s"), ",.3f"),
            ],
        },
    }
    return _spec({**chart, "height": max(60, 28 * shown), "title": t("chart.tasks_title")}, t)


def scaling_chart(
    points: pl.DataFrame, model: pl.DataFrame | None, t: Catalog, runs: Sequence[str] | None = None
) -> Spec | None:
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
    domain = _domain(points, runs)
    if has_model:
        model = require(model, ("tasks", "predicted", "low", "high", "model"), "scaling model")
    sizes = (
        pl.concat([points["tasks"].cast(pl.Float64), model["tasks"].cast(pl.Float64)]) if has_model else points["tasks"]
    )
    x = field("tasks:Q", title=t("chart.training_tasks"), scale=_roomy(sizes))
    tops = [points["rate"], *([model["high"].drop_nulls(), model["predicted"]] if has_model else [])]
    y_title, y_scale = t("chart.steady_global_steps_per_s"), _roomy(pl.concat([v.cast(pl.Float64) for v in tops]))
    y = field("rate:Q", title=y_title, scale=y_scale)
    layers: list[Spec] = []
    if has_model:
        band = _values(model.select("tasks", "predicted", "low", "high", "model"))
        low = field("low:Q", title=y_title, scale=y_scale)
        layers.append(
            {
                "data": band,
                "mark": {"type": "area", "opacity": 0.2, "color": "#2b6cb0"},
                "encoding": {"x": x, "y": low, "y2": _second("high")},
            }
        )
        predicted = field("predicted:Q", title=y_title, scale=y_scale)
        dash = field("model:N", title=t("chart.model"))
        layers.append(
            {
                "data": band,
                "mark": {"type": "line", "color": "#2b6cb0"},
                "encoding": {"x": x, "y": predicted, "strokeDash": dash},
            }
        )
    with_bounds = "low" in points.columns and "high" in points.columns
    base = _values(points.select("run_id", "tier", "tasks", "rate", *(["low", "high"] if with_bounds else [])))
    if with_bounds and points["low"].is_not_null().any():
        layers.append(
            {
                "data": base,
                "mark": {"type": "rule", "color": "#222"},
                "encoding": {"x": x, "y": field("low:Q", title=y_title, scale=y_scale), "y2": _second("high")},
                "transform": [{"filter": "isValid(datum.low)"}],
            }
        )
    layers.append(
        {
            "data": base,
            "mark": {"type": "point", "filled": True, "size": 90},
            "encoding": {
                "x": x,
                "y": y,
                "color": run_color(t, domain),
                "tooltip": [
                    tooltip("run_id:N", t("chart.run")),
                    tooltip("tier:N", t("chart.tier")),
                    tooltip("tasks:Q", t("chart.training_tasks")),
                    tooltip("rate:Q", t("chart.steady_global_steps_per_s"), ",.3f"),
                ],
            },
        }
    )
    layers += _point_labels(points.with_columns(pl.col("tasks").cast(pl.Float64)), "tasks", "rate", x, y, domain, t)
    return _spec(_layer(*layers, height=HEIGHT, title=t("chart.scaling_title")), t)


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
    share = field("share:Q", title=t("chart.lifetime_share"), stack="zero", axis={"format": "%"})
    chart = {
        "data": _values(shown),
        "mark": {"type": "bar"},
        "encoding": {
            "x": field("run_id:N", title=t("chart.run"), axis={"labelAngle": -30}),
            "y": share,
            "color": field("label:N", title=t("chart.goodput_part"), sort=legend_order),
            "order": field("order:Q"),
            "tooltip": [
                tooltip("run_id:N", t("chart.run")),
                tooltip("label:N", t("chart.goodput_part")),
                tooltip("seconds:Q", t("chart.seconds"), ",.1f"),
                tooltip("share:Q", t("chart.lifetime_share"), ".1%"),
                tooltip("goodput:Q", t("chart.goodput"), ".1%"),
            ],
        },
    }
    return _spec({**chart, "height": HEIGHT, "title": t("chart.goodput_title")}, t)


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
    x = field("time:Q", title=time_title)
    y = field("value:Q", title=value_title, scale={"zero": False})
    domain = _domain(points, runs)
    data = points.select("run_id", (pl.col("seconds") / per).alias("time"), "value")
    tips = [
        tooltip("run_id:N", t("chart.run")),
        tooltip("time:Q", time_title, ",.2f"),
        tooltip("value:Q", value_title, ",.4~f"),
    ]
    layers = [_line_over(_values(data), x, y, run_color(t, domain), tips)]
    if target is not None:
        layers.append(
            {
                "data": {"values": [{"value": target}]},
                "mark": {"type": "rule", "strokeDash": [6, 4], "color": "#555"},
                "encoding": {"y": field("value:Q", title=value_title)},
            }
        )
        if reached is not None and reached.height:
            at = reached.select("run_id", (pl.col("seconds") / per).alias("time"), "value", "step")
            step = tooltip("step:Q", t("chart.global_step"), ",")
            mark = {"type": "point", "shape": "diamond", "filled": True, "size": 150}
            mark |= {"stroke": "#222", "strokeWidth": 1}
            layers.append(
                {
                    "data": _values(at, digits=6),
                    "mark": mark,
                    "encoding": {"x": x, "y": y, "color": run_color(t, domain, legend=False), "tooltip": [*tips, step]},
                }
            )
    title = t(f"chart.metric_{metric}_title")
    return _spec(_layer(*layers, height=HEIGHT, title=title), t)


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
    rows = _values(data)
    label = [{"calculate": f"isValid(datum.cost) ? format(datum.cost, ',.3~f') + {suffix} : ''", "as": "label"}]
    x = field("run_id:N", title=t("chart.run"), sort=order, axis={"labelAngle": -30})
    y = field("time:Q", title=time_title, scale=_roomy(data["time"]))
    bars = {
        "data": rows,
        "mark": {"type": "bar"},
        "encoding": {
            "x": x,
            "y": y,
            "color": run_color(t, _domain(frame, runs), legend=False),  # the axis names the runs
            "tooltip": [
                tooltip("run_id:N", t("chart.run")),
                tooltip("tier:N", t("chart.tier")),
                tooltip("time:Q", time_title, ",.3~f"),
                tooltip("step:Q", t("chart.global_step"), ","),
                tooltip("cost:Q", cost_title, ",.4~f"),
            ],
        },
        "transform": label,
    }
    labels = {
        "data": rows,
        "mark": {"type": "text", "baseline": "bottom", "dy": -4, "fontSize": _LABEL_FONT},
        "encoding": {"x": x, "y": y, "text": field("label:N")},
        "transform": label,
    }
    return _spec(_layer(bars, labels, height=HEIGHT, title=t("chart.target_title", target=target)), t)
