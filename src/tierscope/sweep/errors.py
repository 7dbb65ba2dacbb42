"""The sweep's errors, under the project's one root."""

from __future__ import annotations

from tierscope.errors import TierscopeError


class SweepError(TierscopeError):
    """A plan, ledger or launcher problem the user can fix; one line."""
