"""The cloudml-samples ``Train [ROLE/INDEX], step ...`` line family.

Three real variants, all read by one pattern:

- the 2016 experiment's: ``Train [master/0], step 100:loss:2.346, accuracy:0.133 (6.247 sec)
  16.009 global_steps/s, 16.009 local_steps/s``
- the original sample's: ``Train [worker/3], step 200: loss: 2.319, accuracy: 0.290 (3.093 sec)
  64.662 global steps/s, 3.556 local steps/s``
- the later sample's, without metrics: ``Train [master/0], step 118 (4.041 sec) 29.6 global
  steps/s, 29.6 local steps/s``

Any prefix before ``Train [`` (``INFO:root:``, a glog header, a launcher's ``[worker-2]``)
is ignored. Meaning of the numbers: ``step`` is the global step; ``(x sec)`` is seconds
since this task started logging (per task, not per job); the rates are over the task's
last logging interval, so a task's first rate also covers its start-up.

The samples also print evaluation blocks, whose two result lines carry no prefix::

    Eval, step 1000:
    - on train set 0.41, 0.88
    -- on eval set 0.52, 0.85

(loss then accuracy). A block is one record of role ``evaluator`` (the numbers come from an
evaluation pass, not from training: analyses of training speed leave it out) at the
global step N, with the train-set numbers as ``loss``/``accuracy`` and the eval-set
numbers as ``eval_loss``/``eval_accuracy``; its three lines count as that one record.

Two paths read the lines. The fast one splits the 2016 variant (the only one written at
volume) on its fixed separators and casts the tokens, a few times faster than a regex; it
accepts a line only when every token is where that variant puts it and every value passes
the checks (so not a line whose prefix holds a space, or whose role is not in lower case).
Every other line holding ``Train [`` (the other variants, broken lines) goes through the
full pattern, which says why a bad line is bad. A token that casts contains
none of the separators, so a line the fast path accepts gets the same values from the
pattern: the paths differ in speed, never in result. The fast path runs on every line of a
batch (a line without ``Train [`` is never accepted), in pieces side by side: one polars
string expression runs on one core.

A line the fast path accepts with nothing before its ``Train`` (a *plain* line) is, whole,
``Train [``, a role, the variant's fixed words and numbers that cast: none of the words the
batch is searched for after the chain (why a run stopped, a batch size). The parse hands back
the other lines as :attr:`Parsed.said`, the only ones those searches need to read; a prefix
(``batch_size=32Train [``) may say anything, so a prefixed line is searched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import (
    LOOKAHEAD_LINES,
    ParseContext,
    Parsed,
    SingleLineFormat,
    number,
    reject_frame,
    unsigned,
)
from tierscope.collector.formats.vocabulary import INFINITE
from tierscope.dataset.schema import ROLES

_MARK = "Train ["

_EVAL_MARK = "Eval, step"
_EVAL = r"Eval, step\s*(?P<step>[^:\s]*)\s*:\s*$"
_SET = r"^\s*-+\s*on (?P<which>train|eval) set\s+(?P<loss>[^,\s]*)\s*,\s*(?P<acc>\S*)\s*$"
_SET_MARK = r"^\s*-+\s*on (?:train|eval) set"
#: Lines of an Eval block: its head and its two result lines.
_EVAL_LINES = 3

_PATTERN = (
    r"Train \[(?P<role>[^/\]]*)/(?P<task>[^\]]*)\],\s*step\s+(?P<step>[^:\s(]+)"
    r"(?:\s*:\s*loss\s*:\s*(?P<loss>[^,\s]*)\s*,\s*accuracy\s*:\s*(?P<acc>[^\s(]*))?"
    r"\s*\(\s*(?P<elapsed>[^\s)]*)\s*sec\)"
    r"\s*(?P<g>\S*)\s+global[ _]steps/s\s*,\s*(?P<l>\S*)\s+local[ _]steps/s\s*$"
)


#: The 2016 variant cut at single spaces, the whole line: ``PREFIX`` + ``Train``, ``[ROLE/TASK],``
#: ``step`` ``STEP:loss:LOSS,`` ``accuracy:ACC`` ``(ELAPSED`` ``sec)`` ``G`` ``global_steps/s,`` ``L``
#: ``local_steps/s``. A prefix holding a space (rare: envelopes are stripped before) moves the
#: tokens: such a line takes the full pattern. Tokens the fast path requires verbatim, by position:
_FIXED_TOKENS = {2: "step", 6: "sec)", 8: "global_steps/s,", 10: "local_steps/s"}
_TOKENS = 11

#: Lines of a piece of the fast path: a batch's marked lines are cut into pieces of at least
#: this many, run side by side (one polars string expression runs on one core).
_PIECE_LINES = 32_768


def _finite_nonneg(name: str) -> pl.Expr:
    return pl.col(name).is_not_null() & pl.col(name).is_finite() & unsigned(pl.col(name))


#: The raw fields (String) as numbers and a lower-case role: the same casts on both paths.
_VALUES: dict[str, pl.Expr] = {
    "role_n": pl.col("role").str.to_lowercase(),
    "task_index": pl.col("task").cast(pl.Int32, strict=False),
    "step_n": pl.col("step").cast(pl.Int64, strict=False),
    "loss_n": pl.col("loss").cast(pl.Float64, strict=False),
    "acc_n": pl.col("acc").cast(pl.Float64, strict=False),
    "elapsed_n": pl.col("elapsed").cast(pl.Float64, strict=False),
    "g_n": pl.col("g").cast(pl.Float64, strict=False),
    "l_n": pl.col("l").cast(pl.Float64, strict=False),
}


#: :data:`_VALUES` on the fast path: the role as written, no lower-casing pass over every line.
#: A role in upper case then fails the role check there, and the full pattern lower-cases it.
_FAST_VALUES: dict[str, pl.Expr] = _VALUES | {"role_n": pl.col("role")}


def _checks() -> list[tuple[pl.Expr, pl.Expr]]:
    """(what makes a read line bad, the reason given), in the order they are checked."""
    has_metrics = pl.col("loss").is_not_null()
    return [
        (
            ~pl.col("role_n").is_in(list(ROLES)),
            pl.format("unknown role '{}' (expected one of {})", pl.col("role"), pl.lit(", ".join(ROLES))),
        ),
        (
            pl.col("task_index").is_null() | (pl.col("task_index") < 0),
            pl.format("task index '{}' is not a whole number >= 0", pl.col("task")),
        ),
        (pl.col("step_n").is_null(), pl.format("global step '{}' is not a whole number", pl.col("step"))),
        (pl.col("step_n") < 0, pl.format("global step {} is negative", pl.col("step"))),
        (has_metrics & pl.col("loss_n").is_null(), pl.format("loss '{}' is not a number", pl.col("loss"))),
        # NaN is a loss (a diverged model), an infinity none (vocabulary.INFINITE): on loss_n, one cast a line
        (has_metrics & pl.col("loss_n").is_infinite(), pl.format(f"loss '{{}}' {INFINITE}", pl.col("loss"))),
        (
            has_metrics & (pl.col("acc_n").is_null() | ~pl.col("acc_n").is_between(0, 1)),
            pl.format("accuracy '{}' is not a number between 0 and 1", pl.col("acc")),
        ),
        (
            ~_finite_nonneg("elapsed_n"),
            pl.format("elapsed seconds '{}' is not a finite number >= 0", pl.col("elapsed")),
        ),
        (~_finite_nonneg("g_n"), pl.format("global_steps/s '{}' is not a finite number >= 0", pl.col("g"))),
        (~_finite_nonneg("l_n"), pl.format("local_steps/s '{}' is not a finite number >= 0", pl.col("l"))),
    ]


def _reason() -> pl.Expr:
    """The first failed check's reason, or null for a good line."""
    checks = _checks()
    chain = pl.when(checks[0][0]).then(checks[0][1])
    for bad, why in checks[1:]:
        chain = chain.when(bad).then(why)
    return chain.otherwise(None)


