"""Reports printed as a group of lines, found by repetition and read as one statement.

Many trainers print one report over several lines: a header with the position, then a line per measure or
metric (``step: 100`` / ``loss: 2.3`` / ``time: 0.41``), a table of ``| key | value |`` rows between rules
(OpenAI baselines', Stable-Baselines3's logger), a banner and its figures (rsl_rl's ``Learning iteration
12/1500`` ... ``Iteration time: 2.29s``). What makes such a group readable without knowing its tool is that
it repeats: the same k lines, in the same order, with the same words and only their numbers changing
(:func:`~tierscope.collector.formats.templates.template`), come back report after report.

A file's group is learnt once, from the head of the lines the grammar is given (:func:`learn`): the shortest
period of k lines (2 to :data:`MOST_LINES`) whose templates repeat in order at least :data:`LEAST_REPEATS`
times in a row within one task. It is refused

- where it states no position: the grammar reads none in the group and no number in it grows from report to
  report (a config dump printed at each restart repeats, its numbers do not change);
- where it measures nothing the grammar reads (no rate, step time, examples/s or seconds);
- where a line of it already reads as a record on its own: each of its lines is read as before, none twice;
- where its header (its first line with words) names an evaluation or other work than training
  (:data:`~tierscope.collector.formats.vocabulary.NOT_TRAINING`);
- where it holds a block header the grammar reads as one already (``[batch=20/20]:``).

Each group found is presented to the grammar as one line (:func:`grouped`): its lines with words, a two-cell
table row as ``key: value``, joined by ``" | "``, at the line number of its first line. Where the grammar reads
no position in it, the growing number learnt (``iterations | 7``) leads it as ``step 7``. Membership is per task
(the task tag), and lines of other templates between a group's lines (another task's, a warning) stay out of
it. A group that makes no record hands its lines on one by one (:func:`unjoined`); a reject names the line of
the group that holds the broken number.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import polars as pl

from tierscope.collector.formats.base import TAG, ParseContext, Parsed
from tierscope.collector.formats.headed_blocks import LEAST_FIGURES, footed, headed
from tierscope.collector.formats.templates import SLOT, numbers, numbers_in, template
from tierscope.collector.formats.vocabulary import BLOCK_HEADER

#: The longest group looked for, in lines (rsl_rl's report with its reward terms runs to some 30).
MOST_LINES: Final = 40
#: How many times in a row a group must come back in a file's head to be one.
LEAST_REPEATS: Final = 4
#: The lines of a file's head a group is learnt from (a model summary or a config print may come first).
HEAD_LINES: Final = 5000
#: What a group's lines are joined with: a separator the grammar reads as any other.
SEPARATOR: Final = " | "
#: How many groups that look like reports a task's head may have the grammar read before none is taken.
_GRAMMAR_TRIES: Final = 2
#: How far from the end of the lines (in groups' lengths) a group not whole yet may start and still be waited for.
_NEAR_END: Final = 2
#: Where the learnt group (or ``False``: none) is kept for a file in ``ParseContext.state``.
STATE_KEY: Final = "grammar-stanza"

#: A line with a word: a group's lines without one (blank lines, rules) part reports, they say nothing.
_WORDS: Final = r"[A-Za-z]"
#: A table row of two cells: ``|    fps    | 1025 |`` is ``fps: 1025``.
_TWO_CELLS: Final = r"^\s*\|?\s*([^|]*?[^|\s])\s*\|\s*([^|]*?[^|\s])\s*\|?\s*$"


@dataclass(frozen=True)
class Stanza:
    """A file's group of lines: ``templates`` in the order printed, its first line first; ``counter`` the
    ``(line, number)`` within the group of a growing whole number that is its position where the grammar reads
    none (``None``: the grammar reads one)."""

    templates: tuple[str, ...]
    counter: tuple[int, int] | None = None

    @property
    def size(self) -> int:
        return len(self.templates)


#: ``statements(messages)``: the statements of each message of a String series, one row each (the grammar's
#: ``statements``), handed in so that this module needs no import of the grammar that uses it.
Statements = Callable[[pl.Series], pl.DataFrame]
#: ``alone(lines)``: whether any of ``lines`` reads as a record on its own (the format chain's verdict).
Alone = Callable[[pl.DataFrame], bool]


def _tag() -> pl.Expr:
    return pl.col(TAG).fill_null("")


def _periods(templates: list[str]) -> Iterator[tuple[int, int]]:
    """``(k, start)`` for each period ``k`` of ``templates``, shortest first, that repeats :data:`LEAST_REPEATS`
    times in a row, with where its first such run starts."""
    n = len(templates)
    for k in range(2, MOST_LINES + 1):
        need = (LEAST_REPEATS - 1) * k
        if n < need + k:
            return
        streak = 0
        for i in range(n - k):
            streak = streak + 1 if templates[i] == templates[i + k] else 0
            if streak == need:
                yield k, i - need + 1
                break


def _first_line(group: list[str]) -> int:
    """Where a group of templates starts: after the lines without words that part it from the previous one
    (a blank line, a rule), else where the file's first report started (0)."""
    worded = [bool(re.search(_WORDS, t)) for t in group]
    if all(worded) or not any(worded):
        return 0
    return next(j for j in range(len(group)) if worded[j] and not worded[j - 1])


