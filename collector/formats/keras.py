"""Keras ``model.fit`` progress output (Keras 2 and Keras 3).

::

    Epoch 3/10
    \\r   1/1875 [..............................] - ETA: 1:23 - loss: 2.3 - accuracy: 0.1\\r ...
    1875/1875 [==============================] - 4s 2ms/step - loss: 0.0712 - accuracy: 0.9781
    1875/1875 ━━━━━━━━━━━━━━━━━━━━ 4s 2ms/step - accuracy: 0.9781 - loss: 0.0712       (Keras 3)
    1875/1875 - 4s - 2ms/step - accuracy: 0.9781 - loss: 0.0712                         (verbose=2)

All updates of one epoch's bar share one physical line (separated by ``\\r``; Keras 3 also
writes ANSI colours and backspaces, both ignored). Each bar's *final* update (``k/N`` with
k = N) is a record: ``step`` is the global batch count ``(epoch - 1) * N + k`` (the epoch
comes from the task's last ``Epoch E/T`` line, 1 if none was seen); ``interval_s`` is the
epoch's wall time (whole seconds, as Keras prints it; null for "0s"); ``global_steps_per_s`` and
``local_steps_per_s`` are 1 / the per-step time Keras prints (synchronous data-parallel
workers share the global step); ``loss``/``accuracy`` are the epoch's running means and
``val_loss``/``val_accuracy`` go to ``eval_loss``/``eval_accuracy``. A line whose bar never
finished (the run stopped mid-epoch) gives its last update as a record without seconds.

Under several workers, one process's bar can be glued to another's on one line or split
across two lines. Every complete update on a line is read wherever it sits; a bar cut
off at the end of a line is joined with the next line of the same task when that line
starts with the bar's tail; pieces that still carry numbers but no step count are rejects.
Bars counting samples (``us/sample``, Keras < 2.2) have no step count: an epoch's final one is a record
with no step (identified by its line) whose ``examples_per_s`` is 1 / the time per sample. A finished
bar that prints a step time of 0 (a download's bar in bytes, ``0us/step``) measures nothing: no record.
An epoch has one training bar: a finished bar of another total after it, with no ``Epoch E/T`` line between
(``model.evaluate()`` or ``predict()`` once fit returned: ``312/312 ━━━ 0s 8us/step`` then ``78/78 ━━━ 2s
21ms/step``; tf.keras 1.13's ``60000/60000 [===] - 23s 390us/sample`` then ``10000/10000 [===] - 1s
112us/sample``), is that other work's bar: no record. Only an epoch an ``Epoch E/T`` line announced is judged so:
Keras prints that line only when fit runs more than one epoch (``ProgbarLogger.on_epoch_begin``), so finished bars
of other totals with none before them are fits of one epoch each (a loop fitting one data set after another), each a
record.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import (
    TAG,
    ParseContext,
    Parsed,
    SingleLineFormat,
    empty_parsed,
    fraction,
    number,
    reject_frame,
    split_by,
)
from tierscope.collector.formats.vocabulary import (
    ANSI,
    ENDED_BY_SIGNAL,
    SHARED,
    UNITS_PER_SECOND,
    loss_reason,
    phrase,
    record_columns,
    stepless_position,
    unescaped_returns,
)

_BAR = r"(?:\[[=>.]*\]|[━─]+)"
_HEAD = r"\d+/\d+ (?:\[(?:[=>.]|$)|━|─|- )"
#: (Keras 3's bar opens its piece with its counter: ``1875/1875 ━━━━ 4s 2ms/step``; a counter after a word before the
#: same glyphs is another bar's, Lightning's RichProgressBar: ``Epoch 31/99 ━━━━╸━━━ 2515/4070 0:16:12 • 0:06:32
#: 3.98it/s``, ZettaAI/zetta_utils issue 94, 2022)
_MARK = (
    r"\d+/\d+ (?:\[(?:[=>.]|\]|$)|- \d)|(?:^|\r|[^\w\s])\s*\d+/\d+ [━─]|^\s*Epoch \d+/\d+\s*$|\d(?:ms|us|s)/step"
    r"|(?:^|\s)- (?:val_)?loss: "
)
_EPOCH = r"^\s*Epoch (?P<e>\d+)/(?P<t>\d+)\s*$"
#: Keras <= 2.2's verbose=2 epoch line, no step counter: the epoch's whole seconds, then its metrics.
_EPOCH_SECONDS = r"^\s*- \d+s - (?:val_)?loss: "
_UPDATE = rf"^\s*(?P<k>\d+)/(?P<n>\d+) (?:{_BAR})?(?P<tail>.*)$"
#: A bar still open at the end of a line, and a line that starts with the rest of a bar.
_OPEN_END = r"\d+/\d+ \[[=>.]*$"
_TAIL_START = r"^[=>.]*\] "
_SEP = "\x1e"
#: The per-step time as Keras prints it (``52ms/step``, ``1s/step``, ``900us/step``).
_PER_STEP = rf"(?:{phrase('X ms/step')}|{phrase('Xs/step')}|{phrase('X us/step')})"
#: Synchronous replicas (MirroredStrategy, MultiWorkerMirroredStrategy) all run every
#: global step: the step time is the job's.
_RATE = record_columns(["ms_per_step", "sec_per_step", "us_per_step"], SHARED)["global_steps_per_s"]


def _finer_rate() -> pl.Expr:
    """A finished epoch's rate from the finer of its two rounded figures. Keras prints the epoch's seconds
    and its step time in whole units (``- 9s 4ms/step`` over 1875 steps): 4 ms is 3.5-4.5 ms, up to 12 %
    off, where 9 s is 8.5-9.5 s, 6 %. The figure with more units has the smaller rounding error, so the
    rate is ``N / seconds`` when the seconds outnumber the step time's units, else the step time's. Not
    when the epoch validated (``val_loss``): its seconds then hold the validation too, its step time not."""
    printed = pl.coalesce(number("ms_per_step"), number("sec_per_step"), number("us_per_step"))
    wall = number("wall_raw")
    trained_only = pl.col("vloss_raw").is_null() & pl.col("vacc_raw").is_null()
    by_wall = pl.when(pl.col("is_update") & trained_only & (wall > 0)).then(pl.col("n") / wall)
    return pl.when(by_wall.is_not_null() & (wall > printed.fill_null(0))).then(by_wall).otherwise(pl.col("rate"))


def _metric(name: str) -> str:
    return rf"(?:^|\s)- {name}: (?P<v>\S*)"


class KerasProgress(SingleLineFormat):
    name: ClassVar[str] = "keras"
    example: ClassVar[str] = (
        "1875/1875 [==============================] - 4s 2ms/step - loss: 0.0712 - accuracy: 0.9781"
    )
    meaning: ClassVar[str] = (
        "step is the global batch count (epoch-1)*N+k at each epoch's end; interval_s is the "
        "epoch's wall time; rates are 1 / the per-step time"
    )

    mark: ClassVar[str] = _MARK

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        ours, rest = split_by(lines, self.marked())
        if ours.height == 0:
            return empty_parsed(rest)
        # (a bar's carriage returns may come escaped, ``#015`` or ``\\r``, from a platform's copy)
        ours = ours.with_columns(unescaped_returns(pl.col("line")).str.replace_all(ANSI, "").alias("text"))
        ours = self._join_split_bars(ours)
        ours = self._with_epoch(ours, context)
        # ``Epoch E/T`` lines alone, no bar of Keras' among them, are a hand-written loop's banners (``2024-11-25
        # 00:33:40,233 - Epoch 14/20``, then its own ``Train Loss: ..`` line: R3c0ger/CialloDroid read.md,
        # 2024-11-25): what they announce is for the formats after this one to read, with the lines they head.
        if ours.select(pl.col("epoch_line").is_not_null().all()).item():
            return empty_parsed(lines)
        # One row per update: split at every \r and before every "k/N <bar>" so glued bars part.
        updates = (
            ours.filter(pl.col("epoch_line").is_null() & ~pl.col("joined_into_previous"))
            .with_columns(
                pl.col("text")
                .str.replace_all(rf"({_HEAD})", f"{_SEP}$1")
                .str.replace_all("\r", _SEP, literal=True)
                .str.split(_SEP)
                .alias("seg")
            )
            .explode("seg")
            .filter(pl.col("seg").str.strip_chars() != "")
            .with_columns(pl.col("seg").str.extract_groups(_UPDATE).alias("u"))
            .unnest("u")
            # A piece without its "k/N" head is read whole (it may be a counter-less summary).
            .with_columns(tail=pl.coalesce("tail", "seg"))
            .with_columns(
                k=number("k", pl.Int64()),
                n=number("n", pl.Int64()),
                is_update=pl.col("k").is_not_null(),
                per_sample=pl.col("tail").str.contains(r"\d(?:us|ms|s)/sample"),
                loss_raw=pl.col("tail").str.extract(_metric("loss"), 1),
                acc_raw=pl.col("tail").str.extract(_metric("(?:accuracy|acc)"), 1),
                vloss_raw=pl.col("tail").str.extract(_metric("val_loss"), 1),
                vacc_raw=pl.col("tail").str.extract(_metric("val_(?:accuracy|acc)"), 1),
                wall_raw=pl.col("tail").str.extract(r"(?:^|\s)(\d+(?:\.\d+)?)s(?:\s|$)", 1),
                per_step=pl.col("tail").str.extract_groups(_PER_STEP),
                cut=pl.col("seg").str.contains(r"\[[=>.]*$") | pl.col("tail").str.contains(r"- \w+:\s*$"),
            )
            .unnest("per_step")
            .with_columns(
                loss=number("loss_raw"),
                accuracy=fraction(pl.col("acc_raw")),
                eval_loss=number("vloss_raw"),
                eval_accuracy=fraction(pl.col("vacc_raw")),
                rate=_RATE,
                # An epoch's summary whose "k/N" counter was lost (a glued copy), or Keras <= 2.2's verbose=2 line
                # that never had one (`` - 3s - loss: 0.06``: the epoch's seconds, no step): the epoch's figures.
                summary=~pl.col("is_update")
                & (_RATE.is_not_null() | pl.col("tail").str.contains(_EPOCH_SECONDS))
                & ~pl.col("tail").str.contains("ETA:"),
            )
            .with_columns(pl.int_range(pl.len()).over("source_offset").alias("seg_no"))
        )
        final = pl.col("is_update") & (pl.col("k") == pl.col("n"))
        bad_number = pl.col("loss_raw").is_not_null() & pl.col("loss").is_null()
        reason = (
            pl.when(~pl.col("is_update") & ~pl.col("summary"))
            .then(pl.lit("a piece of a Keras progress bar without its step count (glued to or split from another bar)"))
            .when(pl.col("cut"))
            .then(pl.lit("a Keras progress bar cut off mid-update"))
            .when(pl.col("k") > pl.col("n"))
            .then(pl.format("step {} is past the epoch's {} steps", "k", "n"))
            .when(bad_number)
            .then(pl.format("loss '{}' is not a number", "loss_raw"))
            .when(loss_reason(pl.col("loss_raw")).is_not_null())
            .then(loss_reason(pl.col("loss_raw")))
            .when(pl.col("acc_raw").is_not_null() & ~pl.col("accuracy").is_between(0, 1).fill_null(False))
            .then(pl.format("accuracy '{}' is not a number between 0 and 1", "acc_raw"))
            .when(pl.col("vloss_raw").is_not_null() & pl.col("eval_loss").is_null())
            .then(pl.format("val_loss '{}' is not a number", "vloss_raw"))
            .when(loss_reason(pl.col("vloss_raw")).is_not_null())
            .then(pl.concat_str(pl.lit("val_"), loss_reason(pl.col("vloss_raw"))))
            .when(pl.col("vacc_raw").is_not_null() & ~pl.col("eval_accuracy").is_between(0, 1).fill_null(False))
            .then(pl.format("val_accuracy '{}' is not a number between 0 and 1", "vacc_raw"))
        )
        # Pieces with no number in them (a lone "[worker-1]" left by a glued line) are not rejects.
        carries_number = pl.col("seg").str.contains(r"\d")
        updates = updates.with_columns(
            reason=pl.when(pl.col("per_sample")).then(None).otherwise(reason),
        ).filter(pl.col("reason").is_not_null() & carries_number | pl.col("reason").is_null())
        good = updates.filter(pl.col("reason").is_null())
        # An update before the epoch's end carries only an ETA: no rate or time, so no record.
        final = final | pl.col("summary")
        # A finished bar that states neither a step time nor its seconds measures nothing: a download's
        # bar in bytes (``11490434/11490434 [====] - 0s 0us/step``) is no training record.
        printed_time = pl.col("tail").str.contains(r"\d(?:ms|us|s)/(?:step|sample)")
        # A bar counting samples (Keras < 2.2) times each sample: its epoch is a record of examples/s with
        # no step (the batch is not printed).
        sample_time = pl.col("tail").str.extract_groups(r"(?P<v>\d+(?:\.\d+)?)(?P<u>us|ms|s)/sample")
        per_second = sample_time.struct.field("u").replace_strict(
            UNITS_PER_SECOND, default=None, return_dtype=pl.Float64
        )
        examples = pl.when(pl.col("per_sample")).then(per_second / number(sample_time.struct.field("v")))
        examples = pl.when(examples.is_finite()).then(examples)
        measured = (
            pl.col("rate").is_not_null()
            | examples.is_not_null()
            | ((number("wall_raw") > 0) & ~printed_time).fill_null(False)
        )
        chosen = good.filter(final & measured & ~pl.col("text").str.contains(ENDED_BY_SIGNAL))
        chosen = chosen.filter(~self._other_work_bars(chosen, context))
        rate = _finer_rate()
        steps = chosen.select(
            "source_offset",
            pl.when(~pl.col("per_sample")).then((pl.col("epoch") - 1) * pl.col("n") + pl.col("k")).alias("step"),
            examples.alias("examples_per_s"),
            "loss",
            "accuracy",
            "eval_loss",
            "eval_accuracy",
            # Keras rounds the epoch's time to whole seconds: "0s" means "under half a second", not zero.
            pl.when(final & (number("wall_raw") > 0)).then(number("wall_raw")).alias("interval_s"),
            pl.when(final).then(rate).alias("global_steps_per_s"),
            pl.when(final).then(rate).alias("local_steps_per_s"),
            pl.lit(self.name).alias("format"),
        ).with_columns(stepless_position())
        rejects = reject_frame(
            updates.filter(pl.col("reason").is_not_null()).with_columns(pl.col("seg").alias("line")),
            pl.col("reason"),
            self.name,
        )
        # The last epoch fit announced, finished with its bar (or its verbose=2 line): the run did the work it was
        # given.
        # Said on that epoch's ``Epoch E/E`` line: every line has one outcome, and the bar's is its record.
        done = (
            chosen.filter(
                (pl.col("is_update") & (pl.col("k") == pl.col("n")) | pl.col("tail").str.contains(_EPOCH_SECONDS))
                & (pl.col("epoch") == pl.col("epochs"))
                & pl.col("epoch_at").is_not_null()
            )
            .select(
                pl.col("epoch_at").alias("source_offset"),
                pl.lit("finished").alias("event"),
                pl.format("Epoch {}/{} finished", "epoch", "epochs").alias("reason"),
                pl.lit(self.name).alias("format"),
            )
            .unique("source_offset", keep="first", maintain_order=True)
        )
        # The shell's "Killed" (or another signal's word) glued to the bar the OS stopped (the status lines never see
        # a bar's line): that line is the failure, not a record.
        killed = ours.filter(pl.col("text").str.contains(ENDED_BY_SIGNAL)).select(
            "source_offset",
            pl.lit("failed").alias("event"),
            pl.col("text").str.extract(rf"({ENDED_BY_SIGNAL})", 1).str.strip_chars().alias("reason"),
            pl.lit(self.name).alias("format"),
        )
        events = pl.concat([done, killed]).sort("source_offset")
        return Parsed(steps=steps, events=events, rejects=rejects, rest=rest)

    def _other_work_bars(self, chosen: pl.DataFrame, context: ParseContext) -> pl.Series:
        """For each row of ``chosen`` (finished updates and summaries): whether it is a finished bar of another total
        than the first finished bar of its task's epoch (the epoch's training bar), with no ``Epoch E/T`` line
        between: an evaluation's or a prediction's bar. Each task's training bar total, with the ``Epoch E/T`` line
        of its epoch, carries over to later batches in ``context``: a batch whose first bar is its epoch's first
        (the ``Epoch`` line ended the batch before) judges it as the epoch's training bar, not against the epoch
        before's total."""
        known: dict[str, tuple[int | None, int]] = context.state.setdefault(f"{self.name}-epoch-bar", {})
        totals = chosen.select(
            pl.col(TAG).fill_null("").alias("_tag"),
            pl.col("epoch_at").alias("_epoch"),
            pl.when(pl.col("is_update")).then(pl.col("n")).alias("_n"),
            context.counts(pl.col("source_offset")).alias("_counts"),
        )
        carried = pl.DataFrame(
            {
                "_tag": list(known),
                "_carried_epoch": [epoch for epoch, _ in known.values()],
                "_carried": [total for _, total in known.values()],
            },
            schema={"_tag": pl.String, "_carried_epoch": pl.Int64, "_carried": pl.Int64},
        )
        first = pl.col("_n").drop_nulls().first().over("_tag", "_epoch")
        # the carried total is the training bar of the epoch it was counted in (an Epoch line an earlier batch read,
        # or none), not of one whose Epoch line came since
        flagged = (
            totals.with_row_index("_i")
            .join(carried, on="_tag", how="left")
            .sort("_i")
            .with_columns(
                _train=pl.when(pl.col("_carried_epoch").eq_missing(pl.col("_epoch")))
                .then(pl.coalesce("_carried", first))
                .otherwise(first),
                _at=pl.col("_epoch"),
            )
        )
        for tag, at, train in (
            flagged.filter(pl.col("_counts") & pl.col("_train").is_not_null())
            .group_by("_tag")
            .agg(pl.col("_at").last(), pl.col("_train").last())
            .iter_rows()
        ):
            known[tag] = (at, int(train))
        # fit(epochs=1) prints no ``Epoch 1/1`` line (Keras prints it only for more than one epoch): bars with no
        # Epoch line before them are each a fit's own, one per call (a loop fitting one data set after another)
        announced = pl.col("_epoch").is_not_null()
        return flagged.select(
            (announced & pl.col("_n").is_not_null() & (pl.col("_n") != pl.col("_train"))).fill_null(False)
        ).to_series()

    @staticmethod
    def _join_split_bars(frame: pl.DataFrame) -> pl.DataFrame:
        """Append to a line ending in an open bar the next line of its task, when that starts with the bar's tail."""
        nxt = pl.col("text").shift(-1).over(TAG)
        prev = pl.col("text").shift(1).over(TAG)
        opens = pl.col("text").str.contains(_OPEN_END)
        continues = pl.col("text").str.contains(_TAIL_START)
        return frame.with_columns(
            text=pl.when(opens & nxt.str.contains(_TAIL_START).fill_null(False))
            .then(pl.concat_str(pl.col("text"), nxt))
            .otherwise(pl.col("text")),
            joined_into_previous=(continues & prev.str.contains(_OPEN_END)).fill_null(False),
        )

    def _with_epoch(self, frame: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
        """Add ``epoch_line`` (E on ``Epoch E/T`` lines) and ``epoch`` (the task's current epoch)."""
        known: dict[str | None, int] = context.state.setdefault(self.name, {})
        # per task, the epochs its last ``Epoch E/T`` line said (T) and that line's number, for the batches after it
        said: dict[str, tuple[int | None, int]] = context.state.setdefault(f"{self.name}-epoch-line", {})
        frame = frame.with_columns(epoch_line=pl.col("text").str.extract(_EPOCH, 1).cast(pl.Int64, strict=False))
        carried = pl.col(TAG).replace_strict(known, default=None, return_dtype=pl.Int64) if known else pl.lit(None)
        frame = frame.with_columns(
            epoch=pl.col("epoch_line").forward_fill().over(TAG).fill_null(carried).fill_null(1).cast(pl.Int64),
            # the epochs fit was given, from the task's last ``Epoch E/T`` line of this batch
            epochs=pl.col("text")
            .str.extract(_EPOCH, 2)
            .cast(pl.Int64, strict=False)
            .forward_fill()
            .over(TAG)
            .fill_null(_carried(TAG, said, 0)),
            # the line of that ``Epoch E/T``: where the run's end is said (the bar's line is its record's)
            epoch_at=pl.when(pl.col("epoch_line").is_not_null())
            .then(pl.col("source_offset"))
            .forward_fill()
            .over(TAG)
            .fill_null(_carried(TAG, said, 1)),
        )
        counted = frame.filter(context.counts(pl.col("source_offset")) & pl.col("epoch_line").is_not_null())
        for tag, epoch, epochs, line in (
            counted.group_by(TAG)
            .agg(pl.col("epoch_line").last(), pl.col("epochs").last(), pl.col("source_offset").last())
            .iter_rows()
        ):
            known[tag] = epoch
            said["" if tag is None else tag] = (epochs, line)
        return frame


def _carried(tag: str, said: dict[str, tuple[int | None, int]], part: int) -> pl.Expr:
    """Part ``part`` (0: the epochs T, 1: the line) of what each task's last ``Epoch E/T`` line of an earlier batch
    said (``said``, keyed by the task's tag, ``""`` for none), for the lines of this batch before its own."""
    if not said:
        return pl.lit(None, dtype=pl.Int64)
    values = {key: value[part] for key, value in said.items()}
    return pl.col(tag).fill_null("").replace_strict(values, default=None, return_dtype=pl.Int64)
