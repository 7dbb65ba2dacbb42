"""Configurations: the runs that repeat one job on the same machines, measured together.

A run's steady rate and its interval come from its own intervals (:mod:`tierscope.analysis.throughput`): the
interval says how sure the rate of *that run* is, not how the next run on the same machines would do. Cloud
machines vary from run to run (placement, neighbours, a slower host), so the figure to plan with is the
configuration's: the runs that repeat it, and the spread between them.

- **Which runs are one configuration**: those given one ``config`` name (a manifest's ``config`` key, ``collect
  --config NAME``; the runs table's ``config`` fact). A run without one is a configuration of its own, named by
  its run id. Nothing is grouped by guess: two runs of one tier may be two jobs (another model, another batch
  size), and averaging them would be a rate no job has.
- **The configuration's rate**: the mean of its runs' steady rates (global steps/s), over the runs that have
  one and did not fail (a failed run is evidence, not a measurement to plan from). Each run weighs the same,
  however long it ran: the spread that matters is between runs, and a long run is not more of a repeat.
- **Its interval** (:data:`CI_BETWEEN_RUNS`), with :data:`MIN_RUNS_FOR_INTERVAL` or more such runs: Student's t
  over the runs' steady rates, ``mean ± t(0.975, n - 1) · s / sqrt(n)`` with ``s`` their sample standard
  deviation (``n - 1`` in its denominator). A bootstrap over three to five runs draws from so few values that its
  percentiles are the smallest and the largest run; the t-interval widens with few runs as it should. Two runs
  get their mean, their spread (lowest and highest) and no interval: with one degree of freedom ``t`` is 12.7.
- **Speedup, scaling efficiency and price** of a configuration of several runs are recomputed from its rate,
  against the configuration holding the summary's baseline run. Its speedup has no interval (the runs' bootstrap
  draws are within each run; a ratio of two between-run means is not one of them).

A configuration of one run is that run's summary row as it is (its interval ``within-run``). The frame has the
summary's columns (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`) and :data:`CONFIG_COLUMNS`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import polars as pl

from tierscope.analysis.bootstrap import LEVEL
from tierscope.analysis.summary import SUMMARY_SCHEMA, with_target, withhold_non_finite
from tierscope.dataset.schema import conform

#: ``ci_scope`` of a configuration's interval over its runs' steady rates.
CI_BETWEEN_RUNS = "between-runs"

#: The fewest runs with a steady rate whose mean gets an interval.
MIN_RUNS_FOR_INTERVAL = 3

#: The columns a configuration row adds to the summary's.
CONFIG_COLUMNS: dict[str, pl.DataType] = {
    "config_runs": pl.UInt32(),  # runs of the configuration
    "rated_runs": pl.UInt32(),  # those whose steady rates its rate averages (a steady rate, not failed)
    "run_ids": pl.String(),  # its runs, by run id, comma-separated
    "run_rate_sd": pl.Float64(),  # sample standard deviation of the rated runs' steady rates (n - 1; >= 2 runs)
    "run_rate_min": pl.Float64(),  # the lowest and highest of them
    "run_rate_max": pl.Float64(),
    "config_note": pl.String(),  # runs left out of its rate and why; why it has no interval
}

#: Every column of :func:`configurations`.
CONFIG_SCHEMA: dict[str, pl.DataType] = {**SUMMARY_SCHEMA, **CONFIG_COLUMNS}

#: A configuration's status from its runs': the best evidence any of them gives, in this order.
_STATUS_ORDER = ("ok", "unknown", "failed", "empty")

#: Counts summed over a configuration's runs (other whole numbers are the first run's: its topology).
_SUMMED = ("records", "duplicates", "segments", "restarts", "stragglers")


def configuration() -> pl.Expr:
    """A summary row's configuration: its ``config``, else its run id (a run without one is its own)."""
    return pl.coalesce(pl.col("config"), pl.col("run_id"))


