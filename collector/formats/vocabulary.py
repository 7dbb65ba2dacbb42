"""How TF-era training tools write progress, defined once: phrases, units, meanings.

Every text format (shipped or declared by a user) is a pattern built from these
fragments, and every figure it captures goes through :func:`record_columns`, so a
``ms/step`` is turned into steps/s by the same code whoever read it.

**Group names** (:data:`GROUPS`): a pattern's named groups say what a number *is*:

- ``step`` (the global step), ``local_step`` (the task's own count), ``total_steps`` (the
  ``M`` of an ``N/M`` counter, not stored).
- stated rates: ``global_steps_per_s``, ``local_steps_per_s``; rates whose scope the
  phrase does not say: ``steps_per_s`` (``X steps/s``), ``it_per_s`` (tqdm ``X it/s``).
- step times, the inverse of a rate: ``sec_per_step`` (``(X sec/step)``, ``per-step time Xs``),
  ``s_per_it`` (tqdm ``X s/it``), ``ms_per_step`` (Keras ``52ms/step``), ``ms_per_it``
  (``439.65 ms/it``), ``us_per_step``.
- ``examples_per_s`` (``examples/sec: X``, ``images/sec: X``, ``instances/sec``): kept as
  logged, never turned into steps (that needs the batch size).
- times: ``elapsed_s`` (seconds since the task started), ``interval_s`` (seconds since the
  task's previous record: Estimator ``(X sec)``, an epoch's ``time: X sec``).
- ``loss``, ``accuracy`` (0..1; a ``%`` figure is ``accuracy_pct``), ``role``, ``task``,
  ``timestamp`` (declared formats; the shipped ones get them from the envelope).
- ``pid``: the id of the process that wrote the line, where the log layout puts one
  (``%(process)d`` in a Python logging format). A change within a task is a new process
  (:data:`tierscope.dataset.schema.STEP_SCHEMA`): no rate is derived or computed across it.

**Meaning of a step time.** A task's own step time is its *local* rate; it is the job's
*global* rate only when the task's step is the job's step: one training process, or
synchronous data-parallel replicas (Keras ``MultiWorkerMirroredStrategy``, Horovod, TF2
custom loops). Between-graph replicas with parameter servers (TF-slim, Estimator on
Cloud ML Engine) all advance one shared global step, so a worker's ``sec/step`` says
nothing about the job's global steps/s. Each format states which case it is
(:data:`LOCAL` or :data:`SHARED`); a declared format chooses with its ``meaning`` hint.

Units: steps/s for every rate, seconds for every time. The conversions are exact IEEE
operations (``1 / s``, ``1000 / ms``, ``1e6 / us``), so ``1000 / 52`` is exactly what a
reader computes by hand.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final, Literal, NamedTuple

import polars as pl

#: A number as logs print it: ``12``, ``-0.5``, ``1.``, ``.5``, ``3e-05``, ``nan``, ``inf``.
NUMBER: Final = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:[Nn]a[Nn]|inf|Infinity))"
#: A whole number (steps, counters).
WHOLE: Final = r"\d+"

#: Every named group a pattern may use; declared formats are checked against this list.
GROUPS: Final[tuple[str, ...]] = (
    "step",
    "local_step",
    "total_steps",
    "global_steps_per_s",
    "local_steps_per_s",
    "steps_per_s",
    "it_per_s",
    "sec_per_step",
    "s_per_it",
    "ms_per_step",
    "ms_per_it",
    "us_per_step",
    "examples_per_s",
    "elapsed_s",
    "interval_s",
    "loss",
    "accuracy",
    "accuracy_pct",
    "role",
    "task",
    "timestamp",
    "pid",
)

#: A step time or an unqualified rate is the task's own (between-graph replicas, parameter servers).
LOCAL: Final = "local"
#: ... or also the job's: one process, or synchronous replicas that all run every global step.
SHARED: Final = "shared"
Meaning = Literal["local", "shared"]

#: Rates (steps/s) by group: ``(scope, multiplier)``. Scope ``None``: the phrase does not say.
RATE_GROUPS: Final[Mapping[str, tuple[str | None, float]]] = {
    "global_steps_per_s": ("global", 1.0),
    "local_steps_per_s": ("local", 1.0),
    "steps_per_s": (None, 1.0),
    "it_per_s": (None, 1.0),
}
#: Step times by group: seconds per step = value / divisor, so steps/s = divisor / value.
TIME_GROUPS: Final[Mapping[str, float]] = {
    "sec_per_step": 1.0,
    "s_per_it": 1.0,
    "ms_per_step": 1e3,
    "ms_per_it": 1e3,
    "us_per_step": 1e6,
}
#: Time units as printed (``52ms/step``, ``4s``, ``1.2us``) -> units per second.
UNITS_PER_SECOND: Final[Mapping[str, float]] = {"s": 1.0, "sec": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6}


def _g(name: str | None, body: str) -> str:
    return f"(?:{body})" if name is None else f"(?P<{name}>{body})"


#: Every spelling of a figure the field uses: ``spelling -> (group, regex template)``. The
#: template's ``{n}`` is the number (captured as the group), ``{w}`` a whole number and
#: ``{m}`` a counter's total. Regex groups must be unique per pattern, so each spelling
#: is its own entry and a pattern picks the ones its tool prints.
PHRASES: Final[Mapping[str, tuple[str, str]]] = {
    # steps
    "step N": ("step", r"\bstep\s+{w}\b"),
    "Step N": ("step", r"\bStep\s+{w}\b"),
    "step = N": ("step", r"\bstep\s*=\s*{w}\b"),
    "global step N": ("step", r"\bglobal step:?\s+{w}\b"),
    "global_step N": ("step", r"\bglobal_step\s+{w}\b"),
    "global_step=N": ("step", r"\bglobal_step\s*=\s*{w}\b"),
    "(global_step N)": ("step", r"\(global_step\s+{w}\)"),
    "(global step: N)": ("step", r"\(global step:\s*{w}\)"),
    "Global steps: N": ("step", r"\bGlobal steps:\s*{w}\b"),
    "Steps: N": ("local_step", r"\bSteps:\s*{w}\b"),
    "N/M": ("step", r"\b{w}/{m}\b"),
    "it N/M": ("step", r"\bit\s+{w}/{m}\b"),
    # stated rates
    "global_step/sec: X": ("global_steps_per_s", r"\bglobal_step/sec:\s*{n}"),
    "X global steps/s": ("global_steps_per_s", r"{n}\s+global[ _]steps/s\b"),
    "X local steps/s": ("local_steps_per_s", r"{n}\s+local[ _]steps/s\b"),
    "X steps/s": ("steps_per_s", r"{n}\s*steps?/s(?:ec)?\b"),
    "X it/s": ("it_per_s", r"{n}\s*it/s\b"),
    # step times
    "(X sec/step)": ("sec_per_step", r"\(\s*{n}\s*sec/step\s*\)"),
    "X sec/step": ("sec_per_step", r"{n}\s*sec/step\b"),
    "Xs/step": ("sec_per_step", r"{n}s/step\b"),
    "per-step time Xs": ("sec_per_step", r"\bper-step time\s*{n}\s*s\b"),
    "X s/it": ("s_per_it", r"{n}\s*s/it\b"),
    "X ms/step": ("ms_per_step", r"{n}\s*ms/step\b"),
    "X ms/it": ("ms_per_it", r"{n}\s*ms/it\b"),
    "X us/step": ("us_per_step", r"{n}\s*us/step\b"),
    # examples
    "examples/sec: X": ("examples_per_s", r"\bexamples/sec:\s*{n}"),
    "images/sec: X": ("examples_per_s", r"\bimages/sec:\s*{n}"),
    "X instances/sec": ("examples_per_s", r"{n}\s*instances/sec\b"),
    # times
    "(X sec)": ("interval_s", r"\(\s*{n}\s*sec\s*\)"),
    "time: X sec": ("interval_s", r"\btime:\s*{n}\s*sec\b"),
    "Duration: X sec": ("elapsed_s", r"\bDuration:\s*{n}\s*sec\b"),
    # metrics
    "loss = X": ("loss", r"\bloss\s*=\s*{n}"),
    "loss: X": ("loss", r"\bloss:\s*{n}"),
    "loss X": ("loss", r"\bloss\s+{n}"),
    "Loss: X": ("loss", r"\bLoss:\s*{n}"),
    "accuracy: X": ("accuracy", r"\baccuracy:\s*{n}"),
    "accuracy X %": ("accuracy_pct", r"\baccuracy\s+{n}\s*%"),
}


def phrase(spelling: str, name: str | None = None, total: str | None = None) -> str:
    """The regex of one :data:`PHRASES` spelling, its number captured as ``name`` (default: the
    spelling's group; ``""``: not captured). ``total`` names the group of an ``N/M`` counter's M.
    Raises KeyError for a spelling not in :data:`PHRASES`."""
    group, template = PHRASES[spelling]
    name = group if name is None else (name or None)
    return template.format(n=_g(name, NUMBER), w=_g(name, WHOLE), m=_g(total, WHOLE))


#: One regex that matches every line any progress phrase above could match (and a few
#: more): the cheap first test of a line. A line failing it holds no step record, so a
#: file of an unknown format costs this one pass and nothing else.
GATE: Final = r"(?i:step|/sec|/s\b|it/s|s/it|ms/|sec\)|\d/\d|loss|throughput|time:)"


def gate(lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(lines that may hold progress, lines that cannot)`` by one pass of :data:`GATE`."""
    hit = lines.get_column("line").str.contains(GATE)
    return lines.filter(hit), lines.filter(~hit)


def number(column: str | pl.Expr, dtype: pl.DataType | type[pl.DataType] = pl.Float64) -> pl.Expr:
    """A String column or expression as ``dtype``; null where it is not a number (never raises)."""
    expr = pl.col(column) if isinstance(column, str) else column
    return expr.str.strip_chars().cast(dtype, strict=False)


#: The groups that hold a whole number >= 0, with the type it is stored as: a capture that is not one
#: (``-5``, ``12.5``, or more than the type holds: a pid above 2**63 - 1) makes its line a reject.
WHOLE_GROUPS: Final[Mapping[str, pl.DataType]] = {
    "step": pl.Int64(),
    "local_step": pl.Int64(),
    "task": pl.Int32(),
    "pid": pl.Int64(),
}
#: The largest value each of :data:`WHOLE_GROUPS` holds (2**63 - 1, 2**31 - 1): the bound for a
#: number decoded outside polars (a JSON record's), which would overflow the frame instead.
WHOLE_MAX: Final[Mapping[str, int]] = {g: pl.select(t.max()).item() for g, t in WHOLE_GROUPS.items()}
#: What such a capture is not, in the reject's reason: ``pid '99999999999999999999' is not a whole number >= 0``.
NOT_WHOLE: Final = "is not a whole number >= 0"
#: Unix seconds a time of a log can be: from 1970 to the end of year 9999 (what a timestamp holds).
UNIX_TIME_RANGE: Final = (0.0, 253_402_300_800.0)
#: What a capture outside it is not, in the reject's reason.
NOT_UNIX_TIME: Final = "is not a time between 1970 and 9999 (Unix seconds)"


#: What an infinite loss is, in the reject's reason (``loss 'inf' is infinite``; 1e309 reads as inf). A
#: NaN loss is a value (a diverged model, stored with a note: its step and timing are real); an
#: infinity is none, as the structured log's JSON rejects Infinity and 1e400 alike.
INFINITE: Final = "is infinite"


def loss_reason(raw: pl.Expr) -> pl.Expr:
    """A reject's reason for the loss capture ``raw`` (String), null where it is a number or NaN, or absent."""
    return pl.when(number(raw).is_infinite()).then(pl.format(f"loss '{{}}' {INFINITE}", raw))


#: The groups that hold seconds, and the accuracy groups with their range (a fraction, a percentage): a
#: capture outside makes its line a reject (an epoch's ``time: inf sec`` was a record at 0 steps/s).
SECONDS_GROUPS: Final = ("elapsed_s", "interval_s")
ACCURACY_RANGE: Final[Mapping[str, tuple[float, float]]] = {"accuracy": (0.0, 1.0), "accuracy_pct": (0.0, 100.0)}
#: What a time capture is not, in the reject's reason (the declared formats' words).
NOT_SECONDS: Final = "is not a finite number >= 0"


def value_reason(group: str, raw: pl.Expr) -> pl.Expr | None:
    """A reject's reason for a figure's capture ``raw`` (String) of :data:`SECONDS_GROUPS`, :data:`TIME_GROUPS` or
    :data:`ACCURACY_RANGE` that no record holds (NaN included), null where it is fine or absent;
    None for another group."""
    value = number(raw)
    # A step time of NaN, an infinity or below 0 is no time (it was dropped with its line's step and loss,
    # counted as a line with no metric); 0 is a fast step's time rounded by its printing (`0.000 sec/step`)
    if group in SECONDS_GROUPS or group in TIME_GROUPS:
        bad, what = ~(value.is_finite() & (value >= 0)), NOT_SECONDS
    elif group in ACCURACY_RANGE:
        low, high = ACCURACY_RANGE[group]
        bad, what = ~(value.is_not_nan() & value.is_between(low, high)), f"is not a number between {low:g} and {high:g}"
    else:
        return None
    return pl.when(raw.is_not_null() & bad.fill_null(True)).then(pl.format(f"{group} '{{}}' {what}", raw))


def not_whole(raw: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """True where ``raw`` (a String capture) holds text that is not a whole number >= 0 ``dtype`` holds;
    false where it holds none (null: nothing captured)."""
    value = number(raw, dtype)
    return raw.is_not_null() & (value.is_null() | (value < 0)).fill_null(True)


def whole_reason(group: str, raw: pl.Expr) -> pl.Expr:
    """A reject's reason for ``group``'s capture ``raw`` (:data:`WHOLE_GROUPS`), null where it is fine or absent."""
    return pl.when(not_whole(raw, WHOLE_GROUPS[group])).then(pl.format(f"{group} '{{}}' {NOT_WHOLE}", raw))


def is_unix_time(seconds: float) -> bool:
    """True where ``seconds`` (Unix seconds, a decoded number) is a time of :data:`UNIX_TIME_RANGE`."""
    low, high = UNIX_TIME_RANGE
    return low <= seconds < high


def not_unix_time(raw: pl.Expr) -> pl.Expr:
    """True where ``raw`` (a String capture of Unix seconds) holds text that is no time of
    :data:`UNIX_TIME_RANGE`; false where it holds none."""
    low, high = UNIX_TIME_RANGE
    value = number(raw)
    return raw.is_not_null() & ((value >= low) & (value < high)).not_().fill_null(True)


def rate_from_time(seconds_per_unit: pl.Expr, divisor: float = 1.0) -> pl.Expr:
    """Steps/s from a step time ``value`` printed in units of ``1/divisor`` s: ``divisor / value``.

    Null for a time that is not a finite number > 0 (a ``0ms/step`` display rounds a fast
    step to zero: unknown, not infinite) and where the rate would not be finite."""
    ok = seconds_per_unit.is_finite() & (seconds_per_unit > 0)
    rate = pl.lit(divisor) / seconds_per_unit
    # A time so small that its inverse overflows (1e-320 s) is no rate either.
    return pl.when(ok & rate.is_finite()).then(rate)


def unsigned(expr: pl.Expr) -> pl.Expr:
    """True where ``expr`` is > 0 or a zero without a minus sign: ``-0`` (-0.0) is refused as a negative figure is
    (a printed ``-0`` is a negative measure rounded, or no steps over a clock that went back: 1 / -0.0 is -inf)."""
    return (expr > 0) | ((expr == 0) & ((1 / expr) > 0))


def stated_rate(value: pl.Expr, multiplier: float = 1.0) -> pl.Expr:
    """Steps/s from a stated rate; null unless a finite number >= 0 without a minus sign (``-0`` is refused)."""
    ok = value.is_finite() & unsigned(value)
    return pl.when(ok).then(value if multiplier == 1.0 else value * multiplier)


def record_columns(present: Collection[str], meaning: Meaning = LOCAL) -> dict[str, pl.Expr]:
    """Step-record columns from String columns named after :data:`GROUPS`.

    ``present``: the group columns the frame has (a pattern's group names; absent ones are
    taken as null). Returns expressions by output column, to pass to ``with_columns`` /
    ``select``: ``step``, ``local_step`` (Int64), ``loss``, ``accuracy`` (Float64; a
    percentage divided by 100), ``elapsed_s``, ``interval_s`` (s), ``global_steps_per_s``,
    ``local_steps_per_s`` (steps/s), ``examples_per_s``, ``rate_derived`` (Boolean, False:
    every rate here is a printed figure, at most converted). Rule: a stated global or local
    rate wins; otherwise an unqualified rate or a step time (:data:`RATE_GROUPS`,
    :data:`TIME_GROUPS`, first present in that order) gives the local rate, and also the
    global rate when ``meaning`` is :data:`SHARED`. Values that are not numbers become null
    (the caller decides whether that makes a reject). With a ``role`` / ``task`` group the
    result also has ``role`` (lower case) and ``task_index`` (Int32), with a ``pid`` group
    ``pid`` (Int64); ``timestamp`` is left to the caller (its format varies).
    """
    have = set(present)

    def col(name: str, dtype: pl.DataType | type[pl.DataType] = pl.Float64) -> pl.Expr:
        return number(name, dtype) if name in have else pl.lit(None, dtype=dtype)

    own: list[pl.Expr] = []
    for group, (scope, mult) in RATE_GROUPS.items():
        if scope is None and group in have:
            own.append(stated_rate(col(group), mult))
    for group, divisor in TIME_GROUPS.items():
        if group in have:
            own.append(rate_from_time(col(group), divisor))
    task_rate = pl.coalesce(own) if own else pl.lit(None, dtype=pl.Float64)
    global_rate = stated_rate(col("global_steps_per_s"))
    local_rate = stated_rate(col("local_steps_per_s"))
    accuracy = col("accuracy")
    if "accuracy_pct" in have:
        accuracy = pl.coalesce(accuracy, col("accuracy_pct") / 100)
    return {
        "step": col("step", pl.Int64),
        "local_step": col("local_step", pl.Int64),
        "loss": col("loss"),
        "accuracy": accuracy,
        "elapsed_s": col("elapsed_s"),
        "interval_s": col("interval_s"),
        "global_steps_per_s": pl.coalesce(global_rate, task_rate) if meaning == SHARED else global_rate,
        "local_steps_per_s": pl.coalesce(local_rate, task_rate),
        "examples_per_s": stated_rate(col("examples_per_s")),
        "rate_derived": pl.lit(False),
        **({"role": pl.col("role").str.strip_chars().str.to_lowercase()} if "role" in have else {}),
        **({"task_index": col("task", pl.Int32)} if "task" in have else {}),
        **({"pid": col("pid", pl.Int64)} if "pid" in have else {}),
    }


def derive_rates(steps: pl.DataFrame, by: str | list[str], time: str = "timestamp") -> pl.DataFrame:
    """``steps`` with rates the log did not print computed from its clock, flagged ``rate_derived``.

    For each record with a ``step`` and a ``time`` (a Datetime column) and no
    ``global_steps_per_s``: the global steps gained since the previous such record of the
    same ``by`` group and process (``pid``, where the frame has it; in time order) over the
    seconds between them, when both are > 0 (a step going back or standing still is a
    restart, a change of process a new one: no rate across either). The same for
    ``local_steps_per_s`` from ``local_step``. ``rate_derived`` is True where a rate was
    filled; the frame's row order is kept.
    """
    if steps.height == 0 or time not in steps.columns or "step" not in steps.columns:
        return steps
    keys = [by] if isinstance(by, str) else list(by)
    keys += ["pid"] if "pid" in steps.columns else []
    frame = steps.with_row_index("_row")
    has_local = "local_step" in frame.columns
    for name in ("global_steps_per_s", "local_steps_per_s"):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.Float64).alias(name))
    timed = frame.filter(pl.col("step").is_not_null() & pl.col(time).is_not_null()).sort([*keys, time, "_row"])
    seconds = (pl.col(time) - pl.col(time).shift(1).over(keys)).dt.total_microseconds() / 1e6

    def per_second(column: str) -> pl.Expr:
        gained = pl.col(column) - pl.col(column).shift(1).over(keys)
        return pl.when((gained > 0) & (seconds > 0)).then(gained / seconds)

    timed = timed.select(
        "_row",
        _g=per_second("step"),
        _l=per_second("local_step") if has_local else pl.lit(None, dtype=pl.Float64),
    )
    frame = frame.join(timed, on="_row", how="left").sort("_row")
    fill_g = pl.col("global_steps_per_s").is_null() & pl.col("_g").is_not_null()
    fill_l = pl.col("local_steps_per_s").is_null() & pl.col("_l").is_not_null()
    before = pl.col("rate_derived") if "rate_derived" in frame.columns else pl.lit(False)
    return frame.with_columns(
        global_steps_per_s=pl.coalesce("global_steps_per_s", "_g"),
        local_steps_per_s=pl.coalesce("local_steps_per_s", "_l"),
        rate_derived=before.fill_null(False) | fill_g | fill_l,
    ).drop("_row", "_g", "_l")


