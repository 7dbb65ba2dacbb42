"""The HTML report: one self-contained file (inline CSS, the Vega JavaScript inlined once,
every chart's spec embedded) that opens offline in any browser. The library behind
``tierscope report``.

Two steps: :func:`report_data` takes the small bounded frames a report draws from one
analysis pass (:func:`tierscope.analysis.analyze` with :func:`analysis_options`; the report never
opens the dataset) into :class:`ReportData`; :func:`render_html` turns them into HTML in a
language. A section whose frame or column is absent says "not available" instead of failing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from tierscope.analysis import Analysis
from tierscope.analysis.forecast import scaling, unmeasured
from tierscope.analysis.printed_rates import CLOCK_TOLERANCE, MAX_RATIO
from tierscope.analysis.provenance import Provenance
from tierscope.analysis.scaling import ScalingFit, best_fit
from tierscope.analysis.summary import clock_far, clock_gives_more, printed_apart_from_clock, shared_examples_word
from tierscope.atomic import write_text_atomic
from tierscope.reports import charts, frames
from tierscope.reports.charts import Spec
from tierscope.reports.errors import ReportError
from tierscope.reports.frames import MissingColumnsError
from tierscope.reports.headline import apart_why, headline
from tierscope.reports.i18n import Catalog, default_lang, number_locale
from tierscope.reports.options import ReportOptions as ReportOptions
from tierscope.reports.options import analysis_options as analysis_options
from tierscope.reports.outfile import check_replaceable
from tierscope.text import printable


@dataclass
class ReportData:
    """Everything a report shows; every frame is bounded (see :mod:`tierscope.reports.frames`) and any may be None
    (its section then says "not available"). Column contracts: the functions in :mod:`tierscope.reports.frames`."""

    summary: pl.DataFrame
    steps: int
    provenance: Provenance
    #: One row per configuration (:func:`tierscope.analysis.configurations.configurations`): the runs table,
    #: the headline, speedups and costs; None: the summary's rows (each run its own configuration).
    configurations: pl.DataFrame | None = None
    runs_charted: int = 0
    runs_total: int = 0
    throughput_steps: pl.DataFrame | None = None
    throughput_time: pl.DataFrame | None = None
    task_rates: pl.DataFrame | None = None
    speedup: pl.DataFrame | None = None
    costs: pl.DataFrame | None = None
    scaling_points: pl.DataFrame | None = None
    scaling_model: pl.DataFrame | None = None
    unmeasured: pl.DataFrame | None = None  # tierscope.analysis.forecast.UNMEASURED_SCHEMA
    goodput: pl.DataFrame | None = None  # tierscope.reports.frames.goodput_frame
    exact_fit: tuple[str, int] | None = None  # (model, runs) when the scaling model is exactly determined
    metric: str = "loss"  # what metric_time charts: loss, or accuracy (the target's kind)
    metric_time: pl.DataFrame | None = None  # tierscope.analysis.target.MetricSeries.points
    target: tuple[str, float] | None = None  # (kind, value) of --target-loss / --target-accuracy
    to_target: pl.DataFrame | None = None  # tierscope.reports.frames.time_to_target_frame
    #: The runs whose steady rate is their log's clock's, the printed global rate set aside
    #: (:mod:`tierscope.analysis.printed_rates`): ``run_id``, ``printed_set_aside``, ``clock_beside``
    #: (global steps/s), ``printed_off_rounding`` (the summary's ``steady_clock_note`` in figures).
    clock_rates: pl.DataFrame | None = None
    #: The runs kept apart from the baseline, or compared with it though their work differs (the summary's
    #: ``baseline_note`` in parts): :data:`tierscope.analysis.comparable.APART_SCHEMA`.
    apart: pl.DataFrame | None = None
    #: Where N (:attr:`steps`) comes from, a ``steps_n.<key>`` of the catalog: ``given`` (``--steps``),
    #: ``longest`` (the highest global step a run logged, :attr:`steps_runs` the runs that logged it) or
    #: ``default`` (no run logged a step).
    steps_origin: str = "given"
    steps_runs: tuple[str, ...] = ()


@dataclass
class Section:
    """One chart section: ``key`` names its catalog entries (``section.<key>.title`` / ``.text``)."""

    key: str
    spec: Spec | None
    unavailable: str | None = None
    notes: list[str] = field(default_factory=list)
    #: The chart's title, drawn by the page above the chart (where it wraps) instead of inside the SVG.
    title: str | None = None


def _or_none(build: Callable[[], pl.DataFrame | None]) -> pl.DataFrame | None:
    try:
        return build()
    except MissingColumnsError:
        return None


def report_data(analysis: Analysis) -> ReportData:
    """The frames of a report on ``analysis`` (:func:`tierscope.analysis.analyze` with :func:`analysis_options`).
    Raises :class:`tierscope.reports.errors.ReportError` if it was run without chart series."""
    series = analysis.series
    if series is None or analysis.target_steps is None:
        raise ReportError("the analysis holds no chart series or target: run it with reports.render.analysis_options()")
    frame = analysis.summary
    # speedup, price and the answer are the configurations': repeats of one job are one row
    configs = analysis.configurations if analysis.configurations is not None else frame
    metrics, goal = analysis.metric_series, analysis.target
    fitted = scaling(analysis)
    max_tasks = int(fitted.points["tasks"].max() or 1)
    charted = series.runs.select("run_id")
    return ReportData(
        summary=frame,
        steps=analysis.target_steps,
        provenance=analysis.provenance,
        configurations=configs,
        runs_charted=series.runs.height,
        runs_total=frame.filter(pl.col("records") > 0).height,
        throughput_steps=series.over_steps,
        throughput_time=series.over_time,
        task_rates=frames.bounded_task_rates(
            frames.task_local_rates(analysis.figures.tasks.join(charted, on="run_id", how="semi"))
        ),
        speedup=_or_none(lambda: frames.speedup_frame(configs)),
        costs=_or_none(lambda: frames.time_and_cost_to_steps(configs)),
        scaling_points=_or_none(lambda: frames.scaling_points(fitted.points)),
        scaling_model=frames.scaling_model(fitted.fits, max_tasks),
        unmeasured=unmeasured(analysis),
        goodput=_or_none(lambda: frames.goodput_frame(frame.join(charted, on="run_id", how="semi"))),
        exact_fit=_exact_fit(fitted.fits),
        metric=metrics.metric if metrics is not None else "loss",
        metric_time=metrics.points if metrics is not None else None,
        target=(goal.kind, goal.value) if goal is not None else None,
        to_target=_or_none(lambda: frames.time_to_target_frame(frame)) if goal is not None else None,
        clock_rates=clock_rates(analysis.figures.throughput, frame),
        apart=analysis.apart,
        **steps_origin(analysis),
    )


def steps_origin(analysis: Analysis) -> dict[str, Any]:
    """:attr:`ReportData.steps_origin` and :attr:`ReportData.steps_runs` of ``analysis``: N is what ``--steps``
    asked, else the highest global step logged (:func:`tierscope.analysis.analyze.analyze`'s ``last_step``) and the
    runs that logged it, else the default."""
    if analysis.options.steps != "longest":
        return {"steps_origin": "given"}
    if analysis.last_step is None:
        return {"steps_origin": "default"}
    longest = analysis.summary.filter(pl.col("last_step") == analysis.last_step)["run_id"].sort()
    return {"steps_origin": "longest", "steps_runs": tuple(longest)}


def steps_note(data: ReportData, t: Catalog) -> str:
    """Where N of "time and price to N steps" comes from, a sentence in ``t``'s language."""
    return t(f"steps_n.{data.steps_origin}", n=t.number(data.steps), runs=t.join(list(data.steps_runs)))


#: Columns of :attr:`ReportData.clock_rates`.
CLOCK_RATE_COLUMNS = ("run_id", "printed_set_aside", "clock_beside", "printed_off_rounding")


def clock_rates(throughput: pl.DataFrame, summary: pl.DataFrame) -> pl.DataFrame:
    """:attr:`ReportData.clock_rates` of the runs of ``summary`` (one row each whose steady rate rests on
    its clock), from ``throughput`` (:data:`tierscope.analysis.throughput.THROUGHPUT_SCHEMA`): the
    figures behind the summary's ``steady_clock_note``, for a note in the report's language."""
    rows = throughput.filter(pl.col("printed_set_aside").is_not_null()).select(CLOCK_RATE_COLUMNS)
    return rows.join(summary.select("run_id"), on="run_id", how="semi").sort("run_id")


def _exact_fit(fits: list[ScalingFit]) -> tuple[str, int] | None:
    model = best_fit(fits)
    return (model.model, model.runs) if model is not None and model.exact else None


def _section(
    key: str, build: Callable[[], Spec | None], t: Catalog, notes: list[str] | None = None, empty: str | None = None
) -> Section:
    """A chart section; ``empty``: what it says when no run has data for it (``chart.no_data`` by default).
    Its notes stay beside that sentence: why each run has nothing to draw is what the reader looks for."""
    try:
        spec = build()
    except MissingColumnsError as exc:
        return Section(key, None, t("chart.unavailable", columns=", ".join(exc.missing)))
    if spec is None:
        return Section(key, None, empty or t("chart.no_data"), notes=notes or [])
    return Section(key, spec, notes=notes or [])


def shown(data: ReportData) -> ReportData:
    """``data`` with every text value of its frames escaped for display (:func:`tierscope.reports.frames.shown_labels`):
    run ids, tiers and task names reach the charts' labels and legends only through here."""
    frames_of = {f.name: getattr(data, f.name) for f in fields(data)}
    return replace(data, **{k: frames.shown_labels(v) for k, v in frames_of.items() if isinstance(v, pl.DataFrame)})


def target_text(target: tuple[str, float], t: Catalog) -> str:
    """A target in words of the report's language: ``loss ≤ 2``, ``accuracy ≥ 0.9``."""
    kind, value = target
    return t(f"target.{kind}", value=f"{value:g}")


def _target_notes(data: ReportData, t: Catalog) -> list[str]:
    if data.target is None:
        return []
    notes = [t(f"target.rule_{data.target[0]}", target=target_text(data.target, t))]
    return notes + [t(f"target.status.{status}", run=run) for run, status in frames.not_reached(data.summary)]


def _clockless(data: ReportData) -> list[tuple[str, str]]:
    """The charted runs (those of the throughput chart) the metric chart leaves out for want of a clock: no
    point of theirs in it, and no clock on their lead task (the summary's ``goodput_clock`` is null), each with
    why (its ``clock_missing``, :data:`tierscope.analysis.clock.CLOCK_MISSING`'s key; ``none`` where unsaid)."""
    if data.throughput_steps is None or "goodput_clock" not in data.summary.columns:
        return []
    charted = set(data.throughput_steps["run_id"].to_list())
    drawn = set(data.metric_time["run_id"].to_list()) if data.metric_time is not None else set()
    why = pl.col("clock_missing") if "clock_missing" in data.summary.columns else pl.lit(None, pl.String)
    rows = data.summary.filter(pl.col("goodput_clock").is_null() & (pl.col("records") > 0))
    return [
        (r, w or "none")
        for r, w in rows.select("run_id", why.alias("why")).iter_rows()
        if r in charted and r not in drawn
    ]


def _on_task_clock(data: ReportData) -> list[str]:
    """The runs the metric chart draws on their lead task's own clock (``clock`` ``task``: no timestamps, no
    elapsed times), in the chart's order."""
    points = data.metric_time
    if points is None or "clock" not in points.columns:
        return []
    return points.filter(pl.col("clock") == "task")["run_id"].unique(maintain_order=True).to_list()


def sections(data: ReportData, t: Catalog) -> list[Section]:
    """The chart sections, top to bottom, each with its spec or the sentence saying why it has none."""
    data = shown(data)  # once, before any chart is built: no label reaches a chart unescaped
    capped = (
        [t("chart.runs_capped", shown=data.runs_charted, total=data.runs_total)]
        if data.runs_charted < data.runs_total
        else []
    )
    no_model = [] if data.scaling_model is not None else [t("chart.no_model")]
    if data.exact_fit is not None:
        model, fit_runs = data.exact_fit
        no_model.append(t("chart.fit_exact", model=t("model." + model), fit_runs=t.count(fit_runs)))
    elif data.scaling_model is not None:  # a fitted model's band has a gap where an interval left the sane range
        gaps = data.scaling_model.filter(pl.col("high").is_null())["tasks"].to_list()
        if gaps:
            no_model.append(t("chart.band_gap", tasks=t.join([t.number(n) for n in gaps])))
    unobserved = [
        t("goodput.unobserved", run=run, buckets=t.join([t(f"goodput.{b}") for b in buckets]))
        for run, buckets in frames.unobserved_buckets(data.summary)
    ]
    runs = charts.run_ids(data.summary)  # one colour per run in every chart: the table's order
    if data.configurations is not None:  # and per configuration of several runs (the speedup and cost charts')
        runs += [c for c in charts.run_ids(data.configurations) if c not in set(runs)]
    value = data.target[1] if data.target is not None else None
    goal = _target_notes(data, t)
    n_note = [steps_note(data, t)]
    metric = _section(
        f"{data.metric}_time",
        lambda: charts.metric_time_chart(data.metric_time, data.to_target, t, data.metric, value, runs),
        t,
        capped
        + goal
        + [t("chart.task_clock", run=run) for run in _on_task_clock(data)]
        + [t(f"chart.no_clock{'' if why == 'none' else '_' + why}", run=run) for run, why in _clockless(data)],
    )
    reach = (
        [
            _section(
                "target",
                lambda: charts.target_chart(data.to_target, t, target_text(data.target, t), runs),
                t,
                goal,
                empty=t("target.none_reached", target=target_text(data.target, t)),
            )
        ]
        if data.target is not None
        else []
    )
    return [
        _section("throughput_steps", lambda: charts.throughput_steps_chart(data.throughput_steps, t, runs), t, capped),
        _section("throughput_time", lambda: charts.throughput_time_chart(data.throughput_time, t, runs), t, capped),
        metric,
        _section("speedup", lambda: charts.speedup_chart(data.speedup, t, runs), t),
        _section("goodput", lambda: charts.goodput_chart(data.goodput, t), t, unobserved),
        _section("cost_time", lambda: charts.cost_time_chart(data.costs, t, data.steps, runs), t, n_note),
        *reach,
        _section("tasks", lambda: charts.task_rates_chart(data.task_rates, t, runs), t, capped),
        _section(
            "scaling",
            lambda: charts.scaling_chart(data.scaling_points, data.scaling_model, t, runs, _predicted(data)),
            t,
            no_model,
        ),
    ]


def _predicted(data: ReportData) -> pl.DataFrame | None:
    """The answer box's predictions of runs never measured (``run_id, tier, tasks, rate``), for the scaling chart."""
    if data.unmeasured is None or data.unmeasured.height == 0:
        return None
    return data.unmeasured.select("run_id", "tier", "tasks", rate="global_steps_per_s")


def chart_specs(data: ReportData, t: Catalog) -> dict[str, Spec]:
    """The specs of the charts that have something to draw, by section key."""
    return {s.key: s.spec for s in sections(data, t) if s.spec is not None}


def _bundle_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tierscope"


@cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (from vl-convert), safe inside <script>.

    vl-convert bundles the libraries on each call (about 5 s), so the result is kept in
    ``$XDG_CACHE_HOME/tierscope`` (default ``~/.cache``) under vl-convert's version; an
    unwritable cache directory only costs the time.
    """
    import vl_convert

    cached = _bundle_cache() / f"vega-bundle-{vl_convert.__version__}.js"
    try:
        return cached.read_text(encoding="utf-8")
    except OSError:
        pass
    bundle = vl_convert.javascript_bundle().replace("</script", "<\\/script")
    with contextlib.suppress(OSError):
        write_text_atomic(cached, bundle)
    return bundle


def _env() -> Environment:
    return Environment(
        loader=PackageLoader("tierscope.reports", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )


def _shown(value: object) -> object:
    """Every ``{{ }}`` value: text with its control characters escaped (a U+202E in a run id
    would reorder the page; autoescape does not touch it); markup (``|safe``, ``|tojson``) as is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return printable(value)
    return value


def _table_rows(frame: pl.DataFrame) -> list[dict[str, object]]:
    """The summary's rows, with the interval columns always as keys and ``configuration``: the run's tier,
    else its machines (:func:`tierscope.reports.frames.configuration`)."""
    bounds = (frames.STEADY_LOW, frames.STEADY_HIGH, frames.SPEEDUP_LOW, frames.SPEEDUP_HIGH)
    missing = [pl.lit(None, pl.Float64).alias(c) for c in bounds if c not in frame.columns]
    rows = frame.with_columns(missing, configuration=frames.configuration(frame)).to_dicts()
    for row in rows:
        row["steady_low"], row["steady_high"] = row[frames.STEADY_LOW], row[frames.STEADY_HIGH]
        row["speedup_low"], row["speedup_high"] = row[frames.SPEEDUP_LOW], row[frames.SPEEDUP_HIGH]
    return rows


def configuration_notes(data: ReportData, t: Catalog) -> list[str]:
    """Under the runs table: each row of several runs (its runs, the spread of their steady rates, those left
    out of its rate), then what the table's 95 % intervals cover (within one run, between a configuration's runs)."""
    from tierscope.analysis.configurations import CI_BETWEEN_RUNS, rated, row_names
    from tierscope.analysis.summary import CI_WITHIN_RUN

    table = data.configurations if data.configurations is not None else data.summary
    notes = []
    if "config_runs" in table.columns:
        names = row_names(data.summary)
        runs = data.summary.join(names.select("run_id", "row"), on="run_id").with_columns(_rated=rated())
        split = dict(zip(names["row"], names["split_note"], strict=True))
        for r in table.filter(pl.col("run_id") != pl.col("run_ids")).iter_rows(named=True):
            # a configuration of one run: its row carries the configuration's name, so the run is said
            if r["config_runs"] == 1:
                notes.append(t("config.one_run", config=r["run_id"], run=r["run_ids"]))
            if split.get(r["run_id"]):
                n_machines = names.filter(pl.col("config") == r["config"])["row"].n_unique()
                notes.append(t("config.split", config=r["run_id"], name=r["config"], machines=n_machines))
        for r in table.filter(pl.col("config_runs") > 1).iter_rows(named=True):
            values = {"config": r["run_id"], "runs": t.counted("count.runs", r["config_runs"]), "ids": r["run_ids"],
                      "rated": t.counted("count.runs", r["rated_runs"]), "low": t.number(r["run_rate_min"], 3),
                      "high": t.number(r["run_rate_max"], 3)}  # fmt: skip
            if r["rated_runs"]:
                notes.append(t("config.row" if r["ci_scope"] == CI_BETWEEN_RUNS else "config.row_few", **values))
            if r["ci_scope"] == CI_BETWEEN_RUNS and r["steady_ci_low"] == 0:  # between_runs clips a bound below 0
                notes.append(t("config.clipped", config=r["run_id"]))
            left = runs.filter((pl.col("row") == r["run_id"]) & ~pl.col("_rated"))["run_id"].to_list()
            if left:
                notes.append(t("config.left_out", config=r["run_id"], runs=", ".join(left)))
    scopes = set(table["ci_scope"].drop_nulls()) if "ci_scope" in table.columns else set()
    notes += [
        t(key) for key, scope in (("ci.within", CI_WITHIN_RUN), ("ci.between", CI_BETWEEN_RUNS)) if scope in scopes
    ]
    return notes


def interval_header(data: ReportData) -> str:
    """The catalog key of the runs table's interval header: within the run, or mixed where a row is several runs'."""
    table = data.configurations if data.configurations is not None else data.summary
    several = "config_runs" in table.columns and (table["config_runs"] > 1).any()
    return "col.steady_interval_mixed" if several else "col.steady_interval"


def cost_columns(summary: pl.DataFrame) -> list[str]:
    """The runs table's cost columns: ``units`` (ML units/hour, steps per ML unit-hour) where a run has ML
    units (a legacy tier), ``usd`` (USD/hour, USD per 1,000 steps) where a run has a dollar price, and
    ``hours`` (hours to N steps) unless both are there: five cost columns overflow a laptop's screen,
    and the price-against-time chart gives the hours to N of every run; ``million`` (USD per 1M examples,
    each run's own unit named where they differ) where a run's log counted tokens."""
    shown = [name for name, column in (("units", "ml_units_per_hour"), ("usd", "usd_per_hour"))
             if summary[column].is_not_null().any()]  # fmt: skip
    shown = shown if len(shown) == 2 else [*shown, "hours"]
    # USD per 1M tokens where a run's log counted tokens: the price a language model's trainer asks first
    tokens = "examples_unit" in summary.columns and (summary["examples_unit"] == "tokens").any()
    return [*shown, "million"] if tokens and summary["usd_per_million_examples"].is_not_null().any() else shown


def rate_text(value: float, t: Catalog) -> str:
    """A rate to 3 significant digits without trailing zeros (``0.04``, ``3.54``, ``0.0536``), as the
    summary's notes write it: a printed ``0.04`` is not shown as ``0.0400``."""
    text = t.significant(float(f"{value:.3g}"))
    decimal = number_locale(t.lang)["decimal"]
    return text.rstrip("0").rstrip(decimal) if decimal in text else text


def clock_notes(clock: pl.DataFrame | None, t: Catalog) -> list[str]:
    """For each run whose steady rate is its log's clock's (:attr:`ReportData.clock_rates`), a sentence in
    ``t``'s language: the rate the log printed, set aside, the clock's over the same intervals, and why."""
    if clock is None:
        return []
    return [
        t(
            "steady.clock",
            run=r["run_id"],
            printed=rate_text(r["printed_set_aside"], t),
            clock=rate_text(r["clock_beside"], t),
            why=t("steady.clock_off" if r["printed_off_rounding"] else "steady.clock_coarse"),
        )
        for r in clock.iter_rows(named=True)
    ]


def steady_notes(summary: pl.DataFrame, t: Catalog, clock: pl.DataFrame | None = None) -> list[str]:
    """Why each run that logged steps has no steady-state rate, a sentence each in ``t``'s language
    (the summary's ``steady_status``, :data:`tierscope.analysis.summary.STEADY_REASONS`; a run
    without records says so by its status), then what a run's steady rate assumes where it does
    (``steady_assumption``, :data:`tierscope.analysis.summary.STEADY_ASSUMPTIONS`), then the runs whose
    steady rate is their clock's (``clock``: :attr:`ReportData.clock_rates`, :func:`clock_notes`)."""
    notes: list[str] = []
    if "steady_status" in summary.columns:
        said = (pl.col("records") > 0) | pl.col("steady_status").is_in(["finished_without_steps", "whole_run_only"])
        rows = summary.filter(pl.col("steady_status").is_not_null() & said)
        notes += [
            t("steady.none", run=r["run_id"], reason=t(f"steady.reason.{r['steady_status']}", segments=r["segments"]))
            for r in rows.iter_rows(named=True)
        ]
    if "steady_assumption" in summary.columns:
        rows = summary.filter(pl.col("steady_assumption").is_not_null())
        notes += [
            t("steady.assumes", run=r["run_id"], assumption=t(f"steady.assumption.{r['steady_assumption']}"))
            for r in rows.iter_rows(named=True)
        ]
    return notes + clock_notes(clock, t) + printed_kept_notes(summary, t, clock)


def printed_kept_notes(summary: pl.DataFrame, t: Catalog, clock: pl.DataFrame | None = None) -> list[str]:
    """For each run whose steady rate is the rate its log printed, apart from what its clock gives (its mean or
    sustained rate: :func:`tierscope.analysis.summary.printed_apart_from_clock`), a sentence in ``t``'s language
    saying so with the three figures: the summary's ``steady_clock_note`` of that kind. ``clock``:
    :attr:`ReportData.clock_rates` (the runs whose printed rates were set aside instead)."""
    needed = {"run_id", "steady_global_steps_per_s", "mean_global_steps_per_s", "sustained_global_steps_per_s",
              "steady_stalls", "steady_pauses"}  # fmt: skip
    if not needed <= set(summary.columns):
        return []
    aside = clock["run_id"] if clock is not None else pl.Series("run_id", [], pl.String)
    rows = summary.filter(printed_apart_from_clock(pl.col("run_id").is_in(aside.implode()))).with_columns(
        _more=clock_gives_more(), _far=clock_far()
    )

    def shown(value: float | None) -> str:
        return rate_text(value, t) if value is not None else "–"

    return [
        t(
            "steady.printed_far" if r["_far"] else "steady.printed_more" if r["_more"] else "steady.printed_less",
            run=r["run_id"],
            steady=shown(r["steady_global_steps_per_s"]),
            tolerance=f"{CLOCK_TOLERANCE:.0%}",
            ratio=f"{MAX_RATIO:g}",
            mean=shown(r["mean_global_steps_per_s"]),
            sustained=shown(r["sustained_global_steps_per_s"]),
        )
        for r in rows.iter_rows(named=True)
    ]


def apart_notes(apart: pl.DataFrame | None, t: Catalog) -> list[str]:
    """Under the runs table: each run not compared with the baseline (its speedup a dash), and why, a sentence each
    in ``t``'s language; with ``--baseline``, each run compared with it though its work differs."""
    if apart is None:
        return []
    return [
        t("apart.named" if r["named"] else "apart.kept", run=r["run_id"], baseline=r["baseline_run_id"], why=why)
        for r in apart.sort("run_id").iter_rows(named=True)
        if (why := apart_why(r, t))
    ]


def apart_rows(table: pl.DataFrame, apart: pl.DataFrame | None) -> set[str]:
    """The rows of the runs ``table`` (the summary's, or the configurations' with ``run_ids``) holding a run kept
    apart from the baseline (not ``named``): their speedup cell says why it is blank."""
    if apart is None:
        return set()
    kept = set(apart.filter(~pl.col("named"))["run_id"])
    if "run_ids" not in table.columns:
        return {r for r in table["run_id"] if r in kept}
    rows = table.select("run_id", pl.col("run_ids").fill_null(pl.col("run_id")).str.split(", "))
    return {r for r, ids in rows.iter_rows() if kept.intersection(ids)}


def _untitled(section: Section) -> Section:
    """``section`` with its spec's title taken out into :attr:`Section.title`: an SVG title never wraps, so on a
    phone it was cut at both ends ("obal steps/s over the global step"); the page's text wraps."""
    if section.spec is None or "title" not in section.spec:
        return section
    spec = dict(section.spec)
    title = spec.pop("title")
    text = title.get("text") if isinstance(title, dict) else title
    text = " ".join(text) if isinstance(text, list) else text
    return replace(section, spec=spec, title=str(text) if text is not None else None)


def shown_path(path: str, dataset: str, full: bool = False) -> str:
    """``path`` (a log's source) as a report shows it: relative to the folder holding the dataset when it lies
    under it (``logs/worker-0.log``), else its file name alone; a URL (``gs://``) and, with ``full``, any path
    whole. A report sent to a colleague must not carry a home or site-packages directory."""
    if full or "://" in path:
        return path
    if "://" not in dataset:
        base = os.path.dirname(os.path.abspath(dataset))
        with contextlib.suppress(ValueError):  # another drive (Windows)
            relative = os.path.relpath(os.path.abspath(path), base)
            if not relative.startswith(".."):
                return relative
    return os.path.basename(path.rstrip("/\\")) or path


def shown_dataset(dataset: str, full: bool = False) -> str:
    """The dataset as a report shows it: its folder's name (the full path only with ``full``; a URL whole)."""
    if full or "://" in dataset:
        return dataset
    return os.path.basename(os.path.abspath(dataset)) or dataset


def _breakable(text: str) -> Markup:
    """``text`` (a path) escaped, with a line-break opportunity after each path separator: a long path wraps
    between folders, never inside a name."""
    escaped = Markup.escape(printable(text))
    return Markup(str(escaped).replace("/", "/<wbr>").replace("\\", "\\<wbr>"))


def collected_text(provenance: Provenance, t: Catalog) -> str | None:
    """When the dataset was collected: one time when every collect fell in one minute, else the range."""
    first, last = provenance.collected_first, provenance.collected_last
    if first is None or last is None:
        return None
    shown = "%Y-%m-%d %H:%M UTC"
    if first.strftime(shown) == last.strftime(shown):
        return t("prov.collected_at", at=first.strftime(shown))
    return t("prov.collected_range", first=first.strftime(shown), last=last.strftime(shown))


def render_html(data: ReportData, lang: str | None = None, full_paths: bool = False) -> str:
    """The report's HTML in ``lang`` (None: from the locale); paths as :func:`shown_path` shows them, whole
    with ``full_paths``. Raises ValueError for an unknown language."""
    t = Catalog(lang or default_lang())
    chart_sections = [_untitled(s) for s in sections(data, t)]
    # a chart title that repeats its section's heading word for word is said once
    heading = {s.key: t(f"section.{s.key}.title", n=t.number(data.steps)) for s in chart_sections}
    chart_sections = [replace(s, title=None) if s.title == heading[s.key] else s for s in chart_sections]
    drawn = [s for s in chart_sections if s.spec is not None]
    prov = data.provenance
    table = data.configurations if data.configurations is not None else data.summary
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            lang=t.lang,
            t=t,
            num=t.number,
            data=data,
            prov=prov,
            path=_breakable,
            dataset_shown=shown_dataset(prov.dataset, full_paths),
            sources_shown=[shown_path(p, prov.dataset, full_paths) for p in prov.sources],
            collected=collected_text(prov, t),
            headline=headline(table, data.costs, data.steps, t, data.unmeasured, data.apart),
            runs=_table_rows(table),
            cost_columns=cost_columns(table),
            million_word=shared_examples_word(table),
            steady_notes=[
                steps_note(data, t),
                *configuration_notes(data, t),
                *steady_notes(data.summary, t, data.clock_rates),
                *apart_notes(data.apart, t),
            ],
            apart_rows=apart_rows(table, data.apart),
            from_clock=set(data.clock_rates["run_id"]) if data.clock_rates is not None else set(),
            interval_header=interval_header(data),
            failed=_table_rows(data.summary.filter(pl.col("status") == "failed")),
            sections=chart_sections,
            charts=[{"id": f"chart-{s.key}", "spec": s.spec} for s in drawn],
            vega_bundle=vega_bundle(),
        )
    )


def render_report(analysis: Analysis, options: ReportOptions | None = None) -> str:
    """The report's HTML for ``analysis``. Raises what :func:`report_data` raises."""
    options = options or ReportOptions()
    return render_html(report_data(analysis), options.lang, options.full_paths)


def write_report(analysis: Analysis, out: Path, options: ReportOptions | None = None) -> Path:
    """Write the report on ``analysis`` to ``out`` atomically (temporary file, then rename) and, with
    ``options.figures``, every chart as PNG and SVG there (see :func:`tierscope.reports.figures.write_figures`).
    Raises :class:`NotAReportError` when ``out`` exists and is not an earlier report (nothing is replaced),
    :class:`OSError` when ``out`` or the figures directory cannot be written (nothing is left behind),
    and what :func:`report_data` raises."""
    check_replaceable(out)
    options = options or ReportOptions()
    data = report_data(analysis)
    html = render_html(data, options.lang, options.full_paths)
    write_text_atomic(out, html)
    if options.figures is not None:
        from tierscope.reports.figures import write_figures

        write_figures(chart_specs(data, Catalog(options.lang or default_lang())), options.figures)
    return out
