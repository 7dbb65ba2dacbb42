"""The HTML report: one self-contained file (inline CSS, the Vega JavaScript inlined once,
every chart's spec embedded) that opens offline in any browser. The library behind
``tierscope report``.

Two steps: :func:`report_data` reads the dataset once into small bounded frames
(:class:`ReportData`); :func:`render_html` turns them into HTML in a language. A section
whose frame or column is absent says "not available" instead of failing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import polars as pl
from jinja2 import Environment, PackageLoader, select_autoescape

from tierscope.analysis.batches import interval_figures
from tierscope.analysis.scaling import fit_scaling
from tierscope.analysis.scaling import scaling_points as analysis_scaling_points
from tierscope.analysis.summary import SummaryOptions, run_index, summary
from tierscope.dataset.store import Dataset
from tierscope.reports import charts, frames
from tierscope.reports.charts import Spec
from tierscope.reports.frames import MissingColumnsError
from tierscope.reports.headline import headline
from tierscope.reports.i18n import Catalog, default_lang
from tierscope.reports.provenance import Provenance, provenance


@dataclass
class ReportOptions:
    """``lang``: ``en`` / ``ja`` (None: from the locale). ``steps``: N of "time and price to
    N steps" (None: the longest run's last global step). ``figures``: a directory to also
    write every chart to as PNG and SVG (None: none)."""

    lang: str | None = None
    summary: SummaryOptions | None = None
    steps: int | None = None
    figures: Path | None = None


@dataclass
class ReportData:
    """Everything a report shows; every frame is bounded (see :mod:`tierscope.reports.frames`) and any may be None
    (its section then says "not available"). Column contracts: the functions in :mod:`tierscope.reports.frames`."""

    summary: pl.DataFrame
    steps: int
    provenance: Provenance
    runs_charted: int = 0
    runs_total: int = 0
    throughput_steps: pl.DataFrame | None = None
    throughput_time: pl.DataFrame | None = None
    task_rates: pl.DataFrame | None = None
    speedup: pl.DataFrame | None = None
    costs: pl.DataFrame | None = None
    scaling_points: pl.DataFrame | None = None
    scaling_model: pl.DataFrame | None = None


@dataclass
class Section:
    """One chart section: ``key`` names its catalog entries (``section.<key>.title`` / ``.text``)."""

    key: str
    spec: Spec | None
    unavailable: str | None = None
    notes: list[str] = field(default_factory=list)


def _or_none(build: Callable[[], pl.DataFrame | None]) -> pl.DataFrame | None:
    try:
        return build()
    except MissingColumnsError:
        return None


def report_data(dataset: Dataset, options: ReportOptions | None = None) -> ReportData:
    """Read ``dataset`` into the frames of a report. Raises what :func:`tierscope.analysis.summary.summary` raises."""
    options = options or ReportOptions()
    steps = dataset.scan("steps")
    longest = steps.select(pl.col("step").max()).collect().item()
    n = options.steps or (int(longest) if longest else 1000)
    summary_options = replace(options.summary or SummaryOptions(), steps=n)
    runs = frames.charted_runs(steps)
    series = frames.ChartSeries(runs)
    # One pass over the records, a batch of runs at a time, feeds the summary, every chart and the scaling fit.
    figures = interval_figures(steps, summary_options.seed, extra=frames.INTERVAL_VIEW, visit=series.add)
    frame = summary(dataset, summary_options, figures=figures)
    over_steps, over_time = series.frames()
    points = analysis_scaling_points(frame, run_index(dataset))
    fits = fit_scaling(points, figures.samples, summary_options.seed)
    max_tasks = int(points["tasks"].max() or 1)
    return ReportData(
        summary=frame,
        steps=n,
        provenance=provenance(dataset, frame, summary_options),
        runs_charted=runs.height,
        runs_total=frame.filter(pl.col("records") > 0).height,
        throughput_steps=over_steps,
        throughput_time=over_time,
        task_rates=frames.bounded_task_rates(
            frames.task_local_rates(figures.tasks.join(runs.select("run_id"), on="run_id", how="semi"))
        ),
        speedup=_or_none(lambda: frames.speedup_frame(frame)),
        costs=_or_none(lambda: frames.time_and_cost_to_steps(frame)),
        scaling_points=_or_none(lambda: frames.scaling_points(points)),
        scaling_model=frames.scaling_model(fits, max_tasks),
    )


def _section(key: str, build: Callable[[], Spec | None], t: Catalog, notes: list[str] | None = None) -> Section:
    try:
        spec = build()
    except MissingColumnsError as exc:
        return Section(key, None, t("chart.unavailable", columns=", ".join(exc.missing)))
    if spec is None:
        return Section(key, None, t("chart.no_data"))
    return Section(key, spec, notes=notes or [])


def sections(data: ReportData, t: Catalog) -> list[Section]:
    """The chart sections, top to bottom, each with its spec or the sentence saying why it has none."""
    capped = (
        [t("chart.runs_capped", shown=data.runs_charted, total=data.runs_total)]
        if data.runs_charted < data.runs_total
        else []
    )
    no_model = [] if data.scaling_model is not None else [t("chart.no_model")]
    return [
        _section("throughput_steps", lambda: charts.throughput_steps_chart(data.throughput_steps, t), t, capped),
        _section("throughput_time", lambda: charts.throughput_time_chart(data.throughput_time, t), t, capped),
        _section("speedup", lambda: charts.speedup_chart(data.speedup, t), t),
        _section("cost_time", lambda: charts.cost_time_chart(data.costs, t, data.steps), t),
        _section("tasks", lambda: charts.task_rates_chart(data.task_rates, t), t, capped),
        _section("scaling", lambda: charts.scaling_chart(data.scaling_points, data.scaling_model, t), t, no_model),
    ]


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
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
        tmp.write_text(bundle, encoding="utf-8")
        os.replace(tmp, cached)
    except OSError:
        pass
    return bundle


def _env() -> Environment:
    return Environment(
        loader=PackageLoader("tierscope.reports", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _table_rows(frame: pl.DataFrame) -> list[dict[str, object]]:
    """The summary's rows, with the interval columns (present once issue 6 lands) always as keys."""
    bounds = (frames.STEADY_LOW, frames.STEADY_HIGH, frames.SPEEDUP_LOW, frames.SPEEDUP_HIGH)
    missing = [pl.lit(None, pl.Float64).alias(c) for c in bounds if c not in frame.columns]
    rows = frame.with_columns(missing).to_dicts()
    for row in rows:
        row["steady_low"], row["steady_high"] = row[frames.STEADY_LOW], row[frames.STEADY_HIGH]
        row["speedup_low"], row["speedup_high"] = row[frames.SPEEDUP_LOW], row[frames.SPEEDUP_HIGH]
    return rows


