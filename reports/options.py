"""What a report is asked: its own options and the analysis it draws from (no chart library imported)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from tierscope.analysis.options import AnalysisOptions


@dataclass
class ReportOptions:
    """``lang``: ``en`` / ``ja`` (None: from the locale). ``figures``: a directory to also
    write every chart to as PNG and SVG (None: none). ``full_paths``: show the dataset's and the logs'
    paths whole (default: relative to the dataset's folder, else the file name alone). What is analysed
    (baseline, prices, N) is the analysis' (:func:`analysis_options`)."""

    lang: str | None = None
    figures: Path | None = None
    full_paths: bool = False


def analysis_options(options: AnalysisOptions | None = None, steps: int | None = None) -> AnalysisOptions:
    """``options`` with what a report draws asked for: the chart series, the scaling fit, and
    N of "time and price to N steps" (``steps``; None: the longest run's last global step)."""
    return replace(options or AnalysisOptions(), steps=steps or "longest", charts=True, fits=True)
