"""Step-log formats: one module per format behind :class:`~tierscope.collector.formats.base.LineFormat`.

How a batch of lines is read (:func:`parse_lines`):

1. Envelopes (a platform's copy, a launcher's task tag, a logger's header) are stripped
   once for all formats (:mod:`tierscope.collector.formats.envelopes`); they fill a record's
   role, task and timestamp. A batch read whole whose times (or, failing those, steps)
   run backwards (a console copy, newest first) is read in time order.
2. The formats run as a chain: each takes the lines it recognises and hands the rest on,
   so a file that interleaves formats is read line by line. Sniffing
   (:func:`sniff_format`, on a file's first lines) does not exclude any format: it only
   puts the file's main format first, so on a plain file that format takes nearly every
   line and the others run on what is left (next to nothing). ``--format NAME`` instead
   runs that format alone. Formats the user declared (:mod:`tierscope.collector.formats.declared`,
   carried by :attr:`ParseContext.formats`) run before the shipped ones. Python tracebacks
   (:mod:`tierscope.collector.formats.traceback`) and
   run-status lines (:mod:`tierscope.collector.formats.status`) are looked for after every
   chain, ``--format`` or not.
3. Lines no format recognises are *skipped* (counted, not stored): they carry no metric
   (checkpoint saves, warnings, blank lines). So are lines folded into a neighbour's
   record (a ``global_step/sec`` line, an ``Eval`` block's result lines) and the
   timestamp-less copy of a message printed twice.

Every input line thus ends up exactly one of: the line of a step record (a glued Keras
line may hold several), of an event, a reject, or skipped.

The registry: :data:`FORMATS` holds the line formats; whole-file formats (a Cloud Logging
JSON export, the console's CSV download: :class:`FileFormat`) are read whole from a path
and hand each entry's message to :func:`parse_lines`. Both kinds are listed by
:func:`describe_formats`, named by ``--format`` (:func:`check_format`) and sniffed by
:func:`sniff_file`.

Batches: a file is read in batches (:mod:`tierscope.collector.sources.files`). With ``final=False``
the last :data:`LOOKAHEAD_LINES` lines, and an unfinished traceback, are parsed only as
context and returned in :attr:`Parsed.pending` for the caller to put in front of the next
batch, so blocks that span lines (Eval blocks, rate lines, split Keras bars, the two
copies of a message) are read whole whatever the batch size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from tierscope.collector.errors import CollectorError
from tierscope.collector.formats.base import (
    LINES_SCHEMA,
    LOOKAHEAD_LINES,
    TAG,
    WRITTEN,
    FileFormat,
    FileRead,
    LineFormat,
    ParseContext,
    Parsed,
    numbered,
)
from tierscope.collector.formats.cloudml import CloudMLSamples
from tierscope.collector.formats.columns import tabulated
from tierscope.collector.formats.copies import first_copies
from tierscope.collector.formats.distmnist import DistMnist
from tierscope.collector.formats.dlrm import DLRMIterations
from tierscope.collector.formats.envelopes import ENVELOPE_SCHEMA, ENVELOPES, split_envelopes
from tierscope.collector.formats.examples import (
    drop_examples_alone,
    examples_from_rates,
    learn_batch,
    rates_from_examples,
)
from tierscope.collector.formats.gcloud import GcloudFailures
from tierscope.collector.formats.grammar import MEASURE_MEANINGS, ProgressGrammar
from tierscope.collector.formats.keras import KerasProgress
from tierscope.collector.formats.layout import OTHERS_READ as LAYOUT_OTHERS_READ
from tierscope.collector.formats.layout import LearnedLayout
from tierscope.collector.formats.logentry import LogEntryLines
from tierscope.collector.formats.mlperf import MLPerf
from tierscope.collector.formats.named_ranks import named_ranks
from tierscope.collector.formats.odapi import ODAPIv2
from tierscope.collector.formats.ranks import RankCarry, ends_in_copies, label_ranks, rank_count
from tierscope.collector.formats.slim import TFSlim
from tierscope.collector.formats.stanzas import Grouped, grouped, learnt, unjoined
from tierscope.collector.formats.statements import statements
from tierscope.collector.formats.status import (
    ERROR_REPORT,
    LAST_STEP,
    RunStatus,
    drop_interrupts_after_finishing,
    drop_recovered,
    drop_unreached_endings,
    milestone_steps,
    work_done,
)
from tierscope.collector.formats.structured import StructuredJSON
from tierscope.collector.formats.tensorfx import TensorFX
from tierscope.collector.formats.tensorpack import Tensorpack
from tierscope.collector.formats.tfcnn import TFCnnBenchmarks
from tierscope.collector.formats.tfhooks import TFEstimator
from tierscope.collector.formats.traceback import PythonTraceback
from tierscope.collector.formats.vocabulary import MEASURES, NOT_TRAINING, POSITIONS
from tierscope.errors import UsageError

#: Every known format, in the order they are tried (after the sniffed one).
FORMATS: dict[str, LineFormat] = {
    f.name: f
    for f in (
        StructuredJSON(),
        LogEntryLines(),
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
        GcloudFailures(),
        ProgressGrammar(),
        LearnedLayout(),
    )
}

#: Read after every other line format, whatever was sniffed: it learns the layout of what they leave unread.
_LAST = (ProgressGrammar.name, LearnedLayout.name)

#: Tried after every chain, also with ``--format``.
ALWAYS: tuple[LineFormat, ...] = (PythonTraceback(), RunStatus())

#: How many lines :func:`sniff_format` looks at.
SNIFF_LINES = 200


class UnknownFormatError(CollectorError, UsageError, ValueError):
    """``--format`` named a format tierscope does not know (a usage error: exit 2)."""


#: How much of a file :func:`sniff_file` gives the whole-file formats.
HEAD_BYTES = 64 * 1024


def file_formats() -> dict[str, FileFormat]:
    """Every whole-file format by name, in the order they are sniffed."""
    # Imported here: most collects read text logs only.
    from tierscope.collector.formats.console_csv import CONSOLE_CSV_FORMAT
    from tierscope.collector.formats.logentries_export import EXPORT_FILE_FORMAT

    return {f.name: f for f in (EXPORT_FILE_FORMAT, CONSOLE_CSV_FORMAT)}


def format_names(extra: Sequence[LineFormat] = ()) -> list[str]:
    """Every name ``--format`` accepts: the declared ``extra``, the line formats, then the whole-file formats."""
    return [*(f.name for f in extra), *FORMATS, *file_formats()]


def _unknown(name: str, extra: Sequence[LineFormat] = ()) -> UnknownFormatError:
    return UnknownFormatError(
        f"unknown log format {name!r}; known formats: {', '.join(format_names(extra))} (see `tierscope formats`)"
    )


def _line_formats(extra: Sequence[LineFormat] = ()) -> dict[str, LineFormat]:
    """The declared ``extra`` and the shipped line formats by name, in the order they are tried."""
    return {**{f.name: f for f in extra}, **FORMATS}


def check_format(name: str, extra: Sequence[LineFormat] = ()) -> LineFormat | FileFormat:
    """The format called ``name``, line (shipped or one of the declared ``extra``) or whole-file;
    raises :class:`UnknownFormatError` listing the known ones."""
    found = _line_formats(extra).get(name) or file_formats().get(name)
    if found is None:
        raise _unknown(name, extra)
    return found


def get_format(name: str, extra: Sequence[LineFormat] = ()) -> LineFormat:
    """The line format called ``name`` (shipped, or one of the declared ``extra``); raises
    :class:`UnknownFormatError` listing the known ones (a whole-file format is read from its
    file, see :func:`check_format`)."""
    try:
        return _line_formats(extra)[name]
    except KeyError:
        if name in file_formats():
            raise UnknownFormatError(
                f"{name!r} is a whole-file format: it reads a file, not lines "
                f"(collect the file with --log-format {name})"
            ) from None
        raise _unknown(name, extra) from None


def sniff_format(lines: pl.Series | list[str], extra: Sequence[LineFormat] = ()) -> str | None:
    """The line format that recognises most of the first :data:`SNIFF_LINES` of ``lines``
    (envelopes stripped), or None when none recognises any. The declared ``extra`` are tried
    too; ties go to the earlier format (``extra``, then :data:`FORMATS`)."""
    head = pl.Series("line", lines, dtype=pl.String).head(SNIFF_LINES)
    frame = numbered(head)
    stripped, _ = split_envelopes(frame, None, time_alone=not extra)
    families = {name: fmt for name, fmt in _line_formats(extra).items() if name not in _LAST}
    counts = {name: fmt.sniff(stripped.get_column("line")) for name, fmt in families.items()}
    # a declared regex reads a line as written where its message alone does not match (DeclaredFormat.parse)
    counts.update({f.name: max(counts[f.name], f.sniff(head)) for f in extra if f.name in counts})
    best = max(counts, key=lambda name: counts[name])
    if counts[best] > 0:
        return best
    # The grammar reads what the families leave: it leads only a file no family reads; the learned layout, what
    # the grammar leaves.
    if FORMATS[ProgressGrammar.name].sniff(stripped.get_column("line")):
        return ProgressGrammar.name
    # (with the lines' clock and tags: what the layout's slots are measured against)
    return LearnedLayout.name if LearnedLayout().sniff_lines(stripped) else None


def sniff_file(head: str) -> FileFormat | None:
    """The whole-file format a file starting with ``head`` is in, or None (then it is a text log,
    read line by line and sniffed with :func:`sniff_format`). Never raises."""
    for fmt in file_formats().values():
        if fmt.claims(head):
            return fmt
    return None


@dataclass(frozen=True)
class FormatInfo:
    """One row of ``tierscope formats``: ``kind`` is ``format``, ``file``, ``always`` or ``envelope``."""

    name: str
    kind: str
    example: str
    meaning: str


def describe_formats(extra: Sequence[LineFormat] = ()) -> list[FormatInfo]:
    """The grammar's vocabulary (kinds ``position`` and ``measure``: every step phrase and unit, named
    ``grammar``), every line format, the whole-file formats, the always-tried ones and the envelopes, with
    one example each; the declared ``extra`` first, of kind ``declared``."""
    rows = [FormatInfo(f.name, "declared", f.example, f.meaning) for f in extra]
    # The grammar's words first: what any tool's line is read by.
    grammar = ProgressGrammar.name
    rows += [FormatInfo(grammar, "position", p.spelling, "where training is: the global step") for p in POSITIONS]
    rows += [FormatInfo(grammar, "measure", m.spelling, MEASURE_MEANINGS[m.kind]) for m in MEASURES]
    rows += [FormatInfo(f.name, "format", f.example, f.meaning) for f in FORMATS.values()]
    rows += [FormatInfo(f.name, "file", f.example, f.meaning) for f in file_formats().values()]
    rows += [FormatInfo(f.name, "always", f.example, f.meaning) for f in ALWAYS]
    rows += [FormatInfo(e.name, "envelope", e.example, e.meaning) for e in ENVELOPES]
    return rows


def _chain(only: str | None, first: str | None, extra: Sequence[LineFormat] = ()) -> list[LineFormat]:
    """The formats to run, in order: ``only`` alone, else the declared ``extra`` then the
    shipped ones, ``first`` moved to the front of its group; then :data:`ALWAYS`."""
    if only:
        return [get_format(only, extra), *ALWAYS]
    chain = [*extra, *FORMATS.values()]
    # ``first`` is only an order: the format an earlier collect found in the file. A declared format
    # since renamed or dropped is no reason to refuse the file; the chain reads it without the hint.
    lead = _line_formats(extra).get(first) if first and first != LearnedLayout.name else None
    if lead is not None:
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
    lines (outside ``pending``) that produced no row. A final batch whose lines run newest
    first is read in time order (rows keep their own line numbers). Raises
    :class:`UnknownFormatError` for an unknown ``only`` (an unknown ``first`` is no hint: the chain runs).
    """
    context = context if context is not None else ParseContext()
    if context.chain is None:
        context.chain = parse_lines  # for the formats that read messages (a LogEntry's)
    chain = _chain(only, first, context.formats)
    # A time alone before the message is an envelope only where no declared format may capture it itself.
    body, facts = split_envelopes(lines, context.year, time_alone=not context.formats, state=context.state)
    if context.formats:
        context.state[WRITTEN] = lines.select("source_offset", "line")  # a declared regex may read the envelope
    if final and _ranks_undecided(body, context):
        # the file's first lines show ranks' copies but not yet how many ranks: read once more are written
        nothing = pl.DataFrame()
        return Parsed(steps=nothing, events=nothing, rejects=nothing, rest=lines.clear(), pending=lines)
    body, facts = _tagged(body, facts, named_ranks(body, context.state))
    body, facts = _with_ranks(body, facts, context)
    tabled = tabulated(body, context, statements)
    # the statements each table row was read as (``table_row``: what ``formats --try`` shows of it)
    rows = (
        tabled.join(body.select("source_offset", _raw="line"), on="source_offset")
        .filter(pl.col("line") != pl.col("_raw"))
        .select("source_offset", table_row="line")
        if tabled is not body
        else None
    )
    body = tabled
    timed = body.join(facts, on="source_offset", how="left") if facts is not None else body
    flip = final and _runs_backwards(timed, "timestamp")
    parsed, pending = _run_chain(lines, body, chain, context, final, flip)
    if (
        final
        and not flip
        and _mostly_falling(parsed.steps)
        and _runs_backwards(
            parsed.steps.join(body.select("source_offset", TAG), on="source_offset", how="left"), "step"
        )
    ):
        flip = True
        parsed, pending = _run_chain(lines, body, chain, context, final, flip)
    # the batch and device counts a message states, behind whatever envelope wraps it
    known = learn_batch(body if parsed.said is None else parsed.said, context)
    parsed.steps = examples_from_rates(rates_from_examples(parsed.steps, known), known)
    if facts is not None:
        parsed.steps = _with_prefix_facts(parsed.steps, facts)
        parsed.events = _with_prefix_facts(parsed.events, facts)
    parsed.steps, handed_back = drop_examples_alone(parsed.steps, body, context)
    if rows is not None and rows.height and parsed.steps.height:
        parsed.steps = parsed.steps.join(rows, on="source_offset", how="left")
    if handed_back.height:
        parsed.rest = pl.concat([parsed.rest, handed_back.select(parsed.rest.columns)]).sort("source_offset")
    if parsed.steps.height:
        context.steps_seen = True
        # the step a traceback in a later batch (or collect) fails at
        if "step" in parsed.steps.columns:
            context.state[LAST_STEP] = parsed.steps.sort("source_offset").get_column("step")[-1]
    # a step-less report printed twice by one process is one report
    end = int(pending.get_column("source_offset").min()) if pending is not None and pending.height else None  # type: ignore[arg-type]
    parsed.steps = first_copies(parsed.steps, lines, context.state, end)
    window = lines.height - (pending.height if pending is not None else 0)
    produced = pl.concat(
        [f.select("source_offset") for f in (parsed.steps, parsed.events, parsed.rejects) if f.width]
        or [pl.DataFrame(schema={"source_offset": pl.Int64})]
    )
    parsed.skipped = window - produced.get_column("source_offset").n_unique()
    parsed.rest = parsed.rest.select(list(LINES_SCHEMA))
    parsed.pending = pending
    carry = context.state.get("ranks")
    if carry and carry.notes:
        parsed.notes.extend(carry.notes)
        carry.notes.clear()
    context.end = None
    return parsed


