"""The report: one HTML file that opens offline, drawn from an :class:`~tierscope.analysis.Analysis`.

:func:`render_report` gives the page, :func:`write_report` writes it (and, asked, each chart as
PNG and SVG), from an analysis asked for what a report draws (:func:`analysis_options`);
:class:`ReportOptions` says in which language. The names are imported on first
use (the renderer imports Altair and jinja2).
"""

from __future__ import annotations

from tierscope.reexport import TYPE_CHECKING, reexport_lazily

if TYPE_CHECKING:
    from tierscope.reports.errors import ReportError
    from tierscope.reports.options import ReportOptions, analysis_options
    from tierscope.reports.render import render_report, write_report

_ORIGINS = {
    "render_report": "tierscope.reports.render",
    "write_report": "tierscope.reports.render",
    "ReportOptions": "tierscope.reports.options",
    "analysis_options": "tierscope.reports.options",
    "ReportError": "tierscope.reports.errors",
}

__all__ = [
    "ReportError",
    "ReportOptions",
    "analysis_options",
    "render_report",
    "write_report",
]

__getattr__, __dir__ = reexport_lazily(__name__, _ORIGINS)