def _growing(reports: list[list[list[str]]]) -> tuple[int, int] | None:
    """``(line, number)`` of the whole number that counts reports: one that grows by the same amount each report
    before one that grows unevenly (a clock's seconds), then the one that grows most slowly (an iteration counter
    before a count of timesteps); each report a list of its lines' numbers; None without one."""
    best: tuple[bool, int, int, int] | None = None
    for line in range(len(reports[0])):
        for slot in range(len(reports[0][line])):
            try:
                values = [int(r[line][slot].replace(",", "")) for r in reports]  # thousands grouped: one number
            except (ValueError, IndexError):
                continue
            steps = [b - a for a, b in itertools.pairwise(values)]
            if steps and all(s > 0 for s in steps):
                key = (len(set(steps)) > 1, max(steps), line, slot)
                if best is None or key < best:
                    best = key
    return None if best is None else (best[2], best[3])


def learn(lines: pl.DataFrame, statements: Statements, not_training: str, alone: Alone) -> Stanza | None:
    """The group of lines of a file whose first lines are ``lines`` (``source_offset``, ``line``, the task tag),
    or None where it has none or one that is refused (see the module doc). ``not_training`` is the pattern of
    the words of other work than training; ``alone`` tells whether lines read as records on their own."""
    head = lines.head(HEAD_LINES)
    if head.height <= LEAST_FIGURES:
        return None
    if TAG not in head.columns:
        head = head.with_columns(pl.lit(None, dtype=pl.String).alias(TAG))
    head = head.with_columns(_t=_tag(), _tpl=template(pl.col("line")))
    tasks = [task for _, task in head.group_by("_t", maintain_order=True)]
    found = _repeated(tasks, statements, not_training, alone) if head.height >= 2 * LEAST_REPEATS else None
    if found is not None:
        return found
    # a block whose header (or, a result dump, its last line) says its position and whose lines say a measure is a
    # report the first time
    for task in tasks:
        own = task.drop("_t", "_tpl")
        block = headed(own, statements, not_training, alone, lambda r: joined_text(r, None)) or footed(
            own, statements, not_training, alone, lambda r: joined_text(r, None)
        )
        if block is not None:
            return Stanza(block)
    return None


def _repeated(tasks: list[pl.DataFrame], statements: Statements, not_training: str, alone: Alone) -> Stanza | None:
    """The group of lines that repeats in one of ``tasks`` (each its lines with ``_t``, ``_tpl``), or None."""
    for task in tasks:
        templates = task.get_column("_tpl").to_list()
        texts = task.get_column("line").to_list()
        tries = _GRAMMAR_TRIES
        for k, run in _periods(templates):
            start = run + _first_line(templates[run : run + k])
            group = tuple(templates[start : start + k])
            reports, at = [], start
            while at + k <= len(texts) and len(reports) < 4 * LEAST_REPEATS and tuple(templates[at : at + k]) == group:
                reports.append(texts[at : at + k])
                at += k
            # the lines without words part reports and say nothing: a group is its lines with words (the rule after
            # a file's last table is then no part a last report could miss)
            worded = tuple(t for t in group if re.search(_WORDS, t))
            reports = [[line for line in r if re.search(_WORDS, line)] for r in reports]
            if not _plausible(worded, reports, not_training):
                continue
            stanza = _judged(worded, reports, statements)
            if stanza is not None and not alone(task.slice(start, k).drop("_t", "_tpl")):
                return stanza
            tries -= 1
            if tries == 0:
                break
    return None