#: The lines of a file's first batch that say whether several ranks print into it untagged.
RANKS_HEAD_LINES = 2000


def _ranks_undecided(body: pl.DataFrame, context: ParseContext) -> bool:
    """Whether the ranks nobody labelled are still to be learnt from a file still being written whose lines read
    so far (``body``, the file's first: nothing learnt yet) end in copies of one report by several ranks but are
    too few to tell how many (:func:`~tierscope.collector.formats.ranks.rank_count`): one read of the whole file would
    learn them from more of its head."""
    if not context.may_grow or "ranks" in context.state or body.height >= RANKS_HEAD_LINES:
        return False
    return not rank_count(body) and ends_in_copies(body)


def _with_ranks(
    body: pl.DataFrame, facts: pl.DataFrame | None, context: ParseContext
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """``body`` and ``facts`` with the ranks nobody labelled (:mod:`~tierscope.collector.formats.ranks`) as
    tasks. Learnt per file from the first :data:`RANKS_HEAD_LINES` lines: a file whose head shows no copies
    by several ranks is read as written, at no further cost."""
    carry = context.state.get("ranks")
    if carry is None:
        k = rank_count(body.head(RANKS_HEAD_LINES))
        carry = context.state["ranks"] = RankCarry(k) if k else False
    if not carry:
        return body, facts
    return _tagged(body, facts, label_ranks(body, carry))


def _tagged(
    body: pl.DataFrame, facts: pl.DataFrame | None, ranks: pl.DataFrame | None
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """``body`` and ``facts`` with the tasks ``ranks`` (``source_offset``, ``role``, ``task_index``, ``tag``) found
    for their lines: the line's tag and its record's role and task, where no envelope gave one."""
    if ranks is None:
        return body, facts
    body = (
        body.join(ranks.select("source_offset", pl.col(TAG).alias("_rank")), on="source_offset", how="left")
        .with_columns(pl.coalesce(TAG, "_rank").alias(TAG))
        .drop("_rank")
    )
    found = ranks.select("source_offset", "role", "task_index")
    if facts is None:
        facts = found.with_columns(
            pl.lit(None, dtype=ENVELOPE_SCHEMA[c]).alias(c) for c in ENVELOPE_SCHEMA if c not in found.columns
        ).select(list(ENVELOPE_SCHEMA))
    else:
        facts = (
            facts.join(found, on="source_offset", how="full", coalesce=True, suffix="_rank")
            .with_columns(
                pl.coalesce("role", "role_rank").alias("role"),
                pl.coalesce("task_index", "task_index_rank").alias("task_index"),
            )
            .select(list(ENVELOPE_SCHEMA))
        )
    return body, facts


def _run_chain(
    lines: pl.DataFrame,
    body: pl.DataFrame,
    chain: list[LineFormat],
    context: ParseContext,
    final: bool,
    flip: bool,
) -> tuple[Parsed, pl.DataFrame | None]:
    """The chain over ``body`` (in reverse line order if ``flip``): what it found, with line
    numbers as in the file, and the look-ahead lines of a non-final batch."""
    if flip:
        body = _flipped(body, lines)
    if not final:
        context.end = _lookahead_start(body, chain)
    elif context.may_grow:
        context.end = _open_end(body, chain)
    else:
        context.end = None
    grouping = _stanzas(body, chain, context)
    steps, events, rejects = [], [], []
    rest = body if grouping is None else grouping.lines
    # the batch's lines that may state what the searches after the chain look for: what the first format, given
    # the lines as written and in their order, says its lines may (Parsed.said); else every line
    said = None
    for fmt in chain:
        if rest.height == 0:
            break
        got = fmt.parse(rest, context)
        if rest is body and not flip:
            said = got.said
        if got.steps.height and fmt.name != LearnedLayout.name:
            context.state[LAYOUT_OTHERS_READ] = True
        steps.append(got.steps)
        events.append(got.events)
        rejects.append(got.rejects)
        rest = got.rest
    parsed = Parsed(steps=_concat(steps), events=_concat(events), rejects=_concat(rejects), rest=rest)
    if grouping is not None:
        parsed = unjoined(parsed, body, grouping, statements)
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
    # Both rules relate a line to the lines before it in time: applied before flipping back.
    parsed.events = drop_recovered(_failed_after_steps(parsed.events, parsed.steps, context, body), parsed.steps)
    parsed.events = drop_unreached_endings(
        work_done(parsed.events, parsed.steps, body), parsed.steps, body, context, said=said
    )
    parsed.events = drop_interrupts_after_finishing(parsed.events)
    parsed.events = milestone_steps(parsed.events, parsed.steps)
    if flip:
        parsed = Parsed(
            steps=_flipped(parsed.steps, lines),
            events=_flipped(parsed.events, lines),
            rejects=_flipped(parsed.rejects, lines),
            rest=_flipped(parsed.rest, lines),
        )
    parsed.said = said
    return parsed, pending


def learn_from_head(head: str, context: ParseContext) -> None:
    """Learn the group of lines a file's reports are printed as (:mod:`.stanzas`) from its ``head`` (text), for a
    read that starts past it (a collect that goes on where the last one stopped)."""
    lines = head.split("\n")[:-1]  # the last piece may be a line cut by the head's end
    frame = numbered(lines)
    body, _ = split_envelopes(frame, context.year, time_alone=not context.formats)
    learnt(body, context, statements, NOT_TRAINING, _alone(_chain(None, None, context.formats), context))


def _alone(chain: list[LineFormat], context: ParseContext) -> Callable[[pl.DataFrame], bool]:
    """Whether the chain's families read a record in any of some lines one by one, as if they were a file of
    their own."""

    def alone(lines: pl.DataFrame) -> bool:
        fresh = ParseContext(year=context.year, formats=context.formats, chain=context.chain)
        # the grammar's own reading of each line is part of the stanza's judgement (one reading, not two)
        return any(f.parse(lines, fresh).steps.height for f in chain if f.name != ProgressGrammar.name)

    return alone


def _stanzas(body: pl.DataFrame, chain: list[LineFormat], context: ParseContext) -> Grouped | None:
    """``body`` with each report printed as a group of lines made one line (:mod:`.stanzas`), where the file
    has such a group; a group the batch's look-ahead cuts is left whole to the next batch (``context.end``)."""
    if body.height == 0:
        return None
    stanza = learnt(body, context, statements, NOT_TRAINING, _alone(chain, context))
    if stanza is None:
        return None
    grouping = grouped(body, stanza, context.end)
    first = int(body.get_column("source_offset").min())  # type: ignore[arg-type]
    if grouping.unfinished is not None and grouping.unfinished > first:
        if context.end is not None:
            context.end = min(context.end, grouping.unfinished)
        elif context.may_grow:
            # the file's last batch ends in a report still being written: read whole by the next collect
            context.end = grouping.unfinished
    return grouping


#: Consecutive pairs that must run backwards, and how many times more of them than forwards,
#: for a batch to be read in reverse.
_BACKWARDS_MIN_PAIRS = 2
_BACKWARDS_RATIO = 2


def _runs_backwards(frame: pl.DataFrame, column: str) -> bool:
    """Whether ``column`` (a time or a step) mostly decreases from one row to the next of the same
    task, in line order: a copy newest first. Rows without a value are left out."""
    if frame.height <= _BACKWARDS_MIN_PAIRS or column not in frame.columns:
        return False
    value = pl.col(column)
    value = value.dt.epoch("us") if frame.schema[column] == pl.Datetime("us", "UTC") else value.cast(pl.Float64)
    by = [c for c in (TAG, "role", "task_index") if c in frame.columns]
    change = value - (value.shift(1).over(by) if by else value.shift(1))
    back, ahead = (
        frame.filter(pl.col(column).is_not_null())
        .sort("source_offset")
        .select(change.alias("d"))
        .select((pl.col("d") < 0).sum().alias("back"), (pl.col("d") > 0).sum().alias("ahead"))
        .row(0)
    )
    return back >= _BACKWARDS_MIN_PAIRS and back > _BACKWARDS_RATIO * ahead


def _mostly_falling(steps: pl.DataFrame) -> bool:
    """A cheap first look, tasks mixed: more falling steps than rising ones from row to row."""
    if steps.height <= _BACKWARDS_MIN_PAIRS or "step" not in steps.columns:
        return False
    change = steps.sort("source_offset").get_column("step").diff()
    return bool((change < 0).sum() > (change > 0).sum())


def _flipped(frame: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with line numbers mirrored within ``lines``' range (an involution), sorted by them."""
    if frame.height == 0 or "source_offset" not in frame.columns:
        return frame
    offsets = lines.get_column("source_offset")
    mirror = int(offsets.min()) + int(offsets.max())  # type: ignore[arg-type]
    return frame.with_columns((mirror - pl.col("source_offset")).alias("source_offset")).sort(
        "source_offset", maintain_order=True
    )


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


def _open_end(body: pl.DataFrame, chain: list[LineFormat]) -> int | None:
    """The first ``source_offset`` of the trailing block of a file still being written that lines not written yet
    may complete (a step line whose rate line comes next, an Eval head, a traceback without its exception line),
    as the formats say (:meth:`~tierscope.collector.formats.base.LineFormat.undecided_from`), or None. Read now,
    it would say what its lines say alone, and a collect of the whole file what they say with the lines after:
    so it is left for the next collect, or for one after the file has settled. Unlike a batch's look-ahead, a
    block may be the whole batch: the next collect starts at it."""
    if body.height == 0:
        return None
    opens = [at for fmt in chain if (at := fmt.undecided_from(body)) is not None]
    return min(opens) if opens else None


def _with_prefix_facts(frame: pl.DataFrame, facts: pl.DataFrame) -> pl.DataFrame:
    """Fill a record's role, task and timestamp from its line's prefixes, keeping what it says itself."""
    if frame.height == 0:
        return frame
    own = [c for c in facts.columns if c != "source_offset" and c in frame.columns]
    joined = frame.join(facts, on="source_offset", how="left", suffix="_prefix")
    return joined.with_columns(pl.coalesce(c, f"{c}_prefix").alias(c) for c in own).drop(f"{c}_prefix" for c in own)


def _failed_after_steps(
    events: pl.DataFrame, steps: pl.DataFrame, context: ParseContext, lines: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Keep a traceback's failed event only after a step record (earlier batch or earlier line),
    and give it the last step before it; in a settled log with no step record at all, its last traceback (a program
    that died before its first step) where it ends the log (``lines``: the batch's messages) and the log does not
    say after it that it finished."""
    if events.height == 0 or "format" not in events.columns:
        return events
    is_tb = pl.col("format") == PythonTraceback.name
    tracebacks = events.filter(is_tb)
    if tracebacks.height == 0:
        return events
    if not context.steps_seen and steps.height == 0 and context.end is None and not context.may_grow:
        # (a file still being written may yet reach its first step: its tracebacks are judged as before one)
        return _died_before_steps(events, is_tb, lines)
    if steps.height:
        # a record before it counts whether or not it states a step (an epoch's record, fastai's table row, has none)
        last = steps.select(
            "source_offset", pl.col("step").alias("_last_step"), pl.lit(True).alias("_after_record")
        ).sort("source_offset")
        tracebacks = tracebacks.sort("source_offset").join_asof(
            last, on="source_offset", strategy="backward", check_sortedness=False
        )
    else:
        tracebacks = tracebacks.with_columns(
            pl.lit(None, dtype=pl.Int64).alias("_last_step"), pl.lit(None, dtype=pl.Boolean).alias("_after_record")
        )
    if not context.steps_seen:
        tracebacks = tracebacks.filter(pl.col("_after_record").is_not_null())
    # with no step before it in this batch, the last of the batches (or collects) before
    if (earlier := context.state.get(LAST_STEP)) is not None:
        tracebacks = tracebacks.with_columns(pl.col("_last_step").fill_null(earlier))
    tracebacks = tracebacks.with_columns(pl.col("_last_step").alias("step")).drop("_last_step", "_after_record")
    return pl.concat([events.filter(~is_tb), tracebacks], how="diagonal_relaxed")


#: Lines that say nothing after an error's report (:data:`~tierscope.collector.formats.status.ERROR_REPORT`): blank,
#: indented (a frame, a wrapped message), a fence or a prompt.
_SAYS_NOTHING = r"^\s*$|^\s|^\W*$"


def _died_before_steps(events: pl.DataFrame, is_tb: pl.Expr, lines: pl.DataFrame | None) -> pl.DataFrame:
    """``events`` of the last batch of a log with no step record: of the tracebacks' failures, the last one only (an
    earlier one was a warning the program went on from), and none where a ``finished`` event follows it or the log
    goes on after its error report (``lines``): a test runner's ``3 passed``, pip's ``Successfully installed``, a
    README's prose after a quoted traceback, a program that logged the error and went on."""
    last = events.filter(is_tb).get_column("source_offset").max()
    finished_after = events.filter((pl.col("event") == "finished") & (pl.col("source_offset") > last)).height
    goes_on = False
    if lines is not None and lines.height:
        after = lines.filter(pl.col("source_offset") >= last)
        report = after.filter(pl.col("line").str.contains(ERROR_REPORT))["source_offset"].max()
        said = after.filter((pl.col("source_offset") > (report or last)) & ~pl.col("line").str.contains(_SAYS_NOTHING))
        goes_on = said.height > 0
    keep = ~is_tb | ((pl.col("source_offset") == last) & pl.lit(finished_after == 0 and not goes_on))
    return events.filter(keep)


__all__ = [
    "ALWAYS",
    "FORMATS",
    "HEAD_BYTES",
    "LINES_SCHEMA",
    "TAG",
    "FileFormat",
    "FileRead",
    "FormatInfo",
    "LineFormat",
    "ParseContext",
    "Parsed",
    "UnknownFormatError",
    "check_format",
    "describe_formats",
    "file_formats",
    "format_names",
    "get_format",
    "parse_lines",
    "sniff_file",
    "sniff_format",
]
