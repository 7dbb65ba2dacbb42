"""Step-log formats: one module per format behind :class:`~tierscope.collector.formats.base.LineFormat`.

How a batch of lines is read (:func:`parse_lines`):

1. Launcher tags and glog/absl headers are stripped once for all formats
   (:mod:`tierscope.collector.formats.prefixes`); they fill a record's task and timestamp.
2. The formats run as a chain: each takes the lines it recognises and hands the rest on,
   so a file that interleaves formats is read line by line. Sniffing
   (:func:`sniff_format`, on a file's first lines) does not exclude any format: it only
   puts the file's main format first, so on a plain file that format takes nearly every
   line and the others run on what is left (next to nothing). ``--format NAME`` instead
   runs that format alone. Formats the user declared (:mod:`tierscope.collector.formats.declared`,
   carried by :attr:`ParseContext.formats`) run before the shipped ones. Python tracebacks
   (:mod:`tierscope.collector.formats.traceback`) are looked for after every chain, ``--format`` or not.
3. Lines no format recognises are *skipped* (counted, not stored): they carry no metric
   (checkpoint saves, warnings, blank lines). So are lines folded into a neighbour's
   record (a ``global_step/sec`` line, an ``Eval`` block's result lines) and the
   timestamp-less copy of a message printed twice.

Every input line thus ends up exactly one of: the line of a step record (a glued Keras
line may hold several), of an event, a reject, or skipped.

Batches: a file is read in batches (:mod:`tierscope.collector.sources.files`). With ``final=False``
the last :data:`LOOKAHEAD_LINES` lines, and an unfinished traceback, are parsed only as
context and returned in :attr:`Parsed.pending` for the caller to put in front of the next
batch, so blocks that span lines (Eval blocks, rate lines, split Keras bars, the two
copies of a message) are read whole whatever the batch size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from tierscope.collector.errors import CollectorError
from tierscope.collector.formats.base import LINES_SCHEMA, TAG, LineFormat, ParseContext, Parsed
from tierscope.collector.formats.cloudml import CloudMLSamples
from tierscope.collector.formats.distmnist import DistMnist
from tierscope.collector.formats.dlrm import DLRMIterations
from tierscope.collector.formats.gcloud import GcloudError
from tierscope.collector.formats.keras import KerasProgress
from tierscope.collector.formats.mlperf import MLPerf
from tierscope.collector.formats.odapi import ODAPIv2
from tierscope.collector.formats.prefixes import PREFIXES, split_prefixes
from tierscope.collector.formats.slim import TFSlim
from tierscope.collector.formats.structured import StructuredJSON
from tierscope.collector.formats.tensorfx import TensorFX
from tierscope.collector.formats.tensorpack import Tensorpack
from tierscope.collector.formats.tfcnn import TFCnnBenchmarks
from tierscope.collector.formats.tfhooks import TFEstimator
from tierscope.collector.formats.traceback import PythonTraceback

#: Every known format, in the order they are tried (after the sniffed one).
FORMATS: dict[str, LineFormat] = {
    f.name: f
    for f in (
        StructuredJSON(),
        MLPerf(),
        CloudMLSamples(),
        TFEstimator(),
        TFSlim(),
        ODAPIv2(),
        TFCnnBenchmarks(),
        Tensorpack(),
        DistMnist(),
        TensorFX(),
        DLRMIterations(),
        KerasProgress(),
        GcloudError(),
    )
}

#: Tried after every chain, also with ``--format``.
ALWAYS: tuple[LineFormat, ...] = (PythonTraceback(),)

#: How many lines :func:`sniff_format` looks at.
SNIFF_LINES = 200

#: Lines at the end of a non-final batch kept as look-ahead for multi-line blocks.
LOOKAHEAD_LINES = 16


class UnknownFormatError(CollectorError, ValueError):
    """``--format`` named a format tierscope does not know."""


def get_format(name: str, extra: Sequence[LineFormat] = ()) -> LineFormat:
    """The format called ``name`` (a shipped one or one of ``extra``, the declared formats);
    raises :class:`UnknownFormatError` listing the known ones."""
    known = {**FORMATS, **{f.name: f for f in extra}}
    try:
        return known[name]
    except KeyError:
        raise UnknownFormatError(
            f"unknown log format {name!r}; known formats: {', '.join(known)} (see `tierscope formats`)"
        ) from None


def sniff_format(lines: pl.Series | list[str], extra: Sequence[LineFormat] = ()) -> str | None:
    """The format that recognises most of the first :data:`SNIFF_LINES` of ``lines`` (prefixes
    stripped), or None when none recognises any. ``extra`` (declared formats) are tried too,
    first. Ties go to the earlier format (``extra``, then :data:`FORMATS`)."""
    head = pl.Series("line", lines, dtype=pl.String).head(SNIFF_LINES)
    frame = pl.DataFrame({"source_offset": pl.int_range(1, head.len() + 1, eager=True), "line": head})
    stripped, _ = split_prefixes(frame, None)
    known = {**{f.name: f for f in extra}, **FORMATS}
    counts = {name: fmt.sniff(stripped.get_column("line")) for name, fmt in known.items()}
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] > 0 else None


@dataclass(frozen=True)
class FormatInfo:
    """One row of ``tierscope formats``: ``kind`` is ``format``, ``always`` or ``prefix``."""

    name: str
    kind: str
    example: str
    meaning: str


def describe_formats(extra: Sequence[LineFormat] = ()) -> list[FormatInfo]:
    """Every line format, the always-tried ones and the shared prefixes, with one example each;
    ``extra`` (declared formats) first, of kind ``declared``."""
    rows = [FormatInfo(f.name, "declared", f.example, f.meaning) for f in extra]
    rows += [FormatInfo(f.name, "format", f.example, f.meaning) for f in FORMATS.values()]
    rows += [FormatInfo(f.name, "always", f.example, f.meaning) for f in ALWAYS]
    rows += [FormatInfo(name, "prefix", example, meaning) for name, example, meaning in PREFIXES]
    return rows


def _chain(only: str | None, first: str | None, extra: Sequence[LineFormat] = ()) -> list[LineFormat]:
    """The formats to run, in order: ``only`` alone, else the declared ``extra`` then the
    shipped ones, ``first`` moved to the front of its group; then :data:`ALWAYS`."""
    if only:
        return [get_format(only, extra), *ALWAYS]
    chain = [*extra, *FORMATS.values()]
    if first:
        lead = get_format(first, extra)
        chain.remove(lead)
        chain.insert(0 if lead in extra else len(extra), lead)
    return [*chain, *ALWAYS]


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame:
    kept = [f for f in frames if f.width]
    return pl.concat(kept, how="diagonal_relaxed") if kept else pl.DataFrame()


def parse_lines(
    lines: pl.DataFrame,
    only: str | None = None,
    context: ParseContext | None = None,
    first: str | None = None,
    final: bool = True,
) -> Parsed:
    """Parse ``lines`` (:data:`LINES_SCHEMA`) with the format chain, or with ``only`` one.

    ``first`` (a sniffed format name) is tried first; ``context`` carries what one batch of
    a file tells the next (pass the same object for every batch of a file). With
    ``final=False`` the batch's tail is returned unparsed in ``pending``. Returns the union
    of what the formats found; ``rest`` is what none recognised; ``skipped`` counts the
    lines (outside ``pending``) that produced no row. Raises :class:`UnknownFormatError`
    for an unknown ``only``/``first``.
    """
    context = context if context is not None else ParseContext()
    chain = _chain(only, first, context.formats)
    body, facts = split_prefixes(lines, context.year)
    context.end = None if final else _lookahead_start(body, chain)
    steps, events, rejects = [], [], []
    rest = body
    for fmt in chain:
        if rest.height == 0:
            break
        got = fmt.parse(rest, context)
        steps.append(got.steps)
        events.append(got.events)
        rejects.append(got.rejects)
        rest = got.rest
    parsed = Parsed(steps=_concat(steps), events=_concat(events), rejects=_concat(rejects), rest=rest)
    pending = None
    if context.end is not None:
        keep = pl.col("source_offset") < context.end
        parsed = Parsed(
            steps=parsed.steps.filter(keep) if parsed.steps.width else parsed.steps,
            events=parsed.events.filter(keep) if parsed.events.width else parsed.events,
            rejects=parsed.rejects.filter(keep) if parsed.rejects.width else parsed.rejects,
            rest=parsed.rest.filter(keep),
        )
        pending = lines.filter(~keep)
    if facts is not None:
        parsed.steps = _with_prefix_facts(parsed.steps, facts)
        parsed.events = _with_prefix_facts(parsed.events, facts)
    parsed.events = _failed_after_steps(parsed.events, parsed.steps, context)
    if parsed.steps.height:
        context.steps_seen = True
    window = lines.height - (pending.height if pending is not None else 0)
    produced = pl.concat(
        [f.select("source_offset") for f in (parsed.steps, parsed.events, parsed.rejects) if f.width]
        or [pl.DataFrame(schema={"source_offset": pl.Int64})]
    )
    parsed.skipped = window - produced.get_column("source_offset").n_unique()
    parsed.rest = parsed.rest.select(list(LINES_SCHEMA))
    parsed.pending = pending
    context.end = None
    return parsed


def _lookahead_start(body: pl.DataFrame, chain: list[LineFormat]) -> int | None:
    """The first ``source_offset`` of a non-final batch's look-ahead tail."""
    if body.height == 0:
        return None
    offsets = body.get_column("source_offset")
    start = int(offsets[max(0, body.height - LOOKAHEAD_LINES)])
    for fmt in chain:
        undecided = fmt.undecided_from(body)
        # A block as long as the whole batch cannot wait for the next one.
        if undecided is not None and undecided > int(offsets[0]):
            start = min(start, undecided)
    return start