#: The step record's columns from the converted fields.
_STEP_COLUMNS: tuple[pl.Expr, ...] = (
    pl.col("source_offset"),
    pl.col("role_n").alias("role"),
    pl.col("task_index"),
    pl.col("step_n").alias("step"),
    pl.col("loss_n").alias("loss"),
    pl.col("acc_n").alias("accuracy"),
    pl.col("elapsed_n").alias("elapsed_s"),
    pl.col("g_n").alias("global_steps_per_s"),
    pl.col("l_n").alias("local_steps_per_s"),
)


def _field(struct: str, name: str) -> pl.Expr:
    return pl.col(struct).struct.field(name)


def _canonical(lines: pl.LazyFrame) -> pl.LazyFrame:
    """The fast path's plan over ``lines``: the fields of the 2016 variant cut out and converted
    (:data:`_VALUES`), and ``_ok``: True where the line is exactly that variant and good.

    The line is cut whole, not after its ``Train [``: ``PREFIX`` + ``Train`` is the first token,
    and since it holds no space, the ``Train [`` it ends in is the line's first (any occurrence is
    followed by a space), the one the full pattern starts at. Cutting the tail instead would cost
    a search and a copy of every line."""
    # Each split is a step of its own: a struct's fields taken in the split's own expression
    # would each re-run the split.
    tokens = lines.select(
        "source_offset",
        t=pl.col("line").str.splitn(" ", _TOKENS).struct.rename_fields([f"t{i}" for i in range(_TOKENS)]),
    )

    def token(i: int) -> pl.Expr:
        return _field("t", f"t{i}")

    # ``[ROLE/TASK],`` is cut at its first ``/``; ``STEP:loss:LOSS,`` at ``:loss:`` (a STEP that
    # casts holds no ``:``, so this is the cut at the first two ``:``); ``accuracy:ACC`` and
    # ``(ELAPSED`` lose their fixed heads (their presence is checked).
    parts = tokens.select(
        "source_offset",
        who=token(1).str.splitn("/", 2).struct.rename_fields(["role", "task"]),
        head=token(3).str.splitn(":loss:", 2).struct.rename_fields(["step", "loss"]),
        acc=token(4).str.slice(len("accuracy:")),
        elapsed=token(5).str.slice(len("(")),
        g=token(7),
        l=token(9),
        _bare=token(0) == _MARK[:-2],
        _shape_ok=pl.all_horizontal(
            token(0).str.ends_with(_MARK[:-2]),
            token(1).str.starts_with("["),
            token(4).str.starts_with("accuracy:"),
            token(5).str.starts_with("("),
            *(token(i) == text for i, text in _FIXED_TOKENS.items()),
        ),
    )
    read = parts.select(
        "source_offset",
        "_bare",
        "acc",
        "elapsed",
        "g",
        "l",
        role=_field("who", "role").str.slice(len("[")),
        task=_field("who", "task").str.strip_suffix("],"),
        step=_field("head", "step"),
        loss=_field("head", "loss").str.strip_suffix(","),
        _shape_ok=pl.col("_shape_ok")
        & _field("who", "task").str.ends_with("],")
        & _field("head", "loss").str.ends_with(","),
    ).with_columns(**_FAST_VALUES)
    bad = pl.any_horizontal(*(b for b, _ in _checks()))
    # A null anywhere (a missing token) means "not this variant": it takes the full path.
    ok = (pl.col("_shape_ok") & ~bad).fill_null(False)
    return read.with_columns(_ok=ok, _plain=ok & pl.col("_bare"))