def stepless_position() -> pl.Expr:
    """``position`` for a step record: its ``source_offset`` when it has no ``step``, else null.

    A step-less record (a ``global_step/sec`` report) is identified and ordered by where it sits."""
    return pl.when(pl.col("step").is_null()).then(pl.col("source_offset")).alias("position")


def unix_time(column: str) -> pl.Expr:
    """A String column of Unix seconds (``1514344770.659784``) as a UTC Datetime (µs); null if not a number."""
    micros = (number(column) * 1e6).round(0).cast(pl.Int64, strict=False)
    return pl.from_epoch(micros, time_unit="us").dt.replace_time_zone("UTC")


def clock(text: pl.Expr, layout: str, year: int | None = None) -> pl.Expr:
    """A time printed as ``layout`` (strftime, taken as UTC) as a Datetime (µs, UTC); null if it does not parse.

    With ``year``, ``text`` has no year (glog ``0807 10:55:08``) and ``layout`` starts with
    ``%m``: the year is prepended. Without one such a time stays null."""
    if "%Y" not in layout:
        if year is None:
            return pl.lit(None, dtype=pl.Datetime("us", "UTC"))
        text = pl.concat_str(pl.lit(f"{year} "), text)
        layout = f"%Y {layout}"
    return text.str.to_datetime(layout, time_unit="us", time_zone="UTC", strict=False)


# ---------------------------------------------------------------------------------------------
# The grammar's words (:mod:`tierscope.collector.formats.grammar`): positions and measures as any
# tool spells them. Sources of the spellings (facts about the tools' output, read 2026-12-06):
# Megatron-LM ``training.py`` (``iteration N/ M | ... elapsed time per iteration (ms): X``),
# Hugging Face transformers ``trainer.py`` (``train_steps_per_second``, ``train_runtime``) and tqdm
# (``N/M [mm:ss<mm:ss, X it/s]``), detectron2 ``utils/events.py`` (``iter: N ... time: X``), mmcv's
# text logger (``Epoch [E][N/M] ... time: X``), fairseq's progress bar (``num_updates=N``, ``ups=X``,
# ``wps=X``, ``wall=X``), TF Model Garden Orbit (``step: N | steps/sec: X``), TensorFlow's
# StepCounterHook (``global_step/sec: X``), tf_cnn_benchmarks and Horovod's synthetic benchmark
# (``images/sec``, ``Img/sec per GPU``), NVIDIA DeepLearningExamples' DLLogger (``throughput_train : X seq/s``).
# Read 2026-12-06 from public issue threads quoting them: MMEngine's logger (``Epoch(train) [E][N/M] ... time:``,
# open-mmlab/mmengine PR 155), torchvision's reference MetricLogger (``Epoch: [E]  [N/M] ... time:``), MXNet's
# Speedometer (``Epoch[E] Batch [N]``), NeMo 2 (``train_step_timing in s``, NVIDIA-BioNeMo/bionemo-recipes PR 740),
# Detectron's ``json_stats`` (facebookresearch/Detectron issue 918), DeepSpeed's engine and ThroughputTimer
# (``step=N`` then ``E/N, SamplesPerSec=X``, deepspeedai/DeepSpeed issue 1825), PyTorch/XLA's MNIST example
# (``Step=N ... Rate=X``, a ``RateTracker``'s samples/s), Ultralytics YOLO's epoch rows (ultralytics issue 7653).
# Read 2026-12-06 the same way, for stacks other than language models: ESPnet2's reporter (``9epoch:train:376-750batch:
# ... train_time=X``, espnet/espnet issues 2674 and 2183), wav2letter (``nupdates: N | ... | bch(ms): X``,
# flashlight/wav2letter issue 728), Lingvo's trainer (``Steps/second: X``, tensorflow/lingvo issue 42), CLU's
# LoggingWriter (``[N] steps_per_second=X, ...``, google/flax issue 3364), PaddlePaddle's image classification
# (``batch_cost 0.13 sec ... ips X images/sec``, PaddlePaddle/models PR 4882), DLLogger's ``total_ips : X``
# (NVIDIA/DeepLearningExamples issue 881), DrQA (``elapsed time = X (s)``, facebookresearch/DrQA issue 137) and the
# MXNet R package's speedometer (``Batch [N] Speed: ...``, apache/mxnet PR 3932).
# ---------------------------------------------------------------------------------------------


