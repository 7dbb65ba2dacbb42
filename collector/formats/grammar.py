"""The grammar of progress statements: a step line of any tool read by what it says, not by whose it is.

Every trainer prints the same few facts in its own words: a *position* (a step, an iteration,
an update, a batch counter), *measures* (a number with a unit: a rate, a time per step, examples
per second, seconds since the last report or since the start) and *metrics* (loss, ...). After
its envelope (:mod:`~tierscope.collector.formats.envelopes`), a message is read as such
statements, in any order and with any of the field's separators (``:``, ``=``, spaces, tabs,
``|``, ``,``, ``-``); the words and units are :data:`~tierscope.collector.formats.vocabulary.POSITIONS`
and :data:`~tierscope.collector.formats.vocabulary.MEASURES`.

A message is a step record when it states

- a position and a measure (``iteration 10/ 1000 | elapsed time per iteration (ms): 1147.6``,
  ``iter: 1259 ... time: 0.3322``, ``5974/19120 [31:21<59:25,  3.69it/s]``), or
- a step-less rate the vocabulary names job-wide (``global_step/sec: 12.4``): identified by its line.

Near-misses are refused: a position alone (``Saving checkpoint at step 6000``), a number with a
word that is no position (``Batch size: 64``, ``max_steps: 1000``), a date (``2021/03/04``,
``11/01 11:27:04``), a measure of zero (a download bar's ``0us/step``) and the progress bar of
something other than training (``Downloading: 100%|...| 3/3 [00:01<00:00, 2.1it/s]``, ``Map``,
``Evaluating``): see :data:`~tierscope.collector.formats.vocabulary.NOT_TRAINING`.

Meaning: the tools read here (PyTorch, Hugging Face, DeepSpeed, Megatron, Lightning, JAX, Keras
custom loops, Horovod) run synchronous replicas: the task's step is the job's global step and its
step time is the job's (:data:`~tierscope.collector.formats.vocabulary.SHARED`). A rate of
examples (images, samples, sequences, tokens) is kept as logged (``examples_per_s``); it becomes
steps only through the batch size, which the analysis holds, not the line.

Cost: one pass of :data:`~tierscope.collector.formats.vocabulary.MEASURE_GATE` over the lines no
family read; the statements are extracted from the lines it passes only (polars expressions,
no Python per line).
"""

from __future__ import annotations

import re
from typing import ClassVar

import polars as pl

from tierscope.collector.formats.bars import (
    BAR_COUNTS_DRAWN,
    TQDM_DESC,
    bar_laps,
    bar_visits,
    evaluation_bars,
    lossless_bars,
    nested_bars,
)
from tierscope.collector.formats.base import (
    LOOKAHEAD_LINES,
    STAMP,
    TAG,
    ParseContext,
    Parsed,
    empty_parsed,
    numbered,
    reject_frame,
)
from tierscope.collector.formats.clocks import bare_intervals, cumulative_times, stated_clock_intervals
from tierscope.collector.formats.counters import (
    block_positions,
    blocks,
    epoch_records,
    optimizer_steps,
    paired_positions,
    rates_under_positions,
    restarted_batches,
    timer_totals_that_stand,
    totals_that_count_on,
    whole_steps,
)
from tierscope.collector.formats.logdicts import LOGGING_DICT, dict_statements, epochs_stated, place_dict_losses
from tierscope.collector.formats.statements import BAR_DRAWN, BAR_POSITIONS, measure_raw, statements, with_statements
from tierscope.collector.formats.status import FAILURE_LINE, NOT_A_FAILURE
from tierscope.collector.formats.vocabulary import (
    BARE_TIMES,
    BOOSTING_ROUNDS,
    COUNTED_EXAMPLES,
    ENDED_BY_SIGNAL,
    HELD_OUT,
    LOSS_WORDS,
    MEASURE_GATE,
    MEASURES,
    METRIC_KEYS,
    NOT_TRAINING,
    NOT_WHOLE,
    POSITIONS,
    TIME_OF_DAY,
    UNNAMED_TIMES,
    WHOLE_MAX,
    number,
    stepless_position,
    unescaped_returns,
)

_TRACEBACK = "Traceback (most recent call last):"


#: What a bar's line holds after its last drawing's closing bracket, where something was written right after it
#: (stderr while the bar's line was open): group 1.
_AFTER_BAR = r"^.*\d+(?:/\d+|it)\s*\[[^\]]*\]([^\s\]].*)$"


