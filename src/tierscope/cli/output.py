"""Printers more than one command uses: a collect's counts and the summary table.

Every figure goes through :mod:`tierscope.cli.numbers`; every table through :mod:`tierscope.cli.tables`.

Imported by command bodies only (they need a result to print), so rich's tables load at run
time, not for ``--help``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from tierscope.cli import numbers as n
from tierscope.cli.common import err_console
from tierscope.cli.tables import Column, Grid, named, print_table
from tierscope.text import printable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from datetime import date

    import polars as pl

    from tierscope.collector.collect import CollectResult
    from tierscope.dataset.store import Dataset


def print_notices(ds: Dataset) -> None:
    """What a command repaired on its way (a state document moved aside), on stderr, even under
    --quiet: cron mails it, and the user should know a document was replaced."""
    for notice in ds.notices:
        err_console().print(Text(printable(f"note: {notice}")), soft_wrap=True)


def print_run_notes(notes: list[tuple[str, str]]) -> None:
    """What an analysis left out of a run's figures and why (``(run id, sentence)`` each,
    :attr:`tierscope.analysis.analyze.Analysis.notes`), a line each on stderr, whatever the format."""
    for run_id, said in notes:
        err_console().print(Text(printable(f"note: run {named(run_id)}: {said}")), soft_wrap=True)


def shown_path(source: str, wide: bool) -> str:
    """A source as a collect's messages show it: relative to the working directory when it lies inside it;
    a file shipped inside tierscope (the demo's logs) from the package's name (``tierscope/data/...``: the
    site-packages directory above it is nobody's business); the full path only with ``--wide``."""
    import os

    if wide or "://" in source:  # a gs:// URL is shown whole (a path would fold its //)
        return source
    try:
        relative = os.path.relpath(source)
    except ValueError:  # another drive (Windows)
        return source
    if not relative.startswith(".."):
        return relative
    return packaged(source) or source


def packaged(path: str) -> str | None:
    """``path`` from the package's name (``tierscope/data/cloudml-tiers-2016/basic.log``) when it lies inside
    the installed tierscope package, else None."""
    import os

    import tierscope

    root = os.path.dirname(os.path.abspath(tierscope.__file__))
    full = os.path.abspath(path)
    if full == root or full.startswith(root + os.sep):
        return os.path.join("tierscope", os.path.relpath(full, root))
    return None


#: What a collect reads, singular and plural: lines of files, or the log entries of Cloud Logging.
LINES = ("line", "lines")
ENTRIES = ("log entry", "log entries")


def counts_grid(result: CollectResult, wide: bool = False, unit: tuple[str, str] = LINES) -> Grid:
    """A collect's counts per source (file) as a :class:`Grid`; ``format`` is the one sniffed from
    the file's first lines (or given), which read it first."""
    import os

    shown = [shown_path(s.source, wide) for s in result.sources]
    # The directory every source shares is said once, above the table ("sources in logs/": a bare "in logs/"
    # read as a stray line); the cells keep what differs.
    # gs:// URLs share theirs after the scheme, which a path function would fold to gs:/.
    scheme = "gs://" if shown and all(p.startswith("gs://") for p in shown) else ""
    bare = [p[len(scheme) :] for p in shown]
    sep = "/" if scheme else os.sep
    try:
        common = "" if wide or not bare else os.path.commonpath([os.path.dirname(p) for p in bare])
    except ValueError:  # absolute and relative paths mixed
        common = ""
    if common and all(p.startswith(common + sep) for p in bare):
        shown = [p[len(common) + 1 :] for p in bare]
        common = scheme + common
    else:
        common = ""
    grid = Grid(
        title=f"sources in {common}{sep}" if common else None,  # the folder the source cells are in
        columns=[
            Column("source", "name"),
            Column("run", "name"),
            Column("format", "name", drop=1),
            Column(unit[1].split()[-1]),
            Column("stored"),
            Column("events", drop=2),
            Column("duplicates", drop=3),
            Column("rejected"),
            Column("no metric", drop=4),
        ],
    )
    for s, path in zip(result.sources, shown, strict=True):
        counts = (s.lines, s.steps, s.events, s.duplicates, s.rejects, s.skipped)
        # the runs its records went to where they named their own (a Cloud Logging export's job ids)
        runs = ", ".join(sorted(s.stored_runs)) if s.stored_runs and s.stored_runs != {s.run_id} else s.run_id
        grid.add(path, runs, s.format or n.MISSING, *(n.count(v) for v in counts))
    return grid


def closing_line(result: CollectResult, unit: tuple[str, str] = LINES) -> str:
    """The line whose five figures add up to the lines (or log entries: ``unit``) read.

    Each line read counts once, by its outcome (:class:`~tierscope.collector.runs.SourceCounts`):
    a line that stored step records, one that stored events, one whose rows were all held already,
    a rejected line, a line with no metric. Where records and their lines differ (a glued Keras line
    holds several step records), the records are said with their lines: ``stored 3 step records
    from 2 lines``; the line figure is the one that adds up. Rejects beyond one a line (a piece of a
    progress bar whose record was stored, a second piece of a rejected line) are said as *rejected
    pieces*: every one is in the rejects table, none is a line of its own.
    """
    total = result.total
    rejected, pieces = total("rejected_lines"), total("rejects") - total("rejected_lines")

    def rows(count: int, lines: int, one: str, many: str = "") -> str:
        said = n.plural(count, one, many or one + "s")
        return said if count == lines else f"{said} from {n.plural(lines, *unit)}"

    kept = n.plural(rejected, f"rejected {unit[0]}", f"rejected {unit[1]}")
    if pieces:
        kept += f" and {n.plural(pieces, f'rejected piece of a {unit[0]}', f'rejected pieces of {unit[1]}')}"
    return (
        f"read {n.plural(total('lines'), *unit)}: stored {rows(total('steps'), total('step_lines'), 'step record')} "
        f"and {rows(total('events'), total('event_lines'), 'event')}, "
        f"{_duplicates(rows, total)}, "
        f"kept aside {kept}"
        + (" (see `tierscope rejects`)" if rejected or pieces else "")
        # The lines with no metric close the sum: every line read is one of the five.
        + f", {n.plural(total('skipped'), *unit)} had no metric"
    )


def _duplicates(rows: Callable[[int, int, str], str], total: Callable[[str], int]) -> str:
    """The duplicates in words (``rows``: a count with its lines, :func:`closing_line`'s) with what they repeat:
    records already stored, or records repeated within their file (a tqdm bar's ``1000/1000`` printed twice on
    a first collect is no record stored before)."""
    dups, repeated = total("duplicates"), total("repeated")
    if not repeated:
        return f"{rows(dups, total('duplicate_lines'), 'duplicate')} already stored"
    if repeated == dups:
        within = "its file" if dups == 1 else "their file"
        return f"{rows(dups, total('duplicate_lines'), 'repeated record')} within {within}"
    said = rows(dups, total("duplicate_lines"), "duplicate")
    return f"{said} ({n.count(dups - repeated)} already stored, {n.count(repeated)} repeated within their file)"


def print_counts(result: CollectResult, quiet: bool, wide: bool = False, unit: tuple[str, str] = LINES) -> None:
    """A collect's table of counts per source, its notes and warnings, and the closing line whose
    five figures add up to the lines (or log entries: ``unit``, :data:`ENTRIES`) read. Nothing when ``quiet``."""
    if quiet:
        return
    print_table(counts_grid(result, wide, unit), wide)
    for s in result.sources:
        shown = shown_path(s.source, wide)
        if s.notes:
            print(printable(f"{shown}: {'; '.join(s.notes)}"))  # a line per file, as the table's rows
        if not s.lines and s.first_read and not s.notes:
            # an empty file: its run is listed with no data, and a later collect reads what its job writes
            err_console().print(
                Text(
                    printable(
                        f"warning: {shown} is empty: nothing stored; collect it again once its job has written "
                        "to it (its place is kept: the lines written are read then)"
                    )
                ),
                soft_wrap=True,
            )
        # a file read before that gave records is a step log: only a first read of nothing asks
        if s.lines and s.first_read and not (s.steps or s.events or s.rejects or s.duplicates):
            err_console().print(
                Text(
                    printable(
                        f"warning: {shown}: none of its {n.plural(s.lines, 'line')} is a step record, a run "
                        f"event or a broken record: is it a step log? `tierscope formats --try {shown}` shows "
                        "how each line was read; a format of your own can read it (docs/reading-logs.md: "
                        "'My log is not read'; then collect the file again"
                        + (
                            ": this collect stored nothing of it and did not mark it read)"
                            if s.unread
                            else " with --reread, as this collect has marked it read)"
                        )
                        + (f" (read as {s.format})" if s.format else "")
                    )
                ),
                soft_wrap=True,
            )
        if s.conflicts and s.first_conflict is not None:
            line, step, other, other_line = s.first_conflict
            err_console().print(
                Text(
                    printable(
                        f"warning: {shown}: {n.plural(s.conflicts, 'step record')} claim steps of run {s.run_id!r} "
                        f"already read with other figures (first: line {line}, step {step}, against "
                        f"{shown_path(other or '?', wide)}:{other_line}): not copies, kept aside as rejects "
                        "(`tierscope rejects`); the files look like two runs: collect them apart, "
                        f"`tierscope collect files {shown} --run-id OTHER_RUN`"
                    )
                ),
                soft_wrap=True,
            )
    for warning in result.warnings:
        err_console().print(Text(printable(f"warning: {warning}")), soft_wrap=True)
    for line in facts_lines(result):
        print(printable(line))
    print(closing_line(result, unit))  # one line, whatever its length: what scripts and cron mails grep


#: A run fact (the runs table's column) in words, for :func:`facts_lines`; a column not here is named as it is.
FACT_WORDS = {"topology": "machines", "ran_on": "place it ran on", "batch_size": "batch size",
              "estimate_usd": "sweep estimate", "replicas": "replicas"}  # fmt: skip


def facts_lines(result: CollectResult) -> list[str]:
    """A line per run collected before whose facts this collect changed (``collect files LOG --machine TYPE``
    again, after a first collect without it): which facts, that its files held nothing new where they did not,
    and where to see them. A collect that reads 0 lines would otherwise leave it unsaid whether anything
    was recorded."""
    lines = []
    for run, changed in sorted(result.facts_changed.items()):
        read = sum(s.lines for s in result.sources if s.run_id == run)
        words = " and ".join(FACT_WORDS.get(c, c) for c in changed) or "facts"
        lines.append(
            f"run {named(run)}: recorded its {words}"
            + ("" if read else " (its files hold nothing new: their lines were read before)")
            + "; `tierscope summary` shows the run with them"
        )
    return lines


def price_notes(frame: pl.DataFrame, region: str, asked_date: date | None = None) -> list[str]:
    """What the ML units and prices of ``frame`` (the summary) rest on, one line each: the date
    every run was priced on when they share one, each tier priced differently at two dates, the price
    rows of today's machines (stale ones flagged), a run without a price, and which dates were used
    when ``--price-date`` (``asked_date``) was given for runs that have their own."""
    import polars as pl

    notes = []
    priced = frame.filter(pl.col("ml_units_per_hour").is_not_null())
    if priced.height:
        dates = sorted(set(priced["price_date"]))
        if len(dates) == 1:
            notes.append(f"ML units and prices from the price table on {dates[0]}, region {region}.")
        else:
            notes.append(f"ML units and prices from the price table, region {region}.")
        for (tier,), rows in priced.group_by("tier", maintain_order=True):
            pairs = sorted(set(zip(rows["price_date"], rows["ml_units_per_hour"], strict=True)))
            if len({units for _, units in pairs}) > 1:
                said = " and ".join(f"{n.units(units)} on {day}" for day, units in pairs)
                notes.append(
                    f"{tier} costs {said} ML units/h: each run is priced on its own date "
                    "(the newest price table row on or before it)."
                )
    if "price_rows" not in frame.columns:
        return notes
    rows = frame.filter(pl.col("ml_units_per_hour").is_null() & pl.col("price_rows").is_not_null())
    if rows.height:
        dates = ", ".join(str(d) for d in sorted(set(rows["price_date"])))
        notes.append(
            f"USD of today's machines from the price rows (resource, region, date, source) on {dates}: "
            "--wide or --json names each run's rows."
        )
    for r in frame.iter_rows(named=True):
        if r["price_note"] and (r["usd_per_hour"] is not None or r["hardware"]):
            notes.append(f"run {named(r['run_id'])}: {r['price_note']}")
    if asked_date is not None:
        priced_at = pl.col("usd_per_hour").is_not_null() | pl.col("ml_units_per_hour").is_not_null()
        own = frame.filter(pl.col("price_date_origin").is_in(["run", "log"]) & priced_at)
        if own.height:
            said = ", ".join(f"{r['run_id']} on {r['price_date']}" for r in own.iter_rows(named=True))
            others = frame.filter(pl.col("price_date_origin") == "--price-date")["run_id"].to_list()
            rest = (
                f"; --price-date {asked_date} priced {', '.join(others)}"
                if others
                else (f"; --price-date {asked_date} applies only to runs of unknown date, and there is none")
            )
            notes.append(f"priced at each run's own date: {said}{rest}.")
    return notes


def target_basis_notes(frame: pl.DataFrame) -> list[str]:
    """One line saying what N steps are where the comparison is on examples/s (``target_examples``): steps of
    the baseline's work, each run's own count in ``steps to N``; none on steps/s."""
    if "target_examples" not in frame.columns or frame["target_examples"].drop_nulls().len() == 0:
        return []
    from tierscope.analysis.summary import examples_word

    steps = frame["target_steps"].filter(frame["run_id"] == frame["baseline_run_id"]).drop_nulls()
    examples = frame["target_examples"].drop_nulls()[0]
    baseline = frame["baseline_run_id"].drop_nulls()[0]
    said = f"{n.count(steps[0])} steps" if steps.len() else "N steps"
    word = baseline_word(frame) or examples_word(frame)
    return [
        f"N is work, not steps: {said} of {named(baseline)} = {n.count(round(examples))} {word}; each run's "
        f"own global steps to process them in 'steps to N' (fewer where a step processes more {word})"
    ]


def baseline_word(frame: pl.DataFrame) -> str | None:
    """What the baseline's examples are (``tokens`` or ``examples``): the runs compared on examples/s count them
    (tierscope.analysis.summary.summary_frame); None where the baseline has none or is not in ``frame``."""
    if "examples_unit" not in frame.columns or "baseline_run_id" not in frame.columns:
        return None
    units = frame.filter(frame["run_id"] == frame["baseline_run_id"])["examples_unit"].drop_nulls()
    return units[0] if units.len() else None


def recommend_basis(candidates: pl.DataFrame, summary: pl.DataFrame) -> list[str]:
    """One line saying what the target's steps are where the plan is on examples/s (``target_examples``):
    steps of the summary's baseline, each candidate's own in ``steps``; none on steps/s."""
    if "target_examples" not in candidates.columns or candidates["target_examples"].drop_nulls().len() == 0:
        return []
    baseline = summary["baseline_run_id"].drop_nulls()
    steps = candidates["target_steps"].drop_nulls()[0]
    examples = candidates["target_examples"].drop_nulls()[0]
    whose = named(baseline[0]) if baseline.len() else "the baseline"
    return [
        f"Basis examples/s: {n.count(steps)} steps of {whose} ({n.count(round(examples))} examples); 'steps' is "
        "each candidate's own global steps for them (--baseline RUN sets the run whose steps N counts)."
    ]


def startup_basis(candidates: pl.DataFrame, summary: pl.DataFrame) -> list[str]:
    """One line saying that the measured candidates' hours include the start-up their run paid, once (seconds
    each, :data:`tierscope.analysis.sustained.ONCE_S`), and naming those whose log shows no start before the
    first step (goodput's ``startup`` unobserved: no ``started`` line, no elapsed seconds), whose hours leave it
    out; nothing without a measured candidate."""
    import polars as pl  # the CLI loads the data library only when a command runs

    measured = candidates.filter(pl.col("basis") == "measured")
    if not measured.height:
        return []
    unseen: set[str] = set()
    if {"goodput_unobserved", "startup_s"} <= set(summary.columns):
        # goodput saw no start (its start-up bucket unobserved) and no elapsed seconds time one (startup_s)
        blind = pl.col("goodput_unobserved").str.contains("startup").fill_null(False) & pl.col("startup_s").is_null()
        unseen = set(summary.filter(blind)["run_id"])
    paid = [f"{named(r['candidate'])} {n.seconds(r['startup_s'])}" for r in measured.iter_rows(named=True)
            if r["candidate"] not in unseen]  # fmt: skip
    lines = [f"Hours include the start-up each measured run paid once, before its steady pace: {', '.join(paid)}."]
    lines = lines if paid else []
    blind_ones = [named(c) for c in measured["candidate"] if c in unseen]
    if blind_ones:
        lines.append(
            f"Start-up left out of the hours of {', '.join(blind_ones)}: nothing read from the log times its start "
            "before its first step record (no start event, no elapsed seconds)."
        )
    return lines


def left_out(candidates: pl.DataFrame, summary: pl.DataFrame) -> list[str]:
    """One line naming the measured runs that are no candidate for want of a steady rate to plan on, each with
    ``summary``'s ``steady_reason`` (a run known only by its closing summary's whole-run mean, one still warming
    up): a run missing from the table without a word reads as forgotten."""
    import polars as pl  # the CLI loads the data library only when a command runs

    names = set(candidates["candidate"].to_list()) if "candidate" in candidates.columns else set()
    rows = summary.filter(pl.col("steady_global_steps_per_s").is_null())
    said = [
        f"{named(r['run_id'])} ({r.get('steady_reason') or 'no steady rate'})"
        for r in rows.iter_rows(named=True)
        if r["run_id"] not in names and r.get("config") not in names
    ]
    lines = [f"Not planned, no steady rate: {'; '.join(said)}."] if said else []
    # runs the summary does not compare with its baseline (tierscope.analysis.comparable): another job's work
    if "baseline_note" in summary.columns:
        apart = summary.filter(pl.col("baseline_run_id").is_null() & pl.col("baseline_note").is_not_null())
        for r in apart.iter_rows(named=True):
            lines.append(f"Not planned: run {named(r['run_id'])} is {r['baseline_note']}.")
    return lines


def predicted_basis(candidates: pl.DataFrame, summary: pl.DataFrame | None = None, wide: bool = False) -> list[str]:
    """What rate the predicted candidates are planned on, where they are planned on a sustained one (their
    predicted steady rate x the measured runs' median share, :func:`tierscope.analysis.plan.sustained_share`),
    naming each measured run's share and the column that shows the steady figure (``hours at steady`` only
    ``wide``: a note never names a column its table does not show); and, a line, the measured runs planned on
    their steady rate for want of a sustained one (no clock to time their lives: goodput unknown), with the
    reason ``summary``'s ``goodput_reason`` gives where there is one."""
    import polars as pl  # the CLI loads the data library only when a command runs

    from tierscope.analysis.clock import CLOCK_MISSING  # the CLI loads the analysis only when it runs

    notes = []
    measured = candidates.filter(pl.col("basis") == "measured")
    predicted = candidates.filter(
        pl.col("basis").str.starts_with("predicted") & (pl.col("rate_basis") == "sustained")
        & (pl.col("steady_global_steps_per_s") > 0)
    )  # fmt: skip
    if predicted.height:
        share = predicted.select(pl.col("global_steps_per_s") / pl.col("steady_global_steps_per_s")).item(0, 0)
        shares = measured.filter((pl.col("rate_basis") == "sustained") & (pl.col("steady_global_steps_per_s") > 0))
        each = ", ".join(
            f"{named(run)} {sustained / steady:.3f}"
            for run, sustained, steady in shares.select("candidate", "global_steps_per_s", "steady_global_steps_per_s")
            .sort("candidate")
            .iter_rows()
        )
        notes.append(
            f"Predicted rows: the predicted steady rate x {share:.3f}, the median share of their steady rate the "
            f"measured runs sustained ({each}; checkpoints, evaluations, restarts, at most 1); "
            + (
                "'hours at steady' is on the predicted steady rate."
                if wide
                else "'steady steps/s' is the predicted steady rate (--wide shows the hours at it)."
            )
        )
    steady = measured.filter(pl.col("rate_basis") == "steady")["candidate"].sort().to_list()
    if steady:
        reasons = _lifetime_unseen(summary) if summary is not None else {}
        said = "; ".join(f"{named(run)}: {reasons.get(run) or CLOCK_MISSING['none']}" for run in steady)
        notes.append(
            f"Planned on the steady rate, no sustained rate measured ({said}): checkpoints, evaluations and "
            f"restarts are not in {'its' if len(steady) == 1 else 'their'} hours"
            + (", nor in the median share." if predicted.height else ".")
        )
    return notes


def _lifetime_unseen(summary: pl.DataFrame) -> dict[str, str]:
    """Why each run of ``summary`` has no sustained rate, where the summary says: goodput withheld
    (``goodput_reason``), else why its lead task has no clock (``clock_missing``,
    :data:`tierscope.analysis.clock.CLOCK_MISSING`: a tqdm bar's elapsed times cut at a restart are a clock
    cut, not none)."""
    from tierscope.analysis.clock import CLOCK_MISSING  # the CLI loads the analysis only when it runs

    reasons = {}
    for r in summary.iter_rows(named=True):
        said = r.get("goodput_reason") or CLOCK_MISSING.get(r.get("clock_missing") or "")
        if said:
            reasons[r["run_id"]] = said
    return reasons


def compute_engine_words(price_rows: Iterable[str | None]) -> str | None:
    """What the shipped prices are, where a price shown rests on one of them; None otherwise."""
    from tierscope.analysis.prices import on_compute_engine  # the CLI loads the analysis only when it runs

    if not on_compute_engine(price_rows):
        return None
    return "Compute Engine on-demand list prices (Vertex AI custom training bills more; --prices FILE for its own)"


def priced_region(region: str, candidates: pl.DataFrame, runs: pl.DataFrame | None = None) -> str:
    """The region ``candidates`` (recommend's and predict's, with ``candidate``, ``ml_units_per_hour`` and
    ``price_rows``) were priced in, as the price table names it: today's machines in the Google Cloud region
    ``--region`` stands for (``us``: ``us-central1``), or the one a run was collected in (``runs``: the run index,
    ``run_id, topology``; ``us-central1 (tpu-v4-8: us-central2)``), the legacy tiers in its ML-unit area (``us``);
    both where both were priced."""
    from tierscope.analysis.prices import area_of, region_of  # the CLI loads the analysis only when it runs
    from tierscope.analysis.topology import run_hardware

    legacy = candidates["ml_units_per_hour"].is_not_null()
    today = candidates["price_rows"].is_not_null() & ~legacy
    where = region_of(region)
    own: list[str] = []
    if runs is not None and "topology" in runs.columns:
        priced = set(candidates.filter(today)["candidate"].to_list())
        for run_id, topology in runs.select("run_id", "topology").iter_rows():
            hardware = run_hardware(None, topology) if run_id in priced and topology else None
            if hardware is None:
                continue
            named = {p.region for p in hardware.pools if p.region and p.region != where}
            own += [f"{run_id}: {r}" for r in sorted(named)]
    regions = [where + (f" ({', '.join(own)})" if own else "")] if today.any() else []
    if legacy.any() and area_of(region) not in regions:
        regions.append(f"{area_of(region)} (the legacy tiers' ML units)" if regions else area_of(region))
    return ", ".join(regions) or region


def compute_engine_note(price_rows: Iterable[str | None]) -> list[str]:
    """The line saying what the shipped prices are, where a price shown rests on one of them."""
    words = compute_engine_words(price_rows)
    return [f"Prices: {words}."] if words else []


def _per_million(row: dict[str, Any], shared: str | None) -> str:
    """A row's USD per 1M examples, its unit named where the table's rows count different ones (``shared``
    None): ``0.0623 tokens``, ``1.20 examples``."""
    value = n.money(row.get("usd_per_million_examples"))
    unit = row.get("examples_unit")
    return f"{value} {unit}" if shared is None and unit and value != n.MISSING else value


#: Why a run without step records has no steady rate, said beside its status (which says the rest): it finished
#: (its row would be empty without a word), or only its closing summary states a speed.
_SAID_WITHOUT_RECORDS = ("finished_without_steps", "whole_run_only")


def summary_grid(
    frame: pl.DataFrame,
    region: str = "us",
    target_kind: str | None = None,
    baseline_asked: str | None = None,
    asked_date: date | None = None,
) -> Grid:
    """The summary frame (:func:`tierscope.analysis.summary.summary`) as a :class:`Grid`; ``target_kind``:
    ``loss`` or ``accuracy``, what was asked (the header's words where no run logs the metric).

    The default columns answer the question (rate, speedup, ML units, price per step); ``--wide``
    adds the intervals, efficiencies, modes and run facts. A failed run's reason is a line
    under the table, whole. The price date is a column when runs were priced on different
    dates, else a line under the table.
    """
    baseline = frame["baseline_run_id"].drop_nulls().first()
    target = frame["target_steps"].drop_nulls().first() if "target_steps" in frame.columns else None
    priced = frame["ml_units_per_hour"].is_not_null() | frame["usd_per_hour"].is_not_null()
    several_dates = frame.filter(priced)["price_date"].n_unique() > 1
    reach = f"; N = {n.count(target)} steps" if target is not None else ""
    from tierscope.analysis.summary import examples_word, shared_examples_word

    examples = "speedup_basis" in frame.columns and bool((frame["speedup_basis"] == "examples/s").any())
    # what the logs' examples are: a language model's tokens where its log measured tokens/s; where runs count
    # different ones (tokens, images), each cell names its own and the header none
    word = examples_word(frame)
    shared = shared_examples_word(frame)
    # a price per 1M tokens is what one training a language model asks: shown unwidened where a run counts them
    tokens = "examples_unit" in frame.columns and bool((frame["examples_unit"] == "tokens").any())
    # each run's own steps to N: a column only where they differ from N (N is the baseline's work)
    own_steps = "target_examples" in frame.columns and frame["target_examples"].drop_nulls().len() > 0
    if examples:  # the basis, in the header: the baseline's examples (only runs counting them compare on them)
        reach = f", on {baseline_word(frame) or word}/s where batch size or mode differ{reach}"
    columns = [
        Column("run", "name"),
        Column("tier", "phrase"),
        Column("status", "phrase"),
        Column("records", wide=True),
        Column("tasks", drop=3),
        Column("steady steps/s"),
        Column("steady 95 % interval", wide=True),
        Column("mean steps/s", drop=4),
        Column("speedup"),
        Column("speedup 95 % interval", wide=True),
        Column("efficiency per task", wide=True),
        Column("efficiency per ML unit", wide=True),
        Column("devices", "label", wide=True),
        Column("efficiency per device", wide=True),
        Column("steps/s per device", wide=True),
        Column("steps per USD", wide=True),
        Column("ML units/h"),
        Column("USD/h", drop=2),
        Column("steps/ML unit-h"),
        Column("USD per 1,000 steps", drop=1),
        Column(f"USD per 1M {word}" if shared else "USD per 1M", wide=not (examples or tokens)),
        *([Column("steps to N", drop=5)] if own_steps else []),
        Column("hours to N"),
        Column("hours at steady", drop=5),
        Column("USD to N"),
        Column("priced on", "label", wide=not several_dates, drop=6),
        Column("mode", "label", wide=True),
        Column("ran on", "text", wide=True),
        Column("note", "text", wide=True),
        Column("price rows", "text", wide=True),
    ]
    goal = target_said(frame, target_kind)
    if goal is not None:  # only when a target was asked: its step, time and price
        reach += f"; target {goal}"
        # a narrow terminal keeps the time (what was asked) and leaves out the step and the units first
        columns += [Column("step at target", drop=6), Column("s to target"), Column("ML unit-h to target", drop=5),
                    Column("USD to target", drop=1)]  # fmt: skip
    # without a baseline (no run has a steady rate) there is no speedup to say what it is against; with the baseline
    # alone measured, a speedup of 1.00 against itself answers nothing: the title says so, a note what to collect
    alone = bool(baseline) and not any(
        r["steady_global_steps_per_s"] is not None and r["run_id"] != baseline for r in frame.iter_rows(named=True)
    )
    against = (
        "one measured run: no speedup yet"
        if alone
        else f"speedup against {named(baseline)}"
        if baseline
        else "no run has a steady rate: no speedup"
    )
    grid = Grid(columns, title=f"tierscope summary (global steps/s; {against}{reach})")
    for r in frame.iter_rows(named=True):
        reached = (
            [n.count(r["step_at_target"]), n.fixed(r["time_to_target_s"], 1),
             n.fixed(r["ml_unit_hours_to_target"], 3), n.money(r["cost_to_target"])]
            if goal is not None else []
        )  # fmt: skip
        grid.add(
            r["run_id"], r["tier"] or r.get("hardware") or n.MISSING, STATUS_WORDS.get(r["status"], r["status"]),
            n.count(r["records"]), tasks_cell(r),
            n.rate(r["steady_global_steps_per_s"]), _interval(r["steady_ci_low"], r["steady_ci_high"], n.rate),
            n.rate(r["mean_global_steps_per_s"]),
            n.ratio(r["speedup_vs_baseline"]), _interval(r["speedup_ci_low"], r["speedup_ci_high"], n.ratio),
            n.ratio(r["scaling_efficiency_tasks"]), n.ratio(r["scaling_efficiency_units"]),
            devices_cell(r), n.ratio(r.get("scaling_efficiency_devices")), n.rate(r.get("steps_per_s_per_device")),
            n.fixed(r.get("steps_per_usd"), 0), n.units(r["ml_units_per_hour"]), n.money(r["usd_per_hour"]),
            n.fixed(r["steps_per_ml_unit_hour"], 1), n.money(r["usd_per_1000_steps"]),
            _per_million(r, shared),
            *([n.count(r["target_steps"])] if own_steps else []),
            n.hours(r["hours_to_target"]), n.hours(r.get("steady_hours_to_target")), n.money(r["usd_to_target"]),
            str(r["price_date"]) if r["usd_per_hour"] is not None or r["ml_units_per_hour"] is not None else n.MISSING,
            r.get("update_mode") or r["training_mode"] or n.MISSING, r["ran_on"] or n.MISSING, r["note"] or n.MISSING,
            r.get("price_rows") or n.MISSING, *reached,
        )  # fmt: skip
    grid.notes += [f"{named(r['run_id'])} failed: {r['failure_reason']}" for r in frame.iter_rows(named=True)
                   if r["failure_reason"]]  # fmt: skip
    # an error its log went on from: the steps resumed and the log then said it finished (summary.overcome_failures)
    grid.notes += [f"run {named(r['run_id'])}: its log went on after an error ({r['earlier_failure']}): steps "
                   "resumed and it finished" for r in frame.iter_rows(named=True)
                   if r.get("earlier_failure") and not r["failure_reason"]]  # fmt: skip
    # a run whose logs show other work than the baseline's: no speedup (tierscope.analysis.comparable)
    grid.notes += [f"run {named(r['run_id'])}: {r['baseline_note']}" for r in frame.iter_rows(named=True)
                   if r.get("baseline_note")]  # fmt: skip
    # a restart (a new process, a step going back, a resume) splits a task's records: no rate spans it
    grid.notes += [f"run {named(r['run_id'])}: {n.plural(r['restarts'], 'restart')} ({r['segments']} segments; "
                   "no rate spans a restart)" for r in frame.iter_rows(named=True) if r.get("restarts")]  # fmt: skip
    # a clock set back while the steps went on (an NTP step) is no restart: the intervals it jumped are untimed
    grid.notes += [f"run {named(r['run_id'])}: its clock jumps (set back, or ahead and back) over "
                   f"{n.plural(r['clock_setbacks'], 'interval')} while its steps go on: not a restart; their clock "
                   "time is left out of its rates" for r in frame.iter_rows(named=True)
                   if r.get("clock_setbacks")]  # fmt: skip
    grid.notes += target_basis_notes(frame)
    # what the hours to N are on: the sustained rate (or the steady one where a run's goodput is unknown)
    if "plan_basis" in frame.columns and frame["plan_basis"].drop_nulls().len():
        steady_only = [named(r["run_id"]) for r in frame.iter_rows(named=True) if r["plan_basis"] == "steady"]
        grid.notes.append(
            "hours to N are on the sustained rate (the steps each run made over the time it ran: checkpoints, "
            "evaluations and restarts in, start-up once); hours at steady beside"
            + (f"; {', '.join(steady_only)}: on the steady rate (no goodput)" if steady_only else "")
        )
    # what the steady rate left out beyond warm-up: stalls (checkpoints, evaluations, slow input)
    from tierscope.analysis.bootstrap import STALL_FROM, STALL_TO  # the CLI loads the analysis only when it runs

    grid.notes += [f"run {named(r['run_id'])}: steady rate over {r['steady_intervals']} intervals past warm-up less "
                   f"{n.plural(r['steady_stalls'], 'stall')} (step time over {STALL_FROM:g}x the median; "
                   f"wholly left out from {STALL_TO:g}x)"
                   for r in frame.iter_rows(named=True)
                   if r.get("steady_stalls") and r["steady_global_steps_per_s"] is not None]  # fmt: skip
    # the intervals that hold an evaluation or a save: badput (goodput's), out of the steady rate unless all do
    grid.notes += [f"run {named(r['run_id'])}: "
                   + ("every interval holds an evaluation or checkpoint save; the steady rate includes them"
                      if r["steady_pauses"] >= r["steady_intervals"] else
                      f"steady rate leaves out {n.plural(r['steady_pauses'], 'interval')} holding an evaluation or "
                      "checkpoint save")
                   for r in frame.iter_rows(named=True)
                   if r.get("steady_pauses") and r["steady_global_steps_per_s"] is not None]  # fmt: skip
    # why a run that logged steps shows no steady rate (a run without records says so by its status, but for one
    # that finished: its row would be empty without a word)
    grid.notes += [f"run {named(r['run_id'])}: no steady rate: {r['steady_reason']}"
                   for r in frame.iter_rows(named=True) if r.get("steady_reason")
                   and (r["records"] or r["steady_status"] in _SAID_WITHOUT_RECORDS)]  # fmt: skip
    # a mean no record measures: the figures the log's closing summary states (analysis.whole_run)
    grid.notes += [f"run {named(r['run_id'])}: {r['mean_note']}" for r in frame.iter_rows(named=True)
                   if r.get("mean_note")]  # fmt: skip
    # what a steady rate assumes where the log has no clock (intervals timed by each line's sec/step)
    grid.notes += [f"run {named(r['run_id'])}: {r['steady_assumption_note']}" for r in frame.iter_rows(named=True)
                   if r.get("steady_assumption_note")]  # fmt: skip
    grid.notes += [f"run {named(r['run_id'])}: {r['steady_clock_note']}" for r in frame.iter_rows(named=True)
                   if r.get("steady_clock_note")]  # fmt: skip
    # figures that cannot be (a price per step at 0 steps/s, goodput whose steps outrun the clock), and why
    grid.notes += [f"run {named(r['run_id'])}: withheld {r['withheld_figures']}" for r in frame.iter_rows(named=True)
                   if r.get("withheld_figures")]  # fmt: skip
    grid.notes += [f"run {named(r['run_id'])}: no goodput: {r['goodput_reason']}" for r in frame.iter_rows(named=True)
                   if r.get("goodput_reason")]  # fmt: skip
    grid.notes += configuration_notes(frame)
    grid.notes += price_notes(frame, region, asked_date)
    grid.notes += compute_engine_note(frame["price_rows"] if "price_rows" in frame.columns else [])
    if alone:
        grid.notes.append(
            f"note: {named(baseline)} is the one run measured, so nothing says yet what a bigger machine buys: "
            "collect a run of the same job on another configuration into this dataset (tierscope collect files LOG "
            "--run-id NAME --machine TYPE, or --tier TIER) and summary shows its speedup and price per step"
        )
    elif baseline and baseline_asked is None:
        tier = next((r["tier"] for r in frame.iter_rows(named=True) if r["run_id"] == baseline), None)
        if not isinstance(tier, str) or tier.upper() != "BASIC":  # the default's second choice: say why
            of = f" (tier {tier})" if isinstance(tier, str) else ""
            tiers = {str(t).upper() for t in frame["tier"].to_list() if isinstance(t, str)}
            why = (
                "no run of the cloud tier BASIC has a steady rate"
                if "BASIC" in tiers
                else "no run has the cloud tier BASIC"
            )
            grid.notes.append(
                f"note: the speedup is against {named(baseline)}{of}: {why}, so the measured run with the lowest "
                "price per hour (else the fewest training tasks) is the baseline; choose one with --baseline RUN_ID"
            )
    if goal is not None:  # why a run has no time to the target
        grid.notes += [f"run {named(r['run_id'])}: {r['target_reason']}" for r in frame.iter_rows(named=True)
                       if r["target_reason"] and r["records"]]  # fmt: skip
    # tasks that logged against the declared topology
    grid.notes += [f"run {named(r['run_id'])}: {r['topology_note']}" for r in frame.iter_rows(named=True)
                   if r.get("topology_note")]  # fmt: skip
    return grid


def configuration_notes(frame: pl.DataFrame) -> list[str]:
    """What a row of several runs pools (its runs, the spread of their rates, those left out), and what the
    95 % intervals cover: within one run (its own intervals resampled) or between a configuration's runs."""
    from tierscope.analysis.configurations import CI_BETWEEN_RUNS  # the CLI loads the analysis only when it runs
    from tierscope.analysis.summary import CI_WITHIN_RUN

    notes = []
    rows = list(frame.iter_rows(named=True)) if "config_runs" in frame.columns else []
    # a configuration of one run: named by its configuration, its run (and a split of its name) said
    notes += [f"configuration {named(r['run_id'])}: {r['config_note']}" for r in rows
              if r["config_runs"] == 1 and r["config_note"]]  # fmt: skip
    for r in (r for r in rows if r["config_runs"] > 1):
        rated = r["rated_runs"]
        sd = f", s = {n.rate(r['run_rate_sd'])}" if r["run_rate_sd"] is not None else ""
        low, high = n.rate(r["run_rate_min"]), n.rate(r["run_rate_max"])
        spread = (
            f"its rate the mean of the steady rates of {n.plural(rated, 'run')} ({low} to {high}{sd})"
            if rated
            else "no run with a steady rate"
        )
        left = f"; {r['config_note']}" if r.get("config_note") else ""
        notes.append(
            f"configuration {named(r['run_id'])}: {n.plural(r['config_runs'], 'run')} ({r['run_ids']}), one row: "
            f"{spread}{left}; --each-run lists them"
        )
    scopes = set(frame["ci_scope"].drop_nulls()) if "ci_scope" in frame.columns else set()
    if CI_WITHIN_RUN in scopes:
        # a run's interval cannot hold run-to-run variation (placement, neighbours)
        notes.append(
            "note: the 95 % interval of one run (--wide) is within that run: it resamples its own intervals, "
            "not other runs of its configuration; runs given one config (a manifest's config, collect --config) "
            "get an interval between runs"
        )
    if CI_BETWEEN_RUNS in scopes:
        notes.append(
            "note: the 95 % interval of a configuration of several runs is between its runs: Student's t over "
            "their steady rates (3 runs or more)"
        )
    return notes


def target_said(frame: pl.DataFrame, kind: str | None = None) -> str | None:
    """The summary's target in words (``loss <= 0.5``, ``accuracy >= 0.9``), None when none was asked;
    ``kind`` (``loss`` / ``accuracy``) where no run logs the metric (its rows name none)."""
    if "target_value" not in frame.columns or frame["target_value"].drop_nulls().is_empty():
        return None
    value = frame["target_value"].drop_nulls()[0]
    kinds = set(frame["target_metric"].drop_nulls()) or ({kind} if kind else set())
    loss = bool(kinds) and kinds <= {"loss"}
    return f"loss <= {value:g}" if loss else f"{' / '.join(sorted(kinds)) or 'accuracy'} >= {value:g}"


#: A run's status in words, the report's (reports/i18n/en.json ``status.*``): JSON and CSV keep the codes.
STATUS_WORDS = {"ok": "finished", "unknown": "no end logged", "failed": "failed", "empty": "no data"}


def devices_cell(row: dict) -> str:
    """GPUs, TPU chips or tasks, with what they are: ``8 GPU``, ``8 TPU chip``, ``5 task``."""
    if row.get("devices") is None:
        return n.MISSING
    return f"{row['devices']} {row['device_basis']}"


def tasks_cell(row: dict) -> str:
    """Training tasks, and the parameter servers where the topology has any: ``5 +3 ps``."""
    ps = row.get("ps_tasks")
    return f"{n.count(row['tasks'])} +{ps} ps" if ps else n.count(row["tasks"])


def _interval(low: float | None, high: float | None, show: Callable[[float | None], str]) -> str:
    return n.MISSING if low is None or high is None else f"{show(low)} - {show(high)}"


def print_summary(frame: pl.DataFrame, region: str = "us", wide: bool = False) -> None:
    """The summary frame as a readable table on stdout, fitted to the terminal."""
    print_table(summary_grid(frame, region), wide)
