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

import functools
from typing import ClassVar

import polars as pl

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
from tierscope.collector.formats.logdicts import LOGGING_DICT, dict_statements, epochs_stated, place_dict_losses
from tierscope.collector.formats.status import FAILURE_LINE, NOT_A_FAILURE
from tierscope.collector.formats.vocabulary import (
    BAR,
    BAR_EPOCH,
    BARE_TIMES,
    BLOCK_HEADER,
    COUNTED_EXAMPLES,
    DAY_S,
    DOCKER_STEP,
    ENDED_BY_SIGNAL,
    EPOCH,
    EPOCH_EVALUATION,
    ETA_DATE,
    EVALUATION_WORDS,
    EXAMPLES_KEY_PER_DEVICE,
    HELD_OUT,
    INNER_TOTAL,
    ITERATION_BESIDE_STEP,
    ITERATION_STEP,
    ITERATION_TIME,
    LINE_BATCH,
    MEASURE_GATE,
    MEASURES,
    METRIC_KEYS,
    NOT_TRAINING,
    NOT_WHOLE,
    OTHER_WORK,
    POSITIONS,
    SPAN,
    TIME_LEFT,
    TIME_OF_DAY,
    TIMER_COUNTER,
    TOKENS_PER_STEP,
    UNNAMED_TIMES,
    WHOLE_MAX,
    Measure,
    clock_seconds,
    measure_reason,
    number,
    rate_from_time,
    spelled_number,
    stated_rate,
    stepless_position,
    unescaped_returns,
)

#: A trainer's banner before an evaluation or a prediction (Hugging Face's ``***** Running Evaluation *****``, its
#: examples' ``*** Evaluate ***``), and before training (``***** Running training *****``).
#: Also the word alone on its line, as a hand-written loop prints it before each phase's bar (``Training``, the
#: bar, ``Validating``, the bar: sovit-123/German-Traffic-Sign-Recognition-with-Deep-Learning ``outputs/Outputs.md``).
_EVAL_BANNER = (
    r"(?i)\*{3,}\s*(?:running\s+)?(?:evaluat|predict|test)\w*\s*\*{3,}"
    r"|^\W*(?:validat|evaluat|test)(?:e|ing|ion)?\W*$"
)
#: Where a banner sorts among its line's pieces: after them.
_AFTER_PIECES = 2**62
_TRAIN_BANNER = r"(?i)\*{3,}\s*(?:running\s+)?train\w*\s*\*{3,}|^\W*train(?:ing)?\W*$"
#: A progress bar's description: the text before ``NN%|`` or a bar without its glyphs (:data:`BAR`).
_TQDM_DESC = rf"^(.*?)\s*(?:\d{{1,3}}%\||{BAR}\d+/\d+)"
_TRACEBACK = "Traceback (most recent call last):"
#: What a bar's line holds after its last drawing's closing bracket, where something was written right after it
#: (stderr while the bar's line was open): group 1.
_AFTER_BAR = r"^.*\d+(?:/\d+|it)\s*\[[^\]]*\]([^\s\]].*)$"
#: The positions a tqdm bar states itself: its elapsed time is theirs.
_BAR_POSITIONS = ("N it [ (a tqdm bar without a total)", "NN%|...| N/M (a tqdm bar)", "N/M")
#: tqdm's elapsed time after its counter: ``840/2000 [04:12<05:48, ...`` or ``17671it [1:04:13, ...``.
_TQDM_ELAPSED = r"(?:\d+/\d+|\d+it)\s*\[(?:(?P<h>\d+):)?(?P<m>\d{1,2}):(?P<s>\d\d)(?:<|,|\])"
#: ... or after its rate, as Ultralytics' own bar prints it (8.3 on): ``8/9 9.2it/s 0.8s<0.1s``, ``110/110 10.2it/s
#: 10.8s``, ``1:02<0:10`` (seconds with a tenth under a minute, else m:ss or h:mm:ss).
_RATE_ELAPSED = (
    r"\d+/\d+\s+\d+(?:\.\d+)?\s*(?:it/s|s/it)\s+(?:(?:(?P<h>\d+):)?(?P<m>\d{1,2}):)?(?P<s>\d+(?:\.\d+)?)(?:s|<|\s|$)"
)
#: ... or after the bar's counter alone, where the bar prints no rate (YOLOv5's ``{l_bar}{bar:10}| {n_fmt}/{total_fmt}
#: {elapsed}`` from late 2022: ``640: 100%|██████████| 1849/1849 13:15``, ultralytics/yolov5 PR 10314): the clock ends
#: the line and follows a drawn bar, never a date's ``11/01 11:27:04``.
_COUNTER_ELAPSED = rf"{BAR}\d+/\d+\s+(?:(?P<h>\d+):)?(?P<m>\d{{1,2}}):(?P<s>\d\d)\s*$"
#: A message that opens with an evaluation's word states an evaluation, not a training step.
_EVAL_WORD = rf"(?:{EVALUATION_WORDS})(?:[\W_]|$)"
#: (after any bracketed tags an envelope no rule names left in front: ``[1761840227/train/4 (pid 79246)] Iter 1: Val``)
_TAGS = r"^(?:\W*\[[^\]]*\])*"
_EVALUATION = rf"(?i){_TAGS}\W*{_EVAL_WORD}"
#: ... or whose first statement after its position is one (``Iter 1: Val loss 2.61``, ``step 300 | eval ...``).
_EVALUATION_AT = (
    rf"(?i){_TAGS}\W*(?:iter(?:ation)?s?|steps?|epoch|batch|update)\W*\d+(?:\s*/\s*\d+)?[\s:,|\]]+{_EVAL_WORD}"
)
#: What follows a counter ``N/M`` when it is a date with its time (``11/01 11:27:04``).
_DATED_COUNTER = r"(?:^|[\s|\[(:])\d+\s*/\s*\d+\s+\d{1,2}:\d\d"
#: The positions counted within an epoch where the line states one: a step, iteration or batch (not a global
#: step, an update count or a DLLogger key), a tqdm bar's counter, a bare counter.
_INNER_NAMED = "step N / iteration N / iter #N / batch N"
_BAR_NAMED = "NN%|...| N/M (a tqdm bar)"
_BAR_COUNTER = rf"{BAR}\d+/(\d+)"
#: A tqdm bar without a total: its count before ``it [``.
_BAR_NO_TOTAL = r"^\s*(\d+)it\s*\["
#: The bars an epoch announced on a line of its own may count (see :func:`_whole_steps`).
_BANNER_BARS = ("N it [ (a tqdm bar without a total)", _BAR_NAMED)


#: An epoch stated with its total (``Epoch: [0/100]``, ``Epoch 31/300``): where another counter follows it, that
#: counter is the position within the epoch (DINO's ``Epoch: [0/100]  [2240/2502]``, facebookresearch/dino issue 69,
#: 2021-06-08; MONAI's SwinUNETR ``Epoch 31/300 200/1000 loss: 0.2830 time 1.49s``, Project-MONAI/
#: research-contributions issue 306, 2023-09-19).
_EPOCH_OF_TOTAL = r"(?i:\bepoch)\s*[:=#]?\s*[\[(]?\s*\d+\s*/\s*\d+\s*[\])]?"


def counter_groups(text: pl.Expr) -> pl.Expr:
    """The groups ``x`` and ``m`` of the message's bare ``N/M`` counter (a struct): the first one after an epoch's
    own ``e/E`` where one follows it, else the first."""
    regex = next(p.regex for p in POSITIONS if p.kind == "counter")
    after_epoch = text.str.replace(_EPOCH_OF_TOTAL, "epoch ")
    chosen = pl.when(text.str.contains(_EPOCH_OF_TOTAL) & after_epoch.str.contains(regex)).then(after_epoch)
    return chosen.otherwise(text).str.extract_groups(regex)