#: What each kind of measure means, for ``tierscope formats`` and ``formats --try``.
MEASURE_MEANINGS: dict[str, str] = {
    "global": "global steps/s, job-wide",
    "rate": "steps/s of the task, also the job's (synchronous replicas)",
    "time": "a step time: steps/s = 1 / its seconds, the job's (synchronous replicas)",
    "examples_per_s": "examples/s as logged (steps/s only over a batch size the log states)",
    "time_per_examples": "seconds per so many examples: examples/s = examples / its seconds (steps/s over the batch)",
    "interval_s": "seconds since the previous report",
    "elapsed_s": "seconds since the start",
    "loss": "the loss (a metric, no measure)",
}


#: What a time that says no unit of work (:data:`BARE_TIMES`) means, in ``formats --try``'s words.
BARE_MEANING = (
    "a time that says no unit of work: the time of its statement's range or span of steps, else of one step, "
    "or the time since the previous report where the file's clock shows it is"
)


#: Why a logging dict with its step is a record only under a logger's time, in ``formats --try``'s words.
CLOCKED_DICT = "a logging dict stating its step: a record where a logger's time before it is its clock"


#: Why a position with its loss and no measure may be a record, in ``formats --try``'s words.
LOGGER_TIMED = (
    "a position and its loss, no measure: a record where a logger's time before it is its clock and the file "
    "times no step otherwise"
)


#: Why a position with examples/s and nothing else may be no record, in ``formats --try``'s words.
EXAMPLES_ALONE = (
    "examples/s alone time no step: beside step records that are timed it is another hook's figure, not a step record"
)


#: What ``formats --try`` says of a time of day a message states (see :func:`stated_clock_intervals`).
STATED_CLOCK = (
    "a time of day with no date: the line's clock where no logger's time is (the seconds since the task's "
    "previous step's reading are the report's interval)"
)


#: What ``formats --try`` adds to a time named only ``time``: the file may show it is the run's clock.
UNNAMED_CLOCK = " (or the run's clock, where the file's readings grow from step 0 with the steps)"


def explain_line(message: str) -> str:
    """The grammar's reading of one message (after its envelope), in words: its position, its measures with
    their spelling, value and meaning, and whether that makes a record or why not."""
    found, verdict = explain_parts(message)
    return "; ".join(found + ([verdict] if verdict else [])) or "the grammar finds no position and no measure"


def explain_parts(message: str) -> tuple[list[str], str | None]:
    """:func:`explain_line`'s reading as ``(what it found, its verdict)``: the position and measures in words
    (empty: none found), and why it is no record or what kind of record it is (None: a record as it stands)."""
    s = statements(message).row(0, named=True)
    position, step, counter_date, span = s["position"], s["step"], s["counter_date"], s["span"]
    epoch, bare = s["epoch_only"], s["bare_s"]
    said = []
    if position is not None and not counter_date:
        said.append(f"position '{position}' = {step}")
    elif counter_date:
        said.append("a date, not a counter")
    measures, kinds = [], set()
    for m in MEASURES:
        raw = pl.select(measure_raw(pl.lit(message), m)).item()
        if raw is not None and m.kind != "loss":
            meaning = BARE_MEANING if m.spelling in BARE_TIMES else MEASURE_MEANINGS[m.kind]
            if m.spelling in UNNAMED_TIMES:
                meaning += UNNAMED_CLOCK
            measures.append(f"measure '{m.spelling}' = {raw}: {meaning}")
            kinds.add(m.kind)
    said += measures
    stated_clock = pl.select(pl.lit(message).str.extract_groups(TIME_OF_DAY)).item()
    clock = stated_clock["h"]
    if clock is not None:
        said.append(f"{STATED_CLOCK}: {clock}:{stated_clock['m']}:{stated_clock['s']}")
    if span is not None:
        said.append(f"its time covers {span} steps")
    bar_clock = s["bar_elapsed_s"]
    bar_timed = position in BAR_POSITIONS and not measures and bar_clock is not None and bar_clock > 0
    if bar_timed:
        said.append(f"the bar's elapsed clock = {bar_clock:g} s: the time of its steps since the bar began")
    if not said:
        return [], None
    verdict = None
    if position is None and epoch is not None and bare is not None:
        verdict = f"epoch {epoch} with its duration: an epoch's record where the file states no step records"
    elif not measures and position is not None and pl.select(dict_statements(pl.lit(message))["dict_loss"]).item():
        verdict = CLOCKED_DICT
    elif bar_timed or (position in BOOSTING_ROUNDS and clock is not None and re.search(_ROUND_GATE, message)):
        verdict = None  # timed by its bar's clock, or a boosting round by the time of day before it
    elif not measures and position is not None and s["loss_said"]:
        verdict = LOGGER_TIMED
    elif not measures:
        verdict = "no measure: not a record"
    elif kinds == {"examples_per_s"} and position is not None and not counter_date and clock is None:
        verdict = EXAMPLES_ALONE
    elif position is None or counter_date:
        verdict = "no position: a record only for a job-wide rate, or under a line naming its position alone"
    if s["evaluation"]:  # what decides first: an evaluation's statement is no training step whatever it states
        verdict = "an evaluation's statement: not a training step" + (f"; {verdict}" if verdict else "")
    return said, verdict