def _split_canonical(lines: pl.DataFrame, columns: Sequence[pl.Expr | str] = ()) -> pl.DataFrame:
    """:func:`_canonical` on ``lines`` (a line without ``Train [`` is never ``_ok``), only
    ``columns`` of it if given; in pieces run side by side, rows in ``lines``' order."""
    pieces = max(1, min(pl.thread_pool_size(), lines.height // _PIECE_LINES))
    size = -(-lines.height // pieces)
    plans = []
    for i in range(pieces):
        plan = _canonical(lines.slice(i * size, size).lazy())
        plans.append(plan.select(columns) if columns else plan)
    return pl.concat(pl.collect_all(plans)) if pieces > 1 else plans[0].collect()


class CloudMLSamples(SingleLineFormat):
    name: ClassVar[str] = "cloudml"
    example: ClassVar[str] = (
        "Train [master/0], step 100:loss:2.314, accuracy:0.183 (21.535 sec) 4.644 global_steps/s, 4.644 local_steps/s"
    )
    meaning: ClassVar[str] = (
        "step is the global step; (x sec) is seconds since the task started logging; "
        "the rates cover the task's last logging interval"
    )

    mark: ClassVar[str] = _MARK
    mark_is_literal: ClassVar[bool] = True

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        """The first Eval head among the batch's last lines: a look-ahead cut between a head and
        its result lines would leave those, in the next batch, without it (two false rejects)."""
        tail = lines.tail(LOOKAHEAD_LINES + _EVAL_LINES - 1)
        heads = tail.get_column("source_offset").filter(tail.get_column("line").str.contains(_EVAL_MARK, literal=True))
        return int(heads[0]) if heads.len() else None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        # Every line goes through the fast path (one without the mark is never ``_ok``): cheaper
        # than cutting the marked lines out first; the few others are taken from ``lines``.
        fast = _split_canonical(lines, (*_STEP_COLUMNS, "_ok", "_plain"))
        ok = fast.get_column("_ok")
        steps = fast.drop("_ok", "_plain")
        if not ok.all():
            steps = steps.filter(ok)
        steps = steps.with_columns(pl.lit(self.name).alias("format"))
        # Whether a line holds the mark is asked only of the few lines the fast path left.
        left = lines.filter(~ok)
        marked = left.get_column("line").str.contains(_MARK, literal=True)
        slow = self._parse_full(left.filter(marked).select("source_offset", "line"))
        rest = left.filter(~marked)
        if slow.steps.height:
            # In line order: of two lines with one key the store keeps the first one's values,
            # whichever path read each and wherever a batch ends.
            steps = pl.concat([steps, slow.steps]).sort("source_offset", maintain_order=True)
        rejects = slow.rejects
        evals, eval_rejects, rest = self._eval_blocks(rest)
        return Parsed(
            steps=pl.concat([steps, evals], how="diagonal_relaxed") if evals.width else steps,
            events=pl.DataFrame(),
            rejects=pl.concat([rejects, eval_rejects]) if eval_rejects.width else rejects,
            rest=rest,
            said=lines.filter(~fast.get_column("_plain")),
        )

    def _parse_full(self, marked: pl.DataFrame) -> Parsed:
        """Read ``marked`` (lines holding ``Train [``) with the full pattern; say why each bad line is bad."""
        groups = marked.with_columns(g=pl.col("line").str.extract_groups(_PATTERN)).unnest("g")
        unmatched = groups.filter(pl.col("role").is_null())
        matched = groups.filter(pl.col("role").is_not_null()).with_columns(**_VALUES).with_columns(reason=_reason())
        steps = matched.filter(pl.col("reason").is_null()).select(*_STEP_COLUMNS, pl.lit(self.name).alias("format"))
        rejects = pl.concat(
            [
                reject_frame(
                    unmatched,
                    "a 'Train [' line that is not a complete cloudml-samples step line (truncated, or fields missing)",
                    self.name,
                ),
                reject_frame(matched.filter(pl.col("reason").is_not_null()), pl.col("reason"), self.name),
            ]
        )
        return Parsed(steps=steps, events=pl.DataFrame(), rejects=rejects, rest=marked.clear())

    def _eval_blocks(self, lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """Records and rejects from ``Eval, step N:`` blocks, and the lines that are not part of one."""
        line = pl.col("line")
        if not lines.get_column("line").str.contains(_EVAL_MARK, literal=True).any() and not (
            lines.get_column("line").str.contains(_SET_MARK).any()
        ):
            return pl.DataFrame(), pl.DataFrame(), lines
        frame = lines.with_columns(
            head=line.str.contains(_EVAL_MARK, literal=True),
            is_set=line.str.contains(_SET_MARK),
            which=line.str.extract(r"on (train|eval) set", 1),
            step_raw=line.str.extract(_EVAL, 1),
        )
        # The block's result lines follow its head (other formats' lines may sit between them,
        # but they were taken by earlier parsers).
        sets = [line.shift(-i).str.extract_groups(_SET).alias(f"s{i}") for i in (1, 2)]
        frame = frame.with_columns(*sets)
        frame = frame.with_columns(
            pl.col("s1").struct.field("which").alias("w1"),
            pl.col("s2").struct.field("which").alias("w2"),
            pl.col("s1").struct.field("loss").alias("train_loss"),
            pl.col("s1").struct.field("acc").alias("train_acc"),
            pl.col("s2").struct.field("loss").alias("eval_loss_raw"),
            pl.col("s2").struct.field("acc").alias("eval_acc_raw"),
        ).with_columns(
            step=number("step_raw", pl.Int64()),
            loss=number("train_loss"),
            accuracy=number("train_acc"),
            eval_loss=number("eval_loss_raw"),
            eval_accuracy=number("eval_acc_raw"),
            # A set line right after a block head (or after its first set line) belongs to the block.
            in_block=(
                (pl.col("which") == "train") & pl.col("head").shift(1)
                | (pl.col("which") == "eval") & pl.col("head").shift(2) & (pl.col("which").shift(1) == "train")
            ).fill_null(False),
        )
        head = pl.col("head")
        reason = (
            pl.when(head & (pl.col("step").is_null() | (pl.col("step") < 0)))
            .then(pl.format("Eval block step '{}' is not a whole number >= 0", pl.col("step_raw")))
            .when(head & ((pl.col("w1") != "train") | (pl.col("w2") != "eval")).fill_null(True))
            .then(pl.lit("an 'Eval, step N:' line not followed by its '- on train set' and '-- on eval set' lines"))
            .when(head & (pl.col("loss").is_null() | pl.col("eval_loss").is_null()))
            .then(pl.format("Eval block loss '{}' / '{}' is not a number", "train_loss", "eval_loss_raw"))
            .when(head & (pl.col("loss").is_infinite() | pl.col("eval_loss").is_infinite()))
            .then(pl.format(f"Eval block loss '{{}}' / '{{}}' {INFINITE}", "train_loss", "eval_loss_raw"))
            .when(
                head & ~(pl.col("accuracy").is_between(0, 1) & pl.col("eval_accuracy").is_between(0, 1)).fill_null(True)
            )
            .then(pl.format("Eval block accuracy '{}' / '{}' is not between 0 and 1", "train_acc", "eval_acc_raw"))
            .when(pl.col("is_set") & ~pl.col("in_block"))
            .then(pl.lit("an '- on train/eval set' line without its 'Eval, step N:' line"))
        )
        frame = frame.with_columns(reason=reason)
        good = frame.filter(head & pl.col("reason").is_null())
        records = good.select(
            "source_offset",
            pl.lit("evaluator").alias("role"),
            "step",
            "loss",
            "accuracy",
            "eval_loss",
            "eval_accuracy",
            pl.lit(self.name).alias("format"),
        )
        rejects = reject_frame(frame.filter(pl.col("reason").is_not_null()), pl.col("reason"), self.name)
        rest = frame.filter(~head & ~pl.col("is_set")).select(lines.columns)
        return records, rejects, rest
