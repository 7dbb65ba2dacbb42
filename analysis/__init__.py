"""Analysis over a tierscope dataset: throughput, speedup, scaling efficiency, cost.

:func:`analyze` is the one pass every command reads (see :mod:`tierscope.analysis.analyze`),
:class:`AnalysisOptions` what it is asked, :class:`AnalysisError` the root of what it raises.
Imported at once, not on first use: the function ``analyze`` shares its name with the module
:mod:`tierscope.analysis.analyze`, and every module of the room imports polars anyway.
"""

from tierscope.analysis.analyze import Analysis, analyze
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.options import AnalysisOptions

__all__ = ["Analysis", "AnalysisError", "AnalysisOptions", "analyze"]
