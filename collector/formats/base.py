"""The interface every log-format parser implements.

A parser takes a frame of lines and splits it four ways: step records, run events,
rejects (lines that look like this format's records but are broken) and the rest
(lines it does not recognise, handed to the next parser). Parsers are chained, so a
file that interleaves two formats is read line by line.

Parsers are stateless singletons: what one batch of a file must pass to the next (the
epoch a Keras bar belongs to, the time an MLPerf run started) lives in the
:class:`ParseContext` the caller keeps for the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import polars as pl

# The one cast of a logged number, defined in the vocabulary; re-exported for the formats.
from tierscope.collector.formats.vocabulary import number as number
from tierscope.collector.formats.vocabulary import unsigned as unsigned

#: The input of :func:`tierscope.collector.formats.parse_lines`: ``source_offset`` (Int64, 1-based line
#: number) and ``line`` (String).
LINES_SCHEMA: dict[str, pl.DataType] = {"source_offset": pl.Int64(), "line": pl.String()}

#: Lines at the end of a non-final batch kept as look-ahead for multi-line blocks (a format whose
#: block may straddle their first line moves it back with ``undecided_from``).
LOOKAHEAD_LINES = 16

#: Column added to the lines a parser sees: the launcher prefix's task (``"worker/2"``), null
#: without one. Parsers that relate neighbouring lines (rate lines to records, Keras bars to
#: their ``Epoch`` line) relate only lines of the same tag.
TAG = "tag"

#: Column added to the lines a parser sees: the line's own time from its envelope (a glog or
#: Python logging header, a stream-logs or console time; Datetime, µs, UTC), null without one.
#: Formats that make records of a step and its time alone read it (see ``PhrasedFormat.lead``).
STAMP = "stamp"
#: Where :func:`tierscope.collector.formats.parse_lines` keeps, in ``ParseContext.state``, a batch's lines as
#: written (``source_offset``, ``line``: before their envelopes are taken off), for the declared formats
#: (:class:`tierscope.collector.formats.declared.DeclaredFormat`).
WRITTEN = "declared-lines-as-written"


def numbered(lines: pl.Series | Sequence[str]) -> pl.DataFrame:
    """``lines`` (a String series or a list of strings) as a frame of :data:`LINES_SCHEMA`: each ``line`` with its
    1-based ``source_offset``, as if they were a file of their own (a sniff's sample, a head read again)."""
    line = pl.Series("line", lines, dtype=pl.String)
    return pl.DataFrame({"source_offset": pl.int_range(1, line.len() + 1, eager=True, dtype=pl.Int64), "line": line})


@dataclass
class ParseContext:
    """One file's parse, batch after batch.

    - ``year``: the year of glog/absl timestamps (their prefix has none); null leaves them null.
    - ``end``: lines with ``source_offset >= end`` are look-ahead: the caller drops whatever a
      parser makes of them and passes them again with the next batch. Parsers must not let
      them change ``state``. None: every line counts.
    - ``state``: per-format memory across batches, keyed by format name.
    - ``steps_seen``: whether a step record came before this batch (a later traceback then
      marks the run failed).
    - ``formats``: formats the user declared (:mod:`tierscope.collector.formats.declared`),
      tried before the shipped ones and accepted by name as ``only``/``first``.
    - ``chain``: the format chain (:func:`tierscope.collector.formats.parse_lines`), for what holds
      lines of its own (a LogEntry's message, a console CSV row): handed in, so a format that reads
      messages needs no import of the chain that lists it. :func:`~tierscope.collector.formats.parse_lines`
      fills it in.
    - ``may_grow``: the file may still be being written (it changed within the reader's settle time): a report
      printed as a group of lines that the last batch ends in the middle of is left for the next collect
      (:mod:`tierscope.collector.formats.stanzas`).
    """

    year: int | None = None
    end: int | None = None
    state: dict[str, Any] = field(default_factory=dict)
    steps_seen: bool = False
    formats: tuple[LineFormat, ...] = ()
    chain: Callable[..., Parsed] | None = field(default=None, repr=False, compare=False)
    may_grow: bool = False
    steps_measured: bool = False

    def counts(self, offsets: pl.Expr) -> pl.Expr:
        """True where a line's effects count (it is not look-ahead)."""
        return pl.lit(True) if self.end is None else offsets < self.end


@dataclass
class Parsed:
    """What one parser made of a frame of lines.

    ``steps``, ``events`` and ``rejects`` hold a subset of the columns of
    :data:`tierscope.dataset.schema.STEP_SCHEMA`, ``EVENT_SCHEMA`` and ``REJECT_SCHEMA`` (always
    ``source_offset``); the caller adds run, tier and source and conforms them.
    ``rest`` is the lines the parser did not recognise, in the shape it was given.
    ``skipped`` counts the lines given that produced no row of their own (no metric, a
    duplicate copy, or folded into a neighbour's record); ``pending`` holds lines whose
    meaning depends on lines not read yet (set only by :func:`tierscope.collector.formats.parse_lines`).
    ``said`` is the lines given, less those that state nothing but the record read from them, in
    words proven to hold none of the statements a batch is searched for after the chain (a batch size,
    why a run stopped): None, every line given may.
    """

    steps: pl.DataFrame
    events: pl.DataFrame
    rejects: pl.DataFrame
    rest: pl.DataFrame
    skipped: int = 0
    notes: list[str] = field(default_factory=list)
    pending: pl.DataFrame | None = None
    said: pl.DataFrame | None = None


class LineFormat(Protocol):
    """A step-log format. Implementations are stateless singletons."""

    name: ClassVar[str]
    #: One real-looking line of the format, shown by ``tierscope formats``.
    example: ClassVar[str]
    #: What the format's step and seconds mean, in one sentence.
    meaning: ClassVar[str]

    def sniff(self, lines: pl.Series) -> int:
        """How many of ``lines`` (a String series) this format recognises."""
        ...

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        """Split ``lines`` (:data:`LINES_SCHEMA` plus :data:`TAG` and :data:`STAMP`) into records,
        events, rejects and the rest."""
        ...

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        """The first ``source_offset`` of a trailing block that the next batch may complete, or None."""
        ...


class SingleLineFormat:
    """Defaults for a format whose records each sit on one line and are found by a ``mark``:
    a regular expression, or a plain string when ``mark_is_literal``."""

    mark: ClassVar[str]
    mark_is_literal: ClassVar[bool] = False

    def marked(self) -> pl.Expr:
        """True for the lines this format reads."""
        return pl.col("line").str.contains(self.mark, literal=self.mark_is_literal)

    def sniff(self, lines: pl.Series) -> int:
        return int(lines.str.contains(self.mark, literal=self.mark_is_literal).sum())

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        return None


class AlwaysTried:
    """Defaults for a format tried after every chain (also with ``--format``): its lines appear
    in logs of every format, so they never pick the parser."""

    def sniff(self, lines: pl.Series) -> int:
        return 0

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        return None


def reject_frame(frame: pl.DataFrame, reason: pl.Expr | str, fmt: str) -> pl.DataFrame:
    """Rejects from ``frame`` (which has ``source_offset`` and ``line``) with ``reason``."""
    reason_expr = pl.lit(reason) if isinstance(reason, str) else reason
    return frame.select(
        pl.col("source_offset"),
        pl.lit(fmt).alias("format"),
        reason_expr.alias("reason"),
        pl.col("line").alias("raw"),
    )


def finite_nonneg(expr: pl.Expr) -> pl.Expr:
    """True where ``expr`` is a finite number >= 0 without a minus sign (false for null, see :func:`unsigned`)."""
    return (expr.is_not_null() & expr.is_finite() & unsigned(expr)).fill_null(False)


def fraction(raw: pl.Expr) -> pl.Expr:
    """An accuracy's capture (String) as the fraction it is stored as (0..1): ``0.934`` as written, a percentage
    ``93.4%`` over 100 (0.934); null where it is no number. Its range is the caller's to check."""
    return pl.when(raw.str.ends_with("%")).then(number(raw.str.strip_suffix("%")) / 100).otherwise(number(raw))


def split_by(lines: pl.DataFrame, ours: pl.Expr) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(lines where ours, the rest)``: what a format reads and what it hands on."""
    return lines.filter(ours), lines.filter(~ours)


def empty_parsed(lines: pl.DataFrame) -> Parsed:
    """Nothing recognised: every line is handed on."""
    return Parsed(steps=pl.DataFrame(), events=pl.DataFrame(), rejects=pl.DataFrame(), rest=lines)


@dataclass
class FileRead:
    """What a whole-file format made of one file: ``items`` read (entries, rows) and the parts
    to store, each in the dataset's schemas (``rest`` empty)."""

    items: int
    parts: Iterator[Parsed]


@runtime_checkable
class FileFormat(Protocol):
    """A format read whole from a file (a JSON export, a CSV download), not line by line.
    Implementations are stateless singletons; each entry's message goes through the format chain
    (``context.chain``), so envelopes, line formats and status lines are read as in a text log."""

    name: ClassVar[str]
    example: ClassVar[str]
    meaning: ClassVar[str]

    def claims(self, head: str) -> bool:
        """Whether a file that starts with ``head`` (up to ``HEAD_BYTES``, decoded) is this format."""
        ...

    def read(self, path: Path, run_id: str, tier: str | None, context: ParseContext) -> FileRead:
        """Read ``path`` (plain or gzip); raises :class:`~tierscope.collector.errors.InputError`."""
        ...


def chain_of(context: ParseContext) -> Callable[..., Parsed]:
    """``context``'s format chain; raises :class:`ValueError` if none was handed in (a caller's bug)."""
    if context.chain is None:
        raise ValueError("a ParseContext without its format chain: pass chain=parse_lines")
    return context.chain