def _plausible(group: tuple[str, ...], reports: list[list[str]], not_training: str) -> bool:
    """Whether ``group`` (templates) printed as ``reports`` (each a list of lines) may be a report of training, by
    what costs no reading of the grammar: lines of two kinds or more, a first line of its own, no block header, a
    header that names no other work, numbers that change from report to report (a dump printed again and again
    says the same each time)."""
    if len(reports) < LEAST_REPEATS - 1 or len(set(group)) < 2 or group.count(group[0]) > 1:
        return False
    sample = reports[0]
    if any(re.search(BLOCK_HEADER, line) for line in sample):
        return False
    if pl.select(pl.lit(sample[0]).str.contains(not_training)).item():
        return False
    each = [numbers_in(line) for line in itertools.chain.from_iterable(reports)]
    return any(e != each[i % len(sample)] for i, e in enumerate(each))


def _judged(group: tuple[str, ...], reports: list[list[str]], statements: Statements) -> Stanza | None:
    """The stanza of ``group`` (templates) printed as ``reports`` (each a list of lines), by the grammar's reading of
    them, or None where it is refused (see the module doc)."""
    sample = reports[0]
    joined = [joined_text(r, None) for r in reports]
    # one reading of the grammar (its cost is its patterns', not the lines'): the reports joined, and the first
    # report's lines one by one
    read = statements(pl.Series(joined + sample, dtype=pl.String)).select(*_MEASURED, "step", "evaluation")
    read = read.with_columns(_alone=pl.Series([False] * len(joined) + [True] * len(sample)))
    measured = pl.any_horizontal(pl.col(c).is_not_null() for c in _MEASURED)
    # a line that states a position and a measure on its own is its own record: it stays one
    if read.filter("_alone").select((pl.col("step").is_not_null() & measured & ~pl.col("evaluation")).any()).item():
        return None
    read = read.filter(~pl.col("_alone"))
    if not read.select(measured.any()).item():
        return None
    if read.select(pl.col("evaluation").all()).item():
        return None
    if read.select(pl.col("step").is_not_null().all()).item():
        return Stanza(group)
    each = [[numbers_in(line) for line in r] for r in reports]
    counter = _growing(each)
    if counter is None or _counts_epochs(group, counter):
        # a group counted by its epoch reports an epoch, not a step: its lines are read one by one
        return None
    return Stanza(group, counter)


def _counts_epochs(group: list[str], counter: tuple[int, int]) -> bool:
    """Whether the number that counts a group's reports is its epoch (``Saved epoch 3 ...``, ``Epoch 3: ...``)."""
    line, slot = counter
    before = group[line].split(SLOT)
    return slot < len(before) and re.search(r"(?i)\bepochs?\W*$", before[slot]) is not None


#: The grammar's measures: a group that states none of them is no report of training progress.
_MEASURED: Final = ("per_s", "global_per_s", "examples_per_s", "interval_s", "elapsed_s")


def _statement_part(line: pl.Expr) -> pl.Expr:
    """A group's line as a part of its statement: a two-cell table row as ``key: value``, else the line trimmed."""
    return (
        pl.when(line.str.contains(_TWO_CELLS))
        .then(line.str.replace(_TWO_CELLS, "$1: $2"))
        .otherwise(line.str.strip_chars())
    )


