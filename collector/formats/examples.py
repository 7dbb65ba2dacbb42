"""Examples/s and the batch: a rate of examples becomes steps/s only through the batch size a log states.

The grammar keeps a rate of examples (images, samples, sequences, tokens) as logged; these functions learn
the batch size from the lines that state it, turn examples/s into steps/s where it is known (and back), and
leave out records whose only figure is examples/s beside records that time their steps."""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.base import (
    ParseContext,
)
from tierscope.collector.formats.grammar import ProgressGrammar
from tierscope.collector.formats.vocabulary import (
    TIME_OF_DAY,
)

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
