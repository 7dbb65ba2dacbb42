"""The speed a log's closing summary states over the whole run: a run's mean where no step record measures one.

A Hugging Face Trainer's ``train_steps_per_second``, detectron2's ``Overall training speed``, a benchmark's
``total images/sec`` (read by :mod:`tierscope.collector.formats.closing` as
:data:`~tierscope.contract.WHOLE_RUN_RATE` events): the run's steps or examples over its time, warm-up,
evaluations and saves in it. It is a mean, not the pace of the machines alone: the summary shows it as the mean
global steps/s of a run that stored no step record, with a note saying where it comes from (:func:`mean_note`),
and, as nothing in the log says better, as that run's steady rate too, with the assumption said
(:data:`WHOLE_RUN_MEAN`: a lower bound of the steady rate, as a hand reading takes the figure). A run with records
keeps every figure as its records give it: beside step records the summary is a summary, never the steady rate.
"""

from __future__ import annotations

import polars as pl

from tierscope.analysis.stated_rates import measured_rates
from tierscope.contract import WHOLE_RUN_RATE

#: ``steady_assumption`` of a run whose steady rate is its closing summary's whole-run mean (:func:`whole_run_steady`),
#: and what it assumes in words.
WHOLE_RUN_MEAN = "whole_run_mean"
WHOLE_RUN_MEAN_NOTE = (
    "no step record measures a steady rate: the log's closing summary's mean over the whole run stands for it "
    "(warm-up, evaluations and pauses in: the steady rate is at least this)"
)

#: The columns of :func:`whole_run_rates`.
WHOLE_RUN_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "stated_global_steps_per_s": pl.Float64(),
    "stated_examples_per_s": pl.Float64(),
}


def whole_run_rates(events: pl.DataFrame) -> pl.DataFrame:
    """``run_id``, ``stated_global_steps_per_s``, ``stated_examples_per_s`` (:data:`WHOLE_RUN_SCHEMA`), one row per
    run with a :data:`~tierscope.contract.WHOLE_RUN_RATE` event: each figure the last one stated (by source and
    line: a log of two trainings in a row ends with the second's). ``events``: the events table's ``run_id, event,
    detail, source, source_offset``."""
    stated = events.filter(pl.col("event") == WHOLE_RUN_RATE)
    if stated.height == 0:
        return pl.DataFrame(schema=WHOLE_RUN_SCHEMA)

    def figure(key: str) -> pl.Expr:
        return pl.col("detail").str.json_path_match(f"$.{key}").cast(pl.Float64, strict=False)

    return (
        stated.sort("run_id", "source", "source_offset")
        .with_columns(_steps=figure("global_steps_per_s"), _examples=figure("examples_per_s"))
        # a stated 0, NaN or a rate beyond any machine is no rate, as a step record's is not (analysis.stated_rates)
        .with_columns(_steps=measured_rates("_steps"))
        .group_by("run_id", maintain_order=True)
        .agg(
            pl.col("_steps").drop_nulls().last().alias("stated_global_steps_per_s"),
            pl.col("_examples").drop_nulls().last().alias("stated_examples_per_s"),
        )
        .cast(WHOLE_RUN_SCHEMA)  # type: ignore[arg-type]
    )


def mean_note() -> pl.Expr:
    """``mean_note`` of a summary row: where its mean comes from when no step record measures it (the closing
    summary's figures, ``stated_global_steps_per_s`` and ``stated_examples_per_s``, to 6 significant figures);
    null for a run with records (its mean is measured) or without a stated rate."""
    said = pl.concat_str(
        pl.format("{} global steps/s", pl.col("stated_global_steps_per_s").round_sig_figs(6)),
        pl.format("{} examples/s", pl.col("stated_examples_per_s").round_sig_figs(6)),
        separator=", ",
        ignore_nulls=True,
    )
    stated = pl.col("stated_global_steps_per_s").is_not_null() | pl.col("stated_examples_per_s").is_not_null()
    return pl.when((pl.col("records").fill_null(0) == 0) & stated).then(
        pl.format(
            "mean stated by the log's closing summary over the whole run: {}",
            said,
        )
    )


def whole_run_steady() -> pl.Expr:
    """``steady_global_steps_per_s`` of a summary row: the closing summary's stated global steps/s where no step
    record measures one (``mean_note`` is set: a run without records), else the row's own; ``mean_note`` must be
    computed first."""
    return (
        pl.when(pl.col("mean_note").is_not_null() & pl.col("stated_global_steps_per_s").is_not_null())
        .then(pl.col("stated_global_steps_per_s"))
        .otherwise(pl.col("steady_global_steps_per_s"))
    )