def _with_prefix_facts(frame: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
    """Fill a record's role, task and timestamp from its line's prefixes, keeping what it says itself."""
    if frame.height == 0:
        return frame
    own = [c for c in facts.columns if c != "source_offset" and c in frame.columns]
    joined = frame.join(facts, on="source_offset", how="left", suffix="_prefix")
    return joined.with_columns(pl.coalesce(c, f"{c}_prefix").alias(c) for c in own).drop(f"{c}_prefix" for c in own)


def _failed_after_steps(events: pl.DataFrame, steps: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """Keep a traceback's failed event only after a step record (earlier batch or earlier line),
    and give it the last step before it."""
    if events.height == 0 or "format" not in events.columns:
        return events
    is_tb = pl.col("format") == PythonTraceback.name
    tracebacks = events.filter(is_tb)
    if tracebacks.height == 0:
        return events
    if steps.height:
        last = steps.select("source_offset", pl.col("step").alias("_last_step")).sort("source_offset")
        tracebacks = tracebacks.sort("source_offset").join_asof(
            last, on="source_offset", strategy="backward", check_sortedness=False
        )
    else:
        tracebacks = tracebacks.with_columns(pl.lit(None, dtype=pl.Int64).alias("_last_step"))
    if not context.steps_seen:
        tracebacks = tracebacks.filter(pl.col("_last_step").is_not_null())
    tracebacks = tracebacks.with_columns(pl.col("_last_step").alias("step")).drop("_last_step")
    return pl.concat([events.filter(~is_tb), tracebacks], how="diagonal_relaxed")


__all__ = [
    "ALWAYS",
    "FORMATS",
    "LINES_SCHEMA",
    "TAG",
    "FormatInfo",
    "LineFormat",
    "ParseContext",
    "Parsed",
    "UnknownFormatError",
    "describe_formats",
    "get_format",
    "parse_lines",
    "sniff_format",
]
