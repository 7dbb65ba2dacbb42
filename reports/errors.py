"""What the report raises."""

from __future__ import annotations

from tierscope.errors import TierscopeError, UsageError


class ReportError(TierscopeError):
    """Base class of the report's errors."""


class NotAReportError(ReportError, UsageError, ValueError):
    """The report's path names something other than an earlier report (a file of the user's, a folder,
    a device): it is never replaced."""