def joined_text(report: list[str], counter: tuple[int, int] | None) -> str:
    """One report's lines as one statement: the lines with words, a two-cell table row as ``key: value``,
    joined by :data:`SEPARATOR`; led by ``step N`` where ``counter`` names the number that is its position."""
    frame = pl.DataFrame({"line": report}, schema={"line": pl.String})
    parts = (
        frame.filter(pl.col("line").str.contains(_WORDS)).select(_statement_part(pl.col("line"))).to_series().to_list()
    )
    if counter is not None:
        line, slot = counter
        found = pl.select(numbers(pl.lit(report[line]))).item()
        parts.insert(0, f"step {found[slot]}")
    return SEPARATOR.join(parts)


def learnt(
    lines: pl.DataFrame, context: ParseContext, statements: Statements, not_training: str, alone: Alone
) -> Stanza | None:
    """The file's group of lines, learnt from its first ``lines`` and kept in ``context``."""
    known = context.state.get(STATE_KEY)
    if known is None:
        known = context.state[STATE_KEY] = learn(lines, statements, not_training, alone) or False
    return known or None


@dataclass(frozen=True)
class Grouped:
    """:func:`grouped`'s answer: ``lines`` with each group one line; ``members`` (``source_offset``, ``_group``:
    the group's first line) of every line of a group read whole; ``unfinished``: the first line of a group
    the lines end in the middle of, or of one that runs past ``end`` (None: none)."""

    lines: pl.DataFrame
    members: pl.DataFrame
    unfinished: int | None
    stanza: Stanza


def grouped(lines: pl.DataFrame, stanza: Stanza, end: int | None = None) -> Grouped:
    """``lines`` (``source_offset``, ``line``, the task tag, ...) with each whole group of ``stanza`` made one line
    at its first line's number (its other columns, the time, the first line's)."""
    k = stanza.size
    order = dict(enumerate(stanza.templates))
    tpl = template(pl.col("line"))
    cand = (
        lines.select("source_offset", _t=_tag(), _tpl=tpl)
        .filter(pl.col("_tpl").is_in(list(stanza.templates)))
        .with_columns(_g=(pl.col("_tpl") == stanza.templates[0]).cum_sum().over("_t"))
        .filter(pl.col("_g") > 0)
        .with_columns(_pos=pl.int_range(pl.len()).over("_t", "_g"))
        .with_columns(
            _ok=(
                pl.col("_tpl") == pl.col("_pos").replace_strict(order, default=None, return_dtype=pl.String)
            ).fill_null(False)
        )
    )
    groups = cand.group_by("_t", "_g").agg(
        _n=pl.len(),
        _ok=pl.col("_ok").all(),
        _first=pl.col("source_offset").min(),
        _last=pl.col("source_offset").max(),
        _final=pl.lit(True),
    )
    last_g = groups.group_by("_t").agg(_lg=pl.col("_g").max())
    groups = groups.join(last_g, on="_t").with_columns(_final=pl.col("_g") == pl.col("_lg"))
    whole = groups.filter(pl.col("_ok") & (pl.col("_n") == k))
    # a task's last group, not whole yet, is unfinished where the lines end near it; one further back is a report
    # its task never finished (it stopped printing): waiting for it would hold every later line back
    near = int(lines.get_column("source_offset").max()) - _NEAR_END * k  # type: ignore[arg-type]
    open_ = groups.filter(pl.col("_ok") & (pl.col("_n") < k) & pl.col("_final") & (pl.col("_first") > near)).get_column(
        "_first"
    )
    straddle = (
        whole.filter((pl.col("_first") < end) & (pl.col("_last") >= end)).get_column("_first")
        if end is not None
        else pl.Series([], dtype=pl.Int64)
    )
    held = pl.concat([open_, straddle])
    unfinished = int(held.min()) if held.len() else None  # type: ignore[arg-type]
    members = cand.join(whole.select("_t", "_g", "_first"), on=["_t", "_g"]).select(
        "source_offset", pl.col("_first").alias("_group"), "_pos"
    )
    if members.height == 0:
        return Grouped(lines, members.select("source_offset", "_group"), unfinished, stanza)
    texts = (
        members.join(lines.select("source_offset", "line"), on="source_offset")
        .sort("_group", "_pos")
        .with_columns(_part=_statement_part(pl.col("line")))
    )
    parts = texts.group_by("_group", maintain_order=True).agg(pl.col("_part").str.join(SEPARATOR))
    if stanza.counter is not None:
        line, slot = stanza.counter
        counted = texts.filter(pl.col("_pos") == line).select(
            "_group", _n=numbers(pl.col("line")).list.get(slot, null_on_oob=True)
        )
        parts = parts.join(counted, on="_group", how="left").with_columns(
            _part=pl.when(pl.col("_n").is_not_null())
            .then(pl.concat_str(pl.lit("step "), "_n", pl.lit(SEPARATOR), "_part"))
            .otherwise("_part")
        )
    joined = parts.select(pl.col("_group").alias("source_offset"), pl.col("_part").alias("_joined"))
    inner = members.filter(pl.col("source_offset") != pl.col("_group")).get_column("source_offset")
    out = (
        lines.filter(~pl.col("source_offset").is_in(inner.implode()))
        .join(joined, on="source_offset", how="left")
        .with_columns(line=pl.coalesce("_joined", "line"))
        .drop("_joined")
    )
    return Grouped(out, members.select("source_offset", "_group"), unfinished, stanza)