class Position(NamedTuple):
    """A way of saying where training is: ``kind`` ``named`` (group ``x`` the step), ``epoch-counter``
    (groups ``e``, ``x``, ``m``: the step is ``(e - 1) * m + x``; or ``z`` or ``t`` for ``e``, counted from 0:
    ``z * m + x``)
    or ``counter`` (``x`` of ``x/m``; a date is none)."""

    spelling: str
    kind: str
    regex: str


class Measure(NamedTuple):
    """A number with a unit: ``kind`` ``time`` (a step time; steps/s = ``factor`` / value), ``rate``
    (steps/s, the task's and the job's), ``global`` (global steps/s, job-wide), ``examples_per_s``,
    ``interval_s`` (seconds since the previous report), ``elapsed_s`` (seconds since the start) or
    ``loss``; its number is the regex's first group."""

    spelling: str
    kind: str
    regex: str
    factor: float = 1.0
    #: True where the number is written as a clock (``00:04:59``, ``1:02:03.5``): see :data:`CLOCK_DURATION`.
    clock: bool = False
    #: True where the number is written in unit parts (``3h 44m 55s``, ``57.6ms``): see :data:`PARTS_DURATION`.
    parts: bool = False

    @property
    def owned_number(self) -> str | None:
        """Where the unit follows its number (``X steps/s``): the regex of that number when it is another key's
        value, a metric's or a position's (``loss 1.0000 steps/sec 5.0``: 1.0000 is the loss, the rate is 5.0;
        ``Iter 10 steps/sec 5.0``: 10 is the iteration), else None."""
        if not self.regex.startswith(_N):
            return None
        return rf"(?:\b|_)(?i:{METRIC_KEYS}|{_OWNING_POSITIONS})['\"]?\s*[:=]?\s*{self.regex}"


#: The words of a position whose number a unit after it does not take (``step 10 examples/sec 1234``).
_OWNING_POSITIONS = r"steps?|iter(?:ation)?s?|epochs?|batch(?:es)?|updates?"


#: A duration written as a clock, ``[H:]MM:SS[.f]`` (llama.cpp's ``dt=00:04:59``): groups ``h``, ``m``, ``s``.
CLOCK_DURATION: Final = r"^(?:(?P<h>\d+):)?(?P<m>\d{1,2}):(?P<s>\d{2}(?:\.\d+)?)$"


def clock_seconds(raw: pl.Expr) -> pl.Expr:
    """Seconds of a :data:`CLOCK_DURATION` capture (String), null where it is none (``4:5``, ``01:02:03:04``)."""
    parts = raw.str.extract_groups(CLOCK_DURATION)
    minutes = number(parts.struct.field("m"))
    return pl.when(minutes < 60).then(
        number(parts.struct.field("h")).fill_null(0.0) * 3600 + minutes * 60 + number(parts.struct.field("s"))
    )


#: A duration written in unit parts, largest first, each part optional (CatBoost's ``3h 44m 55s``, ``1m 2s``,
#: ``45.4s``, ``57.6ms``, ``0us``): groups ``d``, ``h``, ``m``, ``s`` and the last part's unit ``u``.
PARTS_DURATION: Final = (
    r"^(?:(?P<d>\d+)d\s*)?(?:(?P<h>\d+)h\s*)?(?:(?P<m>\d+)m(?:in)?\s*)?(?:(?P<s>\d+(?:\.\d+)?)(?P<u>s|ms|us))?$"
)


def parts_seconds(raw: pl.Expr) -> pl.Expr:
    """Seconds of a :data:`PARTS_DURATION` capture (String), null where it is none or names no part (``""``,
    ``5x``)."""
    parts = raw.str.extract_groups(PARTS_DURATION)
    whole = [(number(parts.struct.field(k)), f) for k, f in (("d", 86400.0), ("h", 3600.0), ("m", 60.0))]
    unit = parts.struct.field("u")
    last = number(parts.struct.field("s")) * pl.when(unit == "ms").then(1e-3).when(unit == "us").then(1e-6).otherwise(
        1.0
    )
    said = pl.any_horizontal([v.is_not_null() for v, _ in whole] + [last.is_not_null()])
    total = pl.sum_horizontal([v.fill_null(0.0) * f for v, f in whole] + [last.fill_null(0.0)])
    return pl.when(said).then(total)


#: A number written with a metric prefix for its thousands, as human-readable loggers print it: nanotron's
#: ``elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | consumed_tokens: 85.8G`` (quoted in
#: huggingface/nanotron issue 390, 2025-10-17, and PR 23, 2024-01-17). The prefix ends the word: ``66.91GiB``
#: and ``9.7 GB`` are sizes, not scaled numbers. :data:`PREFIXES` gives the factors.
SCALED: Final = r"[-+]?\d+(?:\.\d+)?[kKMG]\b"
#: The factor of each metric prefix :data:`SCALED` allows (``K`` and ``k`` both thousands).
PREFIXES: Final[Mapping[str, float]] = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
#: A number as the grammar takes it from a message: :data:`NUMBER`, or a spelling that must not be read
#: in part (``12,500``, ``2,5``, ``1_000``, ``0x10``): :func:`spelled_number` reads it whole or says why not.
SPELLED: Final = (
    r"(?:[-+]?0[xX][0-9a-fA-F]+|[-+]?(?i:nan|inf(?:inity)?)\b"
    rf"|{SCALED}"
    rf"|[-+]?\d+(?:[,_]\d+)+(?:\.\d*)?(?:[eE][-+]?\d+)?|{NUMBER})"
)
_N = rf"({SPELLED})"
#: A whole number ending a position: thousands in groups of three (``12,500``) or plain digits, not the
#: whole part of a decimal (``step: 0.5``), nor a part of ``12,5000`` or ``1_000``, nor the first number of a
#: range or a date (``batch 11-20``, ``batch 2021-03-04``). A whole number printed with a fraction of zeros is whole
#: (a counter kept as a float and printed with a fixed format: mlprof's ``epoch=5.0000 step=33.0000 dt=0.0026``,
#: saforem2/vault, 2023-01-11); ``step: 33.5`` stays none.
_AT = r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.0+)?(?:[^\w.,-]|[.,-](?:\D|$)|$)"
#: Thousands in groups of three with one separator (``12,500``, ``1_000_000``, ``1,234.5``).
_GROUPED = r"^[-+]?\d{1,3}(?:(?:,\d{3})+|(?:_\d{3})+)(?:\.\d*)?(?:[eE][-+]?\d+)?$"
#: What a number with a separator in it that is no thousands separator is, in the reject's reason.
AMBIGUOUS: Final = "is ambiguous (a decimal comma? a separator that groups no thousands?)"


