"""How a file was read, line by line: the library behind ``tierscope formats --try``.

:func:`explain_file` reads a text log exactly as ``collect files`` would (batches, sniffing,
the format chain with the declared formats first) without storing anything, and returns
plain dataclasses: for each line of a window (default the first :data:`DEFAULT_LINES`), the
envelope/prefix stripped before the formats and what it gave, the format that read the line
and the fields it got, or why the line was skipped or rejected; and a verdict for the whole
file (main format, records, roles, status).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

from tierscope.collector.errors import InputError
from tierscope.collector.formats import (
    HEAD_BYTES,
    LINES_SCHEMA,
    FileFormat,
    LineFormat,
    ParseContext,
    Parsed,
    check_format,
    parse_lines,
    sniff_file,
    sniff_format,
)
from tierscope.collector.formats.envelopes import split_envelopes
from tierscope.collector.formats.grammar import ProgressGrammar, explain_line, explain_parts
from tierscope.collector.formats.layout import STATE as LAYOUT_STATE
from tierscope.collector.formats.layout import Layout, LearnedLayout
from tierscope.collector.formats.layout import explain as explain_layout
from tierscope.collector.formats.stated_tasks import stated_tasks
from tierscope.collector.formats.vocabulary import ANSI, MEASURE_GATE
from tierscope.collector.runs import LINK_LOOP, NO_SUCH_FILE, missing_input, not_a_file
from tierscope.collector.sources.files import (
    DEFAULT_BATCH_BYTES,
    LineBatch,
    file_head,
    file_year,
    iter_line_batches,
    long_line_rejects,
)
from tierscope.dataset.schema import STEP_KEY

#: Lines shown when no window is given.
DEFAULT_LINES = 20
#: The run id records of entry files get while tried (nothing is stored).
TRY_RUN = "try"

#: The fields of a step record shown for a line, in this order (units: per second, seconds; ``pid`` the
#: process id where the line names one).
RECORD_FIELDS = (
    "role",
    "task_index",
    "step",
    "local_step",
    "global_steps_per_s",
    "local_steps_per_s",
    "examples_per_s",
    "elapsed_s",
    "interval_s",
    "loss",
    "accuracy",
    "eval_loss",
    "eval_accuracy",
    "timestamp",
    "pid",  # a change of it is a new process, so a new segment: worth seeing
)


@dataclass(frozen=True)
class LineReading:
    """What became of one line.

    - ``text``: the line as written, without a terminal's colour codes where it had some (as it was read).
    - ``outcome``: ``record`` (one or more step records), ``event``, ``reject`` or ``skipped``.
    - ``envelope``: the prefix text stripped before the formats (``""`` without one), and
      ``envelope_gave`` what it said (``worker/2``, a timestamp), ``""`` when nothing.
    - ``format``: the format that read the line (None when skipped).
    - ``records``: each record's non-null fields of :data:`RECORD_FIELDS` (rates in steps
      per second, times in seconds); for an event, ``event`` and ``reason``.
    - ``why``: a reject's reason or why the line was skipped.
    """

    line: int
    text: str
    outcome: str
    envelope: str = ""
    envelope_gave: str = ""
    format: str | None = None
    records: list[dict[str, object]] = field(default_factory=list)
    why: str | None = None


@dataclass(frozen=True)
class FileVerdict:
    """The whole file: ``format`` is the one that read most records (else the sniffed one),
    ``by_format`` counts records per format, ``roles`` the distinct tasks whose lines the file
    holds (``master/0``, ``worker``): those of its records and events, those its envelopes
    name and those a job status in it states (:mod:`~tierscope.collector.formats.stated_tasks`),
    so a file without a step record (Keras epoch lines only) still says which tasks
    logged; ``status`` is ``failed`` (with ``failure_reason``), ``ok`` (records, no failure)
    or ``empty``."""

    path: str
    lines: int
    records: int
    events: int
    rejects: int
    skipped: int
    format: str | None
    by_format: dict[str, int]
    roles: list[str]
    status: str
    failure_reason: str | None = None
    #: records read again with the values of one before them (a redrawn bar, a handler attached twice):
    #: ``collect`` stores each once and counts the rest as duplicates; ``records`` counts them once.
    duplicates: int = 0


@dataclass(frozen=True)
class Explanation:
    """:func:`explain_file`'s answer: the window's lines (``first``..``last``) and the verdict."""

    verdict: FileVerdict
    readings: list[LineReading]
    first: int
    last: int
    #: Why ``readings`` is empty for a file read whole (an export, a console CSV), else None.
    note: str | None = None


def explain_file(
    path: Path,
    window: tuple[int, int] | None = None,
    *,
    only: str | None = None,
    formats: Sequence[LineFormat] = (),
    year: int | None = None,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> Explanation:
    """Read the text log at ``path`` as ``collect files`` would and say how each line of
    ``window`` (1-based, inclusive; default the first :data:`DEFAULT_LINES`) was read.

    ``only`` reads with one format (``--format``); ``formats`` are the declared formats;
    ``year`` dates glog timestamps (default: the file's modification year; in a whole-file
    format's entries, as ``collect`` dates them). Raises
    :class:`InputError` for an unreadable file and
    :class:`~tierscope.collector.formats.UnknownFormatError` for an unknown ``only``.
    """
    if not path.is_file():
        if not path.exists() and not path.is_symlink():
            raise missing_input(path)
        why = not_a_file(path)
        advice = {LINK_LOOP: "fix the link", NO_SUCH_FILE: "check the path"}.get(why, "give one log file")
        raise InputError(f"cannot read {path}: {why}; {advice}")
    first, last = window or (1, DEFAULT_LINES)
    # Entries are dated as collect dates them (readers/logs.py): the modification year is a text log's.
    entries = _entry_file(path, only, ParseContext(year=year, formats=tuple(formats), chain=parse_lines))
    context = ParseContext(year=year if year is not None else file_year(path), formats=tuple(formats))
    if entries is not None:
        kind, totals = entries
        note = f"a {kind} file: read whole, entry by entry; line-by-line detail is for text logs"
        return Explanation(verdict=totals.verdict(str(path), kind), readings=[], first=first, last=last, note=note)
    sniffed: str | None = None
    pending: pl.DataFrame | None = None
    kept: list[Parsed] = []
    window_lines: list[pl.DataFrame] = []
    totals = _Totals()
    in_window = pl.col("source_offset").is_between(first, last)
    for n, (batch, final) in enumerate(_marked_last(iter_line_batches(path, batch_bytes=batch_bytes))):
        # a line over 1 MiB is a reject naming its length, as collect makes it, and no format sees it
        body, too_long = long_line_rejects(batch)
        lines = body if pending is None else pl.concat([pending, body])
        totals.lines += batch.lines.height
        if n == 0 and only is None:
            sniffed = sniff_format(lines.get_column("line"), context.formats)
        parsed = parse_lines(lines, only=only, context=context, first=sniffed, final=final)
        if too_long.height:
            parsed.rejects = pl.concat([parsed.rejects, too_long], how="diagonal_relaxed")
        pending = parsed.pending
        totals.add(parsed)
        totals.roles |= _tasks_named(batch.lines, context.year)
        window_lines.append(batch.lines.filter(in_window))
        kept.append(_within(parsed, in_window))
    raw = pl.concat(window_lines) if window_lines else pl.DataFrame(schema=LINES_SCHEMA)
    learned = context.state.get(LAYOUT_STATE)
    readings = _readings(raw, kept, context.year, learned or None)
    return Explanation(verdict=totals.verdict(str(path), only or sniffed), readings=readings, first=first, last=last)


def _entry_file(path: Path, only: str | None, context: ParseContext) -> tuple[str, _Totals] | None:
    """``(format, totals)`` for a file of a whole-file format (a Cloud Logging export, a console
    CSV: read whole, as ``collect`` reads them), None for a text log."""
    named = check_format(only, context.formats) if only else None
    fmt = named if isinstance(named, FileFormat) else None if only else sniff_file(file_head(path, HEAD_BYTES))
    if fmt is None:
        return None
    got = fmt.read(path, TRY_RUN, None, context)
    totals = _Totals()
    totals.lines = got.items
    for part in got.parts:
        totals.add(part)
    return fmt.name, totals


def _marked_last(batches: Iterator[LineBatch]) -> Iterator[tuple[LineBatch, bool]]:
    """``(batch, is_last)`` for each of ``batches``."""
    batch = next(batches, None)
    while batch is not None:
        following = next(batches, None)
        yield batch, following is None
        batch = following


def _within(parsed: Parsed, keep: pl.Expr) -> Parsed:
    """``parsed`` cut to the window's lines."""

    def cut(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter(keep) if frame.width else frame

    return Parsed(
        steps=cut(parsed.steps), events=cut(parsed.events), rejects=cut(parsed.rejects), rest=cut(parsed.rest)
    )


@dataclass
class _Failure:
    """A failed event of a file: its ``offset``, ``reason``, and the offset of the first step record after it
    (``next_step``; None: none yet)."""

    offset: int
    reason: str | None
    next_step: int | None = None


@dataclass
class _Totals:
    """Counts over the whole file."""

    lines: int = 0
    records: int = 0
    duplicates: int = 0
    keys: set[tuple[object, ...]] = field(default_factory=set)
    events: int = 0
    rejects: int = 0
    skipped: int = 0
    by_format: Counter[str] = field(default_factory=Counter)
    roles: set[str] = field(default_factory=set)
    failures: list[_Failure] = field(default_factory=list)  # each failed event, in file order
    #: the file's last ending event so far: ``(event, offset)`` (``finished`` or ``failed``)
    last_end: tuple[str, int] | None = None
    finished: bool = False

    def add(self, parsed: Parsed) -> None:
        steps, events = parsed.steps, parsed.events
        if steps.height:
            # the values that identify a record in the dataset: the same ones twice are one record stored once
            key = [(pl.col(c) if c in steps.columns else pl.lit(None)).alias(c) for c in STEP_KEY if c != "run_id"]
            for row in steps.select(pl.struct(key).alias("k")).get_column("k").to_list():
                k = tuple(row.values())
                if k in self.keys:
                    self.duplicates += 1
                else:
                    self.keys.add(k)
                    self.records += 1
        self.events += events.height
        self.rejects += parsed.rejects.height
        self.skipped += parsed.skipped
        if steps.height:
            self.by_format.update(steps.get_column("format").fill_null("?").to_list())
            self.roles |= set(_task_labels(steps))
        if events.height:
            self.roles |= set(_task_labels(events.filter(_has_task(events))))
        if events.height:
            self.finished |= events.get_column("event").eq("finished").any()
            failed = events.filter(pl.col("event") == "failed").sort("source_offset")
            reasons = failed.get_column("reason") if "reason" in failed.columns else [None] * failed.height
            at = failed.get_column("source_offset")
            self.failures += [_Failure(o, r) for o, r in zip(at, reasons, strict=True)]
            ends = events.filter(pl.col("event").is_in(["failed", "finished"])).sort("source_offset")
            if ends.height:
                self.last_end = (ends.get_column("event")[-1], ends.get_column("source_offset")[-1])
        if steps.height and self.failures and "source_offset" in steps.columns:
            offsets = steps.get_column("source_offset")
            for failure in self.failures:
                if failure.next_step is None:
                    failure.next_step = offsets.filter(offsets > failure.offset).min()  # type: ignore[assignment]

    def standing(self) -> list[_Failure]:
        """The failures that stand, as the summary judges a file (tierscope.analysis.summary.overcome_failures):
        all but those its last ending, a ``finished`` after them, overrules where a step record came between."""
        end = self.last_end
        if end is None or end[0] != "finished":
            return self.failures
        return [f for f in self.failures if f.next_step is None or f.next_step > end[1]]

    def verdict(self, path: str, sniffed: str | None) -> FileVerdict:
        main = self.by_format.most_common(1)[0][0] if self.by_format else sniffed
        # As the summary says it (tierscope.analysis.summary): only what the log shows.
        standing = self.standing()
        status = "failed" if standing else "ok" if self.finished else "unknown" if self.records else "empty"
        return FileVerdict(
            path=path,
            lines=self.lines,
            records=self.records,
            events=self.events,
            rejects=self.rejects,
            skipped=self.skipped,
            format=main,
            by_format=dict(self.by_format.most_common()),
            roles=sorted(self.roles),
            status=status,
            failure_reason=standing[0].reason if standing else None,
            duplicates=self.duplicates,
        )


def _has_task(frame: pl.DataFrame) -> pl.Expr:
    """True for the rows of ``frame`` that name a role or a task index."""
    named = [pl.col(c).is_not_null() for c in ("role", "task_index") if c in frame.columns]
    return pl.any_horizontal(named) if named else pl.lit(False)


def _tasks_named(lines: pl.DataFrame, year: int | None) -> set[str]:
    """The tasks the envelopes of ``lines`` (:data:`LINES_SCHEMA`) name, record or not, and those
    their messages state (a job status naming its replicas)."""
    body, facts = split_envelopes(lines, year)
    stated = stated_tasks(body.get_column("line"))
    if facts is None:
        return stated
    return stated | set(_task_labels(facts.filter(_has_task(facts))))


def _task_labels(steps: pl.DataFrame) -> list[str]:
    """``role/index`` (or ``role``, or ``(no role)`` when neither is known) of each record."""
    if steps.height == 0:
        return []
    role = pl.col("role") if "role" in steps.columns else pl.lit(None, dtype=pl.String)
    index = pl.col("task_index").cast(pl.String) if "task_index" in steps.columns else pl.lit(None, dtype=pl.String)
    label = (
        pl.when(index.is_not_null())
        .then(pl.concat_str([role.fill_null("?"), pl.lit("/"), index]))
        .otherwise(role.fill_null("(no role)"))
    )
    return steps.select(label.alias("task")).get_column("task").unique().to_list()


def _readings(
    raw: pl.DataFrame, parsed: list[Parsed], year: int | None, layout: Layout | None = None
) -> list[LineReading]:
    """One :class:`LineReading` per line of ``raw`` from what the batches made of them (``layout``: the one the
    file's head taught, for the lines it read)."""
    steps = _rows(p.steps for p in parsed)
    events = _rows(p.events for p in parsed)
    rejects = _rows(p.rejects for p in parsed)
    unread = {int(o) for p in parsed for o in p.rest.get_column("source_offset")}
    body, facts = split_envelopes(raw, year)
    bodies = dict(zip(body.get_column("source_offset").to_list(), body.get_column("line").to_list(), strict=True))
    gave = _envelope_facts(facts)
    readings = []
    for offset, text in raw.iter_rows():
        msg = bodies.get(offset)
        # a line a terminal coloured is read without its codes (the envelopes' outermost layer): so is its prefix shown
        plain = text if msg is None or text.endswith(msg) else re.sub(ANSI, "", text)
        envelope = plain[: len(plain) - len(msg)] if msg is not None and plain.endswith(msg) else ""
        outcome, fmt, got, why = _outcome(offset, steps, events, rejects)
        if outcome == "skipped":
            why = (
                "a copy of a neighbouring line with a timestamp"
                if msg is None
                else _unread(msg)
                if offset in unread
                else "read with a neighbouring line (folded into its record)"
            )
        elif outcome == "record" and steps[offset][0].get("stanza"):
            # a report printed as a group of lines: its lines, then the grammar's reading of them as one statement
            group = steps[offset][0]
            counted = f" (its step counts the reports, in '{group['stanza_step']}')" if group.get("stanza_step") else ""
            why = (
                f"a group of lines {group['stanza_lines']} read as one statement{counted}: "
                f"{explain_line(str(group['stanza']))}"
            )
        elif outcome == "record" and steps[offset][0].get("table_row"):
            said = str(steps[offset][0]["table_row"])
            why = f"a row of a table under a header row naming its columns, read as '{said}': {explain_line(said)}"
        elif outcome == "record" and fmt == ProgressGrammar.name and msg is not None:
            why = explain_line(msg.split("\r")[-1])
        elif outcome == "record" and fmt == LearnedLayout.name and msg is not None and layout is not None:
            why = explain_layout(msg, layout)
        readings.append(
            LineReading(
                line=offset,
                text=plain,
                outcome=outcome,
                envelope=envelope,
                envelope_gave=gave.get(offset, ""),
                format=fmt,
                records=got,
                why=why,
            )
        )
    return readings


def _unread(message: str) -> str:
    """Why no format read a message: the grammar's verdict first (what decided it), then what it found."""
    plain = "no format recognises it (no step with a time or a rate)"
    if not pl.select(pl.lit(message).str.contains(MEASURE_GATE)).item() and not any(c.isdigit() for c in message):
        return plain
    found, verdict = explain_parts(message)
    if not found:
        return plain
    return f"{verdict or plain}; the grammar found: {'; '.join(found)}"


Rows = dict[int, list[dict[str, object]]]


def _outcome(
    offset: int, steps: Rows, events: Rows, rejects: Rows
) -> tuple[str, str | None, list[dict[str, object]], str | None]:
    """``(outcome, format, records, reject reason)`` of line ``offset``."""
    if offset in steps:
        recs = steps[offset]
        got = [{k: r[k] for k in RECORD_FIELDS if r.get(k) is not None} for r in recs]
        return "record", _str(recs[0].get("format")), got, None
    if offset in events:
        evs = events[offset]
        return (
            "event",
            _str(evs[0].get("format")),
            [{"event": e.get("event"), "reason": e.get("reason")} for e in evs],
            None,
        )
    if offset in rejects:
        rej = rejects[offset][0]
        return "reject", _str(rej.get("format")), [], _str(rej.get("reason"))
    return "skipped", None, [], None


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def _rows(frames: Iterator[pl.DataFrame]) -> Rows:
    """The rows of ``frames`` grouped by ``source_offset``."""
    by_line: Rows = {}
    for frame in frames:
        if frame.width == 0:
            continue
        for row in frame.iter_rows(named=True):
            by_line.setdefault(int(row["source_offset"]), []).append(row)
    return by_line


def _envelope_facts(facts: pl.DataFrame | None) -> dict[int, str]:
    """What each line's prefix said, after its layers: ``rank: worker/2``, ``glog: 2024-04-12 08:15:02.339 UTC``."""
    if facts is None:
        return {}
    said: dict[int, str] = {}
    for row in facts.iter_rows(named=True):
        parts = []
        if row.get("role") is not None:
            parts.append(f"{row['role']}/{row['task_index']}" if row.get("task_index") is not None else row["role"])
        stamp = row.get("timestamp")
        if isinstance(stamp, datetime):
            parts.append(stamp.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC")
        layers = f"{row['envelope']}: " if row.get("envelope") else ""
        said[int(row["source_offset"])] = layers + ", ".join(parts)
    return said


__all__ = ["DEFAULT_LINES", "RECORD_FIELDS", "Explanation", "FileVerdict", "LineReading", "explain_file"]