#: An epoch announced on a line of its own (nnU-Net v2's ``Epoch 3``, v1's ``epoch:  6``, with its total: a loop's
#: ``Epoch 2 of 20``, sovit-123/German-Traffic-Sign-Recognition-with-Deep-Learning ``outputs/Outputs.md``): group 1
#: its number.
#: Also said in words after the name of the logger that printed it (SpeechBrain's Brain.fit:
#: ``speechbrain.utils.epoch_loop - Going into epoch 2``, YueZhou-oh/GWDA_lib docs/source/train.rst, 2024-02-02).
_EPOCH_BANNER = (
    r"(?i)^\W*(?:[A-Za-z_][\w.]*\s+-\s+)?(?:(?:going\s+into|starting|beginning|start\s+of)\s+)?"
    r"epoch\s*[:=#]?\s*\[?(\d+)(?:\s*(?:/|of)\s*\d+)?\]?[.:]*\s*$"
)


#: A duration a line says is its epoch's without the epoch's number (``Epoch time: 148.59 s``, ``This epoch took
#: 137.136132 s``): the epoch is the last one announced before it (see :func:`_banner_epochs`).
_EPOCH_NAMED = r"(?i)\bepoch\b"


def _banner_epochs(lines: pl.DataFrame, context: ParseContext) -> pl.Expr:
    """For each of ``lines``: the epoch last announced on a line of its own (:data:`_EPOCH_BANNER`) before it or on
    it, in its task; carried over from earlier batches in ``context``. nnU-Net prints ``Epoch 0`` and, lines
    later, ``Epoch time: 148.59 s`` (MIC-DKFZ/nnUNet issue 2140, 2024-04-26); v1 ``epoch:  6`` ... ``This epoch
    took 137.136132 s`` (MIC-DKFZ/nnUNet issue 938, 2022-02-11)."""
    carried = context.state.get("grammar-banner-epoch")
    banner = pl.col("line").str.extract(_EPOCH_BANNER, 1)
    if not lines.select(banner.is_not_null().any()).item():
        return pl.lit(carried, dtype=pl.String)
    last = lines.select(banner.drop_nulls().last()).item()
    context.state["grammar-banner-epoch"] = last
    return banner.forward_fill().over(TAG).fill_null(pl.lit(carried, dtype=pl.String))


#: The gate of a line whose clock is its logger's time: it must name a loss to be a record.
_CLOCKED_GATE = rf"(?i:{LOSS_WORDS})|\bl_[a-z]\w*\s*[:=]"


#: A boosting round after the time of day XGBoost's tracker log prints (``[21:32:09] [0]``): the line's clock.
_ROUND_GATE = r"^\s*\[\d\d:\d\d:\d\d(?:\.\d+)?\]\s+\[\d+\]"


#: A loss of other work than training and all after it (``Avg Valid Loss: 0.3452 --- Valid Accuracy: ..``): what is
#: left must still name a loss for the line to state its training's.
_OTHER_LOSS_ON = rf"(?i)\b(?:val|valid\w*|eval\w*|test|{HELD_OUT}|packet)[ _](?:{LOSS_WORDS}).*$"


#: A loss word as a training's loss is said (the loss measure's words, also scoped: ``Train Loss``, ``train_loss``).
_TRAINING_LOSS = rf"(?i)(?:\b|_)(?:{LOSS_WORDS})\b"