def render_html(data: ReportData, lang: str | None = None) -> str:
    """The report's HTML in ``lang`` (None: from the locale). Raises ValueError for an unknown language."""
    t = Catalog(lang or default_lang())
    chart_sections = sections(data, t)
    drawn = [s for s in chart_sections if s.spec is not None]
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            lang=t.lang,
            t=t,
            num=t.number,
            data=data,
            prov=data.provenance,
            headline=headline(data.summary, data.costs, data.steps, t),
            runs=_table_rows(data.summary),
            failed=data.summary.filter(pl.col("status") == "failed").to_dicts(),
            sections=chart_sections,
            charts=[{"id": f"chart-{s.key}", "spec": s.spec} for s in drawn],
            vega_bundle=vega_bundle(),
        )
    )


def render_report(dataset: Dataset, options: ReportOptions | None = None) -> str:
    """The report's HTML for ``dataset``. Raises what :func:`tierscope.analysis.summary.summary` raises."""
    options = options or ReportOptions()
    return render_html(report_data(dataset, options), options.lang)


def write_report(dataset: Dataset, out: Path, options: ReportOptions | None = None) -> Path:
    """Write the report to ``out`` atomically (temporary file, then rename) and, with
    ``options.figures``, every chart as PNG and SVG there (see :func:`tierscope.reports.figures.write_figures`).
    Raises :class:`OSError` when ``out`` or the figures directory cannot be written (nothing is left behind)."""
    options = options or ReportOptions()
    data = report_data(dataset, options)
    html = render_html(data, options.lang)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)  # after a failed write or rename; gone after a successful one
    if options.figures is not None:
        from tierscope.reports.figures import write_figures

        write_figures(chart_specs(data, Catalog(options.lang or default_lang())), options.figures)
    return out
