"""Which runs the summary compares with its baseline: runs doing the same work.

A speedup, a scaling efficiency and a cost per step of the baseline's work mean something only between runs of
one job (one model, one step). tierscope cannot see the model, but a log shows two marks of the program that
wrote it, and runs whose marks differ from the baseline's are not compared with it (their rates, prices and
goodput stand; their speedup and efficiencies are null, and ``baseline_note`` says why):

- **the formats that read its step records** (:mod:`tierscope.collector.formats`: ``keras``, ``tf-estimator``,
  ``grammar``...): one training program prints its progress one way on every machine, so a run none of whose
  records was read by a format that read the baseline's is another program's. A format shared is no proof of
  one job (the grammar reads most of today's trainers), so unrelated jobs read alike are still compared: the
  README asks for one job's runs per dataset, or ``--runs``.
- **what its examples/s count** (``tokens`` or ``examples``, the logs' ``log_examples_unit``): a language
  model's tokens and an image model's images are no one job.

A mark the log does not show (no step record, no examples/s) never keeps a run apart. With ``--baseline``
the user has named what to compare with: every run is compared, and the note stays to say how they differ.
"""

from __future__ import annotations

import polars as pl

#: The summary's columns this module reads (from :func:`tierscope.analysis.analyze.step_overview`).
MARKS = ("log_formats", "log_examples_unit")


#: Columns of :func:`apart`: how a run's work differs from the baseline's, each mark null where it does not.
APART_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "baseline_run_id": pl.String(),  # the baseline it was (or, with --baseline, was not) kept apart from
    "named": pl.Boolean(),  # the user named the baseline (--baseline): the run is compared all the same
    "formats": pl.String(),  # the formats that read its records, where none read the baseline's ("keras")
    "baseline_formats": pl.String(),  # ... and those that read the baseline's ("tf-estimator")
    "examples_unit": pl.String(),  # what its examples/s count, where the baseline's count another ("tokens")
    "baseline_examples_unit": pl.String(),  # ... and what the baseline's count ("examples")
}


def _differences(base: dict[str, object]) -> dict[str, pl.Expr]:
    """The :data:`APART_SCHEMA` marks of a summary row (with :data:`MARKS`) against the baseline row ``base``."""
    formats = [f for f in (base.get("log_formats") or []) if f is not None]
    unit = base.get("log_examples_unit")
    own = pl.col("log_formats").list.drop_nulls()
    read_apart = (own.list.len() > 0) & pl.lit(len(formats) > 0) & (own.list.set_intersection(formats).list.len() == 0)
    counted_apart = (
        pl.col("log_examples_unit").is_not_null()
        & pl.lit(unit is not None)
        & (pl.col("log_examples_unit") != pl.lit(unit, pl.String))
    )
    return {
        "formats": pl.when(read_apart).then(own.list.join(", ")),
        "baseline_formats": pl.when(read_apart).then(pl.lit(", ".join(formats))),
        "examples_unit": pl.when(counted_apart).then(pl.col("log_examples_unit")),
        "baseline_examples_unit": pl.when(counted_apart).then(pl.lit(unit, pl.String)),
    }


def unlike(base: dict[str, object]) -> pl.Expr:
    """How a summary row's work differs from the baseline row ``base`` (its :data:`MARKS`), one phrase; null where
    nothing shows a difference (and for the baseline itself): ``its records were read as keras, the baseline's as
    tf-estimator``, ``its examples/s count tokens, the baseline's examples``."""
    d = _differences(base)
    by_format = pl.format("its records were read as {}, the baseline's as {}", d["formats"], d["baseline_formats"])
    by_unit = pl.format("its examples/s count {}, the baseline's {}", d["examples_unit"], d["baseline_examples_unit"])
    return pl.concat_str(by_format, by_unit, separator="; ", ignore_nulls=True).replace("", None)


def apart(summary: pl.DataFrame, marks: pl.DataFrame, named: bool) -> pl.DataFrame:
    """:data:`APART_SCHEMA` rows, one per run of ``summary`` (the summary's rows, with ``baseline_note`` and
    ``baseline_run_id``) whose note says its work differs from the baseline's, from ``marks`` (``run_id`` and
    :data:`MARKS`, :func:`tierscope.analysis.analyze.step_overview`'s): the note's parts, for a sentence in
    another language than the note's. ``named``: the user named the baseline (``--baseline``)."""
    empty = pl.DataFrame(schema=APART_SCHEMA)
    if "baseline_note" not in summary.columns:
        return empty
    noted = summary.filter(pl.col("baseline_note").is_not_null())
    bases = summary.filter(pl.col("baseline_run_id") == pl.col("run_id"))["run_id"]
    if noted.height == 0 or bases.len() == 0:
        return empty
    base_id = str(bases[0])
    own = marks.filter(pl.col("run_id") == base_id)
    base = own.row(0, named=True) if own.height else {}
    rows = noted.select("run_id").join(marks.select("run_id", *MARKS), on="run_id", how="left")
    return rows.select(
        "run_id", baseline_run_id=pl.lit(base_id), named=pl.lit(named), **_differences(base)
    ).match_to_schema(APART_SCHEMA)


#: The summary's figures that compare a run with the baseline: null for a run whose work is another's.
COMPARED = (
    "baseline_run_id", "speedup_vs_baseline", "speedup_ci_low", "speedup_ci_high", "speedup_basis",
    "scaling_efficiency_tasks", "scaling_efficiency_units", "scaling_efficiency_devices",
)  # fmt: skip


def apart_from_baseline(frame: pl.DataFrame, base: dict[str, object], named: bool) -> pl.DataFrame:
    """``frame`` (the summary's rows, compared with the baseline row ``base``, with :data:`MARKS` where known)
    with ``baseline_note`` saying how each run's work differs from the baseline's (:func:`unlike`; null: it
    does not, as far as the logs show) and, unless the user ``named`` the baseline (``--baseline``), the
    :data:`COMPARED` figures of those runs null."""
    for name, dtype in (("log_formats", pl.List(pl.String)), ("log_examples_unit", pl.String)):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype).alias(name))
    differs = unlike(base)
    who = str(base["run_id"])
    if named:
        note = pl.format("compared with {} as --baseline asks, though {}", pl.lit(who), differs)
        return frame.with_columns(baseline_note=note)
    note = pl.format(
        "not compared with {}: {}; another job's work, it seems (--baseline {} compares them)", pl.lit(who), differs,
        pl.lit(who),
    )  # fmt: skip
    frame = frame.with_columns(baseline_note=note)
    apart = pl.col("baseline_note").is_not_null()
    return frame.with_columns(
        pl.when(apart).then(None).otherwise(pl.col(c)).alias(c) for c in COMPARED if c in frame.columns
    )
