"""Analysis over a tierscope dataset: throughput, speedup, scaling efficiency, cost.

:func:`analyze` is the one pass every command reads (see :mod:`tierscope.analysis.analyze`),
:class:`AnalysisOptions` what it is asked.
"""

from tierscope.analysis.analyze import Analysis, analyze
from tierscope.analysis.options import AnalysisOptions

__all__ = ["Analysis", "AnalysisOptions", "analyze"]