def _first(patterns: list[tuple[str, str]], text: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """``(value, spelling)`` of the first of ``patterns`` (``(spelling, regex with group x)``) found in ``text``."""
    values = [text.str.extract(regex, 1) for _, regex in patterns]
    which = [pl.when(v.is_not_null()).then(pl.lit(s)) for v, (s, _) in zip(values, patterns, strict=True)]
    return pl.coalesce(values), pl.coalesce(which)


def _measure_raw(text: pl.Expr, m: Measure) -> pl.Expr:
    """The number ``m`` states in ``text`` as written (String), null where none, or where a unit that follows its
    number follows another key's value (see :attr:`Measure.owned_number`)."""
    raw = text.str.extract(m.regex, 1)
    return raw if m.owned_number is None else pl.when(~text.str.contains(m.owned_number)).then(raw)


#: The statements :func:`with_statements` adds, in this order.
STATEMENTS = (
    "step", "position", "counter_date", "inner", "epoch_only", "per_s", "global_per_s", "examples_per_s",
    "interval_s", "elapsed_s", "loss", "loss_said", "span", "bare_s", "bar_elapsed_s", "per_device", "broken",
    "evaluation", "other_work", "measure", "examples_unit", "step_tokens",
)  # fmt: skip
#: The prefix of :func:`with_statements`' intermediate columns (dropped before it returns).
_T = "__statement_"


def _c(name: str) -> pl.Expr:
    return pl.col(_T + name)


def with_statements(frame: pl.DataFrame, text: str, prefix: str = "") -> pl.DataFrame:
    """``frame`` with the statements of its String column ``text`` (a message after its envelope) as columns
    ``prefix + name`` for each name of :data:`STATEMENTS`:

    ``step`` (String, the position's number; an ``Epoch [E][N/M]`` counter is ``(E - 1) * M + N``),
    ``position`` (the spelling read), ``counter_date`` (True where the only position is a counter followed by a
    time of day: a date), ``inner`` (the position is one an epoch may count), ``epoch_only`` (an epoch where no finer
    position is stated), ``per_s`` (steps/s: a stated rate or the inverse of a step time), ``global_per_s`` (a rate
    the vocabulary names job-wide), ``examples_per_s``, ``interval_s``, ``elapsed_s``, ``loss`` (finite, signed),
    ``loss_said`` (Boolean: a loss is named, NaN or infinite ones too), ``span`` (the steps a bare time covers),
    ``bare_s`` (a bare time, s), ``bar_elapsed_s`` (a progress bar's elapsed clock, s), ``per_device``, ``broken``
    (why a measure is no figure), ``evaluation``, ``other_work`` (Boolean), ``measure`` (the spelling of the
    measure read), ``examples_unit`` (``tokens`` where the examples/s read counts tokens, else null) and
    ``step_tokens`` (the tokens one step holds, where the line states it: :data:`TOKENS_PER_STEP`).

    Each part is matched once per line and kept as a column the later parts refer to: as one expression, each
    reference would repeat the part's whole tree (hundreds of thousands of nodes), and planning them cost far more
    than matching the lines.
    """
    for stage in _statement_stages(text, prefix):
        frame = frame.with_columns(**stage)
    return frame.drop(c for c in frame.columns if c.startswith(_T))


@functools.cache
def _statement_stages(text: str, prefix: str) -> tuple[dict[str, pl.Expr], ...]:
    """The column stages of :func:`with_statements` (built once: building them costs more than a short batch's
    matching)."""
    stages: list[dict[str, pl.Expr]] = []
    t = pl.col(text)
    named = [(p.spelling, p.regex) for p in POSITIONS if p.kind == "named"]
    ranges = [(p.spelling, p.regex) for p in POSITIONS if p.kind == "range"]
    # stage 1: what the text states, each pattern matched once
    stages.append(
        dict(
            **{f"{_T}n{j}": t.str.extract(regex, 1) for j, (_, regex) in enumerate(named)},
            **{f"{_T}r{j}": t.str.extract_groups(regex) for j, (_, regex) in enumerate(ranges)},
            **{f"{_T}m{i}": _measure_raw(t, m) for i, m in enumerate(MEASURES)},
            # what an examples/s measure's words count: its whole match (the number's own group says nothing of it)
            **{f"{_T}w{i}": t.str.extract(m.regex, 0) for i, m in enumerate(MEASURES) if m.kind == "examples_per_s"},
            **{
                _T + "epoch": t.str.extract_groups(next(p.regex for p in POSITIONS if p.kind == "epoch-counter")),
                _T + "counter": counter_groups(t),
                _T + "eta_date": t.str.contains(ETA_DATE),
                _T + "time_left": t.str.contains(TIME_LEFT),
                _T + "kimg": number(t.str.extract(next(p.regex for p in POSITIONS if p.kind == "kimg"), 1)),
                _T + "line_batch": number(t.str.extract(LINE_BATCH, 1), pl.Int64),
                prefix + "step_tokens": number(t.str.extract(TOKENS_PER_STEP, 1)),
                _T + "stated_span": number(t.str.extract(SPAN, 1), pl.Int64),
                _T + "dated_counter": t.str.contains(_DATED_COUNTER),
                _T + "epoch_word": t.str.extract(EPOCH, 1),
                _T + "clock": t.str.extract_groups(_TQDM_ELAPSED),
                _T + "after_rate": t.str.extract_groups(_RATE_ELAPSED),
                _T + "after_counter": t.str.extract_groups(_COUNTER_ELAPSED),
                prefix + "per_device": t.str.contains(
                    r"(?i)(?:\s+per\s+(?:GPU|device|replica|TPU|chip|core|rank)|/(?:device|chip|gpu|core))\b"
                )
                | t.str.extract(EXAMPLES_KEY_PER_DEVICE, 1).is_not_null(),
                # a statement of evaluation (``val loss 2.1 step 100 2.0 it/s``) reports no training step
                prefix + "evaluation": (
                    t.str.contains(_EVALUATION) | t.str.contains(_EVALUATION_AT) | t.str.contains(EPOCH_EVALUATION)
                ),
                # a statement of other work (a checkpoint saved, a download, a compilation, a Docker build's step) may
                # name a step and a duration: the duration is that work's, no step's
                prefix + "other_work": t.str.contains(OTHER_WORK) | t.str.contains(DOCKER_STEP),
            },
        )
    )
    # stage 2: the positions, and each measure's value
    epoch, counter = _c("epoch"), _c("counter")
    values: dict[str, pl.Expr] = {}
    for i, m in enumerate(MEASURES):
        raw = _c(f"m{i}")
        if m.clock:
            value = clock_seconds(raw)
            unread = pl.when(raw.is_not_null() & value.is_null()).then(pl.format("'{}' is not a duration", raw))
        else:
            value, unread = spelled_number(raw)
        values[f"{_T}v{i}"], values[f"{_T}u{i}"] = value, unread
        if m.kind == "examples_per_s":
            values[f"{_T}tok{i}"] = _c(f"w{i}").str.contains(_TOKENS).fill_null(False)
    range_ends = [
        pl.when(number(g.struct.field("a"), pl.Int64) <= number(g.struct.field("b"), pl.Int64)).then(
            pl.struct(a=g.struct.field("a"), b=g.struct.field("b"), spelling=pl.lit(name))
        )
        for (name, _), g in ((r, _c(f"r{j}")) for j, r in enumerate(ranges))
    ]
    kimg, line_batch = _c("kimg"), _c("line_batch")
    from_examples = pl.when((kimg >= 0) & (line_batch > 0)).then((kimg * 1000 / line_batch).round(0).cast(pl.Int64))
    stages.append(
        dict(
            **values,
            **{
                # a position's thousands in groups of three (``12,500``)
                _T + "named": pl.coalesce(_c(f"n{j}") for j in range(len(named))).str.replace_all(",", ""),
                _T + "spelling": pl.coalesce(
                    pl.when(_c(f"n{j}").is_not_null()).then(pl.lit(name)) for j, (name, _) in enumerate(named)
                ),
                _T + "in_epoch": (
                    pl.coalesce(
                        number(epoch.struct.field("e"), pl.Int64) - 1, number(epoch.struct.field("z"), pl.Int64)
                    )
                    * number(epoch.struct.field("m"), pl.Int64)
                    + number(epoch.struct.field("x"), pl.Int64)
                ).cast(pl.String),
                # a counter is no position where it is an ETA's date (``ETA 12/25 at 3.2 s per step``)
                _T + "counted": pl.when(
                    (number(counter.struct.field("x"), pl.Int64) <= number(counter.struct.field("m"), pl.Int64))
                    & ~_c("eta_date")
                ).then(counter.struct.field("x")),
                # a range ``A-B`` of steps (A <= B: a date is none): its last step is the position, its length the span
                _T + "range_end": pl.coalesce(range_ends),
                # a position in thousands of examples is a step over the batch the line states (``kimg 6.1 ...
                # minibatch 32``)
                _T + "from_examples": from_examples.cast(pl.String),
            },
        )
    )
    # stage 3: the position read, and each measure's figure and why it is none
    step, spelling, in_epoch, counted = _c("named"), _c("spelling"), _c("in_epoch"), _c("counted")
    range_end, from_examples = _c("range_end"), _c("from_examples")
    ranged = range_end.struct.field("b")
    range_span = number(ranged, pl.Int64) - number(range_end.struct.field("a"), pl.Int64) + 1
    stated_span = _c("stated_span")
    figures: dict[str, pl.Expr] = {}
    for i, m in enumerate(MEASURES):
        raw, value, unread = _c(f"m{i}"), _c(f"v{i}"), _c(f"u{i}")
        figures[f"{_T}why{i}"] = pl.concat_str(
            pl.lit(f"{m.spelling}: "), pl.coalesce(unread, measure_reason(m.kind, raw, value, m.factor))
        )
        if m.kind in ("time", "time_per_examples"):
            got = rate_from_time(value, m.factor)
        elif m.kind in ("rate", "global"):
            got = pl.when(value > 0).then(stated_rate(value, m.factor))  # a rate of 0 is no rate
        elif m.kind == "examples_per_s":
            got = pl.when(value > 0).then(stated_rate(value))
        elif m.kind == "loss":
            # a loss is signed (a GAN's, an ELBO's, a reinforcement learner's may be negative); a NaN or infinite one
            # is a loss said with no value: the line's record stands, its loss null
            got = pl.when(value.is_finite()).then(value)
        else:
            got = stated_rate(value, m.factor)
        figures[f"{_T}g{i}"] = got
    stages.append(
        dict(
            **figures,
            **{
                prefix + "step": pl.coalesce(step, ranged, in_epoch, from_examples, counted),
                prefix + "position": pl.coalesce(
                    spelling,
                    range_end.struct.field("spelling"),
                    pl.when(in_epoch.is_not_null()).then(pl.lit("Epoch [E][N/M] / [E/EM][N/M]")),
                    pl.when(from_examples.is_not_null()).then(pl.lit("kimg K (thousands of examples)")),
                    pl.when(counted.is_not_null()).then(pl.lit("N/M")),
                ),
                prefix + "counter_date": (
                    step.is_null()
                    & ranged.is_null()
                    & in_epoch.is_null()
                    & from_examples.is_null()
                    & counted.is_null()
                    & _c("dated_counter")
                ).fill_null(False),
                # a position a line's epoch may count (see :func:`_whole_steps`): a step, iteration or batch, a range,
                # a bar's, a counter
                prefix + "inner": (
                    spelling.is_in([_INNER_NAMED, _BAR_NAMED])
                    | (step.is_null() & in_epoch.is_null() & from_examples.is_null())
                ).fill_null(False),
                # the steps a time that says no unit of work covers: the range's, or those the line states (``(100
                # iters)``)
                _T + "span": pl.coalesce(
                    pl.when(step.is_null()).then(range_span), pl.when(stated_span > 0).then(stated_span)
                ),
                prefix + "bar_elapsed_s": pl.coalesce(
                    number(_c("clock").struct.field("h")).fill_null(0.0) * 3600
                    + number(_c("clock").struct.field("m")) * 60
                    + number(_c("clock").struct.field("s")),
                    number(_c("after_rate").struct.field("h")).fill_null(0.0) * 3600
                    + number(_c("after_rate").struct.field("m")).fill_null(0.0) * 60
                    + number(_c("after_rate").struct.field("s")),
                    number(_c("after_counter").struct.field("h")).fill_null(0.0) * 3600
                    + number(_c("after_counter").struct.field("m")) * 60
                    + number(_c("after_counter").struct.field("s")),
                ),
            },
        )
    )
    # stage 4: the figures by what they measure, with the spelling of the measure read
    targets: dict[str, list[int]] = {}
    for i, m in enumerate(MEASURES):
        targets.setdefault(_TARGETS.get(m.kind, m.kind), []).append(i)
    spelled = {
        t: [pl.when(_c(f"g{i}").is_not_null()).then(pl.lit(MEASURES[i].spelling)) for i in targets.get(t, [])]
        for t in _MEASURED_ORDER
    }
    losses = targets.get("loss", [])
    examples = targets.get("examples_per_s", [])
    plain = [
        pl.when(~_c(f"tok{i}")).then(_c(f"g{i}")) if MEASURES[i].kind == "examples_per_s" else _c(f"g{i}")
        for i in examples
    ]
    stages.append(
        dict(
            **{
                (_T + t if t == "per_s" else prefix + t): (
                    pl.coalesce(_c(f"g{i}") for i in targets[t]) if t in targets else pl.lit(None, dtype=pl.Float64)
                )
                for t in (*_MEASURED_ORDER, "loss")
                if t != "examples_per_s"
            },
            # examples/s in examples before examples/s in tokens (``tokens/s 40960 | samples/s 80``: the samples a batch
            # counts give steps/s, the tokens do not)
            **{
                _T + "plain_examples": pl.coalesce(plain) if plain else pl.lit(None, dtype=pl.Float64),
                prefix + "examples_per_s": (
                    pl.coalesce([*plain, *(_c(f"g{i}") for i in examples)])
                    if examples
                    else pl.lit(None, dtype=pl.Float64)
                ),
            },
            **{
                prefix + "loss_said": pl.any_horizontal(
                    [_c(f"m{i}").is_not_null() for i in losses] or [pl.lit(False)]
                ).fill_null(False),
                prefix + "broken": pl.coalesce(_c(f"why{i}") for i in range(len(MEASURES))),
                prefix + "measure": pl.coalesce([n for t in _MEASURED_ORDER for n in spelled[t]]),
                prefix + "epoch_only": pl.when(pl.col(prefix + "step").is_null()).then(_c("epoch_word")),
                # a time that says no unit of work (``time = 0.0159s``) is the time of what its statement covers: over a
                # range of 10 steps it is 10 steps' time. Where the line states its interval of its own (``sec/tick``),
                # it is the run's clock, no step time; where nothing says what it covers, see :func:`_bare_intervals`.
                _T + "bare": pl.coalesce(spelled["per_s"]).is_in(list(BARE_TIMES)).fill_null(False),
            },
        )
    )
    bare, span, per_s = _c("bare"), _c("span"), _c("per_s")
    # a bare time beside the time still to go is the time gone: the run's clock (:data:`TIME_LEFT`)
    clock = bare & span.is_null() & _c("time_left")
    stages.append(
        dict(
            **{
                prefix + "span": pl.when(bare).then(span),
                prefix + "examples_unit": pl.when(
                    _c("plain_examples").is_null() & pl.col(prefix + "examples_per_s").is_not_null()
                ).then(pl.lit("tokens")),
                prefix + "bare_s": pl.when(bare & span.is_null() & ~clock).then(1.0 / per_s),
                prefix + "elapsed_s": pl.coalesce(pl.col(prefix + "elapsed_s"), pl.when(clock).then(1.0 / per_s)),
                prefix + "per_s": pl.when(bare & pl.col(prefix + "interval_s").is_not_null())
                .then(None)
                .when(clock)
                .then(None)
                .when(bare & span.is_not_null())
                .then(per_s * span)
                .otherwise(per_s),
            }
        )
    )
    return tuple(stages)


#: The words of an examples/s measure that count tokens, not examples (``tokens/s``, ``tok/s``, ``tokens_per_sec``,
#: ``tps``): a language model's throughput, whose steps/s no batch in sequences gives.
_TOKENS = r"(?i)tok(?:en)?s?\b|tokens|\btps\b|\bwps\b|\bwords\b"
#: The statement each kind of measure gives where it is not named after its kind.
_TARGETS = {"time": "per_s", "time_per_examples": "examples_per_s", "rate": "per_s", "global": "global_per_s"}
#: The measures in the order a line's measure is named by (``measure``).
_MEASURED_ORDER = ("global_per_s", "per_s", "examples_per_s", "interval_s", "elapsed_s")


def statements(text: str | pl.Series, prefix: str = "") -> pl.DataFrame:
    """:func:`with_statements` of the messages ``text`` (one, or a String series): one row each, the
    :data:`STATEMENTS` columns only."""
    lines = pl.DataFrame({_T + "text": [text] if isinstance(text, str) else text}, schema={_T + "text": pl.String})
    return with_statements(lines, _T + "text", prefix).select(prefix + n for n in STATEMENTS)


#: Statements of the batch size and device count, anywhere in a log (a command line, a config print):
#: ``(fact, regex with the number as group 1)``. A global batch is the job's; a plain batch size is per device
#: (tf_cnn_benchmarks' ``--batch_size``, Horovod's benchmarks' ``Batch size:``, ``per_device_train_batch_size``).
BATCH_FACTS: tuple[tuple[str, str], ...] = (
    # Hugging Face Trainer's banner: ``Total train batch size (w. parallel, distributed & accumulation) = 128``
    # (huggingface/transformers src/transformers/trainer.py ``_inner_training_loop``, read 2026-12-06)
    ("global_batch", r"(?i)\b(?:global|total(?: train)?)[ _]batch[ _]size\b[^=:\d\n]{0,60}['\"]?\s*[:=]?\s*(\d+)"),
    ("device_batch", r"(?i)(?:^|[\s,{(-])-{0,2}(?:per_device_train_)?batch[ _-]size['\"]?\s*[:=]?\s*(\d+)"),
    # the same banner's ``Instantaneous batch size per device = 32``
    ("device_batch", r"(?i)\bbatch[ _]size per (?:device|GPU|replica)\s*[:=]?\s*(\d+)"),
    # StyleGAN's ``minibatch 32`` on its tick lines is the job's (its training loop splits it over the GPUs as
    # ``minibatch_gpu``; NVlabs/stylegan2 training/training_loop.py, read 2026-12-06)
    ("global_batch", r"(?i)(?:^|\s)minibatch\s+(\d+)(?:\s|$)"),
    ("devices", r"(?i)\bnumber of (?:GPUs|devices|workers|replicas|ranks)\s*[:=]?\s*(\d+)"),
    ("devices", r"(?i)\bon (\d+) GPU\(s\)|(?:^|\s)-np (\d+)\b|\bnum_gpus[=: ]\s*(\d+)"),
)
_BATCH_GATE = r"(?i)batch[ _-]size|minibatch\s|number of|GPU\(s\)|-np |num_gpus"


def learn_batch(lines: pl.DataFrame, context: ParseContext) -> dict[str, int]:
    """The batch size and device count the log has stated so far (kept in ``context`` for later batches):
    ``global_batch``, ``device_batch``, ``devices``, each only where stated. A later statement wins."""
    known: dict[str, int] = context.state.setdefault("grammar-batch", {})
    line = pl.col("line")
    hits = lines.filter(context.counts(pl.col("source_offset")) & line.str.contains(_BATCH_GATE))
    if hits.height == 0:
        return known
    job_wide = line.str.contains(BATCH_FACTS[0][1])
    for fact, regex in BATCH_FACTS:
        # a line stating the global batch states no per-device one ("global batch size: 16")
        said = hits.filter(~job_wide) if fact == "device_batch" else hits
        groups = said.select(line.str.extract_groups(regex).alias("g")).unnest("g")
        values = groups.select(pl.coalesce(pl.all().cast(pl.Int64, strict=False)).alias("v")).get_column("v")
        values = values.drop_nulls()
        values = values.filter(values > 0)
        if values.len():
            known[fact] = int(values[-1])
    return known


def rates_from_examples(steps: pl.DataFrame, known: dict[str, int]) -> pl.DataFrame:
    """``steps`` with the global steps/s their examples/s give where the log stated the batch: examples/s per
    device / the per-device batch, or a job-wide examples/s / the global batch (per-device batch x devices,
    one device unless stated); ``rate_derived``. Only records whose step is the job's (no distinct local
    step) and that state no rate; ``per_device`` (the grammar's column) is dropped."""
    if steps.height == 0 or "examples_per_s" not in steps.columns or "step" not in steps.columns or not known:
        return steps.drop("per_device", strict=False)
    per_device = pl.col("per_device").fill_null(False) if "per_device" in steps.columns else pl.lit(False)
    device_batch = known.get("device_batch")
    devices = known.get("devices", 1)
    global_batch = known.get("global_batch") or (device_batch * devices if device_batch else None)
    # a global batch is per device only over a device count the log states
    if device_batch is None and global_batch is not None and "devices" in known:
        device_batch_expr = pl.lit(global_batch / devices)
    else:
        device_batch_expr = pl.lit(device_batch, dtype=pl.Float64)
    batch = pl.when(per_device).then(device_batch_expr).otherwise(pl.lit(global_batch, dtype=pl.Float64))
    own_step = (
        (pl.col("local_step").is_null() | (pl.col("local_step") == pl.col("step"))).fill_null(False)
        if "local_step" in steps.columns
        else pl.lit(True)
    )
    rate = pl.col("global_steps_per_s") if "global_steps_per_s" in steps.columns else pl.lit(None, dtype=pl.Float64)
    # tokens/s over a batch the log states in sequences is no steps/s (the tokens of a sequence are unknown)
    tokens = (
        (pl.col("examples_unit") == "tokens").fill_null(False) if "examples_unit" in steps.columns else pl.lit(False)
    )
    fill = rate.is_null() & pl.col("examples_per_s").is_not_null() & own_step & batch.is_not_null() & ~tokens
    derived = (pl.col("examples_per_s") / batch).alias("_from_examples")
    out = steps.with_columns(derived, _fill=fill.fill_null(False)).with_columns(
        global_steps_per_s=pl.when("_fill").then("_from_examples").otherwise(rate),
        local_steps_per_s=pl.when("_fill")
        .then("_from_examples")
        .otherwise(
            pl.col("local_steps_per_s") if "local_steps_per_s" in steps.columns else pl.lit(None, dtype=pl.Float64)
        ),
        rate_derived=pl.col("_fill")
        | (pl.col("rate_derived").fill_null(False) if "rate_derived" in steps.columns else pl.lit(False)),
    )
    return out.drop("_from_examples", "_fill", *(["per_device"] if "per_device" in out.columns else []))


def stated_global_batch(known: dict[str, int]) -> int | None:
    """The examples one global step of the job processes, as the log states them (:func:`learn_batch`'s
    ``known``): its global batch, else its per-device batch x its device count where it states both; None
    where it states neither (a per-device batch alone leaves the devices unknown)."""
    if "global_batch" in known:
        return known["global_batch"]
    if "device_batch" in known and "devices" in known:
        return known["device_batch"] * known["devices"]
    return None


def examples_from_rates(steps: pl.DataFrame, known: dict[str, int]) -> pl.DataFrame:
    """``steps`` with ``examples_per_s`` = global steps/s x the batch the log states
    (:func:`stated_global_batch`) where a record states a rate of its job's step (no distinct local step)
    and no examples/s of its own; other records as they are.

    The analysis reads a run's batch from its records (examples/s over steps/s): without it, runs whose
    steps process different numbers of examples (32 on one GPU, 128 over four) would compare per step."""
    batch = stated_global_batch(known)
    if batch is None or steps.height == 0 or "global_steps_per_s" not in steps.columns:
        return steps
    own_step = (
        (pl.col("local_step").is_null() | (pl.col("local_step") == pl.col("step"))).fill_null(False)
        if "local_step" in steps.columns
        else pl.lit(True)
    )
    logged = pl.col("examples_per_s") if "examples_per_s" in steps.columns else pl.lit(None, dtype=pl.Float64)
    rate = pl.col("global_steps_per_s")
    return steps.with_columns(
        examples_per_s=pl.when(logged.is_null() & rate.is_not_null() & own_step)
        .then(rate * float(batch))
        .otherwise(logged)
    )


#: A progress bar's drawing with its count (``31%|###    | 5974/19120``, ``100%|####|5000/5000``).
BAR_DRAWN = rf"{BAR}\d+/\d+"


def drop_examples_alone(
    parsed_steps: pl.DataFrame, body: pl.DataFrame, context: ParseContext
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(steps, lines handed back)``: the grammar's records that state examples/s and nothing that times a
    step (no rate, also none from a batch size, no interval, no elapsed time, no clock) left out where the log
    has records of its own that do (this batch's or an earlier one's), with their lines from ``body``.

    Such a record tells no step rate; beside a trainer's timed step records it is another hook's figure
    (cifar10_estimator's examples/s hook prints ``step = 100`` after the Estimator's ``step = 101``) and as a
    record it would start a segment at every line. Where examples/s lines are all the log has, they stay its
    records (their positions and losses)."""
    steps = parsed_steps
    if steps.height == 0 or "examples_per_s" not in steps.columns:
        return steps, body.clear()

    def col(name: str, dtype: pl.DataType | type[pl.DataType] = pl.Float64) -> pl.Expr:
        return pl.col(name) if name in steps.columns else pl.lit(None, dtype=dtype)

    timing = [col(c).is_not_null() for c in ("global_steps_per_s", "local_steps_per_s", "interval_s", "elapsed_s")]
    # a line that states its time of day is timed by it, its first reading too (it has no interval yet)
    clocked = body.filter(pl.col("line").str.contains(TIME_OF_DAY)).get_column("source_offset").implode()
    timed = pl.any_horizontal(
        *timing, col("timestamp", pl.Datetime("us", "UTC")).is_not_null(), pl.col("source_offset").is_in(clocked)
    )
    grammar = (col("format", pl.String) == ProgressGrammar.name) & col("examples_per_s").is_not_null()
    # ... and a figure of examples/s with no rate at a step another line of the batch times with a rate is that
    # other line's step told twice (DeepSpeed's timer beside Megatron's iteration line): the timed one is the record
    rate = col("global_steps_per_s").is_not_null() | col("local_steps_per_s").is_not_null()
    rated = steps.filter(rate).get_column("step").drop_nulls().unique() if "step" in steps.columns else pl.Series([])
    rated = rated.implode()
    alone = grammar & (~timed | (~rate & col("step", pl.Int64).is_in(rated)))
    # the batch's steps are the lines that count (its look-ahead is cut off before)
    seen = context.state["grammar-timed"] = (
        context.state.get("grammar-timed", False) or steps.select(timed.any()).item()
    )
    if not seen:
        return steps, body.clear()
    dropped = steps.filter(alone).get_column("source_offset").unique().implode()
    return steps.filter(~alone.fill_null(False)), body.filter(pl.col("source_offset").is_in(dropped))


def epoch_statements(text: pl.Expr, position: pl.Expr) -> dict[str, pl.Expr]:
    """``epoch`` (String: the epoch the message states, or the counter of a tqdm bar's description) and
    ``inner_total`` (String: the total of the message's ``position``, the spelling read, where it has one)."""
    counter = counter_groups(text)
    return {
        "epoch": pl.coalesce(text.str.extract(EPOCH, 1), text.str.extract(BAR_EPOCH, 1)),
        "inner_total": pl.when(position == _INNER_NAMED)
        .then(text.str.extract(INNER_TOTAL, 1))
        .when(position == _BAR_NAMED)
        .then(text.str.extract(_BAR_COUNTER, 1))
        .when(position == "N/M")
        .then(counter.struct.field("m")),
    }


def _paired_positions(read: pl.DataFrame) -> pl.DataFrame:
    """``read`` (the grammar's record lines) with the position of the line right before a line whose only position
    is a bare counter, where that line is of the same time (its envelope's, to the printed digit), names a position
    and measures nothing: the two lines are one statement (DeepSpeed's engine logs ``step=40, skipped=2, lr=...``,
    then at the same millisecond its timer ``0/40, SamplesPerSec=83.5``, whose ``0/40`` is epoch/step)."""
    if read.height == 0 or "_prev_line" not in read.columns:
        return read
    maybe = ((pl.col("_position") == "N/M") & (pl.col("_prev_stamp") == pl.col(STAMP))).fill_null(False)
    pairs = read.filter(maybe & ~pl.col("_prev_line").str.contains(MEASURE_GATE))
    if pairs.height == 0:
        return read
    before, spelling = _first([(p.spelling, p.regex) for p in POSITIONS if p.kind == "named"], pl.col("_prev_line"))
    pairs = pairs.select("_order", _named=before.str.replace_all(",", ""), _named_as=spelling).drop_nulls()
    paired = pl.col("_named").is_not_null()
    return (
        read.join(pairs, on="_order", how="left", maintain_order="left")
        .with_columns(
            _step=pl.when(paired).then("_named").otherwise("_step"),
            _position=pl.when(paired).then("_named_as").otherwise("_position"),
            _inner=pl.when(paired).then(pl.lit(False)).otherwise("_inner"),
        )
        .drop("_named", "_named_as")
    )


def _epoch_records(read: pl.DataFrame, record: pl.Expr, epoch_record: pl.Expr, context: ParseContext) -> pl.DataFrame:
    """``read`` with ``_epoch_record``: True for a line stating an epoch and a time that says no unit of work, and
    no finer position (``Epoch 1 of 500 took 494.369s``), in a file whose lines state no step record (this batch's
    or an earlier one's, kept in ``context``): an epoch-level log, whose records are its epochs. Beside step records
    such a line is an epoch's summary, no record."""
    stepped = context.state.get("grammar-stepped", False) or read.select(record.any()).item()
    context.state["grammar-stepped"] = stepped
    return read.with_columns(_epoch_record=pl.lit(False) if stepped else epoch_record.fill_null(False))


def _bare_intervals(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` (the grammar's, with ``_bare_s``, ``_per_s``, ``_interval_s``, ``step``, ``_order``) with each time
    that says no unit of work and no span (``Time 1153.11s``, ``_bare_s``) read as the time since the task's
    previous report (``interval_s``, no step time) where the file shows it is one.

    A line does not say whether its bare time is one step's or its report interval's; the file's clock does:
    where a report advances the position by more than one step and its bare time is the time its envelope's clock
    advanced since the previous report (within a tenth, or a second: clocks printed to the second), in most of
    the reports that show it, the file's bare times are intervals (kept for the file in ``context``). Reading
    them as step times would make Marian's 2000 updates in 1153 s one update per 1153 s. Where reports come
    every step, both readings agree."""
    if records.height == 0 or "_bare_s" not in records.columns:
        return records
    bare = pl.col("_bare_s").is_not_null()
    if not context.state.get("grammar-bare-interval") and STAMP in records.columns:
        tag = pl.col(TAG).fill_null("")
        ordered = records.sort("_order").with_columns(
            _gap=(pl.col(STAMP) - pl.col(STAMP).shift(1).over(tag)).dt.total_microseconds() / 1e6,
            _advance=pl.col("step") - pl.col("step").shift(1).over(tag),
        )
        shown = ordered.filter(bare & pl.col("_gap").is_not_null() & (pl.col("_advance") > 1))
        if shown.height:
            near = (pl.col("_gap") - pl.col("_bare_s")).abs() <= pl.max_horizontal(0.1 * pl.col("_bare_s"), 1.0)
            if 2 * shown.filter(near).height > shown.height:
                context.state["grammar-bare-interval"] = True
    if not context.state.get("grammar-bare-interval"):
        return records
    return records.with_columns(
        _interval_s=pl.when(bare).then(pl.coalesce("_interval_s", "_bare_s")).otherwise("_interval_s"),
        _per_s=pl.when(bare).then(None).otherwise("_per_s"),
    )


#: The fewest readings of a task's time before it can be told a clock (see :func:`_cumulative_times`): three rises.
_CLOCK_READINGS = 4


def _clock_positions(records: pl.DataFrame) -> list[pl.Expr]:
    """The steps since the start a record of ``records`` may be at, for :func:`_cumulative_times`: its step as read
    (an epoch's record: its epoch), and where the line states its epoch and its counter's total but the file has
    not shown the counter starting again (one epoch's lines: ``Epoch: [14] [ 398/1093]``), the counter counted over
    the run, epochs from 0 and from 1 (``14 x 1093 + 398``, ``13 x 1093 + 398``)."""
    read = pl.coalesce(
        pl.col("step").cast(pl.Float64), pl.when("_epoch_record").then(number(pl.col("_epoch_only"), pl.Float64))
    )
    stated = epoch_statements(pl.col("_piece"), pl.col("_position"))
    epoch, total = number(stated["epoch"], pl.Float64), number(stated["inner_total"], pl.Float64)
    inner = pl.col("_inner").fill_null(False) & (total > 0)
    return [read, pl.when(inner).then(epoch * total + read), pl.when(inner).then((epoch - 1) * total + read)]


def _cumulative_times(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` with a task's times that name no unit of work (``time: 101.3380``, ``Time 4981.4s``) read as
    its clock where they are one: seconds since the start (``elapsed_s``), not each report's step time.

    A hand-written loop often prints ``time.time() - start_time`` under the bare word ``time`` (DCGAN-tensorflow's
    ``Epoch: [ 2/200] [   0/   4] time: 101.3380, d_loss: ..``, carpedm20/DCGAN-tensorflow issues 276 and 175;
    Cellpose's ``Epoch 5, Time 4981.4s, Loss ..``, MouseLand/cellpose issue 450). Read as a step's seconds it makes
    one step per 101 s of a loop that does one per 11 s. A task's times are its clock where, over at least
    :data:`_CLOCK_READINGS` reports, each report's time and step are larger than the one's before, and the seconds
    per step they grow by agree, within a factor of two, with the seconds per step the first reading gives since
    step 0: a clock started with the run. A step time that drifts up (a loop slowing down) fails the second test:
    its first reading is one step's seconds, not all the steps' before it. An epoch's record keeps its duration:
    the time since the previous reading (none for the first)."""
    spelled = pl.col("_measure").is_in(list(UNNAMED_TIMES)).fill_null(False)
    free = spelled & pl.col("_interval_s").is_null() & pl.col("_elapsed_s").is_null() & pl.col("_span").is_null()
    if records.height == 0 or not records.select(free.any()).item():
        return records
    tag = pl.col(TAG).fill_null("")
    positions = _clock_positions(records)
    timed = records.filter(free).sort("_order")
    timed = timed.select(
        "_order",
        _t=tag,
        _v=pl.coalesce("_bare_s", 1.0 / pl.col("_per_s")),
        **{f"_x{i}": x for i, x in enumerate(positions)},
    )
    clocks: set[str] = set()
    for i in range(len(positions)):
        x = pl.col(f"_x{i}")
        rises = ((pl.col("_v").diff() > 0) & (x.diff() > 0)).slice(1).all()
        per_step = (pl.col("_v").last() - pl.col("_v").first()) / (x.last() - x.first())
        since_zero = (pl.col("_v") / x).filter(x > 0).first()
        tasks = (
            timed.filter(x.is_not_null())
            .group_by("_t")
            .agg(_n=pl.len(), _rises=rises, _per_step=per_step, _since_zero=since_zero)
            .filter(
                (pl.col("_n") >= _CLOCK_READINGS)
                & pl.col("_rises")
                & (pl.col("_per_step") > 0)
                & pl.col("_since_zero").is_between(0.5 * pl.col("_per_step"), 2 * pl.col("_per_step"))
            )
        )
        clocks.update(tasks.get_column("_t").to_list())
    if not clocks:
        return records
    on_clock = pl.col("_t").is_in(list(clocks))
    readings = timed.filter(on_clock).select("_order", _clock="_v", _since_last=pl.col("_v").diff().over("_t"))
    clocked = pl.col("_clock").is_not_null()
    return (
        records.join(readings, on="_order", how="left", maintain_order="left")
        .with_columns(
            _elapsed_s=pl.when(clocked).then("_clock").otherwise("_elapsed_s"),
            _per_s=pl.when(clocked).then(None).otherwise("_per_s"),
            _bare_s=pl.when(clocked).then(pl.when("_epoch_record").then("_since_last")).otherwise("_bare_s"),
        )
        .drop("_clock", "_since_last")
    )


def _stated_clock_intervals(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` (the grammar's, with ``_piece``, ``step``, ``_order``, ``_interval_s``, ``_elapsed_s``) with the time
    since the task's previous report (``_interval_s``) where their lines state a time of day and no logger's time
    (:data:`~tierscope.collector.formats.vocabulary.TIME_OF_DAY`): the seconds between the two readings, a day added
    where the reading went back by more than half a day (midnight passed). Only for a record that advances the
    step past the previous step's, each copy of a step (ranks printing untagged) read at its first line, and only in
    a task whose readings never go back otherwise: times that fall between reports are durations, no clock, and
    time nothing."""
    if records.height == 0:
        return records
    unstamped = pl.col(STAMP).is_null() if STAMP in records.columns else pl.lit(True)
    parts = pl.col("_piece").str.extract_groups(TIME_OF_DAY)
    seconds = (
        number(parts.struct.field("h")) * 3600 + number(parts.struct.field("m")) * 60 + number(parts.struct.field("s"))
    )
    read = records.filter(unstamped).select("_order", "step", _t=pl.col(TAG).fill_null(""), _tod=seconds)
    read = read.filter(pl.col("_tod").is_not_null() & pl.col("step").is_not_null())
    # a step's reading is its first line's: the copies of one step (ranks printing untagged, a bar redrawn) share it
    steps = (
        read.sort("_order")
        .group_by("_t", "step", maintain_order=True)
        .agg(pl.col("_order").first(), _tod=pl.first("_tod"))
    )
    if steps.height < 2:
        return records
    fall = pl.col("_tod") - pl.col("_tod").shift(1).over("_t")
    steps = steps.sort("_order").with_columns(_fall=fall, _advance=pl.col("step") - pl.col("step").shift(1).over("_t"))
    # a reading that went back less than half a day is no clock's: that task's readings are durations
    durations = steps.filter((pl.col("_fall") < 0) & (pl.col("_fall") > -DAY_S / 2)).get_column("_t").unique()
    gap = pl.when(pl.col("_fall") < 0).then(pl.col("_fall") + DAY_S).otherwise("_fall")
    steps = steps.filter(~pl.col("_t").is_in(durations.implode())).select(
        "_t", "step", _stated_interval=pl.when((gap > 0) & (pl.col("_advance") > 0)).then(gap)
    )
    read = read.join(steps, on=["_t", "step"], how="inner").select("_order", "_stated_interval")
    free = pl.col("_interval_s").is_null() & pl.col("_elapsed_s").is_null()
    return (
        records.join(read, on="_order", how="left", maintain_order="left")
        .with_columns(_interval_s=pl.when(free).then("_stated_interval").otherwise("_interval_s"))
        .drop("_stated_interval")
    )


#: How much a measure is preferred (its place in the vocabulary), to choose the one a block's step is read by.
_MEASURE_RANK: dict[str, int] = {m.spelling: i for i, m in enumerate(MEASURES)}


def _blocks(lines: pl.DataFrame) -> pl.DataFrame:
    """The lines of ``lines`` (``source_offset``, ``line``, the task tag) that are indented under a block header
    (:data:`~tierscope.collector.formats.vocabulary.BLOCK_HEADER`, ``[batch=20/20]:``), each with its header's line
    (``_block``) and step (``_block_step``, String). A block runs from its header to the first line that is not
    indented, within one task."""
    header = pl.col("line").str.extract(BLOCK_HEADER, 1)
    none = pl.DataFrame(schema={"source_offset": pl.Int64, "_block": pl.Int64, "_block_step": pl.String})
    if lines.height == 0 or not lines.select(header.is_not_null().any()).item():
        return none
    tag = pl.col(TAG).fill_null("") if TAG in lines.columns else pl.lit("")
    f = lines.sort("source_offset").select(
        "source_offset", _t=tag, _h=header, _in=pl.col("line").str.contains(r"^[ \t]+\S")
    )
    f = f.with_columns(_run=(~pl.col("_in")).cum_sum().over("_t"))
    heads = f.filter(pl.col("_h").is_not_null()).select("_t", "_run", _block="source_offset", _block_step="_h")
    return f.filter(pl.col("_in")).join(heads, on=["_t", "_run"]).select("source_offset", "_block", "_block_step")


def _block_positions(read: pl.DataFrame, blocks: pl.DataFrame) -> pl.DataFrame:
    """``read`` with the step of a block's header given to the one line of the block whose measure is the most
    preferred (the job's ``batches_per_sec`` before a device's, a step rate before examples/s): the block is one
    statement, its position on the header's line and its measures on the lines under it. The block's other lines
    state no position, so they make no record."""
    if read.height == 0 or blocks.height == 0:
        return read
    read = read.join(blocks, on="source_offset", how="left", maintain_order="left")
    rank = pl.col("_measure").replace_strict(_MEASURE_RANK, default=None, return_dtype=pl.Int64)
    member = pl.col("_block").is_not_null() & pl.col("_step").is_null() & pl.col("_measure").is_not_null()
    chosen = (
        read.filter(member)
        .with_columns(_rank=rank)
        .sort("_rank", "_order")
        .group_by("_block", maintain_order=True)
        .first()
        .get_column("_order")
    )
    pick = pl.col("_order").is_in(chosen.implode())
    return read.with_columns(
        _step=pl.when(pick).then("_block_step").otherwise("_step"),
        _position=pl.when(pick).then(pl.lit("[batch=N/M]: block header")).otherwise("_position"),
        _inner=pl.when(pick).then(pl.lit(False)).otherwise("_inner"),
    ).drop("_block", "_block_step")


def _optimizer_steps(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` with the lines that name an iteration beside a step (``iter 77 step 39: ... iter time:
    214.40ms``) made one record per step, each step's first line, and an iteration's time made the step's: the
    file's iterations per step ``k`` (``(last iteration - first) / (last step - first)``, rounded) times it.

    The step counts the optimizer's updates, the global step; the iteration one micro-batch of gradient
    accumulation (litgpt prints ``iter 76 step 38``, ``iter 77 step 39 (optimizer.step)``, ``iter 78 step 39``:
    two iterations a step, so 214.40 ms an iteration is 428.8 ms a step)."""
    beside = (pl.col("_position") == ITERATION_STEP).fill_null(False)
    if records.height == 0 or not records.select(beside.any()).item():
        return records
    tag = pl.col(TAG).fill_null("")
    rows = (
        records.filter(beside)
        .sort("_order")
        .select(
            "_order", _t=tag, _i=number(pl.col("_piece").str.extract(ITERATION_BESIDE_STEP, 1), pl.Int64), _s="step"
        )
    )
    span = (pl.col("_s").last() - pl.col("_s").first()).cast(pl.Float64)
    per_step = rows.group_by("_t").agg(
        _k=pl.when(span > 0).then(((pl.col("_i").last() - pl.col("_i").first()) / span).round()).otherwise(1.0)
    )
    firsts = (
        rows.filter(pl.col("_order") == pl.col("_order").min().over("_t", "_s"))
        .join(per_step, on="_t", how="left")
        .select("_order", _k=pl.col("_k").clip(lower_bound=1.0))
    )
    timed = pl.col("_piece").str.contains(ITERATION_TIME)
    return (
        records.join(firsts, on="_order", how="left", maintain_order="left")
        .filter(~beside | pl.col("_k").is_not_null())
        .with_columns(_per_s=pl.when(beside & timed).then(pl.col("_per_s") / pl.col("_k")).otherwise("_per_s"))
        .drop("_k")
    )


#: The fewest counters whose totals must go up line by line before ``N/M`` is read as epoch/step.
_COUNTING_ON = 3


def _task_counters(read: pl.DataFrame, chosen: pl.Expr) -> pl.DataFrame:
    """The ``N/M`` counters of ``read``'s rows where ``chosen`` holds, in log order: ``_order``, ``_t`` (the
    task's tag, "" for none), ``_n`` and ``_m`` (Int64, null where unreadable)."""
    counter = counter_groups(pl.col("_piece"))
    return (
        read.filter(chosen)
        .select(
            "_order",
            _t=pl.col(TAG).fill_null(""),
            _n=number(counter.struct.field("x"), pl.Int64),
            _m=number(counter.struct.field("m"), pl.Int64),
        )
        .sort("_order")
    )


def _of_tasks_whose(counters: pl.DataFrame, moving: str, *, other_stands: bool) -> pl.DataFrame:
    """``counters`` (from :func:`_task_counters`) of the tasks with at least :data:`_COUNTING_ON` of them whose
    ``moving`` column never goes down and goes up at least once, and whose other column stands still
    (``other_stands``) or never goes down."""
    other = pl.col("_n" if moving == "_m" else "_m").diff().drop_nulls()
    steps = pl.col(moving).diff().drop_nulls()
    shape = (
        (pl.len() >= _COUNTING_ON)
        & (steps >= 0).all()
        & (steps > 0).any()
        & ((other == 0) if other_stands else (other >= 0)).all()
    )
    tasks = counters.group_by("_t").agg(_keep=shape).filter("_keep").get_column("_t")
    return counters.filter(pl.col("_t").is_in(tasks.implode()))


def _totals_that_count_on(read: pl.DataFrame) -> pl.DataFrame:
    """``read`` with each ``N/M`` counter, bare or after its step word, whose ``M`` goes up from line to line (a
    task's, at least :data:`_COUNTING_ON` of them, ``M`` never down and up at least once) and whose ``N`` never goes
    down read as epoch/step: its step is ``M``.

    A counter's total never changes within a run, so a "total" that grows is a position: WeNet's and
    wekws' ``TRAIN Batch 4/203700 loss ...`` (epoch 4, batch 203700: wenet-e2e/wenet issue 941, 2023-01-30; ``Batch
    78/0``, ``78/10``: wenet-e2e/wekws issue 214, 2026-05-09), each rank printing the same batch (``M`` repeated)."""
    counter = counter_groups(pl.col("_piece"))
    # a step word's counter (``Batch 4/203700``), never a bar's drawing (its totals are bars of other passes)
    worded = (pl.col("_position") == _INNER_NAMED) & (counter.struct.field("x") == pl.col("_step"))
    bare = ((pl.col("_position") == "N/M") | worded).fill_null(False)
    if read.height == 0 or not read.select(bare.any()).item():
        return read
    steps = _of_tasks_whose(_task_counters(read, bare), "_m", other_stands=False)
    if steps.height == 0:
        return read
    return (
        read.join(
            steps.select("_order", _total=pl.col("_m").cast(pl.String)), on="_order", how="left", maintain_order="left"
        )
        .with_columns(
            _step=pl.coalesce("_total", "_step"),
            _inner=pl.when(pl.col("_total").is_not_null()).then(pl.lit(False)).otherwise("_inner"),
        )
        .drop("_total")
    )


def _timer_totals_that_stand(read: pl.DataFrame) -> pl.DataFrame:
    """``read`` with the counters spelled as DeepSpeed's timer's (``E/N, SamplesPerSec=X``, read as epoch/step:
    step ``N``) read as a position and its total where a task's show it: at least :data:`_COUNTING_ON` of them, their
    ``N`` never changing and their ``E`` going up, never down (``10/200``, ``20/200``, ``30/200``: steps 10, 20, 30).
    A timer's step never stands still while its epoch goes on, so these are another program's progress."""
    timer = (pl.col("_position") == TIMER_COUNTER).fill_null(False)
    if read.height == 0 or not read.select(timer.any()).item():
        return read
    steps = _of_tasks_whose(_task_counters(read, timer), "_n", other_stands=True)
    if steps.height == 0:
        return read
    return (
        read.join(
            steps.select("_order", _own=pl.col("_n").cast(pl.String)), on="_order", how="left", maintain_order="left"
        )
        .with_columns(_step=pl.coalesce("_own", "_step"))
        .drop("_own")
    )


def _whole_steps(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` (the grammar's, with ``_piece``, ``_position``, ``_inner``, ``_order``) with each position
    counted within its epoch made a step of the run: ``(epoch - first epoch) x its total + position``, the first
    epoch being 1 where the file's first stated epoch is 1, else 0 (loops count epochs from 1 or from 0: the first
    iteration of ``epoch 1 iter 50/1000`` is step 50, not 1050; a file that starts later, ``7/299``, says neither
    and keeps counting from 0, its steps then off by one epoch at most, its rates the same).

    Whether a position beside an epoch counts within it (``Epoch: [35]  [10/31]``, ``Epoch[102] Batch [50]``) or
    over the run (``epoch: 2, iter: 1010/100000``) the line does not say; the file does: where the epoch advances
    and the position goes back (or stays: a finished bar each epoch), it counts within the epoch (kept for the
    file in ``context``). Until a file shows
    that, a position stays as printed (an epoch's records then differ by a constant only). A position with no
    total (``Batch [250]``) takes the largest position the file has shown as its epoch's length, one more where the
    counter has shown 0 (``Epoch 00001 | Step 00000``: counted from 0)."""
    if records.height == 0:
        return records
    tag = pl.col(TAG).fill_null("")
    # a bar whose line states no epoch, drawn anew under an epoch announced on a line of its own (``Epoch 2 of 20``,
    # then ``69it [01:19,  1.16s/it]``): that epoch is the bar's
    banner = pl.col("_banner_epoch") if "_banner_epoch" in records.columns else pl.lit(None, dtype=pl.String)
    under_banner = (
        pl.col("_position").is_in(list(_BANNER_BARS))
        & banner.is_not_null()
        & ~pl.col("_piece").str.contains(r"(?i)epoch")
        & pl.col("step").is_not_null()
    ).fill_null(False)
    # the epoch is looked for only where a line may state one: a word epoch, a tqdm bar's description
    maybe = (
        pl.col("_inner") & pl.col("step").is_not_null() & pl.col("_piece").str.contains(r"(?i)epoch|\d%")
    ).fill_null(False) | under_banner
    stated = records.filter(maybe)
    if stated.height == 0:
        return records
    stated = stated.with_columns(
        **{f"_{k}": v for k, v in epoch_statements(pl.col("_piece"), pl.col("_position")).items()}
    )
    stated = stated.with_columns(_epoch=pl.coalesce("_epoch", pl.when(under_banner).then(banner))).filter(
        pl.col("_epoch").is_not_null()
    )
    epoch = number("_epoch", pl.Int64)
    seen = stated.sort("_order").select(
        "source_offset",
        _t=tag,
        _e=epoch,
        _n=pl.col("step"),
        _pe=epoch.shift(1).over(tag),
        _pn=pl.col("step").shift(1).over(tag),
    )
    if seen.height == 0:
        return records
    seen = _after_last_read(seen, context)
    advanced = seen.filter(pl.col("_e") > pl.col("_pe"))
    went_back = advanced.filter(pl.col("_n") <= pl.col("_pn")).height
    if went_back and went_back == advanced.height:
        context.state["grammar-within-epoch"] = True
    longest = max(context.state.get("grammar-epoch-length", 0), int(seen.get_column("_n").max() or 0))
    context.state["grammar-epoch-length"] = longest
    shown = context.state.setdefault("grammar-first-epoch-shown", seen.item(0, "_e"))
    first = 1 if shown == 1 else 0
    if not context.state.get("grammar-within-epoch"):
        return records
    # a counter that shows 0 counts from 0: its epoch holds one position more than the largest shown (the largest
    # alone would make the next epoch's position 0 the same step as this one's last)
    from_zero = bool(context.state.get("grammar-epoch-from-zero")) or bool(
        seen.select((pl.col("_n") == 0).any()).item()
    )
    context.state["grammar-epoch-from-zero"] = from_zero
    length = longest + 1 if from_zero else longest
    total = pl.coalesce(number("_inner_total", pl.Int64), pl.lit(max(length, 1), dtype=pl.Int64))
    whole = stated.select(
        "_order", _whole=(epoch - first) * total + pl.col("step"), _later_lap=epoch != shown, _lap_of=epoch
    )
    return _lap_clocks_dropped(
        records.join(whole, on="_order", how="left", maintain_order="left")
        .with_columns(step=pl.coalesce("_whole", "step"))
        .drop("_whole"),
        context,
    )


#: The state key of each task's last epoch and position read (``{task tag: (epoch, position)}``): the first line of
#: a collect going on is compared with it as with the line before it in one read of the file.
_LAST_EPOCH_AT = "grammar-last-epoch-at"


def _after_last_read(seen: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``seen`` (``source_offset``, ``_t`` task tag, ``_e`` epoch, ``_n`` position, ``_pe``/``_pn`` the task's
    previous ones) with each task's first row given the task's last epoch and position of the lines read before
    (a batch before, or a collect before: :mod:`~tierscope.collector.formats.memory` saves them), and those
    remembered for the next. Without them a collect that starts at an epoch's first lines (a cron collect after
    the last drawing of ``Epoch 0: 100%|...| 100/100``) sees no epoch advance with its position going back, and
    reads ``Epoch 1: 20/100`` as step 20: the run restarted."""
    last: dict[str, tuple[int, int]] = context.state.get(_LAST_EPOCH_AT, {})
    if last:
        carried = pl.DataFrame(
            {"_t": list(last), "_ce": [e for e, _ in last.values()], "_cn": [n for _, n in last.values()]},
            schema={"_t": pl.String, "_ce": pl.Int64, "_cn": pl.Int64},
        )
        seen = (
            seen.join(carried, on="_t", how="left", maintain_order="left")
            .with_columns(_pe=pl.coalesce("_pe", "_ce"), _pn=pl.coalesce("_pn", "_cn"))
            .drop("_ce", "_cn")
        )
    counted = seen.filter(context.counts(pl.col("source_offset")))
    ends = counted.group_by("_t", maintain_order=True).agg(pl.col("_e").last(), pl.col("_n").last())
    context.state[_LAST_EPOCH_AT] = {**last, **{t: (int(e), int(n)) for t, e, n in ends.iter_rows()}}
    return seen


def _lap_clocks_dropped(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` with the bar's clock of a later lap (``_later_lap`` True; ``_lap_of`` the lap, both then dropped)
    read as intervals: a bar drawn anew each epoch (Lightning's ``Epoch 1: 40%|...| 200/500 [00:11<00:16, ...]``)
    restarts its clock with each epoch, so from its second lap on the clock is the lap's, no time since the run
    began; kept, it would go back at each epoch and pass for a restart of the run. The lap's clock still times the
    lap: each of its steps' time since the lap's previous step is the rise of the clock (``_interval_s``), its first
    step's the clock itself (the bar counts from its own start), so that a run of several epochs has the time its
    bars measured (goodput's lifetime on the interval clock). A clock that went back within a lap times nothing.
    A step's drawings share its first drawing's reading, as the first lap's do; a logger's time on the line is the
    clock instead. The lap's records keep their stated rates. The last reading of each lap carries over to the
    next batch of lines in ``context``."""
    if "_bar_elapsed_s" not in records.columns:
        return records.drop("_later_lap", "_lap_of")
    later = pl.col("_later_lap").fill_null(False)
    stamped = pl.col(STAMP).is_not_null() if STAMP in records.columns else pl.lit(False)
    bar = pl.col("_position").is_in(list(_BAR_POSITIONS)).fill_null(False)
    timed = later & bar & ~stamped & pl.col("_bar_elapsed_s").is_not_null()
    readings = (
        records.filter(timed)
        .sort("_order")
        .group_by(pl.col(TAG).fill_null("").alias("_t"), "_lap_of", "step", maintain_order=True)
        .agg(pl.col("source_offset").first(), _clock=pl.col("_bar_elapsed_s").first())
    )
    if readings.height:
        known: dict[str, float] = context.state.setdefault("grammar-lap-clocks", {})
        lap = pl.concat_str("_t", pl.lit("\x1f"), pl.col("_lap_of").cast(pl.String))
        before = lap.replace_strict(known, default=None, return_dtype=pl.Float64) if known else pl.lit(None, pl.Float64)
        readings = readings.with_columns(_key=lap).with_columns(
            _before=pl.coalesce(pl.col("_clock").shift(1).over("_key"), before)
        )
        rise = pl.col("_clock") - pl.col("_before")
        readings = readings.with_columns(
            _lap_interval=pl.when(pl.col("_before").is_null()).then("_clock").when(rise >= 0).then(rise)
        )
        counted = readings.filter(context.counts(pl.col("source_offset")))
        known.update(dict(counted.group_by("_key").agg(pl.col("_clock").last()).iter_rows()))
        records = records.join(
            readings.select("_lap_of", "step", "_t", "_lap_interval"),
            left_on=[pl.col(TAG).fill_null(""), "_lap_of", "step"],
            right_on=["_t", "_lap_of", "step"],
            how="left",
            maintain_order="left",
        )
        records = records.with_columns(
            _interval_s=pl.when(timed).then(pl.coalesce("_interval_s", "_lap_interval")).otherwise("_interval_s")
        ).drop("_lap_interval", "_t", strict=False)
    return records.with_columns(_bar_elapsed_s=pl.when(later).then(None).otherwise("_bar_elapsed_s")).drop(
        "_later_lap", "_lap_of"
    )


def _bar_laps(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` with the position of a bar that states no epoch made a step of the run where the bar restarts: a
    training loop that draws a new bar each epoch (``24/100 ... 100/100``, then ``24/100`` again) is on its second lap,
    and its step is lap x total + position (100 + 24 = 124). Bars of each total are counted apart (an evaluation's
    bar between them starts no lap); a redraw at the same position is the same step, but for a finished bar drawn
    again lines later with another loss: the next epoch's. The laps and the last position
    of each bar carry over to later batches in ``context``."""
    if records.height == 0:
        return records
    tag = pl.col(TAG).fill_null("")
    bars = records.filter((pl.col("_position") == _BAR_NAMED) & pl.col("step").is_not_null())
    if bars.height == 0:
        return records
    stated = epoch_statements(pl.col("_piece"), pl.col("_position"))
    bars = bars.filter(stated["epoch"].is_null()).with_columns(
        _key=pl.concat_str(tag, pl.lit("\x1f"), stated["inner_total"].fill_null(""))
    )
    if bars.height == 0:
        return records
    known: dict[str, tuple[int, int]] = context.state.setdefault("grammar-bar-laps", {})
    earlier_lap = pl.col("_key").replace_strict({k: v[0] for k, v in known.items()}, default=0, return_dtype=pl.Int64)
    earlier_n = pl.col("_key").replace_strict({k: v[1] for k, v in known.items()}, default=None, return_dtype=pl.Int64)
    # a finished bar drawn again lines later with another training loss is the next lap's: a copy that kept only each
    # epoch's finished bar (``100% 2774/2774 [14:15<00:00, 3.24it/s, train_loss=5.86]``, then ``train_loss=5.49``);
    # one step states one loss, so a redraw of the same bar (its closing refresh after an evaluation) keeps it
    finished_again = (
        (pl.col("step") == pl.col("_prev"))
        & (pl.col("step") == number(stated["inner_total"], pl.Int64))
        & (pl.col("source_offset") - pl.col("_prev_offset") > 1)
        & (pl.col("loss") != pl.col("_prev_loss"))
    )
    laps = (
        bars.sort("_order")
        .with_columns(
            _prev=pl.col("step").shift(1).over("_key"),
            _prev_offset=pl.col("source_offset").shift(1).over("_key"),
            _prev_loss=pl.col("loss").shift(1).over("_key"),
        )
        .with_columns(_prev=pl.coalesce("_prev", earlier_n))
        .with_columns(_restart=((pl.col("step") < pl.col("_prev")) | finished_again).fill_null(False).cast(pl.Int64))
        .with_columns(_lap=earlier_lap + pl.col("_restart").cum_sum().over("_key"))
    )
    counted = laps.filter(context.counts(pl.col("source_offset")))
    for key, lap, n in counted.group_by("_key").agg(pl.col("_lap").last(), pl.col("step").last()).iter_rows():
        known[key] = (int(lap), int(n))
    total = number(stated["inner_total"], pl.Int64)
    whole = laps.filter(pl.col("_lap") > 0).select(
        "_order",
        _whole=pl.col("_lap") * total + pl.col("step"),
        _later_lap=pl.lit(True),
        _lap_of=pl.concat_str("_key", pl.lit("\x1f"), pl.col("_lap").cast(pl.String)),
    )
    if whole.height == 0:
        return records
    return _lap_clocks_dropped(
        records.join(whole, on="_order", how="left", maintain_order="left")
        .with_columns(step=pl.coalesce("_whole", "step"))
        .drop("_whole"),
        context,
    )


#: A batch counter with no epoch on its line (MXNet R's speedometer ``Batch [50] Speed: ...``, its epochs said apart:
#: ``[1] Train-accuracy=0.70``).
_BATCH_ONLY = r"(?i)\bbatch\b"


def _restarted_batches(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` with a batch counter that starts again (its line states no epoch) made a step of the run: a batch
    counts within its epoch, so each time the counter goes back a new epoch has begun, and its step is the epochs
    begun so far x the largest batch shown so far + the batch. Kept per task in ``context`` across read batches.
    A step or iteration that goes back is left as printed (a resumed run's)."""
    if records.height == 0:
        return records
    tag = pl.col(TAG).fill_null("")
    piece = pl.col("_piece")
    batch = (
        (pl.col("_position") == _INNER_NAMED)
        & pl.col("step").is_not_null()
        & piece.str.contains(_BATCH_ONLY)
        & ~piece.str.contains(r"(?i)epoch|\bpass\b")
    ).fill_null(False)
    counted = records.filter(batch)
    if counted.height == 0:
        return records
    known: dict[str, tuple[int, int, int]] = context.state.setdefault("grammar-batch-restarts", {})
    counted = counted.sort("_order").with_columns(_tag=tag)
    carried = pl.DataFrame(
        {
            "_tag": list(known),
            "_last": [v[0] for v in known.values()],
            "_restarts": [v[1] for v in known.values()],
            "_longest": [v[2] for v in known.values()],
        },
        schema={"_tag": pl.String, "_last": pl.Int64, "_restarts": pl.Int64, "_longest": pl.Int64},
    )
    counted = counted.join(carried, on="_tag", how="left", maintain_order="left").with_columns(
        pl.col("_last", "_restarts", "_longest").fill_null(0)
    )
    previous = pl.coalesce(pl.col("step").shift(1).over("_tag"), pl.col("_last").first().over("_tag"))
    went_back = (pl.col("step") < previous).fill_null(False).cast(pl.Int64)
    counted = counted.with_columns(
        _epochs=pl.col("_restarts") + went_back.cum_sum().over("_tag"),
        _length=pl.max_horizontal(pl.col("_longest"), pl.col("step").cum_max().over("_tag")),
    )
    for row in (
        counted.group_by("_tag")
        .agg(pl.col("step").last(), pl.col("_epochs").last(), pl.col("_length").last())
        .iter_rows()
    ):
        known[row[0]] = (row[1], row[2], row[3])
    if not counted.select((pl.col("_epochs") > 0).any()).item():
        return records
    whole = counted.select("_order", _whole=pl.col("_epochs") * pl.col("_length") + pl.col("step"))
    return (
        records.join(whole, on="_order", how="left", maintain_order="left")
        .with_columns(step=pl.coalesce("_whole", "step"))
        .drop("_whole")
    )


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


def _evaluation_bars(read: pl.DataFrame, lines: pl.DataFrame, context: ParseContext) -> pl.Series:
    """For each row of ``read`` (pieces with ``_order``, ``_piece``): whether it is a bar of an evaluation that has no
    description: after an evaluation's banner (:data:`_EVAL_BANNER`, until a training banner), a bar without a
    description whose total is not the training bar's (the total of the last such bar before the banner: Hugging
    Face's ``345/345`` training bar, then its ``51/51`` evaluation bar; where no training bar came before, the total
    of the first bar after the banner). What the file has shown so far (in a zone or not, the training bar's total)
    carries over to later batches in ``context``."""
    known = context.state.setdefault("grammar-eval-zone", {"zone": False, "total": None})
    banner = pl.col("line").str.contains(_EVAL_BANNER)
    if not lines.select(banner.any()).item() and not known["zone"]:
        return pl.Series([False] * read.height, dtype=pl.Boolean)
    banners = lines.filter(banner | pl.col("line").str.contains(_TRAIN_BANNER)).select(
        "source_offset",
        # after the pieces of its own line (a bar's line the banner was glued to: ``...3.37it/s][...] - ***** Running
        # Evaluation *****``)
        pl.lit(_AFTER_PIECES, dtype=pl.Int64).alias("_at"),
        pl.col("line").str.contains(_EVAL_BANNER).alias("_zone"),
        pl.lit(None, dtype=pl.Int64).alias("_total"),
    )
    descless = (pl.col("_piece").str.extract(_TQDM_DESC, 1).str.strip_chars() == "") | pl.col("_piece").str.contains(
        _BAR_NO_TOTAL
    )
    bars = read.select(
        "source_offset",
        pl.col("_order").cast(pl.Int64).alias("_at"),
        pl.lit(None, dtype=pl.Boolean).alias("_zone"),
        # a bar without a total (``8it [00:08,  1.11s/it]``) is told by its count: an epoch's bars end at one count
        pl.when(descless)
        .then(
            pl.coalesce(
                number(pl.col("_piece").str.extract(_BAR_COUNTER, 1), pl.Int64),
                number(pl.col("_piece").str.extract(_BAR_NO_TOTAL, 1), pl.Int64),
            )
        )
        .alias("_total"),
    )
    seen = (
        pl.concat([banners, bars])
        .sort("source_offset", "_at")
        .with_columns(pl.col("_zone").forward_fill().fill_null(known["zone"]))
        .with_columns(
            _train=pl.when(~pl.col("_zone"))
            .then("_total")
            .forward_fill()
            .fill_null(pl.lit(known["total"], dtype=pl.Int64)),
        )
        .with_columns(_train_before=pl.col("_train").shift(1).fill_null(pl.lit(known["total"], dtype=pl.Int64)))
    )
    counted = seen.filter(context.counts(pl.col("source_offset")))
    if counted.height:
        known["zone"] = bool(counted.get_column("_zone")[-1])
        total = counted.get_column("_train")[-1]
        known["total"] = None if total is None else int(total)
    # where the training bar's total is not known yet (an excerpt that starts at the banner), the evaluation's bar is
    # the first one after its banner
    banner_no = (pl.col("_at") == _AFTER_PIECES).cast(pl.Int64).cum_sum()
    first_after = pl.col("_total").drop_nulls().first().over(banner_no)
    evaluation = (
        pl.col("_zone")
        & pl.col("_total").is_not_null()
        & pl.when(pl.col("_train_before").is_not_null())
        .then(pl.col("_total") != pl.col("_train_before"))
        .otherwise(pl.col("_total") == first_after)
    )
    flags = seen.filter(pl.col("_at") != _AFTER_PIECES).select("_at", evaluation.fill_null(False).alias("_eval"))
    return (
        read.select(pl.col("_order").cast(pl.Int64).alias("_at"))
        .join(flags, on="_at", how="left")
        .get_column("_eval")
        .fill_null(False)
    )


#: A tqdm bar's drawing: its position (group 1) and total (group 2).
_BAR_DRAWN = rf"{BAR}(\d+)/(\d+)"


def _lossless_bars(read: pl.DataFrame, context: ParseContext) -> pl.Series:
    """For each row of ``read`` (pieces with ``_position``, ``_piece``, ``_loss``, ``_not_training``): whether it is a
    drawing of a bar that never states a loss, of another total than a bar that does, in the same stream: the
    evaluation's pass beside the training bar, which carries the training loss in its postfix (SpeechBrain's
    ``100%|...| 190/190 [03:08<00:00,  1.01it/s, train_loss=0.945]`` then ``100%|...| 137/137 [01:43<00:00,
    1.33it/s]``, speechbrain/speechbrain PR 2216 and issue 938). A total drawn with a loss once is the training
    bar's, however many of its drawings lack it (tqdm draws the postfix after the first step). The totals seen with
    a loss carry over to later batches in ``context``."""
    known: dict[str, list[int]] = context.state.setdefault("grammar-loss-bar-totals", {})
    bar = (pl.col("_position") == _BAR_NAMED).fill_null(False) & ~pl.col("_not_training")
    bars = read.select(
        bar.alias("_bar"),
        pl.col(TAG).fill_null("").alias("_tag"),
        number(pl.col("_piece").str.extract(_BAR_COUNTER, 1), pl.Int64).alias("_total"),
        pl.col("_loss").is_not_null().alias("_has_loss"),
        context.counts(pl.col("source_offset")).alias("_counts"),
    )
    lossy = bars.filter("_bar" & pl.col("_has_loss") & pl.col("_total").is_not_null())
    totals = {tag: set(values) for tag, values in known.items()}
    for tag, total, counts in lossy.select("_tag", "_total", "_counts").iter_rows():
        totals.setdefault(tag, set()).add(total)
        if counts:
            known[tag] = sorted(set(known.get(tag, [])) | {total})
    if not totals:
        return pl.Series([False] * read.height, dtype=pl.Boolean)
    pairs = pl.DataFrame(
        [(tag, total) for tag, values in totals.items() for total in values],
        schema={"_tag": pl.String, "_total": pl.Int64},
        orient="row",
    )
    with_loss = pairs.with_columns(_lossy=pl.lit(True))
    flagged = bars.with_row_index("_i").join(with_loss, on=["_tag", "_total"], how="left").sort("_i")
    has_lossy_tag = pl.col("_tag").is_in(pairs.get_column("_tag").unique().implode())
    return flagged.select(
        (pl.col("_bar") & pl.col("_total").is_not_null() & has_lossy_tag & pl.col("_lossy").is_null()).fill_null(False)
    ).to_series()


def _nested_bars(read: pl.DataFrame, context: ParseContext) -> pl.Series:
    """For each row of ``read`` (pieces with ``_order``, ``_piece``, ``_not_training``): whether it is a drawing of a
    bar nested in the training bar: a second bar, of another total, drawn between two drawings of the training bar
    while it is paused (Hugging Face's Trainer draws its evaluation's bar, ``0/400`` to ``400/400`` with no
    description, between two drawings of its training bar at step 200, ``200/1000`` then ``200/1000`` or
    ``201/1000``). Per stream (:data:`TAG`), the drawings of one total in a row are a *run*; a run of total M is nested
    when the run before it is of another total N that counts on by itself somewhere (two drawings in a row of a run
    of N rising: the training bar's steps, never an epoch bar drawn once between the laps of the bar inside it) and

    - the run after it is of total N again and goes on from where N stood (its first position not below the last
      one): N was paused, not begun anew; or
    - no run follows yet (the batch ends), N is not at its total (a training bar unfinished is drawn again) and
      the run begins a bar anew (its total not seen before, or its position below the last one seen).

    Two bars with different totals in one stream are so two bars, never one counter. The last run of each stream,
    the totals that count on by themselves and the last position of each total carry over to later batches in
    ``context``."""
    flags = pl.Series([False] * read.height, dtype=pl.Boolean)
    drawn = pl.col("_piece").str.extract_groups(_BAR_DRAWN)
    bars = (
        read.select(
            pl.col("_order").cast(pl.Int64).alias("_at"),
            pl.col(TAG).fill_null("").alias("_tag"),
            number(drawn.struct.field("1"), pl.Int64).alias("_n"),
            number(drawn.struct.field("2"), pl.Int64).alias("_total"),
            "source_offset",
            "_not_training",
        )
        .filter(pl.col("_total").is_not_null() & pl.col("_n").is_not_null() & ~pl.col("_not_training"))
        .sort("_at")
    )
    known: dict[str, dict] = context.state.setdefault("grammar-nested-bars", {})
    if bars.height == 0 or (bars.get_column("_total").n_unique() < 2 and not known):
        return flags
    runs = (
        bars.with_columns(_new=(pl.col("_total") != pl.col("_total").shift(1).over("_tag")).fill_null(True))
        .with_columns(_run=pl.col("_new").cast(pl.Int64).cum_sum())
        .group_by("_run", maintain_order=True)
        .agg(
            pl.col("_tag").first(),
            pl.col("_total").first(),
            pl.col("_n").first().alias("_first"),
            pl.col("_n").last().alias("_last"),
            (pl.col("_n").diff() > 0).any().alias("_rises"),
            pl.col("_at"),
            pl.col("source_offset").max().alias("_offset"),
        )
    )
    counted = runs.with_columns(_counts=context.counts(pl.col("_offset"))).get_column("_counts").to_list()
    nested_at: list[int] = []
    by_tag: dict[str, list[tuple]] = {}
    for row, counts in zip(runs.iter_rows(), counted, strict=True):
        by_tag.setdefault(row[1], []).append((*row[2:7], counts))
    for tag, stream in by_tag.items():
        state = known.get(tag, {"rising": [], "seen": {}, "last": None})
        rising = set(state["rising"]) | {r[0] for r in stream if r[3]}
        seen = dict(state["seen"])
        before = state["last"]  # (total, last position, nested) of the run before
        for i, (total, first, last, _rises, at, counts) in enumerate(stream):
            after = stream[i + 1] if i + 1 < len(stream) else None
            if before is not None and before[0] == total:  # the carried run goes on
                nested = bool(before[2])
            elif before is None or before[0] not in rising:
                nested = False
            elif after is not None:
                nested = after[0] == before[0] and after[1] >= before[1]
            else:
                fresh = total not in seen or first < seen[total]
                nested = before[1] < before[0] and fresh
            if nested:
                nested_at.extend(at)
            if counts:
                seen[total] = last
                state = {"rising": sorted(rising), "seen": dict(seen), "last": (total, last, nested)}
            before = (total, last, nested)
        known[tag] = state
    if not nested_at:
        return flags
    return read.select(pl.col("_order").cast(pl.Int64).is_in(nested_at)).to_series()


#: What ``formats --try`` says of a time of day a message states (see :func:`_stated_clock_intervals`).
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
        raw = pl.select(_measure_raw(pl.lit(message), m)).item()
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
    bar_timed = position in _BAR_POSITIONS and not measures and bar_clock is not None and bar_clock > 0
    if bar_timed:
        said.append(f"the bar's elapsed clock = {bar_clock:g} s: the time of its steps since the bar began")
    if not said:
        return [], None
    verdict = None
    if position is None and epoch is not None and bare is not None:
        verdict = f"epoch {epoch} with its duration: an epoch's record where the file states no step records"
    elif not measures and position is not None and pl.select(dict_statements(pl.lit(message))["dict_loss"]).item():
        verdict = CLOCKED_DICT
    elif bar_timed:
        verdict = None
    elif not measures and position is not None and s["loss_said"]:
        verdict = LOGGER_TIMED
    elif not measures:
        verdict = "no measure: not a record"
    elif kinds == {"examples_per_s"} and position is not None and not counter_date and clock is None:
        verdict = EXAMPLES_ALONE
    elif position is None or counter_date:
        verdict = "no position: a record only for a job-wide rate"
    if s["evaluation"]:  # what decides first: an evaluation's statement is no training step whatever it states
        verdict = "an evaluation's statement: not a training step" + (f"; {verdict}" if verdict else "")
    return said, verdict


#: An epoch announced on a line of its own (nnU-Net v2's ``Epoch 3``, v1's ``epoch:  6``, with its total: a loop's
#: ``Epoch 2 of 20``, sovit-123/German-Traffic-Sign-Recognition-with-Deep-Learning ``outputs/Outputs.md``): group 1
#: its number.
_EPOCH_BANNER = r"(?i)^\W*epoch\s*[:=#]?\s*\[?(\d+)(?:\s*(?:/|of)\s*\d+)?\]?\s*$"
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
_CLOCKED_GATE = r"(?i:loss)|\bl_[a-z]\w*\s*[:=]"
#: Words of a statement about the run rather than a step of it (its best figure, its stopping early).
_SUMMARY_WORDS = rf"(?i)\b(?:best|early|stopp\w*|final|summary|serv\w*|probe|finder|{HELD_OUT})\b"
#: A loss of other work than training, anywhere on the line (``val loss 2.07``, ``packet loss 0.0%``).
_OTHER_LOSS = rf"(?i)\b(?:val|valid\w*|eval\w*|test|{HELD_OUT}|packet)[ _]loss"
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
    1/4``), not its first number."""
    return (
        text.str.replace_all(r"\d+\s*/\s*\d+", " ")
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

    def unpaired_from(self, lines: pl.DataFrame) -> int | None:
        return None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        hit = pl.col("line").str.contains(MEASURE_GATE) | pl.col("line").str.contains(LOGGING_DICT)
        if STAMP in lines.columns:  # a position and its loss under a logger's time: the time is its clock
            hit = hit | (pl.col(STAMP).is_not_null() & pl.col("line").str.contains(_CLOCKED_GATE))
        if lines.height == 0 or not lines.select(hit.any()).item():
            return empty_parsed(lines)
        if TAG not in lines.columns:
            lines = lines.with_columns(pl.lit(None, dtype=pl.String).alias(TAG))
        # the line before each one, of the same task, and its time: a position said on a line of its own beside the
        # line that measures it (DeepSpeed's ``step=40`` then its timer's ``0/40, SamplesPerSec=83.5``)
        before = (
            [
                pl.col("line").shift(1).over(TAG).alias("_prev_line"),
                pl.col(STAMP).shift(1).over(TAG).alias("_prev_stamp"),
            ]
            if STAMP in lines.columns
            else []
        )
        before.append(_banner_epochs(lines, context).alias("_banner_epoch"))
        gated, rest = lines.filter(hit), lines.filter(~hit)
        # tqdm and Keras rewrite a line with carriage returns: each update is a statement of its own.
        pieces = (
            lines.with_columns(*before)
            .filter(hit)
            .with_columns(_piece=unescaped_returns(pl.col("line")).str.split("\r"))
            .explode("_piece")
            .filter(pl.col("_piece").str.strip_chars() != "")
            .with_row_index("_order")
        )
        read = with_statements(pieces, "_piece", prefix="_").with_columns(
            **{f"_{k}": v for k, v in dict_statements(pl.col("_piece")).items()},
            _not_training=pl.col("_piece").str.extract(_TQDM_DESC, 1).str.contains(NOT_TRAINING).fill_null(False),
        )
        read = read.with_columns(_not_training=pl.col("_not_training") | _evaluation_bars(read, lines, context))
        read = read.with_columns(_not_training=pl.col("_not_training") | _nested_bars(read, context))
        read = read.with_columns(_not_training=pl.col("_not_training") | _lossless_bars(read, context))
        read = _block_positions(read, _blocks(lines))
        every_piece = read
        has_position = pl.col("_step").is_not_null() & ~pl.col("_counter_date")
        # a bar that prints no rate measures its steps by its elapsed clock (more than none: a bar at its start, or a
        # quick bar of data work ``118287/118287 00:00``, times nothing)
        bar_timed = pl.col("_position").is_in(list(_BAR_POSITIONS)) & (pl.col("_bar_elapsed_s") > 0)
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
        # The shell's "Killed" (or another signal's word) glued to the bar the OS stopped: that line is the failure
        # (the status lines read
        # it), not a record; a line has one outcome.
        killed = pl.col("line").str.contains(ENDED_BY_SIGNAL)
        training = ~pl.col("_not_training") & ~killed & ~pl.col("_evaluation") & ~pl.col("_other_work")
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
        plain = (
            ~subject.str.contains(NOT_TRAINING)
            & ~subject.str.contains(_SUMMARY_WORDS)
            & ~pl.col("_piece").str.contains(_OTHER_LOSS)
            # a number no word of a step's report names is a measure the learned layout may read
            # (a digit inside a key's name, ``top_1_accuracy``, is no number)
            & ~_unnamed_numbers(pl.col("_piece")).str.contains(r"\b\d")
        )
        logger_timed = training & has_position & pl.col("_loss_said") & logged_at & plain
        read = read.with_columns(_logger_timed=_timed_by_logger(read, logger_timed, record, context))
        record = record | pl.col("_logger_timed")
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
        # an epoch with its duration, where the file states no finer position (see :func:`_epoch_records`)
        # (or with the seconds since the start at its end: Chainer's ``elapsed_time``; its duration the rise since the
        # previous epoch's; or with its examples/s: CNTK's ProgressPrinter ``Finished Epoch[17 of 20]: [Training]
        # loss = 25.550015 * 40, metric = 0.48% * 40 3.008s ( 13.3 samples/s);``, microsoft/CNTK issue 2354,
        # 2017-09-23, its seconds glued after a count and read by no key)
        epoch_timed = pl.any_horizontal(pl.col(c).is_not_null() for c in ("_bare_s", "_elapsed_s", "_examples_per_s"))
        epoch_record = training & ~record & pl.col("_epoch_only").is_not_null() & epoch_timed
        read = _epoch_records(read, record, epoch_record, context)
        record = record | pl.col("_epoch_record")
        # a line stating a position whose only measures are broken (a rate of 0, NaN, ``2,5``) looks like a record
        broken = training & has_position & ~record & pl.col("_broken").is_not_null()
        dicts = read.filter(~record & ~broken & pl.col("_dict_loss").is_not_null())
        read = _paired_positions(read.filter(record | broken).with_columns(_broken=pl.when(broken).then("_broken")))
        read = _timer_totals_that_stand(_totals_that_count_on(read))
        step = number("_step", pl.Int64)
        too_big = pl.col("_step").is_not_null() & (step.is_null() | (step > WHOLE_MAX["step"]))
        bad = too_big | pl.col("_broken").is_not_null()
        rejects = reject_frame(
            read.filter(bad).with_columns(pl.col("_piece").alias("line")),
            pl.when(too_big).then(pl.format(f"step '{{}}' {NOT_WHOLE}", "_step")).otherwise("_broken"),
            self.name,
        )
        good = read.filter(~bad).with_columns(step.alias("step"), pl.col("_loss").alias("loss"))
        good = _bar_laps(_restarted_batches(_whole_steps(good, context), context), context)
        good = _optimizer_steps(good)
        good = _bare_intervals(good, context)
        good = _stated_clock_intervals(_cumulative_times(good))
        good, placed = place_dict_losses(good, dicts, epochs_stated(lines))
        # tqdm's elapsed time is a clock where the line has no other. A bar redrawn at its step (after a logging
        # dict, an evaluation) is the same record: every drawing keeps the time of the first, so it stays a copy.
        stamped = pl.col(STAMP).is_not_null() if STAMP in good.columns else pl.lit(False)
        first_drawing = pl.col("_bar_elapsed_s").sort_by("_order").first().over(TAG, "step")
        # ... and its figures: the rate of its first drawing, the loss of its last (a bar redrawn at its step when
        # the step's loss is logged, ``..., 8.77s/it]`` then ``..., 8.77s/it, loss=10.5]``, is one record)
        redrawn = pl.col("_position").is_in([p.spelling for p in POSITIONS if p.spelling in _BAR_POSITIONS])
        good = good.with_columns(
            loss=pl.when(redrawn)
            .then(pl.col("loss").sort_by("_order").drop_nulls().last().over(TAG, "step"))
            .otherwise("loss"),
            _per_s=pl.when(redrawn)
            .then(pl.col("_per_s").sort_by("_order").first().over(TAG, "step"))
            .otherwise("_per_s"),
        )
        # ... and it times the bar's own counter only (not a "global step N" glued after the bar)
        bar_counter = pl.col("_position").is_in([p.spelling for p in POSITIONS if p.spelling in _BAR_POSITIONS])
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
            & ~pl.col("_piece").str.contains(_BAR_DRAWN)
            & pl.col("line").str.contains("\r", literal=True)
        ).with_columns(pl.col("_piece").alias("line"))
        rest = pl.concat(
            [rest, gated.filter(~pl.col("source_offset").is_in(taken)), glued, beside.select(gated.columns)]
        ).sort("source_offset")
        return Parsed(steps=steps, events=pl.DataFrame(), rejects=rejects, rest=rest)
