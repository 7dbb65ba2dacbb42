"""``tierscope demo``: the 2016 experiment end to end, on the logs shipped inside the package."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import as_file, files
from pathlib import Path

import polars as pl

from tierscope.analysis import analyze
from tierscope.analysis.forecast import unmeasured
from tierscope.analysis.summary import with_target
from tierscope.collector.collect import CollectResult, collect_runs
from tierscope.collector.manifest import load_manifest
from tierscope.dataset.store import Dataset
from tierscope.reports.headline import would_have
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import ReportOptions, analysis_options, write_report

#: The bundled experiment: its README, four logs and runs.toml.
BUNDLED = files("tierscope") / "data" / "cloudml-tiers-2016"


@dataclass
class DemoResult:
    dataset: Dataset
    report: Path
    collected: CollectResult
    summary: pl.DataFrame
    #: What the runs never measured would have done, with the fit's caveat (the report's sentences, in English).
    forecast: list[str] = field(default_factory=list)


def run_demo(out: Path, lang: str | None = None) -> DemoResult:
    """Collect the bundled 2016 logs into ``out/dataset``, write ``out/report.html``.

    Running it again adds nothing to the dataset (the collect is idempotent) and
    rewrites the report. One analysis feeds the report and the summary (the latter without
    the report's time and price to N steps).
    """
    dataset = Dataset(out / "dataset")
    with as_file(BUNDLED / "runs.toml") as manifest:
        # the logs of jobs that ended in 2016, read whole however new their files are (a fresh checkout's)
        collected = collect_runs(dataset, load_manifest(Path(manifest)), settle_s=0.0)
    analysis = analyze(dataset, analysis_options())
    report = write_report(analysis, out / "report.html", ReportOptions(lang=lang))
    forecast = would_have(unmeasured(analysis), Catalog("en"))
    return DemoResult(dataset, report, collected, with_target(analysis.summary, None), forecast)
