"""What the report raises."""

from __future__ import annotations

from tierscope.errors import TierscopeError


class ReportError(TierscopeError):
    """Base class of the report's errors."""
