"""Printers more than one command uses: a collect's counts and the summary table.

Imported by command bodies only (they need a result to print), so rich's tables load at run
time, not for ``--help``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tierscope.cli.common import err_console, out_console
from tierscope.text import printable

if TYPE_CHECKING:
    import polars as pl

    from tierscope.collector.collect import CollectResult
    from tierscope.dataset.store import Dataset


def cell(value: object, digits: int = 3) -> str:
    """A table cell: ``-`` for a missing value, floats with thousands separators and ``digits``
    decimals, text with its control characters escaped (:func:`shown`)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return shown(str(value))


def shown(text: str) -> str:
    """``text`` (a run id, tier, file name, reason) safe for a rich table cell: controls escaped
    (:func:`tierscope.text.printable`), ``[`` kept from being read as rich markup."""
    return escape(printable(text))


def print_notices(ds: Dataset) -> None:
    """What a command repaired on its way (a state document moved aside), on stderr, even under
    --quiet: cron mails it, and the user should know a document was replaced."""
    for notice in ds.notices:
        err_console().print(Text(printable(f"note: {notice}")), soft_wrap=True)


def print_counts(result: CollectResult, quiet: bool) -> None:
    """A collect's table of counts per source, its notes and warnings, and the closing line whose
    five figures add up to the lines read. Nothing when ``quiet``."""
    if quiet:
        return
    # format: the one sniffed from the file's first lines (or given), which read it first.
    table = Table("source", "run", "format", "lines", "stored", "events", "duplicates", "rejected", "skipped")
    for s in result.sources:
        counts = (s.lines, s.steps, s.events, s.duplicates, s.rejects, s.skipped)
        table.add_row(shown(s.source), shown(s.run_id), s.format or "-", *(str(v) for v in counts))
    out_console().print(table)
    for s in result.sources:
        if s.notes:
            print(printable(f"{s.source}: {'; '.join(s.notes)}"))
        if s.lines and not (s.steps or s.events or s.rejects or s.duplicates):
            err_console().print(
                Text(
                    f"warning: {printable(s.source)}: none of its {s.lines} lines is a step record, a run event or a "
                    f"broken record: is it a step log? `tierscope formats --try {s.source}` shows how each line "
                    "was read; a format of your own can read it (README: 'My log is not read')"
                    + (f" (read as {s.format})" if s.format else "")
                ),
                soft_wrap=True,
            )
    rejected = result.total("rejects")
    print(
        f"read {result.total('lines')} lines: stored {result.total('steps')} step records and "
        f"{result.total('events')} events, skipped {result.total('duplicates')} duplicates, "
        f"kept aside {rejected} rejected lines"
        + (" (see `tierscope rejects`)" if rejected else "")
        # The lines with no metric close the sum: every line read is one of the five.
        + f", {result.total('skipped')} lines had no metric",
    )


def print_summary(frame: pl.DataFrame) -> None:
    """The summary frame (:func:`tierscope.analysis.summary.summary`) as a readable table on stdout."""
    baseline = frame["baseline_run_id"].drop_nulls().first()
    target = frame["target_steps"].drop_nulls().first() if "target_steps" in frame.columns else None
    to_target = ["hours to N", "USD to N"] if target is not None else []
    reach = f"; N = {target:,} steps" if target is not None else ""
    table = Table(
        "run", "tier", "status", "records", "tasks", "steady steps/s", "mean steps/s", "ML units/h",
        "steps per ML unit-h", "speedup", *to_target, "failure",
        title=f"tierscope summary (global steps/s; speedup against {cell(baseline)}{reach})",
    )  # fmt: skip
    for r in frame.iter_rows(named=True):
        # --steps: the time and price to reach the target (README: "adds hours and USD")
        target_cells = [cell(r["hours_to_target"], 2), cell(r["usd_to_target"], 2)] if to_target else []
        table.add_row(
            cell(r["run_id"]), cell(r["tier"]), r["status"], cell(r["records"]), cell(r["tasks"]),
            cell(r["steady_global_steps_per_s"]), cell(r["mean_global_steps_per_s"]),
            cell(r["ml_units_per_hour"], 4), cell(r["steps_per_ml_unit_hour"], 1),
            cell(r["speedup_vs_baseline"], 2), *target_cells, cell(r["failure_reason"]),
        )  # fmt: skip
    out_console().print(table)
