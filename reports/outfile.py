"""Where a report may be written: a new file, or an earlier report it replaces (light: the CLI checks
``--out`` before the analysis runs)."""

from __future__ import annotations

import os
from pathlib import Path

from tierscope.reports.errors import NotAReportError

#: What every report carries in its head (the template's generator meta tag): a file holding it within
#: its first bytes is an earlier report, which a new one may replace.
REPORT_MARK = b'<meta name="generator" content="tierscope'


def check_replaceable(out: Path) -> None:
    """Raise :class:`NotAReportError` when ``out`` exists and is not an earlier tierscope report: a
    report replaces its predecessor, never a plan, notes or a system file that the path named by mistake."""
    if not os.path.lexists(out):
        return
    if out.is_dir():
        raise NotAReportError(f"{out} is a folder; name a file for the report, e.g. {out / 'report.html'}")
    if not out.is_file():
        raise NotAReportError(f"{out} is not a regular file; name a new file for the report")
    try:
        with out.open("rb") as existing:
            head = existing.read(4096)
    except OSError as exc:
        raise NotAReportError(f"{out} exists and cannot be read ({exc.strerror}); name a new file") from None
    if REPORT_MARK not in head:
        raise NotAReportError(f"{out} exists and is not a tierscope report; name a new file, or move it away first")