def spelled_number(raw: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """``(value, reason)`` of a capture of :data:`SPELLED` (String): the Float64 it says (thousands separators
    dropped, a metric prefix multiplied out: ``11.5K`` is 11500), and the reason it is no number where it is
    not one (null where it is one or absent)."""
    grouped = raw.str.contains(_GROUPED)
    scaled = raw.str.contains(rf"^{SCALED}$")
    prefix = raw.str.slice(-1)
    factor = pl.coalesce([pl.when(prefix == p).then(pl.lit(f)) for p, f in PREFIXES.items()])
    value = (
        pl.when(scaled)
        .then(number(raw.str.slice(0, raw.str.len_chars() - 1)) * factor)
        .otherwise(number(pl.when(grouped).then(raw.str.replace_all(r"[,_]", "")).otherwise(raw)))
    )
    reason = (
        pl.when(raw.str.contains(r"[,_]") & ~grouped)
        .then(pl.format(f"'{{}}' {AMBIGUOUS}", raw))
        .when(raw.is_not_null() & value.is_null())
        .then(pl.format("'{}' is not a number", raw))
    )
    return value, reason


def measure_reason(kind: str, raw: pl.Expr, value: pl.Expr, factor: float = 1.0) -> pl.Expr:
    """The reason a measure's capture ``raw`` with its ``value`` is no figure of a record (null where it is one):
    a rate or examples/s that is not a finite number > 0 (a rate of 0 is no rate: it gave a run an infinite
    cost), a time that is not a finite number >= 0 or whose inverse overflows. A time of 0 is no reason: a fast
    step's time printed rounded (``0us/step``) is unknown, so it is no measure, and its line no record."""
    if kind == "loss":
        return pl.lit(None, dtype=pl.String)
    if kind in ("rate", "global", "examples_per_s", "time_per_examples"):
        bad, what = ~(value.is_finite() & (value > 0)), "is not a finite number > 0"
    elif kind == "time":
        bad = ~(value.is_finite() & (value >= 0)) | ((value > 0) & ~(pl.lit(factor) / value).is_finite())
        what = "is not a finite time > 0"
    else:
        bad, what = ~(value.is_finite() & (value >= 0)), NOT_SECONDS
    return pl.when(raw.is_not_null() & bad.fill_null(False)).then(pl.format(f"'{{}}' {what}", raw))


#: A key's separator from its value, a JSON quote on either side allowed (``"train_ups": "0.31"``).
_KV = r"['\"]?\s*[:=]\s*['\"]?"
#: The same, for the readers of other statements that name a figure by its key (a closing summary's).
KEY_VALUE: Final = _KV
#: A key opening a column of a ``|``-separated row, its value after a space: fairseq prints its progress and its
#: epoch summaries so (``train | epoch 050 | loss 3.943 | ... | ups 3.38 | ... | num_updates 18950 | ... | wall
#: 5706``, fairseq/logging/progress_bar.py ``_str_pipes``; a run of 2021-05-10 quoted in shlomota/amnlp
#: ex2/transformer_exercise/summary.md). Only in a column: a key and a bare number in prose say nothing.
_COLUMN = r"(?:^|\|)\s*"
_PER_STEP_WORD = r"(?:it|its|iter|iters|iteration|iterations|step|steps|batch|batches|update|updates)"
_EXAMPLES_WORD = (
    r"(?i:examples|images|imgs?|samples|sequences|seqs?|sentences|tokens|toks|instances|records|words|frames)"
)
_DEVICE = r"(?:\s+per\s+(?i:GPU|device|replica|TPU|worker|chip|core|rank)|/(?i:device|chip|gpu|core))?"
#: ... or joined after the time in a key's words (``tokens_per_second_per_gpu``, ``samples_per_sec_per_device``).
_KEY_DEVICE_AFTER = r"(?:_per_(?i:gpu|device|replica|tpu|worker|chip|core|rank))?"
#: A key of one device's examples per second, its device said after the time (group 1): true of a line where the
#: first such key read says so, so a job-wide key before it (nanotron's ``tokens_per_sec: 22.8K |
#: tokens_per_sec_per_gpu: 11.4K``) keeps the line job-wide.
EXAMPLES_KEY_PER_DEVICE: Final = (
    r"(?i:(?:samples|examples|tokens|sequences)[_ ]?per[_ ]?sec(?:ond)?)(_per_(?i:gpu|device|replica|tpu|worker|chip"
    r"|core|rank))?['\"]?\s*[:=\s]"
)
#: ... or said between the examples and the time (``tokens/gpu/sec``, ``samples/device/s``).
_DEVICE_BEFORE = r"(?:/\s*(?i:device|chip|gpu|core)\s*)?"
#: The words of a step time: ``time per iteration``, ``per-step time``, ``step_time``, ``Batch time``, ``time/step``,
#: also joined by ``_`` (nanotron's ``elapsed_time_per_iteration_ms``, huggingface/nanotron issue 390) or ``-``
#: (a trainer of hyphenated keys: ``| step-time 24.192 sec | cross-entropy-loss 2.4543 |``, pithtrain's README), or
#: the unit of work with ``(t)`` for its time (open_clip's ``Data (t): 0.158 Batch (t): 0.559``: the batch's, not the
#: data's; mertyg/vision-language-models-are-bows issue 27, run of 2023-06-29).
_STEP_TIME_WORDS = (
    rf"(?i:(?:time[ _-]per[ _-]|per-){_PER_STEP_WORD}(?: time)?|(?:step|iter|iteration|batch)[ _-]tim(?:e|ing)"
    r"|time[/_]step|time_per_step|(?:step|iter|iteration|batch)\s*\(t\)"
    # a batch's time abbreviated (VISSL's and ClassyVision's ``btime(ms): 192``, facebookresearch/vissl issue 480)
    r"|\bbtime)"
)
#: A step time's unit said in its key: ``step_timing in s``, ``iter_time (ms)``, ``step_time_ms``.
_IN_MS = r"(?i:\s+in\s+ms|\s*\(ms\)|_ms)"
_IN_S = r"(?i:\s+in\s+s(?:ec(?:onds)?)?|\s*\(s(?:ec)?\)|_s(?:ec)?)"
#: A seconds unit after its number, bare or in parentheses (``1.722 s``, ``1.722(sec)``).
_SECONDS_UNIT = r"(?:(?:s|sec|secs|seconds)\b|\(\s*(?:s|sec|secs|seconds)\s*\))"
#: The bare word ``time`` as a key, or glued in CamelCase after ``Total`` (CNTK's ``TotalTime = 60.3761s``).
_TIME_KEY = r"(?:Total)?(?i:time)"
#: A key's value in JSON quotes or none (``"time": "0.239996"``, ``time: 0.24``).
_QV = r"['\"]?"
#: What ends the value of one part of a step's time: its closing quote, if any, then a separator, a dict's close or
#: the end (never a unit: ``train_time=0.5ms`` is another statement).
_PART_ENDS = rf"{_QV}(?:[,|}}\s]|$)"
#: What may follow a unit-less ``time: X``: a separator, the next ``key:`` or the end (not ``sec``), or the close
#: of a bracketed header of ``key:value`` fields (BasicSR/mmsr-derived loggers: HDRUNet's ``<epoch:193, iter:
#: 505,200, lr:5.000e-05, , time:84.443> l_pix: ..``, chxy95/HDRUNet issue 12, 2021-08-10).
_NEXT_KEY = r"(?:\s*\(\s*[\d.]+\s*\))?\s*(?:[,|}>\]]|\s+[A-Za-z_][\w ]*[:=]|\s*$)"

#: The scope a trainer writes before a measure's key, joined by ``_``: Hugging Face's ``train_steps_per_second``,
#: PaddleNLP's ``interval_steps_per_second`` (PaddlePaddle/PaddleNLP issue 4949, 2023-02-23), Paddle's
#: ``avg_batch_cost`` (PaddlePaddle/PaddleOCR issue 16562, 2025-09-24). Never an evaluation's (``eval_``).
_SCOPE = r"(?:\b(?i:train|training|interval|avg|average|mean)_|\b)"
#: A unit said in its key's parentheses (ms-swift's ``"train_speed(iter/s)": 0.0779``, modelscope/ms-swift
#: issue 4408): the key, ``(``, the unit's words, ``)`` and the value.
_KEY_UNIT_OPEN = r"[A-Za-z_]\(\s*"
_KEY_UNIT_CLOSE = rf"\s*\)['\"]?\s*[:=]\s*{_QV}"

#: What comes before a unit written before its number: the start or a separator (never a digit).
_UNIT_FIRST = r"(?:^|[\s,|;(\[])"
#: What follows the number of a space-separated ``key value`` pair: the end, a separator, or the next pair's key
#: (a word, no unit: no ``/``) and its value.
_PAIR_ENDS = r"(?:\s*(?:$|[,;|\])])|\s+[A-Za-z_][\w.]*(?:\s*[:=]|\s+[-+]?\d))"

#: The words of a range of steps (``Minibatch[ 271- 280``, ``5251-5625batch``): a batch, step, iteration, update.
_RANGE_WORD = r"(?:mini)?(?:batch(?:es)?|steps?|iter(?:ation)?s?|updates?)"
#: What the vocabulary calls a step, one at a time or a range of them (a learned layout tells a training log by it).
STEP_WORDS: Final = rf"(?:{_PER_STEP_WORD}|{_RANGE_WORD})"
#: A range ``A-B`` of whole numbers (groups ``a``, ``b``); a date (``2020-11-11``) is none: its first is larger.
_RANGE = r"(?P<a>\d+)\s*-\s*(?P<b>\d+)"
#: The steps a time covers where the line says so: ``(100 iters)``, ``for 50 steps``, ``per 10 batches``.
SPAN: Final = (
    r"(?i)(?:\(\s*|\bfor\s+|\bper\s+|\bover\s+|\bevery\s+)(\d+)\s*(?:iters?|iterations|steps|batches|updates)\b"
)
#: The steps a time covers said in its key's parentheses (``Time(1000 iters):``), where a key says so; see :data:`SPAN`.
_SPAN_KEY = r"(?:\s*\(\s*\d+\s*(?i:iters?|iterations|steps|batches|updates)\s*\))?"
#: The batch a line states beside a position in examples (``minibatch 32``, ``batch_size=64``).
LINE_BATCH: Final = r"(?i)\b(?:mini)?batch(?:[ _-]?size)?\s*[:=]?\s*(\d+)(?:\s|,|$)"
#: The tokens one step (one update) holds, stated on its line beside a rate of tokens: fairseq-py 0.x's progress line
#: ``| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, wpb=908, bsz=32`` (words per second and per batch, an
#: update's, quoted in facebookresearch/fairseq issue 301) and its epoch summary's ``words/s 961 | words/batch 906``.
#: The rate over it is the steps per second (962 / 908 = 1.06 updates/s), where ``bsz`` (sentences) gives none.
TOKENS_PER_STEP: Final = (
    r"(?i:\bwpb|\b(?:words|tokens)\s*(?:/|_per_|\s+per\s+)\s*(?:batch|update|step)\b)\s*[:=]?\s*(\d+(?:\.\d+)?)"
)
#: A duration said as a sentence about the position it covers (``Time for epoch 2 is 7.94 sec``, TensorFlow's DCGAN
#: tutorial's print; ``Training time for epoch 1 is: 3.46 seconds``): the time of that epoch (or step), no rate of
#: its own, so a time that says no unit of work (:data:`BARE_TIMES`): an epoch's, where the line states no step.
TIME_FOR_POSITION: Final = "time for epoch N is X s"
#: A duration written as a clock after the word ``duration`` (AllenNLP's ``Epoch duration: 0:00:39.848754``,
#: ``1 epoch duration: 0:08:47.014887``): seconds. A clock after a bare ``time:`` is not read so, as it may be a time
#: of day (``Time: 14:22:05``).
DURATION_CLOCK: Final = "duration: H:MM:SS"
#: An epoch's seconds under a key of its own (``epoch_time: 14.30``): a time that says no step's, so bare.
EPOCH_TIME: Final = "epoch_time: X (s)"
#: The step times that say no unit of work (``time = 0.0159s``, ``Time 359.59s``, ``took 4.2s``): the time of
#: what the statement covers: the steps of its range or span, or (see the grammar) the time since its last report.
BARE_TIMES: Final = frozenset(
    {
        "time X ms",
        "time X s",
        "..., X seconds, ...",
        "seconds: X",
        "took X s / in X seconds / cost X s",
        TIME_FOR_POSITION,
        DURATION_CLOCK,
        EPOCH_TIME,
    }
)

#: The times a statement names by the bare word ``time``, saying no unit of work (``time: 0.196``, ``Time 0.426``,
#: ``time 1.329s``): a step's seconds, the seconds since the previous report (see the grammar's bare intervals),
#: or, in a hand-written loop printing ``time.time() - start_time``, the run's clock (the grammar's cumulative times).
UNNAMED_TIMES: Final = frozenset(
    {"time: X (seconds per iteration)", "Time X (a column: seconds per iteration)", "time X ms", "time X s"}
)

#: The shell's word for a process a signal ended, glued to the end of the line it was printing (a progress bar's):
#: ``Killed`` (SIGKILL, the OOM killer), ``Segmentation fault (core dumped)``, ``Bus error``, an abort. That drawing is
#: the failure, not a record: a line has one outcome. Also Slurm's notice that it cancelled the job or step (its
#: signals end the processes), glued to the bar it stopped (``... 629.37s/it]slurmstepd: error: *** JOB 42221 ON
#: clr1247 CANCELLED AT 2022-04-14T16:20:46 DUE TO TIME LIMIT ***``, a PolymerGNN job's output, 2022).
ENDED_BY_SIGNAL: Final = (
    r"(?:Killed|Segmentation fault|Bus error)(?: \(core dumped\))?\s*$"
    r"|(?:Aborted|Floating point exception|Illegal instruction) \(core dumped\)\s*$"
    r"|\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED\b.*\*\*\*\s*$"
)

#: A progress bar's percentage and bar, up to its counter: tqdm's ``40%|####  | 200/500``, a copy that lost the
#: bar's glyphs (``100% 42/42``: Colab's plain text), Ultralytics' own bar (``89% ━━━━━━━━━━╸─ 8/9``, 8.3 on); or
#: rich's bar, no percentage before its glyphs (PyTorch Lightning's RichProgressBar: ``Epoch 31/99 ━━━━━━╸━━━ 2515/4070
#: 0:16:12 • 0:06:32 3.98it/s loss: 0.0626``, ZettaAI/zetta_utils issue 94, 2022).
BAR: Final = r"(?:\d{1,3}%(?:\|[^|]*\||\s*[^\w\s|%]*)|━[━╸╺─]*)\s*"

#: A terminal's colour or cursor code (``\x1b[32m``, tqdm's and rich's ``\x1b[?25l`` hiding the cursor) and a
#: backspace (a bar stepping back over its last glyph): no part of what a line says.
ANSI: Final = r"\x1b\[[0-9;?]*[A-Za-z]|\x08"

#: A carriage return a copy wrote out as text: ``\\r`` (a JSON or Python string), rsyslog's and CloudWatch's
#: ``#015`` (octal), ``^M`` (caret notation); each may take an escaped erase-line (``#033[K``, ``\\x1b[K``) after it.
_ESCAPED_RETURN = r"(?:\\r|#015|\^M)(?:(?:#033|\\x1b|\\033|\\u001b|\\e)\[[0-9;]*K)?"
#: A drawing of a bar (tqdm's, Keras'), and two on one line (``8/9 9.2it/s 0.8s#015 ... 9/9 11.6it/s``): only then is an
#: escaped return one (a ``\\r`` alone may be a Windows path's ``C:\\runs``).
_DRAWING = rf"(?:{BAR}\d+/\d+|\d+/\d+ (?:\[[=>.]|[━─]))"
_TWO_DRAWINGS = rf"{_DRAWING}.*?(?:{_ESCAPED_RETURN}).*?{_DRAWING}"


def unescaped_returns(line: pl.Expr) -> pl.Expr:
    """``line`` with its escaped carriage returns (:data:`_ESCAPED_RETURN`) made real ones where it holds two
    drawings of a bar or more, and without those that open it: a platform or a notebook that wrote a bar's redraws
    out as text (``#015100%|...| 51/51``)."""
    line = line.str.replace(rf"^(?:\s*(?:{_ESCAPED_RETURN}))+", "")
    return pl.when(line.str.contains(_TWO_DRAWINGS)).then(line.str.replace_all(_ESCAPED_RETURN, "\r")).otherwise(line)


#: The spelling of an iteration beside a step, and the iteration's number in such a line (group 1).
ITERATION_STEP: Final = "iter N step M (M the optimizer's updates)"
#: The spelling of DeepSpeed's timer's counter, its epoch and its step (see :data:`POSITIONS`).
TIMER_COUNTER: Final = "E/N, SamplesPerSec= (DeepSpeed's timer)"
ITERATION_BESIDE_STEP: Final = r"(?i:\biter(?:ation)?s?)\s*[:=#]?\s*(\d+)\s*[|,]?\s*(?i:step)\s*[:=#]?\s*\d+"
#: A time that says it is one iteration's (``iter time: 197.87ms``), where an iteration is one micro-batch.
ITERATION_TIME: Final = r"(?i)\biter(?:ation)?[ _]tim(?:e|ing)\b"

#: The spelling of Chainer's ProgressBar's position line (see :data:`POSITIONS`).
CHAINER_PROGRESS: Final = "N iter, E epoch / M epochs (Chainer's ProgressBar)"
#: The spelling of a boosting round alone after its time of day (see :data:`POSITIONS`).
BARE_ROUND: Final = "[HH:MM:SS] [N] (a boosting round alone)"
#: The positions of a boosting round: a line of one names a training step of its own (see :data:`TIME_OF_DAY`).
BOOSTING_ROUNDS: Final = frozenset({"boosting round N", BARE_ROUND, "[N] set-metric:value (a boosting round)"})
#: Positions, most telling first: a named global step beats a counter.
POSITIONS: Final[tuple[Position, ...]] = (
    Position("global step N", "named", rf"(?i:\bglobal[ _]?steps?)['\"]?\s*[:=]?\s*\(?\s*{_AT}"),
    Position("num_updates=N", "named", rf"(?:(?:\btrain_|\b)n(?:um_)?updates{_KV}|{_COLUMN}n(?:um_)?updates\s+){_AT}"),
    # Marian's ``Ep. 1 : Up. 14000 : Sen. 965,843 :`` (its updates are the global step)
    Position("Up. N (updates)", "named", rf"\b[Uu]p\.\s*[:=]?\s*{_AT}"),
    Position("Acc_iter N", "named", rf"(?i:\b(?:acc|cur|global)_?iter(?:ation)?s?)['\"]?\s*[:=]?\s*{_AT}"),
    # an iteration beside a step (``iter 76 step 38:``, ``Ep 1 | iter 4 | step 1:``): the iteration counts
    # micro-batches, the step the optimizer's updates, the global step (litgpt, quoted in Lightning-AI/litgpt
    # issue 689 and PR 1055, 2024); see :data:`ITERATION_BESIDE_STEP`
    Position(
        ITERATION_STEP,
        "named",
        rf"(?i:\biter(?:ation)?s?\s*[:=#]?\s*\d+\s*[|,]?\s*step)['\"]?\s*[:=#]?\s*{_AT}",
    ),
    Position(
        "step N / iteration N / iter #N / batch N",
        "named",
        # never a unit's denominator: fairseq's ``words/batch 906`` is words per batch, no batch number
        rf"(?:^|[^/\w])(?i:(?:step|iteration|iters?|update|batch))['\"]?\s*[:=#]?\s*[#\[]?\s*{_AT}",
    ),
    # the steps done so far keyed as a column of their own, the word unqualified (Coqui STT's ``| Steps: 89 |``,
    # coqui-ai/STT issue 2238, 2022-06-10), the number the whole column; a total (``Total steps = 312``, ``episode
    # steps: 4``) has its word before, a bar's description (``Steps:   0%|``) a percentage after
    Position("| Steps: N (steps done)", "named", r"(?:^|[|;,]\s*)(?i:steps)\s*[:=]\s*(\d+)\s*(?:[|;,]|$)"),
    Position("it N/M", "named", r"\bit\s+(\d+)\s*/\s*\d+\b"),
    # Ray Tune's result (RLlib's ``pretty_print(result)``, a trial's ``result.json``): the trainable's iterations
    # reported, its step (``training_iteration: 6``, ray-project/ray issue 3908, 2019-01-31)
    Position("training_iteration: N (Ray Tune's result)", "named", rf"\btraining_iteration{_KV}{_AT}"),
    # Chainer's ProgressBar, a report of four lines redrawn in place: its two bars, then ``     91300 iter, 7 epoch /
    # 20 epochs`` (the iterations are the run's), then its rate on a line of its own (``0.71428 iters/sec. Estimated
    # time to finish: ...``; chainer/training/extensions/progress_bar.py; an ESPnet1 run quoted in espnet/espnet PR
    # 1717, 2020-03-23). The rate line takes this position (see :func:`~.counters.rates_under_positions`).
    Position(
        CHAINER_PROGRESS,
        "named",
        r"(?:^|[\s,;])(\d+)\s+iters?,\s*\d+\s+epochs?\s*/\s*\d+\s*(?:epochs?|iterations?)?\s*$",
    ),
    # a key naming a position and its total, its value the counter in quotes (ms-swift's
    # ``"global_step/max_steps": "1200/3936"``, modelscope/ms-swift issue 4408)
    Position(
        "step/total: 'N/M'",
        "named",
        r"(?i:\b(?:global_)?(?:step|iter|iteration|update|batch)s?/\w+)['\"]?\s*[:=]\s*['\"]?(\d+)\s*/\s*\d+\b",
    ),
    # a metric writer's step in brackets opening a run of ``key=value`` (clu's LoggingWriter through absl:
    # ``[400] steps_per_second=1.58, train_loss=3.2``, google/flax issue 3364, 2023-10-02), at the message's start
    # or right after a header's closing bracket; never after a word (``Epoch [2] loss=0.5``: an epoch)
    Position("[N] key=value", "named", r"(?:^\s*|\]\s+)\[(\d+)\]\s+[A-Za-z_][\w/.-]*\s*="),
    # a gradient-boosting round: a round grows one tree (a class's trees), the unit of work a boosted model's
    # training counts, its step. XGBoost's learner prints ``boosting round 7, 8 sec elapsed`` before each round
    # (dmlc/xgboost src/cli_main.cc, 0.x; a regression run quoted in dmlc/xgboost issue 240, 2015-04-14), and after
    # it its watchlist's figures, ``[15]\ttrain-logloss:0.005\teval-logloss:0.517`` (``[round]`` then
    # ``<set>-<metric>:<value>`` per set; XGBoost4J-Spark's tracker relays it through log4j, dmlc/xgboost issue
    # 7962, 2022-06-01), as LightGBM's Python callback does as ``[15]\tvalid_0's auc: 0.8`` (``<set>'s <metric>:
    # <value>``, microsoft/LightGBM python-package/lightgbm/callback.py ``_format_eval_result``). Never a federated
    # or a game's ``round``: the word boosting, or the bracketed round opening its sets' figures. The tab after the
    # round may reach a paste as spaces (issue 7962's copy has four).
    Position("boosting round N", "named", rf"(?i:\bboosting\s+round)\s*[:=#]?\s*{_AT}"),
    # LightGBM's native logger after each iteration, the count before its word until 2016 (``2.432232 seconds elapsed,
    # finished 998 iteration``: microsoft/LightGBM src/boosting/gbdt.cpp ``"%f seconds elapsed, finished %d
    # iteration"``, quoted in lightgbm-org/LightGBM issue 39, 2016-10-27), after it since (``finished iteration 1``,
    # the word's own position). Only after ``finished``: ``ran 3 iterations`` counts, it numbers none.
    Position("finished N iteration (LightGBM)", "named", r"(?i:\bfinished)\s+(\d+)\s+iterations?\b"),
    # ... and with no set to evaluate, the round alone after the time of day XGBoost's tracker log prints before it
    # (``[21:32:09] [0]``, the CLI with tree_method=gpu_hist quoted in dmlc/xgboost issue 5888, 2020-07-14)
    Position(BARE_ROUND, "named", r"^\s*\[\d\d:\d\d:\d\d(?:\.\d+)?\]\s+\[(\d+)\]\s*$"),
    Position(
        "[N] set-metric:value (a boosting round)",
        "named",
        r"(?:^\s*|\]\s+)\[(\d+)\](?:\t| {2,})\s*[A-Za-z_][\w.]*(?:-[\w@.]+:|'s [\w@.]+:\s)\s*[-+]?\d",
    ),
    # NVIDIA DLLogger's step key (epoch, iteration) before the metric; (epoch, iteration, k) is a validation's
    Position("(E, N) (DLLogger)", "named", r"^\(\d+,\s*(\d+)\)\s"),
    # a whole number opening the message before its colon, where the line states nothing else as its position
    # (Darknet's ``4: 285.33, 289.84 avg, 0.0001 rate, 838.66 seconds, 256 images``); a name column of ranks or
    # hosts (``0: ``) repeats on the file's lines and is an envelope, stripped before
    Position("N: (a message's leading counter)", "named", r"^\s*(\d+):\s"),
    # a bare batch index after an epoch stated with its total in brackets, before the statement's first key (an
    # SRGAN trainer's ``Epoch [854/1500]   27 time: 1.3290s, W_loss: ..``, JustinhoCHN/SRGAN_Wasserstein issue 16,
    # 2019-04-27)
    Position(
        "Epoch [E/M] N (a batch after its epoch)",
        "named",
        r"(?i:\bepoch)\s*[:=#]?\s*[\[(]\s*\d+\s*/\s*\d+\s*[\])]\s+(\d+)\s+[A-Za-z_]",
    ),
    # DeepSpeed's ThroughputTimer, ``E/N, SamplesPerSec=X`` (``E/N, RunningAvgSamplesPerSec=X, ...`` later): its
    # counter is the timer's epoch and its step, never a position and its total (``0/2000``: epoch 0, the engine's
    # ``step=2000`` logged beside it; transformers issue 14531, 2021-11-26; ``0/130``, ``0/140``: deepspeedai/DeepSpeed
    # issue 697, 2021-01-26)
    Position(
        TIMER_COUNTER,
        "named",
        r"(?:^|[\s\]|])\d+/(\d+),\s*(?:RunningAvg)?SamplesPerSec\s*=",
    ),
    Position("N it [ (a tqdm bar without a total)", "named", r"(?:^|[\s:|])(\d+)it \["),
    # a tqdm bar's own counter, before any N/M of its description (``Epoch 1/10: 40%|####  | 200/500 [...``)
    Position("NN%|...| N/M (a tqdm bar)", "named", rf"{BAR}(\d+)/\d+"),
    # an epoch's number and then the step's counter within it: mmcv's ``Epoch [E][N/M]``, or the epoch with its total in
    # brackets, the word left out, right before the step's counter (Swin
    # Transformer's ``main.py``: ``Train: [30/300][210/2859]\teta 0:25:26 lr 0.000872 ...  time 0.4205 (0.5761)``,
    # quoted in MzeroMiko/VMamba issue 273, 2024-07-27; PyTorch's DCGAN example, ``[0/25][0/782] Loss_D: ...``): group
    # ``z``, an epoch counted from 0 as ``range(epochs)`` prints it, so its step is ``z * M + N``. Or the epoch bare
    # after the phase's word, the counter's percentage inside its brackets (timm's ``train.py``: ``Train: 1 [  32/33
    # (100%)]  Loss: 0.5411 (0.313)  Time: 0.089s, ...``, the epoch from ``range(start_epoch, num_epochs)``: group
    # ``t``, counted from 0 too; phamdinhkhanh/general_backbone README, 2021)
    Position(
        "Epoch [E][N/M] / [E/EM][N/M]",
        "epoch-counter",
        r"(?:(?:(?i:\bepoch)(?:\(\s*train\s*\))?\s*\[\s*(?P<e>\d+)\s*|(?:^|[\s:|,])\[\s*(?P<z>\d+)\s*/\s*\d+\s*)\]\s*\["
        r"|(?:^|[\s|])(?i:train)\s*:\s*(?P<t>\d+)\s+\[)"
        r"\s*(?P<x>\d+)\s*/\s*(?P<m>\d+)\s*(?:\(\s*\d+(?:\.\d+)?\s*%\s*\)\s*)?\]",
    ),
    # a range of steps one statement covers: its last step is the position, its length the span of its times
    Position("batch A-B (a range)", "range", rf"(?i:\b{_RANGE_WORD})\s*[:=#]?\s*\[?\s*{_RANGE}(?:[^\d.:-]|$)"),
    Position("A-Bbatch (a range)", "range", rf"(?:^|[\s:\[(,|]){_RANGE}\s*(?i:{_RANGE_WORD})\b"),
    # a position in units of work: thousands of examples (StyleGAN's ``kimg 6.1``), a step over a batch it states
    Position("kimg K (thousands of examples)", "kimg", rf"(?i:\bkimg)\s*[:=]?\s*({NUMBER})(?:\s|,|$)"),
    # not a date (``04/21 21:03:52``, ``2024/01/24``, ``08/30/23``): the message's own counter after one is found;
    # a counter's elapsed time with the time left after ``<`` is no date's time of day (the Hugging Face notebook bar
    # as text, ``[ 22/290 02:50 < 38:04, 0.12 it/s, Epoch 0.36/5]``: unslothai/unsloth issue 1140, 2024-10-16)
    Position(
        "N/M",
        "counter",
        r"(?:^|[\s|\[(:])(?P<x>\d+)\s*/\s*(?P<m>\d+)"
        r"(?:[\]|\[,;)]|$|\s+(?:[^\d\s]|\d+(?:[^\d:]|$)|$)|\s+\d+:\d\d(?::\d\d)?\s*<)",
    ),
)

#: A position in brackets ending a line of its own, the header of a block whose indented lines after it say
#: the step's measures (Composer's console ``[batch=20/20]:`` and ``[epoch=1][batch=5/5]:``, OLMo's
#: ``[step=2/739328,epoch=0]``): group 1 the step.
BLOCK_HEADER: Final = r"(?i:\[(?:epoch=\d+\]\[)?(?:batch|step|iter|iteration)=(\d+)(?:/\d+)?(?:,\w+=[\w.]+)*\]:?)\s*$"

#: The epoch a line is in, where it states one: ``Epoch[101]``, ``Epoch: [34]``, ``epoch: 8/40,``,
#: ``Training epoch 0,``, ``[Epoch 5 / Train]``, ``Epoch=1``, ``EPOCH - 1 :`` (gensim's epoch end) (group 1, a
#: whole number: ``'epoch': 0.2`` is no epoch). A position counted within its epoch (``Batch [250]``, ``[10/31]``,
#: ``iter: 1340/1816``) is made whole with it (see the grammar).
EPOCH: Final = r"(?i:\bepoch)\s*(?:\(\s*train\s*\))?\s*[:=#-]?\s*[\[(]?\s*(\d+)(?:\s*/\s*\d+)?\s*[\])]?(?:[^\w.]|$)"
#: ... or, in a tqdm bar, the counter of its description (an outer loop's: ``  70/1000  6.73G ... 640: 100%|``).
BAR_EPOCH: Final = rf"^(?:[^%|]*?\s)?(\d+)/\d+\s[^|]*?{BAR}\d+/\d+"
#: The total of a position counted within an epoch, said after its number: ``Step: 10/965``, ``iter: 1340/1816``.
INNER_TOTAL: Final = r"(?i:\b(?:step|iteration|iter|batch))['\"]?\s*[:=#]?\s*[#\[]?\s*\d+\s*/\s*(\d+)"
#: An epoch's or an iteration's statement of evaluation (mmengine's ``Epoch(val) [8][1730]``, ``Iter(val) [17/17]``,
#: ``Iter(test) [11/11]``): no training step.
EPOCH_EVALUATION: Final = r"(?i)\b(?:epoch|iter)\s*\((?:val|valid|validation|test|eval)\w*\)"

#: The words of work other than a training step, whole: saving or writing a checkpoint, a download or upload, a
#: compilation or trace, loading or restoring, an export, a backup, an evaluation, processing data.
_OTHER_WORK_WORDS = (
    r"sav(?:e|es|ed|ing)|writ(?:e|es|ing|ten)|wrote|checkpoint(?:s|ed|ing)?|ckpt|"
    r"download(?:s|ed|ing)?|upload(?:s|ed|ing)?|compil(?:e|es|ed|ing|ation)|trac(?:e|ed|ing)|"
    r"load(?:s|ed|ing)?|restor(?:e|es|ed|ing)|export(?:s|ed|ing)?|backup|backing up|"
    r"evaluat(?:e|es|ed|ing|ion)|(?:pre)?process(?:ed|ing)"
)
#: Evaluation's words, whole (a statement they open is an evaluation's: ``Val loss 2.61``, ``step 300 | eval ...``).
EVALUATION_WORDS: Final = r"val|valid|validation|validating|eval|evaluation|evaluating|test|testing"
#: Held-out data besides a validation or test split (``dev loss``, ``heldout ppl``, WeNet's cross-validation ``CV Batch
#: 4/0 loss ..``, ``Epoch 74 CV info cv_loss ..``: wenet-e2e/wenet issues 941 and 846): a figure of it is no training's.
HELD_OUT: Final = r"dev|heldout|holdout|cv"
#: The words that name a step's loss: ``loss``, or the loss function a classifier's trainer names instead (TensorFlow's
#: image retraining script: ``Step 270: Cross entropy = 0.012275``, cloud-annotations/cloud-annotations issue 56,
#: 2019-04-23; Keras' ``categorical_crossentropy``).
LOSS_WORDS: Final = r"loss|cross[ _-]?entropy"
#: The keys of a step's metrics (``loss``, ``acc``, ``lr``, ``grad_norm``, ...): a number after one is that metric's
#: value, never a position or a measure of time.
METRIC_KEYS: Final = rf"{LOSS_WORDS}|acc\w*|lr|learning[ _]rate|ppl|perplexity|grad\w*|norm|score|reward"
#: A count of examples a step's report names by the word after it (icefall's ``loss[..., over 2223 frames.]``,
#: k2-fsa/icefall issue 320, 2022-04-21): a number of work done, never a time.
COUNTED_EXAMPLES: Final = rf"\d[\d.,]*(?:[eE][-+]?\d+)?\s+{_EXAMPLES_WORD}\b"
#: ... and of a model's quality scores (``error``, ``bleu``, ``f1``, ``mAP``, ``IoU``).
SCORE_KEYS: Final = r"error|err|bleu|f1|map|iou"

#: A statement whose subject is work other than a training step: its words before its first number name
#: saving or writing a checkpoint, a download or upload, a compilation or trace, loading or restoring, an
#: export, a backup, an evaluation, processing data (``Saved checkpoint for step 1000 in 12.3 s``, ``XLA
#: compilation of step 1 took 45.2 seconds``, ``Downloading shard 3/100 took 2.0 s``). It may name a step and
#: a duration, but the duration is that work's, not the step's: no record. Only the words before the first
#: number count, as the subject comes first; a step line that mentions such work after its position
#: (``step 100 | loss 2.1 | ckpt 12 MB``, ``iter 5 ... data loaded in 0.1 s``) stays a record, and a word joined
#: to a key (``ckpt_loss``, ``data_load_time``) is no subject.
OTHER_WORK: Final = rf"(?i)^[^\d]*?\b(?:{_OTHER_WORK_WORDS})\b"
#: A progress bar's description (or a report's header, a learned layout's words before its position) naming work
#: that is not training: :data:`OTHER_WORK`'s words, whole (``Saved``, ``checkpoint``, ``Compiling``), or a word that
#: starts as a download's, a load's, an evaluation's (``eval``, ``validation``, ``val``, ``test``), preparing data's
#: (``Map``, ``Filter``, ``Tokenizing``, ``shard``; reading a dataset's files in: Ultralytics' ``train: Scanning
#: .../labels... 51 images, 0 backgrounds, 0 corrupt: 100%|...| 51/51 [00:00<00:00, 1214.28it/s]`` and ``val: Caching
#: images (1.2GB ram): 100%|...``, files a second: a scan of a path, a cache of images or data, never a training
#: bar's ``Training with KV caching``) or using the model's (``predict``, ``inference``, ``generate``).
NOT_TRAINING: Final = (
    rf"(?i)\b(?:(?:{_OTHER_WORK_WORDS})\b|download|upload|load|saving|writing|eval|validat|val\b|valid\b|test|"
    r"extract|map|filter|tokeniz|calculat|predict|infer|generat|preprocess|processing|shard|convert|fetch|resolv|"
    r"scann\w*\s+['\"]?[\w.~:-]*[/\\]|cach\w*\s+(?:images|data\w*|labels))"
)
#: A Docker build's step (``Step 3/12 : RUN make -j8``): the legacy (pre-BuildKit) builder numbers the
#: Dockerfile's instructions so (https://docs.docker.com/reference/cli/docker/build-legacy; a build log quoted in
#: rcjsuen/dockerfile-language-server-nodejs issue 149: ``Step 1/2 : FROM scratch``); a step of a build, not of
#: training. The keywords are Dockerfile's instructions.
DOCKER_STEP: Final = (
    r"(?i:\bstep)\s+\d+\s*/\s*\d+\s*:\s*(?:FROM|RUN|COPY|ADD|ENV|ARG|WORKDIR|CMD|ENTRYPOINT|LABEL|EXPOSE|"
    r"USER|VOLUME|SHELL|HEALTHCHECK|ONBUILD|STOPSIGNAL|MAINTAINER)\b"
)
#: A time of day a message states for itself, with no date: under a key of its own (torch_xla's test utilities end
#: each step line with ``Time=`` and ``datetime.now()`` as ``%H:%M:%S``: ``| Training Device=xla:0/7 Epoch=1 Step=500
#: Loss=0.00223 Rate=553.80 GlobalRate=352.39 Time=01:53:18``, pytorch/xla ``test/test_utils.py``, quoted in pytorch/xla
#: PR 4324, 2022-12) or in brackets at the head of the message (a MetricLogger behind a time-only formatter:
#: ``[03:29:59.478134] Epoch: [1]  [10/1504]  lr: ...``, Alpha-VLLM/LLaMA2-Accessory issue 48, 2023). It is the line's
#: clock: the seconds between two readings of a task are the time between its reports (a day turning over between
#: them adds a day). Two digits each for hours (00-23), minutes and seconds, as a clock prints them: a duration's
#: ``1:52:18`` is none, and neither is a key that a word qualifies (``Total time: 01:52:18``, ``Epoch time: ...``,
#: ``Time left: ...``, ``eta: ...``). Groups ``h``, ``m``, ``s``.
TIME_OF_DAY: Final = (
    r"(?:^\s*\[|(?:^|[^A-Za-z\s]\s*|[,|;(]\s*)(?i:time|now|clock|wall[ _-]?clock)\s*[=:]\s*)"
    r"(?P<h>[01]\d|2[0-3]):(?P<m>[0-5]\d):(?P<s>[0-5]\d(?:\.\d+)?)(?:\]|[\s,|;)]|$)"
)
#: The seconds in a day: a time of day that goes back by more than half of one has turned over midnight.
DAY_S: Final = 86400.0
#: An ``N/M`` that is an ETA's value (``ETA 12/25``: a date), not a position.
ETA_DATE: Final = r"(?i:\beta)\s*[:=]?\s*\d+\s*/\s*\d+"
#: The time still to go, keyed as such (ParlAI's ``[ time:4.0s total_exs:7360 epochs:0.82 time_left:21.0s ]``,
#: facebookresearch/ParlAI PR 1895, 2019-08-06): a bare ``time`` beside it is the time gone, the run's clock, as
#: tqdm's ``[elapsed<remaining]``. An ``eta`` is none of it: mmcv prints ``eta: 0:12:34, time: 0.512`` with
#: ``time`` the iteration's seconds.
TIME_LEFT: Final = r"(?i)\b(?:time[ _-]?left|time[ _-]remaining|remaining[ _-]time)\s*[:=]"

#: Measures, in the order they are preferred within their kind: a unit before its number with a mark
#: (``steps/sec: 12.5``) before a number before its unit, so ``step: 0  steps/sec: 0.25`` is step 0 at 0.25/s.
MEASURES: Final[tuple[Measure, ...]] = (
    # job-wide rates
    Measure("global_step/sec: X", "global", rf"\bglobal_step/sec['\"]?\s*[:=]?\s*{_N}"),
    # Lingvo's trainer: ``Steps/second: 0.0142, Examples/second: 0.73``, from the global step on its own line
    Measure("Steps/second: X", "global", rf"\bSteps/second\s*:\s*{_N}"),
    Measure("X global steps/s", "global", rf"{_N}\s+global[ _]steps?/s(?:ec)?\b"),
    # step times
    # a training step's whole time, where a line splits it in parts (ESPnet2's ``iter_time=`` (waiting for data),
    # ``forward_time=``, ``backward_time=``, ``optim_step_time=``, then ``train_time=``: their whole)
    Measure("train_time: X (s)", "time", rf"(?i:\btrain[ _]time){_KV}{_N}{_PART_ENDS}"),
    # ... and its ``TotalTime`` after its ``DataTime`` and ``ForwardTime``: the LTR trainer of pytracking and the
    # trackers built on it (OSTrack, LightFC: ``[train: 1, 250 / 937] FPS: 0.9 (1.1)  ,  DataTime: 0.130 (0.010)  ,
    # ForwardTime: 0.914  ,  TotalTime: 1.054  ,  Loss/total: ...``, LiYunfengLYF/LightFC issue 2, 2024-01-31), the
    # epoch's seconds so far over its batches: a batch's mean time. A ``TotalTime`` with no part before it is a run's
    # or a range's. The parts may be a dict's keys, each value in quotes (FunASR's trainer: ``{'data_load': '0.000',
    # 'forward_time': '0.294', 'backward_time': '0.279', 'optim_time': '0.099', 'total_time': '0.673'}``,
    # modelscope/FunASR issue 2006, 2024-08-12).
    Measure(
        "TotalTime: X (s, after DataTime and ForwardTime: a batch's whole time)",
        "time",
        rf"(?i:\b(?:data|forward|backward)[ _]?time)\b.*?\b(?i:total[ _]?time){_KV}{_N}{_PART_ENDS}",
    ),
    # a step time written as a clock (llama.cpp's ``dt=00:04:59``); never an ``eta=`` (the time still to go)
    Measure(
        "dt=HH:MM:SS (a step time as a clock)",
        "time",
        rf"(?:^|[\s,|])(?i:dt|{_STEP_TIME_WORDS})\s*[:=]\s*((?:\d+:)?\d{{1,2}}:\d\d(?:\.\d+)?)(?:[,|\s]|$)",
        clock=True,
    ),
    Measure(
        "elapsed time per iteration (ms): X",
        "time",
        rf"(?i:time per {_PER_STEP_WORD})\s*\(ms\)\s*[:=]?\s*{_N}",
        1e3,
    ),
    Measure(
        "step time: X ms",
        "time",
        rf"{_STEP_TIME_WORDS}['\"]?\s*[:=]?\s*{_N}\s*ms\b",
        1e3,
    ),
    # a step time keyed as a metric's path with its unit before the step: verl's ``timing_s/step:96.551`` among its
    # ``timing_s/gen``, ``timing_s/update_actor`` (the step's phases), quoted in verl-project/verl issues 1208 and 7412
    Measure("timing_s/step: X", "time", rf"(?i:\btim(?:e|ing)_s(?:ec)?/{_PER_STEP_WORD})\b{_KV}{_N}"),
    Measure("timing_ms/step: X", "time", rf"(?i:\btim(?:e|ing)_ms/{_PER_STEP_WORD})\b{_KV}{_N}", 1e3),
    Measure("step time in ms: X", "time", rf"{_STEP_TIME_WORDS}{_IN_MS}['\"]?\s*[:=]?\s*{_QV}{_N}", 1e3),
    Measure(
        "step time: X s",
        "time",
        rf"{_STEP_TIME_WORDS}{_IN_S}?['\"]?\s*[:=]?\s*{_QV}{_N}",
    ),
    # char-rnn's ``time/batch = 2.6165s`` (Torch7, quoted in billzorn/mtg-rnn issue 1) and ``time/batch = 0.035`` (its
    # TensorFlow port, a Paperspace job's transcript in the public code index): a batch's seconds, said with ``=``;
    # Composer's ``time/batch: 4`` is its batch counter, no time
    Measure("time/batch = X (s)", "time", rf"(?i:\btime/(?:batch|iter|step))\s*=\s*{_N}\s*(?:s\b|sec\b|,|$)"),
    Measure("X ms/step", "time", rf"{_N}\s*ms\s*/\s*{_PER_STEP_WORD}\b", 1e3),
    Measure("X us/step", "time", rf"{_N}\s*(?:us|µs)\s*/\s*{_PER_STEP_WORD}\b", 1e6),
    Measure("X s/it", "time", rf"{_N}\s*(?:s|sec|secs|seconds)\s*/\s*{_PER_STEP_WORD}\b"),
    # a unit before its number (``ms/batch 112.8``, ``s/iter: 0.52``): after the number-first spellings, and
    # only after a separator, so ``3.69it/s`` is never read as the unit of the number after it
    Measure(
        "ms/step X", "time", rf"{_UNIT_FIRST}(?i:ms|milliseconds)\s*/\s*(?i:{_PER_STEP_WORD})\b\s*[:=]?\s*{_N}", 1e3
    ),
    Measure("s/step X", "time", rf"{_UNIT_FIRST}(?i:s|sec|secs|seconds)\s*/\s*(?i:{_PER_STEP_WORD})\b\s*[:=]?\s*{_N}"),
    Measure("X ms per iteration", "time", rf"{_N}\s*(?:ms|milliseconds)\s+per\s+{_PER_STEP_WORD}\b", 1e3),
    Measure("X s per step", "time", rf"{_N}\s*(?:s|sec|secs|seconds)\s+per\s+{_PER_STEP_WORD}\b"),
    Measure(
        "time: X (seconds per iteration)",
        "time",
        rf"(?:^|[\s,|{{])['\"]?(?i:time)['\"]?\s*[:=]\s*{_QV}{_N}{_QV}{_NEXT_KEY}",
    ),
    # a unit-less ``Time X`` in a run of ``Key value`` columns (no ``:``): the iteration's seconds, maybe with its
    # running mean in parentheses. Torch7's fb.resnet.torch (``Epoch: [1][2/5005]    Time 0.426  Data 0.002  Err ..``,
    # facebookarchive/fb.resnet.torch issue 17) and imagenet-multiGPU.torch (``Time 0.425 Err 6.8380 Top1-%: ..``,
    # soumith/imagenet-multiGPU.torch issue 23), PyTorch's ImageNet example (``Time 0.544 (0.634)  Data 0.001 ..``,
    # pytorch/examples issue 267). Only after a column's gap (a tab, two spaces, ``|``, ``,``, a closing bracket), so
    # ``Total Time 3600 Epoch 3`` (a run's time) is none, and only before the next column or the end, never a unit.
    # The next column's key may be two words (Swin Transformer's ``time 0.4205 (0.5761)\tdata time 0.0010 (0.1443)``,
    # MzeroMiko/VMamba issue 273, 2024-07-27).
    Measure(
        "Time X (a column: seconds per iteration)",
        "time",
        rf"(?:^|[\t|,]|\s\s|\]\s*)(?i:time)\s+{_N}(?:\s*\(\s*[\d.]+\s*\))?"
        r"(?:\s+[A-Za-z_][\w@%/-]*(?: [A-Za-z_][\w@%/-]*)?:?\s+[-+(]?[\d.]|\s*$)",
    ),
    # the mean of the iterations' times so far, glued in CamelCase and alone in its parentheses after the figures:
    # UCTransNet's ``print_summary`` (``[Train] Epoch: [1][367/4899]  Loss:0.564 (Avg 0.5566) ... LR 1.00e-03
    # (AvgTime 1.4)``, McGregorWwww/UCTransNet issue 2, 2021; copied by its many forks). Its loader's wait
    # (``(AvgDataTime 0.02)``) is none.
    Measure(
        "(AvgTime X) (mean seconds per iteration)", "time", rf"\((?:Avg|Average|Mean)[ _]?Time\s*[:=]?\s*{_N}\s*\)"
    ),
    # the iteration's seconds keyed ``timer`` (YOLACT's train.py: ``[  0]     520 || B: 3.451 | ... | T: 12.031 ||
    # ETA: 2 days, 4:31:22 || timer: 1.364``, dbolya/yolact issue 318, 2020: ``elapsed = cur_time - last_time``; "the
    # time it took for one training iteration", its author in issue 43), in seconds said or not (DBPN's loops:
    # ``===> Epoch[1](10/100): Loss: 0.0412 || Timer: 0.1234 sec.``)
    Measure(
        "timer: X (seconds per iteration)",
        "time",
        rf"(?:^|[\s,|]){_SCOPE}(?i:timer)\s*[:=]\s*{_N}(?:\s*{_SECONDS_UNIT}|{_NEXT_KEY})",
    ),
    # a time with the steps it covers in its key's parentheses (HugeCTR's ``Iter: 3000 Time(1000 iters): 5.38s``,
    # NVIDIA-Merlin/HugeCTR issue 186): the span's time (see :data:`SPAN` and :data:`BARE_TIMES`)
    # CNTK's ``TotalTime``, glued in CamelCase, is the same bare time: its statement's range's, not the run's
    # (``Epoch[17 of 30]-Minibatch[   1- 500, 64.02%]: SamplesSeen = 32000; ... TotalTime = 60.3761s;
    # SamplesPerSecond = 530.0``, microsoft/CNTK issue 194: 32000 samples / 60.3761 s = 530.0 samples/s, the
    # range's 500 minibatches' time)
    # The unit may stand in parentheses after the number (FastMaskRCNN's TF1 loop: ``iter 144: image-id:0254212,
    # time:1.722(sec), regular_loss: 0.248765``, CharlesShang/FastMaskRCNN issue 172, 2017-11-08)
    Measure("time X ms", "time", rf"(?:^|[\s,|]){_TIME_KEY}{_SPAN_KEY}\s*[:=]?\s*{_N}\s*(?:ms\b|\(\s*ms\s*\))", 1e3),
    Measure("time X s", "time", rf"(?:^|[\s,|]){_TIME_KEY}{_SPAN_KEY}\s*[:=]?\s*{_N}\s*{_SECONDS_UNIT}"),
    # a bare ``X seconds`` between separators, in a run of separated statements (Darknet's ``, 838.66 seconds, ``);
    # not the last statement, closed by a separator that ends the line (OpenNMT-py's elapsed ``3017 sec;``, below)
    Measure("..., X seconds, ...", "time", rf"[,;|]\s*{_N}\s*(?:s|sec|secs|seconds)\s*[,;|]\s*\S"),
    Measure("seconds: X", "time", rf"(?:^|[\s,|])(?i:seconds|secs)\s*[:=]\s*{_N}"),
    # ... or what it cost, in seconds (OpenGait's ``Iteration 32700, Cost 17.76s, triplet_loss=0.1912``, the time of its
    # logging interval: ShiqiYu/OpenGait issue 89, 2022-10-12); with no unit, a ``cost`` is a loss (``cost= 0.35``)
    Measure(
        "took X s / in X seconds / cost X s",
        "time",
        rf"(?i:\b(?:took|in|cost)\b)\s*:?\s*{_N}\s*(?:s|sec|secs|seconds)\b",
    ),
    Measure(
        TIME_FOR_POSITION,
        "time",
        r"(?i:\btime\b(?:\s+(?:taken|spent|used))?\s+(?:for|of)\s+(?:the\s+)?(?:epoch|step|iter(?:ation)?|batch)\s*#?\s*\d+"
        r"\s*(?:is|was|took|=)?\s*:?\s*)"
        rf"{_N}\s*(?:s|sec|secs|seconds)\b",
    ),
    # an epoch's seconds keyed as one word (Flax's MNIST example: ``epoch:  3, train_loss: 0.0613, ...,
    # epoch_time: 14.30``, a ray-jax-tpu-pod-demos README's run of 2022-06-02; CNTK's glued ``Finished Epoch[17 of
    # 30]: [Training Set] TrainLossPerSample = 0.61884153; ... EpochTime=94.3146``, microsoft/CNTK issue 194): the
    # epoch's time, no step's
    Measure(
        EPOCH_TIME,
        "time",
        rf"(?i:\bepoch[ _-]?time)['\"]?\s*[:=]\s*{_QV}{_N}{_QV}(?:\s*(?:s|sec|secs|seconds)\b)?(?:[,;|}}\s]|$)",
    ),
    Measure(
        DURATION_CLOCK,
        "time",
        r"(?i:\bduration)\s*[:=]\s*((?:\d+:)?\d{1,2}:\d\d(?:\.\d+)?)(?:[,|\s]|$)",
        clock=True,
    ),
    Measure("batch_cost: X", "time", rf"{_SCOPE}(?i:batch_cost)\s*[:=]?\s*{_N}"),
    Measure(
        "key(s/it): X",
        "time",
        rf"{_KEY_UNIT_OPEN}(?i:s|sec|secs|seconds)\s*/\s*(?i:{_PER_STEP_WORD}){_KEY_UNIT_CLOSE}{_N}",
    ),
    Measure(
        "key(ms/it): X",
        "time",
        rf"{_KEY_UNIT_OPEN}(?i:ms|milliseconds)\s*/\s*(?i:{_PER_STEP_WORD}){_KEY_UNIT_CLOSE}{_N}",
        1e3,
    ),
    # wav2letter / flashlight: ``bch(ms): 407.74``, a batch's milliseconds
    Measure("bch(ms): X", "time", rf"(?i:\b(?:bch|batch))\s*\(ms\)\s*[:=]\s*{_N}", 1e3),
    # the task's rate, which is the job's under synchronous replicas
    Measure(
        "steps/sec: X",
        "rate",
        rf"{_SCOPE}(?i:steps?/s(?:ec)?|steps?[ _]per[ _]sec(?:ond)?|it/s|iters?/s(?:ec)?)['\"]?\s*[:=]\s*{_N}",
    ),
    Measure("X steps/s", "rate", rf"{_N}\s*(?i:{_PER_STEP_WORD})\s*/\s*s(?:ec)?\b"),
    Measure("It/sec X", "rate", rf"{_UNIT_FIRST}(?i:{_PER_STEP_WORD})\s*/\s*(?i:s|sec|second)\b\s*[:=]?\s*{_N}"),
    Measure("ups=X (updates/s)", "rate", rf"(?:(?:\btrain_|\b)ups{_KV}|{_COLUMN}ups\s+){_N}"),
    Measure(
        "key(it/s): X",
        "rate",
        rf"{_KEY_UNIT_OPEN}(?i:{_PER_STEP_WORD})\s*/\s*(?i:s|sec|second){_KEY_UNIT_CLOSE}{_N}",
    ),
    # batches per second: a batch is a step. The job's (Composer's ``throughput/batches_per_sec``) before one
    # device's (OLMo's ``throughput/device/batches_per_second``, one device's batches a step each); Composer also
    # prints a device's share of the job's, ``device/batches_per_sec`` = the job's / devices, where the job's beats
    # it (quoted in mosaicml/llm-foundry issue 444, allenai/OLMo issue 692, an AMD ROCm blog of 2024-09-30)
    Measure(
        "batches_per_sec: X (steps/s)",
        "rate",
        rf"(?:^|[\s,{{'\"]|throughput/)(?i:batches_?per_?sec(?:ond)?){_KV}{_N}",
    ),
    Measure("device/batches_per_sec: X (steps/s)", "rate", rf"/device/(?i:batches_?per_?sec(?:ond)?){_KV}{_N}"),
    # examples (images, samples, sequences, tokens, words) per second, as logged
    # ... the device said before the time too (``tokens/gpu/sec: 9378.40``, quoted in modula-systems/modula PR 1)
    Measure(
        "examples/sec: X",
        "examples_per_s",
        rf"\b{_EXAMPLES_WORD}\s*{_DEVICE_BEFORE}/\s*s(?:ec)?{_DEVICE}\s*[:=]\s*{_N}",
    ),
    Measure("X examples/s", "examples_per_s", rf"{_N}\s*{_EXAMPLES_WORD}\s*/\s*s(?:ec(?:ond)?)?\b"),
    # ... said in the parentheses of a key that names a speed (DGL's GraphSAGE multi-GPU example: ``Epoch 00001 | Step
    # 00020 | Loss 1.6148 | Train Acc 0.6040 | Speed (samples/sec) 42982.0896 | GPU 401.5 MB``, the
    # SijingYu/GraphSAGE_MultiGPU loss.md run), as ms-swift puts a step rate's (``train_speed(iter/s)``)
    Measure(
        "Speed (samples/sec) X",
        "examples_per_s",
        rf"(?i:\b(?:speed|throughput))\s*\(\s*{_EXAMPLES_WORD}\s*/\s*s(?:ec(?:ond)?)?\s*\)\s*[:=]?\s*{_N}",
    ),
    # ... its unit as the key of a space-separated pair (``step 10 loss 2.3 examples/sec 1234``): the number ends
    # the statement or the next pair follows, never the number of the next unit (``examples/sec 0.21 sec/batch``)
    # nor a time of day's hours (``15:23``)
    Measure(
        "examples/sec X",
        "examples_per_s",
        rf"{_UNIT_FIRST}{_EXAMPLES_WORD}\s*{_DEVICE_BEFORE}/\s*s(?:ec(?:ond)?)?{_DEVICE}\s+{_N}{_PAIR_ENDS}",
    ),
    # ... its unit in parentheses after the word that names the figure, the number after it, with a colon or not
    # (DGL's examples: ``Epoch 00000 | Step 00020 | Loss 2.6650 | Train Acc 0.3400 | Speed (samples/sec) 43672.9658 |
    # GPU 401.2 MB``, dmlc/dgl ``examples/pytorch/graphsage``, quoted in SijingYu/GraphSAGE_MultiGPU ``loss.md``)
    Measure(
        "Speed (examples/sec) X",
        "examples_per_s",
        rf"[A-Za-z_]\s*\(\s*{_EXAMPLES_WORD}\s*{_DEVICE_BEFORE}/\s*s(?:ec(?:ond)?)?{_DEVICE}\s*\)['\"]?\s*[:=]?\s*"
        rf"{_N}{_PAIR_ENDS}",
    ),
    # seconds per thousand examples (StyleGAN's ``sec/kimg 107.73``): examples/s = 1000 / X
    Measure(
        "sec/kimg X (seconds per thousand examples)",
        "time_per_examples",
        rf"{_UNIT_FIRST}(?i:s|sec|secs|seconds)\s*/\s*(?i:kimg)\s*[:=]?\s*{_N}",
        1e3,
    ),
    Measure("imps: X (images/s)", "examples_per_s", rf"\bimps\s*[:=]\s*{_N}"),
    # frames per second, keyed in capitals with a colon: pytracking's LTR trainer, the epoch's mean and then the last
    # batch's in parentheses (``[train: 35, 50 / 1000] FPS: 4.0 (7.9)  ,  Loss/total: 3.41968``, visionml/pytracking
    # issue 359): a tracker's frames are its examples. A renderer's ``fps 60`` is none.
    Measure("FPS: X (frames/s)", "examples_per_s", rf"\bFPS\s*:\s*{_N}"),
    # inputs per second: PaddlePaddle's ``ips: 5.7``, DLLogger's ``total_ips : 2879.1`` and ``train.total_ips``
    Measure("ips: X (inputs/s)", "examples_per_s", rf"(?:\b|_)ips\s*[:=]\s*{_N}"),
    # also as a column's key (``| tps 31346.32(3918.29/gpu) |``, NVIDIA-NeMo/Automodel PR 3473, a run of 2026-08-10)
    Measure("tps: X (tokens/s)", "examples_per_s", rf"\btps\s*[:=]?\s*{_N}"),
    Measure(
        "samples_per_second: X",
        "examples_per_s",
        # ... also spelled out (``tokens per second: 65536``) or followed by its number alone (``tokens_per_sec 6000``)
        rf"(?:{_SCOPE}|\btrain_step_|(?-i:[a-z]))(?i:(?:samples|examples|tokens|sequences)[_ ]?per[_ ]?sec(?:ond)?)"
        # ... one device's, its scope joined after the time (torchtune's StdoutLogger ``Step 3 | loss:1.17 lr:2e-05
        # tokens_per_second_per_gpu:655.9``, meta-pytorch/torchtune PR 1358; nanotron's ``tokens_per_sec_per_gpu``)
        rf"{_KEY_DEVICE_AFTER}(?:{_KV}|\s+){_N}",
    ),
    # a unit-less ``Rate=`` in a run of ``key=value`` statements (``Step=280 Loss=0.01 Rate=1760.9``): the
    # examples/s of a rate tracker (PyTorch/XLA's ``xm.RateTracker``), never a learning rate (``Learning Rate=``)
    Measure("Key=v Rate=X (examples/s)", "examples_per_s", rf"=[^\s=]+\s+(?:Rate|rate)\s*=\s*{_N}"),
    Measure("throughput: X", "examples_per_s", rf"(?i:\bthroughput)(?:_train)?\s*[:=]\s*{_N}"),
    Measure("wps=X (words/s)", "examples_per_s", rf"(?:\btrain_|\b)wps{_KV}{_N}"),
    # seconds
    Measure("(X sec)", "interval_s", rf"\(\s*{_N}\s*(?:sec|s)\s*\)"),
    # the seconds of a report's interval said as its unit (StyleGAN's ``sec/tick 648.1``)
    Measure(
        "sec/tick X (seconds since the previous report)",
        "interval_s",
        rf"{_UNIT_FIRST}(?i:s|sec|secs|seconds)\s*/\s*(?i:tick|report|interval)\s*[:=]?\s*{_N}",
    ),
    # the seconds of the interval a trainer's interval figures cover (PaddleNLP's ``interval_runtime``)
    Measure("interval_runtime: X", "interval_s", rf"\binterval_(?i:runtime|time){_KV}{_N}"),
    Measure("train_runtime: X", "elapsed_s", rf"\btrain_runtime{_KV}{_N}"),
    # ... and its seconds: the iteration's, and the trial's since its start (``time_this_iter_s: 2.88``,
    # ``time_total_s: 36.46``)
    Measure("time_this_iter_s: X (Ray Tune's result)", "time", rf"\btime_this_iter_s{_KV}{_N}"),
    Measure("time_total_s: X (Ray Tune's result)", "elapsed_s", rf"\btime_total_s{_KV}{_N}"),
    Measure("wall=X", "elapsed_s", rf"(?:\bwall{_KV}|{_COLUMN}wall\s+){_N}"),
    Measure(
        "elapsed_time: X / relative_time: X (s)",
        "elapsed_s",
        r"(?i:\b(?:relative_time|elapsed[ _]time|time_elapsed|elapsed_s(?:ec(?:onds)?)?|elapsed))"
        rf"['\"]?\s*[:=]\s*{_QV}{_N}"
        # seconds, not the hours of ``4h 16m 28s`` nor the hours of a clock's ``1:02:03``
        r"(?:\s*(?:s|sec|secs|seconds)\b|[^\w.:]|$)",
    ),
    Measure("X seconds elapsed", "elapsed_s", rf"{_N}\s*(?:s|sec|secs|seconds)\s+elapsed\b"),
    # Composer's console logger, its SpeedMonitor's training time so far, in hours by default (``time_unit='hours'``,
    # composer/callbacks/speed_monitor.py): ``[batch=1/10]:`` then ``Train time/train: 0.0073`` (mosaicml/llm-foundry
    # issue 244, 2023-06). Only as that logger lays it out, after its ``Train `` prefix: a loop's own ``Time/train``
    # may be an iteration's seconds. Its ``Train time/batch: 1`` is the batch counter, no time.
    Measure(
        "Train time/train: X (Composer, hours since the start)", "elapsed_s", rf"\bTrain time/train:\s*{_N}", 3600.0
    ),
    # CatBoost's verbose line, the time since the start and the time still to go in unit parts (``999:\tlearn:
    # 0.5574999\ttest: 0.5925190\tbest: 0.5925190 (999)\ttotal: 3h 45m 36s\tremaining: 0us``; catboost/catboost
    # catboost/libs/logging/logging.h's verbose output, quoted in catboost/catboost issue threads). Only beside its
    # ``remaining:``: a ``Loss/total: 3.4`` is a loss.
    Measure(
        "total: X remaining: Y (CatBoost, since the start)",
        "elapsed_s",
        r"\btotal:\s*(\d[\d.hdmsu ]*?)\s+remaining:",
        parts=True,
    ),
    # ... written as a clock (Coqui STT's progress line: ``Epoch 0 |   Training | Elapsed Time: 0:00:14 | Steps: 89 |
    # Loss: 25.274169``, coqui-ai/STT issue 2238, 2022-06-10): the time since the start, never a time of day (the word
    # says what it is)
    Measure(
        "Elapsed Time: H:MM:SS (since the start)",
        "elapsed_s",
        r"(?i:\belapsed(?:[ _]time)?)\s*[:=]\s*((?:\d+:)?\d{1,2}:\d\d(?:\.\d+)?)(?:[,;|\s]|$)",
        clock=True,
    ),
    # the time since the start in minutes (a JAX loop's ``step 100 | elapsed 1.11m | loss: 3.07``, jlin816/jax-sandbox
    # README at 3f026d8): seconds = 60 * X; a bare ``elapsed X`` says no unit and stays unread
    Measure(
        "elapsed X min (minutes since the start)",
        "elapsed_s",
        rf"(?i:\belapsed(?:[ _]time)?)['\"]?\s*[:=]?\s*{_N}\s*(?i:m|min|mins|minutes)\b",
        60.0,
    ),
    # a bare ``N sec`` that ends a run of separated statements: the seconds since the start (OpenNMT-py's
    # ``Step N/M; acc: ...; 1320/1445 tok/s;  19995 sec``, and 3.x's closing separator after it: ``...; 11953/14732
    # tok/s;   3017 sec;``, LibreTranslate/Locomotive issue 35, 2025-03-06); a step time says its ``/step``, an
    # interval its ``time``
    Measure("...; X sec (at the end: elapsed)", "elapsed_s", rf"[;|,]\s*{_N}\s*(?:s|sec|secs|seconds)\s*[;|,]?\s*$"),
    # metrics
    # (the key ends at its word: SpeechBrain's postfix ``loss1=-2.26, loss2=0.693, train_loss=-2.26`` names two parts
    # ``loss1`` and ``loss2``, then the loss; ``loss1`` is no loss of 1)
    Measure("loss: X", "loss", rf"(?:\b|_)(?i:{LOSS_WORDS})\b['\"]?\s*[:=]?\s*{_N}"),
    # a loss keyed by ``l_`` and its part (BasicSR's and MMSR's ``l_g_pix: 4.1864e-04 l_g_fea: ..``, open-mmlab/mmagic
    # issue 82, 2020-05-22; XPixelGroup/BasicSR issue 204, 2019-08-09): the first one said is the line's loss
    Measure("l_pix: X (a loss keyed l_)", "loss", rf"\bl_[a-z][a-z_]*\s*[:=]\s*{_N}"),
    # the log loss a boosting round reports per set (XGBoost's ``train-logloss:0.005``, its multi-class
    # ``mlogloss``; LightGBM's ``binary_logloss``): the first set's, as printed
    Measure("logloss: X (a boosting round's)", "loss", rf"(?:\b|_)(?i:m?logloss)['\"]?\s*[:=]\s*{_N}"),
)

#: The cheap first test of the grammar: a line failing it states no measure (so no record).
MEASURE_GATE: Final = (
    r"(?i:/s\b|/sec|/it\b|/iter|/step|/batch|per (?:iteration|step|batch|iter)|tim(?:e|ing)|ups\b|wps\b|throughput"
    r"|per_?sec|runtime|wall\b|\d\s*(?:sec|s)\s*(?:\)|$)|tps\b|seconds|took|_cost|imps|ips\b|rate\s*=|elapsed|\bdt\s*[:=]|/kimg"
    r"|\(ms\)|duration|\bfps\s*:"
    # a drawn bar's counter and its elapsed clock ending the line (a bar that prints no rate), or tqdm's bracketed
    # clock where the terminal's width cut the rate after it (Ultralytics on Windows: ``640: 100%|██████████| 25/25
    # [00:47<00:00,  1.91s/i``, techyogeshchauhan/Atpug terminal_seal_project/runs/train/result.md, 2025)
    r"|%\s*\S*\s*\d+/\d+\s+[\d:]+:\d\d\s*$|%\|[^|]*\|\s*\d+/\d+\s*\[[\d:]+:\d\d<)"
)
