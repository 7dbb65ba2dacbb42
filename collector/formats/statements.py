"""A message read as statements: its position, measures and metrics as columns, by polars expressions.

The words and units are the vocabulary's (:mod:`~tierscope.collector.formats.vocabulary`); what makes a
line a record is the grammar's (:mod:`~tierscope.collector.formats.grammar`). Each statement is one
column of a frame of messages (``_step``, ``_per_s``, ``_interval_s``, ...; None where the message does
not state it), extracted from every message at once (no Python per line)."""

from __future__ import annotations

import functools

import polars as pl

from tierscope.collector.formats.vocabulary import (
    BAR,
    BAR_EPOCH,
    BARE_TIMES,
    DOCKER_STEP,
    EPOCH,
    EPOCH_EVALUATION,
    ETA_DATE,
    EVALUATION_WORDS,
    EXAMPLES_KEY_PER_DEVICE,
    INNER_TOTAL,
    LINE_BATCH,
    MEASURES,
    OTHER_WORK,
    POSITIONS,
    SPAN,
    TIME_LEFT,
    TOKENS_PER_STEP,
    Measure,
    clock_seconds,
    measure_reason,
    number,
    parts_seconds,
    rate_from_time,
    spelled_number,
    stated_rate,
)

#: The positions a tqdm bar states itself: its elapsed time is theirs.
BAR_POSITIONS = ("N it [ (a tqdm bar without a total)", "NN%|...| N/M (a tqdm bar)", "N/M")


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
INNER_NAMED = "step N / iteration N / iter #N / batch N"


BAR_NAMED = "NN%|...| N/M (a tqdm bar)"


BAR_COUNTER = rf"{BAR}\d+/(\d+)"


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


def first_matched(patterns: list[tuple[str, str]], text: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """``(value, spelling)`` of the first of ``patterns`` (``(spelling, regex with group x)``) found in ``text``."""
    values = [text.str.extract(regex, 1) for _, regex in patterns]
    which = [pl.when(v.is_not_null()).then(pl.lit(s)) for v, (s, _) in zip(values, patterns, strict=True)]
    return pl.coalesce(values), pl.coalesce(which)


def measure_raw(text: pl.Expr, m: Measure) -> pl.Expr:
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
            **{f"{_T}m{i}": measure_raw(t, m) for i, m in enumerate(MEASURES)},
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
        if m.clock or m.parts:
            value = clock_seconds(raw) if m.clock else parts_seconds(raw)
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
                        number(epoch.struct.field("e"), pl.Int64) - 1,
                        number(epoch.struct.field("z"), pl.Int64),
                        number(epoch.struct.field("t"), pl.Int64),
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
                # a position a line's epoch may count (see :func:`whole_steps`): a step, iteration or batch, a range,
                # a bar's, a counter
                prefix + "inner": (
                    spelling.is_in([INNER_NAMED, BAR_NAMED])
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
                # it is the run's clock, no step time; where nothing says what it covers, see :func:`bare_intervals`.
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


#: A progress bar's drawing with its count (``31%|###    | 5974/19120``, ``100%|####|5000/5000``).
BAR_DRAWN = rf"{BAR}\d+/\d+"


def epoch_statements(text: pl.Expr, position: pl.Expr) -> dict[str, pl.Expr]:
    """``epoch`` (String: the epoch the message states, or the counter of a tqdm bar's description) and
    ``inner_total`` (String: the total of the message's ``position``, the spelling read, where it has one)."""
    counter = counter_groups(text)
    return {
        "epoch": pl.coalesce(text.str.extract(EPOCH, 1), text.str.extract(BAR_EPOCH, 1)),
        "inner_total": pl.when(position == INNER_NAMED)
        .then(text.str.extract(INNER_TOTAL, 1))
        .when(position == BAR_NAMED)
        .then(text.str.extract(BAR_COUNTER, 1))
        .when(position == "N/M")
        .then(counter.struct.field("m")),
    }