def _announced_epoch_losses(read: pl.DataFrame, logged: pl.Expr) -> pl.Expr:
    """``_epoch_only`` of ``read``, with the epoch announced on a line of its own (``_banner_epoch``) given to a line
    ``logged`` selects (a training loss under a logger's time, no position) that names no epoch, where it is the
    only such line under that announcement in its task: an epoch's summary printed on the lines after its banner
    (``Epoch 14/20``, 11 s later ``Train Loss: 22.0072, Accuracy: 0.9128``, then ``Validation Loss: ..``:
    R3c0ger/CialloDroid read.md, 2024-11-25). Two or more loss lines under one banner are a loop's batches, whose
    steps the log does not number: none is the epoch's."""
    unnamed = logged & pl.col("_epoch_only").is_null() & pl.col("_banner_epoch").is_not_null()
    alone = unnamed.cast(pl.Int32).sum().over(pl.col(TAG).fill_null(""), "_banner_epoch") == 1
    return pl.when(unnamed & alone).then("_banner_epoch").otherwise("_epoch_only")


def _logged_epochs(read: pl.DataFrame, logged: pl.Expr, context: ParseContext) -> pl.Series:
    """Which pieces of ``read`` are an epoch's record timed by its logger's clock alone: ``logged`` (a training loss
    under a logger's time, no position) with its epoch (``_epoch_only``), the one such line of that epoch in its
    task (``Epoch 3 loss 0.5`` three times is a loop's batches of epoch 3), in a file that times its epochs no
    other way (nnU-Net's ``train_loss 0.7088`` under ``Epoch 0`` is no record where ``Epoch time: 148.59 s`` times
    that epoch; kept for the file in ``context``)."""
    timed = pl.any_horizontal(pl.col(c).is_not_null() for c in ("_bare_s", "_elapsed_s", "_examples_per_s"))
    if read.select((timed & pl.col("_epoch_only").is_not_null()).any()).item():
        context.state["grammar-epochs-timed"] = True
    if context.state.get("grammar-epochs-timed"):
        return pl.Series([False] * read.height, dtype=pl.Boolean)
    candidate = (logged & pl.col("_epoch_only").is_not_null()).fill_null(False)
    alone = candidate.cast(pl.Int32).sum().over(pl.col(TAG).fill_null(""), "_epoch_only") == 1
    return read.select((candidate & alone).fill_null(False)).to_series()


#: Words of a statement about the run rather than a step of it (its best figure, its stopping early).
_SUMMARY_WORDS = rf"(?i)\b(?:best|early|stopp\w*|final|summary|serv\w*|probe|finder|{HELD_OUT})\b"


#: A loss of other work than training, anywhere on the line (``val loss 2.07``, ``packet loss 0.0%``).
_OTHER_LOSS = rf"(?i)\b(?:val|valid\w*|eval\w*|test|{HELD_OUT}|packet)[ _](?:{LOSS_WORDS})"


#: A number a step's report names: its position, a counter, a metric's value after its key.
#: (a key may end a scoped name: ``train_loss``, ``total_loss``, as the loss measure reads it)
#: (... or begin one: WeNet's ``loss_att``, ``loss_ctc``); a batch's size and the rank that logged name theirs too
#: (icefall's ``batch size: 8``, WeNet's ``rank 0``: k2-fsa/icefall issue 320, wenet-e2e/wenet issue 941)
_NAMED_NUMBER = (
    rf"(?i)(?:\b|_)(?:(?:{METRIC_KEYS})(?:_[a-z]\w*)?|epoch|steps?|iter\w*|batch|it|size|rank)"
    r"\W{0,3}[-+]?\d[\d.,]*(?:[eE][-+]?\d+)?"
)


#: A key that may name a measure of time or speed the vocabulary lacks (``dur``, ``data_time``, ``tok/s``, ``ms``):
#: its number stays unnamed, for the learned layout to read.
_TIMING_KEY = r"(?i)\b[a-z_./-]*?(?:tim|dur|sec|elaps|took|speed|throughput|per|ms|ps|/s)[a-z_./-]*"


#: A number after its own key and ``:`` or ``=`` (``D_real: -2.5625e+01``, ``'top_1_accuracy': 0.0528``): a metric's
#: value, whatever the metric (the keys of :data:`_TIMING_KEY` are masked before).
_KEYED_NUMBER = r"['\"]?\b[A-Za-z_][\w.-]*['\"]?\s*[:=]\s*['\"]?[-+]?\d[\d.,]*(?:[eE][-+]?\d+)?"


#: ... or after the key that opens a ``|``-separated column (``| mem 24.06 GiB |``, ``| num_label_tokens 45579``).
_COLUMN_NUMBER = r"\|\s*[A-Za-z_][\w.-]*\s+[-+]?\d[\d.,]*(?:[eE][-+]?\d+)?"


