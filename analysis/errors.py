"""What the analysis raises."""

from __future__ import annotations

from tierscope.errors import TierscopeError


class AnalysisError(TierscopeError):
    """Base class of the analysis' errors: a question the dataset cannot answer as asked."""
