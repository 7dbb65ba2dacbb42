"""The root of everything tierscope raises for a user to read.

Every room derives its errors from :class:`TierscopeError` (``CollectorError``,
``DatasetError``, ``AnalysisError``, ``ReportError``, ``TrainerError``); the CLI turns any
of them into one line on stderr and an exit code (:mod:`tierscope.cli.common`), so a
command never needs to know which room raised. Messages say what was wrong, where, and
what to do, in one line. This module imports nothing, so every room may import it.
"""

from __future__ import annotations


class TierscopeError(Exception):
    """A problem the user can fix. ``str(error)`` is the whole message, one line."""


class UsageError(TierscopeError):
    """Arguments that do not fit together or out of range; the CLI exits 2, as for typer's own."""