def _unnamed_numbers(text: pl.Expr) -> pl.Expr:
    """``text`` without the numbers a step's report names (``N/M`` counters, ``[N]``, :data:`_NAMED_NUMBER`, a count
    of examples by its word: :data:`COUNTED_EXAMPLES`, a metric's after its key: :data:`_KEYED_NUMBER`,
    :data:`_COLUMN_NUMBER`). The counters first: a key before one names the whole counter (``Epoch: 2/50, Iter:
    1/4``), not its first number. A percentage is a share (an epoch's progress, ``[5/10: 0/1875 (0%)]``; an accuracy),
    never a time."""
    return (
        text.str.replace_all(r"\d+\s*/\s*\d+", " ")
        .str.replace_all(r"\d[\d.]*\s*%", " ")
        .str.replace_all(COUNTED_EXAMPLES, " ")
        .str.replace_all(r"\[\s*\d+\s*\]", " ")
        .str.replace_all(_NAMED_NUMBER, " ")
        .str.replace_all(_TIMING_KEY, "~")
        .str.replace_all(_KEYED_NUMBER, " ")
        .str.replace_all(_COLUMN_NUMBER, "|")
    )


def _timed_by_logger(read: pl.DataFrame, stated: pl.Expr, record: pl.Expr, context: ParseContext) -> pl.Series:
    """Which pieces of ``read`` are records timed by their logger's clock alone: a training position with its loss
    under a logger's time (``2024-01-01 12:00:00 INFO step 100 loss 0.5``), where the file states no measured
    records. A file that times its steps (DLLogger's ``train_iter_time`` on a line beside its ``train_loss``) has
    its records from those; its loss lines are no records of their own. ``stated``: the pieces that state a
    position and a loss under a logger's time; ``record``: the pieces that are records already."""
    if not context.steps_measured and read.select(record.any()).item():
        context.steps_measured = True
    if context.steps_measured:
        return pl.Series([False] * read.height)
    return read.select(stated.fill_null(False)).to_series()