def unjoined(parsed: Parsed, lines: pl.DataFrame, grouping: Grouped, statements: Statements) -> Parsed:
    """What the grammar made of ``grouping.lines``, told of ``lines``: a group that made no record hands on its
    lines one by one; a reject of a group names its line with the broken number (else its first); a group's record
    says which lines it read (``stanza_lines``: ``A-B``), the statement it made of them (``stanza``) and, where its
    step is the number that counts reports, the template of its line (``stanza_step``)."""
    members = grouping.members
    if members.height == 0:
        return parsed
    starts = members.get_column("_group").unique().implode()
    unread_groups = parsed.rest.filter(pl.col("source_offset").is_in(starts)).get_column("source_offset").implode()
    unread = members.filter(pl.col("_group").is_in(unread_groups)).get_column("source_offset").implode()
    rest = pl.concat(
        [
            parsed.rest.filter(~pl.col("source_offset").is_in(starts)),
            lines.filter(pl.col("source_offset").is_in(unread)).select(parsed.rest.columns),
        ]
    ).sort("source_offset")
    spans = members.group_by("_group").agg(_a=pl.col("source_offset").min(), _b=pl.col("source_offset").max())
    steps = parsed.steps
    if steps.height:
        said = spans.join(grouping.lines.select("source_offset", "line"), left_on="_group", right_on="source_offset")
        counter = grouping.stanza.counter
        said = said.select(
            pl.col("_group").alias("source_offset"),
            pl.format("{}-{}", "_a", "_b").alias("stanza_lines"),
            pl.col("line").alias("stanza"),
            pl.lit(None if counter is None else grouping.stanza.templates[counter[0]], dtype=pl.String).alias(
                "stanza_step"
            ),
        )
        steps = steps.join(said, on="source_offset", how="left")
    rejects = parsed.rejects
    if rejects.height:
        rejects = _rejects_at_their_lines(rejects, members, lines, statements)
    return Parsed(steps=steps, events=parsed.events, rejects=rejects, rest=rest, notes=parsed.notes)


def _rejects_at_their_lines(
    rejects: pl.DataFrame, members: pl.DataFrame, lines: pl.DataFrame, statements: Statements
) -> pl.DataFrame:
    """``rejects`` with each reject of a group moved to the group's first line whose own statements are broken
    (its raw text that line)."""
    own = members.join(lines.select("source_offset", "line"), on="source_offset")
    own = own.with_columns(_broken=statements(own.get_column("line")).get_column("broken"))
    at = (
        own.sort("source_offset")
        .with_columns(_rank=pl.col("_broken").is_null())
        .sort("_group", "_rank", "source_offset")
        .group_by("_group", maintain_order=True)
        .first()
        .select(
            pl.col("_group").alias("source_offset"), pl.col("source_offset").alias("_at"), pl.col("line").alias("_raw")
        )
    )
    return (
        rejects.join(at, on="source_offset", how="left")
        .with_columns(
            source_offset=pl.coalesce("_at", "source_offset"),
            raw=pl.coalesce("_raw", "raw") if "raw" in rejects.columns else pl.col("_raw"),
        )
        .drop("_at", "_raw")
    )
