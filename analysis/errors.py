"""What the analysis raises."""

from __future__ import annotations

from tierscope.errors import TierscopeError


class AnalysisError(TierscopeError):
    """Base class of the analysis' errors: a question the dataset cannot answer as asked."""


class SpillError(AnalysisError):
    """A run taken in pieces could not write its records to the temporary folder (full, or a file
    size limit): the message names the folder and what to do."""