class ProgressGrammar:
    """The grammar as a line format: tried after the families, on the lines none of them read."""

    name: ClassVar[str] = "grammar"
    example: ClassVar[str] = " iteration 10/ 1000 | elapsed time per iteration (ms): 1147.6 | lm loss: 2.37E+00 |"
    meaning: ClassVar[str] = (
        "a position (step, iteration, update, N/M counter) with a measure (a rate, a step time, examples/s, "
        "seconds): step is the global step, a step time or rate the job's (synchronous replicas)"
    )

    def sniff(self, lines: pl.Series) -> int:
        # How many lines it reads; :func:`~tierscope.collector.formats.sniff_format` puts it first only when
        # no family reads any (it reads what the families leave).
        steps = self.parse(numbered(lines), ParseContext()).steps
        return steps.get_column("source_offset").n_unique() if steps.width else 0

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        """The last progress bar among the batch's last lines: what a trainer prints after a bar's drawing, before
        the next one, belongs to its step (a logging dict's loss, :mod:`~tierscope.collector.formats.logdicts`; the
        bar redrawn at that step; an epoch's closing line that takes the bar's count)."""
        tail = lines.tail(LOOKAHEAD_LINES)
        bars = tail.filter(pl.col("line").str.contains(BAR_DRAWN)).get_column("source_offset")
        return int(bars[-1]) if bars.len() else None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        hit = (
            pl.col("line").str.contains(MEASURE_GATE)
            | pl.col("line").str.contains(LOGGING_DICT)
            | pl.col("line").str.contains(_ROUND_GATE)
        )
        if STAMP in lines.columns:  # a position and its loss under a logger's time: the time is its clock
            hit = hit | (pl.col(STAMP).is_not_null() & pl.col("line").str.contains(_CLOCKED_GATE))
        if lines.height == 0 or not lines.select(hit.any()).item():
            return empty_parsed(lines)
        if TAG not in lines.columns:
            lines = lines.with_columns(pl.lit(None, dtype=pl.String).alias(TAG))
        # the line before each one, of the same task, and its time: a position said on a line of its own beside the
        # line that measures it (DeepSpeed's ``step=40`` then its timer's ``0/40, SamplesPerSec=83.5``)
        # (Chainer's ``91300 iter, 7 epoch / 20 epochs`` then ``0.71428 iters/sec. ...``)
        before = [
            pl.col("line").shift(1).over(TAG).alias("_prev_line"),
            (pl.col(STAMP).shift(1).over(TAG) if STAMP in lines.columns else pl.lit(None)).alias("_prev_stamp"),
        ]
        before.append(_banner_epochs(lines, context).alias("_banner_epoch"))
        gated, rest = lines.filter(hit), lines.filter(~hit)
        # tqdm and Keras rewrite a line with carriage returns: each update is a statement of its own. The shell's
        # "Killed" (or another signal's word, Slurm's cancel) glued to the bar the OS stopped makes that drawing the
        # failure (the status lines read it), not a record; the drawings before it on the line stay records (a Slurm
        # job's 11 redraws of one line, the cancel glued to the last, owencqueen/PolymerGNN, 2022-04-14).
        pieces = (
            lines.with_columns(*before)
            .filter(hit)
            .with_columns(_piece=unescaped_returns(pl.col("line")).str.split("\r"))
            .explode("_piece")
            .with_columns(_killed=pl.col("_piece").str.contains(ENDED_BY_SIGNAL))
            .filter(pl.col("_piece").str.strip_chars() != "")
            .with_row_index("_order")
        )
        read = with_statements(pieces, "_piece", prefix="_").with_columns(
            **{f"_{k}": v for k, v in dict_statements(pl.col("_piece")).items()},
            _not_training=pl.col("_piece").str.extract(TQDM_DESC, 1).str.contains(NOT_TRAINING).fill_null(False),
        )
        read = read.with_columns(_not_training=pl.col("_not_training") | evaluation_bars(read, lines, context))
        read = read.with_columns(_not_training=pl.col("_not_training") | nested_bars(read, context))
        read = read.with_columns(_not_training=pl.col("_not_training") | lossless_bars(read, context))
        read = rates_under_positions(block_positions(read, blocks(lines)), _SUMMARY_WORDS)
        every_piece = read
        has_position = pl.col("_step").is_not_null() & ~pl.col("_counter_date")
        # a bar that prints no rate measures its steps by its elapsed clock (more than none: a bar at its start, or a
        # quick bar of data work ``118287/118287 00:00``, times nothing)
        bar_timed = pl.col("_position").is_in(list(BAR_POSITIONS)) & (pl.col("_bar_elapsed_s") > 0)
        stated = pl.any_horizontal(
            pl.col(c).is_not_null() for c in ("_per_s", "_examples_per_s", "_interval_s", "_elapsed_s")
        )
        # ... its rate: the steps its counter has made over that clock, as tqdm's own mean rate is (the counter and
        # the clock both start with the bar)
        read = read.with_columns(
            _per_s=pl.when(bar_timed & ~stated & pl.col("_global_per_s").is_null())
            .then(number("_step") / pl.col("_bar_elapsed_s"))
            .otherwise("_per_s")
        )
        measured = stated | bar_timed.fill_null(False)
        training = ~pl.col("_not_training") & ~pl.col("_killed") & ~pl.col("_evaluation") & ~pl.col("_other_work")
        # A logging dict that states its own step (Hugging Face's TFTrainer: ``{'loss': 0.63, ..., 'step': 10}``)
        # under a logger's time is a record: that time is its clock, as it is for a line whose only measure is
        # examples/s. Without a time it states none (see :data:`CLOCKED_DICT`).
        logged_at = pl.col(STAMP).is_not_null() if STAMP in pieces.columns else pl.lit(False)
        clocked = has_position & pl.col("_dict_loss").is_not_null() & logged_at
        record = training & (
            (has_position & (measured | pl.col("_global_per_s").is_not_null()))
            | (pl.col("_step").is_null() & pl.col("_global_per_s").is_not_null())
            | clocked
        )
        # timed by the clock alone, a line must be plainly a training step's: no evaluation, test, saving or
        # summary named anywhere on it (``step 250: train loss 2.04, val loss 2.07``, ``best loss 0.2 at step 300``)
        subject = pl.col("_piece").str.extract(r"^([^\d]*)", 1)  # the words before its first number
        worded = ~subject.str.contains(NOT_TRAINING) & ~subject.str.contains(_SUMMARY_WORDS)
        plain = (
            worded
            & ~pl.col("_piece").str.contains(_OTHER_LOSS)
            # a number no word of a step's report names is a measure the learned layout may read
            # (a digit inside a key's name, ``top_1_accuracy``, is no number)
            & ~_unnamed_numbers(pl.col("_piece")).str.contains(r"\b\d")
        )
        logger_timed = training & has_position & pl.col("_loss_said") & logged_at & plain
        read = read.with_columns(_logger_timed=_timed_by_logger(read, logger_timed, record, context))
        record = record | pl.col("_logger_timed")
        # a boosting round under the time of day XGBoost's tracker log prints before it (``[21:32:09] [0]``, with its
        # sets' figures or alone): a round is a training step of its own, that time its clock
        round_timed = training & pl.col("_position").is_in(list(BOOSTING_ROUNDS)) & ~logged_at
        record = record | (round_timed & pl.col("_piece").str.contains(_ROUND_GATE)).fill_null(False)
        # a duration named its epoch's without the epoch's number: the epoch announced last (see :func:`_banner_epochs`)
        read = read.with_columns(
            _epoch_only=pl.when(
                pl.col("_epoch_only").is_null()
                & pl.col("_step").is_null()
                & pl.col("_bare_s").is_not_null()
                & pl.col("_piece").str.contains(_EPOCH_NAMED)
            )
            .then("_banner_epoch")
            .otherwise("_epoch_only")
        )
        # an epoch's training loss under a logger's time, in an epoch-level log: the logger's time is the epoch's
        # clock, as it is a step's (see :data:`_TRAINING_LOSS_FIRST`), its epoch stated on the line or announced
        # on a line of its own before it (see :func:`_announced_epoch_losses`)
        epoch_logged = (
            training
            & logged_at
            & pl.col("_loss_said")
            & pl.col("_step").is_null()
            & worded
            & pl.col("_piece").str.replace(_OTHER_LOSS_ON, "").str.contains(_TRAINING_LOSS)
        )
        read = read.with_columns(_epoch_only=_announced_epoch_losses(read, epoch_logged))
        read = read.with_columns(_epoch_logged=_logged_epochs(read, training & epoch_logged, context))
        # an epoch with its duration, where the file states no finer position (see :func:`epoch_records`)
        # (or with the seconds since the start at its end: Chainer's ``elapsed_time``; its duration the rise since the
        # previous epoch's; or with its examples/s: CNTK's ProgressPrinter ``Finished Epoch[17 of 20]: [Training]
        # loss = 25.550015 * 40, metric = 0.48% * 40 3.008s ( 13.3 samples/s);``, microsoft/CNTK issue 2354,
        # 2017-09-23, its seconds glued after a count and read by no key)
        epoch_timed = pl.any_horizontal(
            pl.col(c).is_not_null() for c in ("_bare_s", "_elapsed_s", "_examples_per_s")
        ) | pl.col("_epoch_logged")
        epoch_record = training & ~record & pl.col("_epoch_only").is_not_null() & epoch_timed
        read = epoch_records(read, record, epoch_record, context)
        record = record | pl.col("_epoch_record")
        # a line stating a position whose only measures are broken (a rate of 0, NaN, ``2,5``) looks like a record
        broken = training & has_position & ~record & pl.col("_broken").is_not_null()
        dicts = read.filter(~record & ~broken & pl.col("_dict_loss").is_not_null())
        read = paired_positions(read.filter(record | broken).with_columns(_broken=pl.when(broken).then("_broken")))
        read = timer_totals_that_stand(totals_that_count_on(read))
        step = number("_step", pl.Int64)
        too_big = pl.col("_step").is_not_null() & (step.is_null() | (step > WHOLE_MAX["step"]))
        bad = too_big | pl.col("_broken").is_not_null()
        rejects = reject_frame(
            read.filter(bad).with_columns(pl.col("_piece").alias("line")),
            pl.when(too_big).then(pl.format(f"step '{{}}' {NOT_WHOLE}", "_step")).otherwise("_broken"),
            self.name,
        )
        good = read.filter(~bad).with_columns(step.alias("step"), pl.col("_loss").alias("loss"))
        good = bar_laps(restarted_batches(whole_steps(good, context), context), context)
        good = optimizer_steps(good)
        good = bare_intervals(good, context)
        good = stated_clock_intervals(cumulative_times(good))
        good, placed = place_dict_losses(good, dicts, epochs_stated(lines))
        # tqdm's elapsed time is a clock where the line has no other. A bar redrawn at its step (after a logging
        # dict, an evaluation) is the same record: every drawing keeps the time of the first, so it stays a copy.
        stamped = pl.col(STAMP).is_not_null() if STAMP in good.columns else pl.lit(False)
        redrawn = pl.col("_position").is_in([p.spelling for p in POSITIONS if p.spelling in BAR_POSITIONS])
        good = bar_visits(good, redrawn)
        drawing = (TAG, "step", "_visit")
        first_drawing = pl.col("_bar_elapsed_s").sort_by("_order").first().over(drawing)
        # ... and its figures: the rate of its first drawing, the loss of its last (a bar redrawn at its step when
        # the step's loss is logged, ``..., 8.77s/it]`` then ``..., 8.77s/it, loss=10.5]``, is one record)
        good = good.with_columns(
            loss=pl.when(redrawn)
            .then(pl.col("loss").sort_by("_order").drop_nulls().last().over(drawing))
            .otherwise("loss"),
            _per_s=pl.when(redrawn).then(pl.col("_per_s").sort_by("_order").first().over(drawing)).otherwise("_per_s"),
        )
        # ... and it times the bar's own counter only (not a "global step N" glued after the bar)
        bar_counter = pl.col("_position").is_in([p.spelling for p in POSITIONS if p.spelling in BAR_POSITIONS])
        bar_clock = pl.when(~stamped & bar_counter).then(first_drawing)
        # a rate of tokens over the tokens the line says one step holds is the steps' rate (fairseq's wps / wpb)
        over_step = (
            pl.col("_global_per_s").is_null()
            & pl.col("_per_s").is_null()
            & (pl.col("_examples_unit") == "tokens")
            & (pl.col("_step_tokens") > 0)
        ).fill_null(False)
        per_s = pl.coalesce(
            "_global_per_s", "_per_s", pl.when(over_step).then(pl.col("_examples_per_s") / "_step_tokens")
        )
        # an epoch's record: its duration, since the previous epoch's; no step and no step rate (the log does not
        # say how many steps an epoch has)
        good = good.with_columns(
            _interval_s=pl.when("_epoch_record").then("_bare_s").otherwise("_interval_s"),
            _per_s=pl.when("_epoch_record").then(None).otherwise("_per_s"),
        )
        steps = good.select(
            "source_offset",
            "step",
            "loss",
            pl.coalesce("_elapsed_s", bar_clock).alias("elapsed_s"),
            pl.col("_interval_s").alias("interval_s"),
            per_s.alias("global_steps_per_s"),
            per_s.alias("local_steps_per_s"),
            pl.col("_examples_per_s").alias("examples_per_s"),
            pl.col("_examples_unit").alias("examples_unit"),
            pl.col("_per_device").alias("per_device"),
            over_step.alias("rate_derived"),
            pl.lit(self.name).alias("format"),
        ).with_columns(stepless_position())
        # Lines the gate passed but that state no record are no one's: handed on (status lines, tracebacks).
        taken = pl.concat([read.get_column("source_offset"), pl.Series(placed, dtype=pl.Int64)]).unique().implode()
        # A traceback glued to the end of a bar (stderr written while the bar's line was open) opens on this line;
        # a failure glued there (NCCL's watchdog: ``...2.79it/s][rank1]:[E1101 ...] [Rank 1] Watchdog caught
        # collective operation timeout: ...``) is the status lines' to read, the bar staying a record.
        on_record = gated.filter(pl.col("source_offset").is_in(taken))
        tail = pl.col("line").str.extract(_AFTER_BAR, 1)
        glued = pl.concat(
            [
                on_record.filter(pl.col("line").str.contains(_TRACEBACK, literal=True)).with_columns(
                    pl.lit(_TRACEBACK).alias("line")
                ),
                on_record.filter(
                    ~pl.col("line").str.contains(_TRACEBACK, literal=True)
                    & tail.str.contains(FAILURE_LINE).fill_null(False)
                    & ~tail.str.contains(NOT_A_FAILURE).fill_null(False)
                ).with_columns(tail.alias("line")),
            ]
        )
        # ... and so does what a bar's line holds beside its drawings, after a carriage return: Hugging Face's closing
        # ``{'train_runtime': ...}`` printed after tqdm clears the bar (``...| 1000/1000 [...]\r   \r{'train_...``)
        beside = every_piece.filter(
            pl.col("source_offset").is_in(taken)
            & ~pl.col("_order").is_in(read.get_column("_order").implode())
            & pl.col("_dict_loss").is_null()
            & ~pl.col("_piece").str.contains(BAR_COUNTS_DRAWN)
            & pl.col("line").str.contains("\r", literal=True)
        ).with_columns(pl.col("_piece").alias("line"))
        rest = pl.concat(
            [rest, gated.filter(~pl.col("source_offset").is_in(taken)), glued, beside.select(gated.columns)]
        ).sort("source_offset")
        return Parsed(steps=steps, events=pl.DataFrame(), rejects=rejects, rest=rest)
