"""The HTML report: one self-contained file (inline CSS, inline Vega JavaScript, embedded
chart specs) that opens offline in any browser. The library behind ``tierscope report``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import polars as pl
from jinja2 import Environment, PackageLoader, select_autoescape

from analysis.summary import SummaryOptions, summary
from collector.dataset import Dataset
from reports import charts
from reports.i18n import Catalog, default_lang
from tierscope import __version__


@dataclass
class ReportOptions:
    lang: str | None = None  # en / ja; None: from the locale
    summary: SummaryOptions | None = None


@cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (from vl-convert), safe inside <script>."""
    import vl_convert

    return vl_convert.javascript_bundle().replace("</script", "<\\/script")


def _env() -> Environment:
    return Environment(
        loader=PackageLoader("reports", "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def headline(frame: pl.DataFrame, t: Catalog) -> list[str]:
    """The report's answer in sentences: fastest run, most steps per ML unit-hour, failures."""
    ok = frame.filter(pl.col("steady_global_steps_per_s").is_not_null())
    if ok.height == 0:
        return [t("headline.none")]
    out = []
    fastest = ok.sort("steady_global_steps_per_s", descending=True).row(0, named=True)
    out.append(
        t(
            "headline.fastest",
            run=fastest["run_id"],
            tier=fastest["tier"] or "–",
            rate=t.number(fastest["steady_global_steps_per_s"], 2),
            speedup=t.number(fastest["speedup_vs_baseline"], 2),
            baseline=fastest["baseline_run_id"] or "–",
        )
    )
    priced = ok.filter(pl.col("steps_per_ml_unit_hour").is_not_null())
    if priced.height:
        best = priced.sort("steps_per_ml_unit_hour", descending=True).row(0, named=True)
        out.append(
            t(
                "headline.cheapest",
                run=best["run_id"],
                tier=best["tier"],
                value=t.number(best["steps_per_ml_unit_hour"], 0),
            )
        )
    failed = frame.filter(pl.col("status") == "failed").height
    if failed:
        out.append(t("headline.failed", n=failed))
    return out


def render_report(dataset: Dataset, options: ReportOptions | None = None) -> str:
    """The report's HTML for ``dataset``. Raises what :func:`analysis.summary.summary` raises."""
    options = options or ReportOptions()
    t = Catalog(options.lang or default_lang())
    frame = summary(dataset, options.summary)
    steps = dataset.scan("steps")
    specs = []
    names = []
    for name, spec in (
        ("speedup", charts.speedup_chart(frame, t)),
        ("throughput", charts.throughput_chart(charts.throughput_points(steps), t)),
    ):
        if spec is not None:
            names.append(name)
            specs.append(spec)
    sources = steps.select("source").unique().sort("source").collect()["source"].to_list()
    prices = sorted({f"{d}" for d in frame["price_date"].drop_nulls().to_list()})
    provenance = {
        "dataset": str(dataset.root),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "records": int(frame["records"].sum()),
        "rejects": dataset.scan("rejects").select(pl.len()).collect().item(),
        "baseline": frame["baseline_run_id"].drop_nulls().first(),
        "prices": [f"ML units and USD per ML unit-hour in force on {d} (analysis/data/*.csv)" for d in prices],
        "sources": sources,
    }
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            lang=t.lang,
            t=t,
            num=t.number,
            version=__version__,
            headline=headline(frame, t),
            runs=frame.to_dicts(),
            failed=frame.filter(pl.col("status") == "failed").to_dicts(),
            charts=[{"name": n} for n in names],
            specs=specs,
            vega_bundle=vega_bundle(),
            provenance=provenance,
        )
    )


def write_report(dataset: Dataset, out: Path, options: ReportOptions | None = None) -> Path:
    """Render the report and write it to ``out`` atomically (temporary file, then rename)."""
    html = render_report(dataset, options)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, out)
    return out
