"""tierscope: when you pay for a bigger machine configuration, how much faster does training get,
and is it worth the money?

The public API, for using tierscope as a library (each name is imported on first use, so
``import tierscope`` loads no polars)::

    import tierscope

    dataset = tierscope.Dataset("ds")  # a directory, or gs://bucket/prefix
    runs = tierscope.runs_from_paths([Path("logs/worker-0.log")], run_id="job42", tier="STANDARD_1", fmt=None)
    tierscope.collect_runs(dataset, runs)  # or tierscope.load_manifest("runs.toml")
    analysis = tierscope.analyze(dataset, tierscope.AnalysisOptions(baseline="job41"))
    print(analysis.summary)  # a polars DataFrame, one row per run
    # a report draws charts and fits too: ask the analysis for them
    report = tierscope.analyze(dataset, tierscope.analysis_options(tierscope.AnalysisOptions(baseline="job41")))
    tierscope.write_report(report, Path("report.html"))

Everything tierscope raises for a user to read is a :class:`TierscopeError`.
"""

from __future__ import annotations

from tierscope.reexport import TYPE_CHECKING, reexport_lazily

if TYPE_CHECKING:
    from typing import Any

    from tierscope.analysis import Analysis, AnalysisOptions, analyze
    from tierscope.collector.cloud import collect_cloud
    from tierscope.collector.collect import collect_runs
    from tierscope.collector.manifest import RunSpec, load_manifest
    from tierscope.collector.runs import runs_from_paths
    from tierscope.dataset import Dataset
    from tierscope.errors import TierscopeError, UsageError
    from tierscope.reports import ReportOptions, analysis_options, render_report, write_report

#: Each public name and the module it comes from (the rooms' front doors where they have one).
_ORIGINS = {
    # a dataset: a local directory or gs://bucket/prefix
    "Dataset": "tierscope.dataset",
    # collecting: log files, a manifest, Cloud Logging
    "RunSpec": "tierscope.collector.manifest",
    "load_manifest": "tierscope.collector.manifest",
    "runs_from_paths": "tierscope.collector.runs",
    "collect_runs": "tierscope.collector.collect",
    "collect_cloud": "tierscope.collector.cloud",
    # analysing: the one pass every command reads
    "analyze": "tierscope.analysis",
    "Analysis": "tierscope.analysis",
    "AnalysisOptions": "tierscope.analysis",
    # the report
    "render_report": "tierscope.reports",
    "write_report": "tierscope.reports",
    "ReportOptions": "tierscope.reports",
    "analysis_options": "tierscope.reports",
    # the root of every error a user reads, and the usage error (exit 2 on the command line)
    "TierscopeError": "tierscope.errors",
    "UsageError": "tierscope.errors",
}

__all__ = [
    "Analysis",
    "AnalysisOptions",
    "Dataset",
    "ReportOptions",
    "RunSpec",
    "TierscopeError",
    "UsageError",
    "analysis_options",
    "analyze",
    "collect_cloud",
    "collect_runs",
    "load_manifest",
    "render_report",
    "runs_from_paths",
    "write_report",
]

_reexported, __dir__ = reexport_lazily(__name__, _ORIGINS)


def __getattr__(name: str) -> Any:
    # The version is looked up on first use too: importlib.metadata costs tens of milliseconds at
    # start-up, and only the report and --version need it.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tierscope")
        except PackageNotFoundError:  # running from a source tree that was never installed
            return "0.0.0+source"
    return _reexported(name)