class Spread(NamedTuple):
    """The steady rates of a configuration's runs (global steps/s): their mean, sample standard deviation
    (``n - 1``; None for one run) and the interval between runs (None below :data:`MIN_RUNS_FOR_INTERVAL`)."""

    mean: float
    sd: float | None
    low: float | None
    high: float | None


def between_runs(rates: Sequence[float], level: float = LEVEL) -> Spread:
    """The :class:`Spread` of ``rates`` (one steady rate per run): their mean and Student's t ``level``
    interval ``mean ± t((1 + level) / 2, n - 1) · s / sqrt(n)``. Raises :class:`ValueError` for no rates."""
    if not rates:
        raise ValueError("no steady rates to average")
    n = len(rates)
    mean = math.fsum(rates) / n
    sd = math.sqrt(math.fsum((r - mean) ** 2 for r in rates) / (n - 1)) if n > 1 else None
    if sd is None or n < MIN_RUNS_FOR_INTERVAL:
        return Spread(mean, sd, None, None)
    from scipy.stats import t  # scipy: only for a configuration of several runs

    half = float(t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    return Spread(mean, sd, mean - half, mean + half)


def rated() -> pl.Expr:
    """Whether a summary row's steady rate counts in its configuration's: it has one, and the run did not fail."""
    return pl.col("steady_global_steps_per_s").is_not_null() & pl.col("status").ne_missing(pl.lit("failed"))


def _pooled(summary: pl.DataFrame) -> pl.DataFrame:
    """One row per configuration of several runs: the runs' figures pooled (means over the rated runs, counts
    summed, facts the first run's), the rate and its interval from :func:`between_runs`."""
    counted = rated()
    aggs: list[pl.Expr] = []
    for name, dtype in SUMMARY_SCHEMA.items():
        if name in ("run_id", "config"):
            continue
        if name in _SUMMED:
            aggs.append(pl.col(name).sum().cast(dtype))
        elif name == "last_step":
            aggs.append(pl.col(name).max())
        elif name == "status":
            rank = pl.col(name).replace_strict(
                {s: i for i, s in enumerate(_STATUS_ORDER)}, default=len(_STATUS_ORDER), return_dtype=pl.Int32
            )
            aggs.append(pl.col(name).sort_by(rank).first())
        elif dtype == pl.Float64():
            aggs.append(pl.coalesce(pl.col(name).filter(counted).mean(), pl.col(name).mean()).alias(name))
        else:
            aggs.append(pl.col(name).first())
    steady = pl.col("steady_global_steps_per_s")
    pooled = summary.sort("run_id").group_by("_config", maintain_order=True).agg(
        *aggs,
        config_runs=pl.len().cast(pl.UInt32),
        rated_runs=counted.sum().cast(pl.UInt32),
        run_ids=pl.col("run_id").str.join(", "),
        _machines=pl.coalesce("hardware", "tier").drop_nulls().unique(),
        _rates=steady.filter(counted),
        _left_out=pl.format("{} ({})", "run_id", pl.when(pl.col("status") == "failed").then(pl.lit("failed"))
                            .otherwise(pl.col("steady_reason").fill_null("no steady rate"))).filter(~counted),
    )  # fmt: skip
    rows = []
    for row in pooled.iter_rows(named=True):
        rates, left_out, machines = row.pop("_rates"), row.pop("_left_out"), row.pop("_machines")
        spread = between_runs(rates) if rates else Spread(None, None, None, None)  # type: ignore[arg-type]
        notes = []
        if len(machines) > 1:  # one name given to runs on other machines: said, not corrected
            notes.append(f"its runs name different tiers or machines ({', '.join(sorted(machines))})")
        if left_out:
            notes.append(f"left out of its rate: {', '.join(left_out)}")
        if 0 < len(rates) < MIN_RUNS_FOR_INTERVAL:
            notes.append(
                f"{len(rates)} run{'s' if len(rates) != 1 else ''} with a steady rate: an interval between runs "
                f"needs {MIN_RUNS_FOR_INTERVAL}"
            )
        name = row.pop("_config")
        row.update(
            run_id=name, config=name, steady_global_steps_per_s=spread.mean, steady_ci_low=spread.low,
            steady_ci_high=spread.high, ci_scope=CI_BETWEEN_RUNS if spread.low is not None else None,
            run_rate_sd=spread.sd, run_rate_min=min(rates, default=None), run_rate_max=max(rates, default=None),
            config_note="; ".join(notes) or None, speedup_ci_low=None, speedup_ci_high=None,
        )  # fmt: skip
        if spread.mean is not None:  # a run without a steady rate does not take the configuration's away
            row.update(steady_status=None, steady_reason=None)
        if row["status"] != "failed":  # a failed run's reason is its own (the summary's per run)
            row.update(failure_reason=None)
        rows.append(row)
    return pl.DataFrame(rows, schema=CONFIG_SCHEMA)


def _valued_at_rate(frame: pl.DataFrame) -> pl.DataFrame:
    """A pooled row's figures that follow from its rate, as the summary defines them for a run."""
    rate = pl.col("steady_global_steps_per_s")
    return frame.with_columns(
        steps_per_ml_unit_hour=rate * 3600 / pl.col("ml_units_per_hour"),
        usd_per_1000_steps=pl.col("usd_per_hour") / (rate * 3600) * 1000,
        steps_per_s_per_device=rate / pl.col("devices"),
        steps_per_usd=pl.when(pl.col("usd_per_hour") > 0).then(rate * 3600 / pl.col("usd_per_hour")),
    ).with_columns(price_per_1000_productive_steps=pl.col("usd_per_1000_steps") / pl.col("goodput"))


def _against_baseline(frame: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """``frame``'s speedup and scaling efficiencies against its row ``baseline`` (a configuration), on the basis
    the summary chose per run (``speedup_basis``: steps/s, or examples/s where batch size or mode differ)."""
    base = frame.filter(pl.col("run_id") == baseline)
    if base.height == 0 or base["steady_global_steps_per_s"][0] is None:
        # every run of it failed: the runs keep their speedups against the baseline run, a pooled row has none
        compared = ("speedup_vs_baseline", "scaling_efficiency_tasks", "scaling_efficiency_units",
                    "scaling_efficiency_devices")  # fmt: skip
        return frame.with_columns(pl.when(pl.col("config_runs") == 1).then(pl.col(c)).alias(c) for c in compared)
    b = base.row(0, named=True)
    on_examples = (pl.col("speedup_basis") == "examples/s") & pl.lit(b["examples_per_s"] is not None)
    speedup = pl.when(on_examples.fill_null(False)).then(pl.col("examples_per_s") / b["examples_per_s"])
    speedup = speedup.otherwise(pl.col("steady_global_steps_per_s") / b["steady_global_steps_per_s"])
    return frame.with_columns(baseline_run_id=pl.lit(baseline), speedup_vs_baseline=speedup).with_columns(
        scaling_efficiency_tasks=pl.when((pl.col("device_basis") == "task") & pl.lit(b["device_basis"] == "task")).then(
            pl.col("speedup_vs_baseline") / (pl.col("tasks") / b["tasks"])
        ),
        scaling_efficiency_units=pl.col("speedup_vs_baseline") / (pl.col("ml_units_per_hour") / b["ml_units_per_hour"]),
        scaling_efficiency_devices=pl.when(
            (pl.col("device_basis") == b["device_basis"]) & pl.col("accelerator").eq_missing(b["accelerator"])
        ).then(pl.col("speedup_vs_baseline") / (pl.col("devices") / b["devices"])),
    )


def configurations(summary: pl.DataFrame, target: int | None = None) -> pl.DataFrame:
    """One row per configuration (see the module doc) of ``summary`` (:data:`SUMMARY_SCHEMA` rows, one per run):
    :data:`CONFIG_SCHEMA`, sorted by its name (``run_id``: the configuration's name, a run's id for a run of its
    own). ``target``: N of the time and price to N steps (None: not asked)."""
    frame = conform(summary, SUMMARY_SCHEMA).with_columns(_config=configuration())
    sizes = frame.group_by("_config").agg(n=pl.len())
    several = sizes.filter(pl.col("n") > 1)["_config"]
    alone = frame.filter(~pl.col("_config").is_in(several.implode())).with_columns(
        config=pl.col("_config"),
        config_runs=pl.lit(1, pl.UInt32),
        rated_runs=rated().cast(pl.UInt32),
        run_ids=pl.col("run_id"),
        run_rate_min=pl.when(rated()).then(pl.col("steady_global_steps_per_s")),
        run_rate_max=pl.when(rated()).then(pl.col("steady_global_steps_per_s")),
    )
    if several.len() == 0:
        return conform(alone, CONFIG_SCHEMA).sort("run_id")
    pooled = _valued_at_rate(_pooled(frame.filter(pl.col("_config").is_in(several.implode()))))
    joined = pl.concat([conform(alone, CONFIG_SCHEMA), pooled]).sort("run_id")
    base_run = summary["baseline_run_id"].drop_nulls().first()
    base_config = frame.filter(pl.col("run_id") == base_run)["_config"].first() if base_run is not None else None
    if base_config is not None:
        compared = _against_baseline(joined, str(base_config))
        # a run's speedup interval is its bootstrap against the baseline run's: it holds only against that run alone
        keeps = (pl.col("config_runs") == 1) & pl.lit(base_config in set(alone["_config"]))
        joined = compared.with_columns(pl.when(keeps).then(pl.col(c)) for c in ("speedup_ci_low", "speedup_ci_high"))
    pooled_rows = pl.col("config_runs") > 1
    timed = with_target(joined, target)
    joined = joined.with_columns(
        pl.when(pooled_rows).then(timed[c]).otherwise(pl.col(c)).alias(c)
        for c in ("target_steps", "hours_to_target", "usd_to_target")
    )
    said = joined["withheld_figures"]  # a run's own (its figures nulled already): kept, not read again
    checked = withhold_non_finite(conform(joined, CONFIG_SCHEMA))
    return checked.with_columns(withheld_figures=pl.coalesce(pl.col("withheld_figures"), said))


def configuration_runs(runs: pl.DataFrame, table: pl.DataFrame) -> pl.DataFrame:
    """The run index ``runs`` (:func:`tierscope.analysis.summary.run_index`) keyed as ``table``'s rows are (a
    :func:`configurations` frame, maybe with runs of its own added): a configuration of several runs by its
    name, with its first run's facts (its tier and machines: what prices it), and every run by its id."""
    named = runs.sort("run_id").with_columns(run_id=configuration()).unique("run_id", keep="first", maintain_order=True)
    return pl.concat([runs, named.filter(~pl.col("run_id").is_in(runs["run_id"].implode()))]).filter(
        pl.col("run_id").is_in(table["run_id"].implode())
    )


def plan_rows(summary: pl.DataFrame, table: pl.DataFrame) -> pl.DataFrame:
    """What a plan chooses among: ``table``'s rows (:func:`configurations`) and the failed runs of its
    configurations of several runs, each a row of its own from ``summary`` (a failed run is evidence to show,
    never a candidate, and a configuration of several runs keeps its status from the others)."""
    pooled = table.filter(pl.col("config_runs") > 1)["run_id"]
    failed = summary.filter((pl.col("status") == "failed") & configuration().is_in(pooled.implode()))
    return pl.concat([table, conform(failed, CONFIG_SCHEMA)]) if failed.height else table
