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
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from collector.formats.base import ParseContext, Parsed, SingleLineFormat, number, reject_frame
from collector.schema import ROLES

_MARK = "Train ["

_EVAL_MARK = "Eval, step"
_EVAL = r"Eval, step\s*(?P<step>[^:\s]*)\s*:\s*$"
_SET = r"^\s*-+\s*on (?P<which>train|eval) set\s+(?P<loss>[^,\s]*)\s*,\s*(?P<acc>\S*)\s*$"
_SET_MARK = r"^\s*-+\s*on (?:train|eval) set"

_PATTERN = (
    r"Train \[(?P<role>[^/\]]*)/(?P<task>[^\]]*)\],\s*step\s+(?P<step>[^:\s(]+)"
    r"(?:\s*:\s*loss\s*:\s*(?P<loss>[^,\s]*)\s*,\s*accuracy\s*:\s*(?P<acc>[^\s(]*))?"
    r"\s*\(\s*(?P<elapsed>[^\s)]*)\s*sec\)"
    r"\s*(?P<g>\S*)\s+global[ _]steps/s\s*,\s*(?P<l>\S*)\s+local[ _]steps/s\s*$"
)


def _finite_nonneg(name: str) -> pl.Expr:
    return pl.col(name).is_not_null() & pl.col(name).is_finite() & (pl.col(name) >= 0)


class CloudMLSamples(SingleLineFormat):
    name: ClassVar[str] = "cloudml"
    example: ClassVar[str] = (
        "Train [master/0], step 100:loss:2.314, accuracy:0.183 (21.535 sec) 4.644 global_steps/s, 4.644 local_steps/s"
    )
    meaning: ClassVar[str] = (
        "step is the global step; (x sec) is seconds since the task started logging; "
        "the rates cover the task's last logging interval"
    )

    def sniff(self, lines: pl.Series) -> int:
        return int(lines.str.contains(_MARK, literal=True).sum())

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        marked = lines.filter(pl.col("line").str.contains(_MARK, literal=True))
        rest = lines.filter(~pl.col("line").str.contains(_MARK, literal=True))
        groups = marked.with_columns(g=pl.col("line").str.extract_groups(_PATTERN)).unnest("g")
        unmatched = groups.filter(pl.col("role").is_null())
        matched = groups.filter(pl.col("role").is_not_null()).with_columns(
            role_n=pl.col("role").str.to_lowercase(),
            task_index=pl.col("task").cast(pl.Int32, strict=False),
            step_n=pl.col("step").cast(pl.Int64, strict=False),
            loss_n=pl.col("loss").cast(pl.Float64, strict=False),
            acc_n=pl.col("acc").cast(pl.Float64, strict=False),
            elapsed_n=pl.col("elapsed").cast(pl.Float64, strict=False),
            g_n=pl.col("g").cast(pl.Float64, strict=False),
            l_n=pl.col("l").cast(pl.Float64, strict=False),
        )
        has_metrics = pl.col("loss").is_not_null()
        reason = (
            pl.when(~pl.col("role_n").is_in(list(ROLES)))
            .then(pl.format("unknown role '{}' (expected one of {})", pl.col("role"), pl.lit(", ".join(ROLES))))
            .when(pl.col("task_index").is_null() | (pl.col("task_index") < 0))
            .then(pl.format("task index '{}' is not a whole number >= 0", pl.col("task")))
            .when(pl.col("step_n").is_null())
            .then(pl.format("global step '{}' is not a whole number", pl.col("step")))
            .when(pl.col("step_n") < 0)
            .then(pl.format("global step {} is negative", pl.col("step")))
            .when(has_metrics & pl.col("loss_n").is_null())
            .then(pl.format("loss '{}' is not a number", pl.col("loss")))
            .when(has_metrics & (pl.col("acc_n").is_null() | ~pl.col("acc_n").is_between(0, 1)))
            .then(pl.format("accuracy '{}' is not a number between 0 and 1", pl.col("acc")))
            .when(~_finite_nonneg("elapsed_n"))
            .then(pl.format("elapsed seconds '{}' is not a finite number >= 0", pl.col("elapsed")))
            .when(~_finite_nonneg("g_n"))
            .then(pl.format("global_steps/s '{}' is not a finite number >= 0", pl.col("g")))
            .when(~_finite_nonneg("l_n"))
            .then(pl.format("local_steps/s '{}' is not a finite number >= 0", pl.col("l")))
            .otherwise(None)
        )
        matched = matched.with_columns(reason=reason)
        good = matched.filter(pl.col("reason").is_null())
        steps = good.select(
            "source_offset",
            pl.col("role_n").alias("role"),
            "task_index",
            pl.col("step_n").alias("step"),
            pl.col("loss_n").alias("loss"),
            pl.col("acc_n").alias("accuracy"),
            pl.col("elapsed_n").alias("elapsed_s"),
            pl.col("g_n").alias("global_steps_per_s"),
            pl.col("l_n").alias("local_steps_per_s"),
            pl.lit(self.name).alias("format"),
        )
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
        evals, eval_rejects, rest = self._eval_blocks(rest)
        return Parsed(
            steps=pl.concat([steps, evals], how="diagonal_relaxed") if evals.width else steps,
            events=pl.DataFrame(),
            rejects=pl.concat([rejects, eval_rejects]) if eval_rejects.width else rejects,
            rest=rest,
        )

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
