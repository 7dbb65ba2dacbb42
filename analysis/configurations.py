"""Configurations: the runs that repeat one job on the same machines, measured together.

A run's steady rate and its interval come from its own intervals (:mod:`tierscope.analysis.throughput`): the
interval says how sure the rate of *that run* is, not how the next run on the same machines would do. Cloud
machines vary from run to run (placement, neighbours, a slower host), so the figure to plan with is the
configuration's: the runs that repeat it, and the spread between them.

- **Which runs are one configuration**: those given one ``config`` name (a manifest's ``config`` key, ``collect
  --config NAME``; the runs table's ``config`` fact; spaces around it dropped) *and* run on the same machines: the
  same tier, worker pools (``hardware``) and accelerator, and for a run on one's own hardware (a ``local`` tier) the
  same host (``ran_on``). Runs of one name on other machines are not repeats of each other: the name gives one row
  per machine configuration, ``NAME [its machines]``, each noting the split (:func:`split_note`). A run without a
  name is a configuration of its own, named by its run id. Nothing is grouped by guess: two runs of one tier may
  be two jobs (another model, another batch size), and averaging them would be a rate no job has.
- **Row names** (the frame's ``run_id``): a run of its own keeps its run id; a configuration is named by its
  ``config`` (with its machines when the name is split). A run and a configuration never share a row: where a
  configuration's name is some run's id (``--config r2`` given to r1 while r2 runs alone), the configuration's row
  is marked ``r2 (config)`` and the run keeps ``r2`` (:func:`row_names`).
- **The configuration's rate**: the mean of its runs' steady rates (global steps/s), over the runs that have
  one and did not fail (a failed run is evidence, not a measurement to plan from). Each run weighs the same,
  however long it ran: the spread that matters is between runs, and a long run is not more of a repeat.
- **Its interval** (:data:`CI_BETWEEN_RUNS`), with :data:`MIN_RUNS_FOR_INTERVAL` or more such runs: Student's t
  over the runs' steady rates, ``mean ± t(0.975, n - 1) · s / sqrt(n)`` with ``s`` their sample standard
  deviation (``n - 1`` in its denominator). A bootstrap over three to five runs draws from so few values that its
  percentiles are the smallest and the largest run; the t-interval widens with few runs as it should. Two runs
  get their mean, their spread (lowest and highest) and no interval: with one degree of freedom ``t`` is 12.7.
  A rate is not negative: where runs so far apart put the t-interval's lower bound below 0, it is 0 and the row's
  note says it was clipped (the interval's width then says more than its lower end).
- **Speedup, scaling efficiency and price** of a configuration of several runs are recomputed from its rate,
  against the configuration holding the summary's baseline run. Its speedup has no interval (the runs' bootstrap
  draws are within each run; a ratio of two between-run means is not one of them).

A configuration of one run is that run's summary row (its interval ``within-run``) under the configuration's name,
its run id in ``run_ids`` and its note. The frame has the
summary's columns (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`) and :data:`CONFIG_COLUMNS`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import polars as pl

from tierscope.analysis.bootstrap import LEVEL
from tierscope.analysis.summary import SUMMARY_SCHEMA, USD_PER_MILLION_EXAMPLES, with_target, withhold_non_finite
from tierscope.contract import is_local_tier
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


def config_name() -> pl.Expr:
    """A summary row's ``config`` with the spaces around it dropped; null where it is missing or blank."""
    name = pl.col("config").str.strip_chars()
    return pl.when(name != "").then(name)


def split_note(config: str, machines: int) -> str:
    """What a row of the configuration ``config`` says when its runs are on ``machines`` (> 1) machine
    configurations: they are not pooled across them."""
    return (
        f"config {config} names runs on {machines} different machine configurations; "
        "pooled only runs on the same machines"
    )


def _machines(run: dict[str, object]) -> tuple[object, ...]:
    """What makes two runs' machines the same: tier, worker pools, accelerator; for a run on one's own hardware
    (a local tier) its host too (two laptops are two machines, whatever the tier label says)."""
    host = run["ran_on"] if is_local_tier(run["tier"]) else None  # type: ignore[arg-type]
    return (run["tier"], run["hardware"], run["accelerator"], host)


def _machines_label(run: dict[str, object], full: bool) -> str:
    """The machines of a split configuration's row, in its name: its tier (``full``: with its worker pools and
    accelerator, for runs of one tier on other machines), the host of a run on one's own hardware."""
    parts = [run["tier"]] if run["tier"] is not None else []
    if full or not parts:
        parts += [p for p in (run["hardware"], run["accelerator"]) if p is not None]
    label = ", ".join(str(p) for p in parts) or "unknown machines"
    if is_local_tier(run["tier"]) and run["ran_on"]:  # type: ignore[arg-type]
        label += f" on {run['ran_on']}"
    return label


#: Columns of :func:`row_names`.
ROW_NAMES_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "row": pl.String(),  # the name of the row the run is in: its run id (a run of its own), else its configuration's
    "config": pl.String(),  # the run's config name, stripped (null: a run of its own)
    "split_note": pl.String(),  # set where the config names runs on other machines too (split_note)
}


def row_names(summary: pl.DataFrame) -> pl.DataFrame:
    """Which row of :func:`configurations` each run of ``summary`` (one row per run) is in: :data:`ROW_NAMES_SCHEMA`.

    A run without a config is its own row, named by its id. The runs of one config on the same machines are
    one row, named by the config, or ``config [machines]`` where the config names runs on several machine
    configurations. A row of a configuration never takes a name that is a run id (any run's, in or out of a
    configuration: ``--each-run`` and a plan list runs by id beside the rows): it is marked ``NAME (config)``
    (then ``NAME (config 2)``, ...) instead, so a run and a configuration never share a key."""
    runs = conform(summary, SUMMARY_SCHEMA).with_columns(config=config_name()).sort("run_id").to_dicts()
    taken = {str(r["run_id"]) for r in runs}
    groups: dict[str, dict[tuple[object, ...], list[dict[str, object]]]] = {}
    for run in runs:
        if run["config"] is not None:
            groups.setdefault(run["config"], {}).setdefault(_machines(run), []).append(run)
    rows = [{"run_id": r["run_id"], "row": r["run_id"], "config": None, "split_note": None}
            for r in runs if r["config"] is None]  # fmt: skip
    for config in sorted(groups):
        split = groups[config]
        short = [_machines_label(members[0], full=False) for members in split.values()]
        full = len(set(short)) < len(short)  # one tier on several machines: its machines named too
        labelled = sorted(((_machines_label(m[0], full), m) for m in split.values()), key=lambda pair: pair[0])
        for label, members in labelled:
            wanted = config if len(split) == 1 else f"{config} [{label}]"
            name, n = wanted, 1
            own = {str(r["run_id"]) for r in members}  # a run's id is no other row's key if the run is in this one
            while name in taken - own:
                n += 1
                name = f"{wanted} (config)" if n == 2 else f"{wanted} (config {n - 1})"
            taken.add(name)
            note = split_note(config, len(split)) if len(split) > 1 else None
            rows += [{"run_id": r["run_id"], "row": name, "config": config, "split_note": note} for r in members]
    return pl.DataFrame(rows, schema=ROW_NAMES_SCHEMA)


class Spread(NamedTuple):
    """The steady rates of a configuration's runs (global steps/s): their mean, sample standard deviation
    (``n - 1``; None for one run) and the interval between runs (None below :data:`MIN_RUNS_FOR_INTERVAL`);
    ``clipped``: the t-interval's lower bound was below 0 and ``low`` is 0 (a rate is not negative)."""

    mean: float
    sd: float | None
    low: float | None
    high: float | None
    clipped: bool = False


def between_runs(rates: Sequence[float], level: float = LEVEL) -> Spread:
    """The :class:`Spread` of ``rates`` (one steady rate per run): their mean and Student's t ``level``
    interval ``mean ± t((1 + level) / 2, n - 1) · s / sqrt(n)``, its lower bound clipped at 0. Raises
    :class:`ValueError` for no rates."""
    if not rates:
        raise ValueError("no steady rates to average")
    n = len(rates)
    mean = math.fsum(rates) / n
    sd = math.sqrt(math.fsum((r - mean) ** 2 for r in rates) / (n - 1)) if n > 1 else None
    if sd is None or n < MIN_RUNS_FOR_INTERVAL:
        return Spread(mean, sd, None, None)
    from scipy.stats import t  # scipy: only for a configuration of several runs

    half = float(t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    low = mean - half
    return Spread(mean, sd, max(low, 0.0), mean + half, low < 0)


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
    pooled = summary.sort("run_id").group_by("_row", maintain_order=True).agg(
        *aggs,
        config_runs=pl.len().cast(pl.UInt32),
        rated_runs=counted.sum().cast(pl.UInt32),
        run_ids=pl.col("run_id").str.join(", "),
        _config=pl.col("_config").first(),
        _split=pl.col("_split").first(),
        _rates=steady.filter(counted),
        _left_out=pl.format("{} ({})", "run_id", pl.when(pl.col("status") == "failed").then(pl.lit("failed"))
                            .otherwise(pl.col("steady_reason").fill_null("no steady rate"))).filter(~counted),
    )  # fmt: skip
    rows = []
    for row in pooled.iter_rows(named=True):
        rates, left_out, split = row.pop("_rates"), row.pop("_left_out"), row.pop("_split")
        spread = between_runs(rates) if rates else Spread(None, None, None, None)  # type: ignore[arg-type]
        notes = [split] if split else []
        if left_out:
            notes.append(f"left out of its rate: {', '.join(left_out)}")
        if 0 < len(rates) < MIN_RUNS_FOR_INTERVAL:
            notes.append(
                f"{len(rates)} run{'s' if len(rates) != 1 else ''} with a steady rate: an interval between runs "
                f"needs {MIN_RUNS_FOR_INTERVAL}"
            )
        if spread.clipped:
            notes.append(
                f"its interval's lower bound, {spread.mean - (spread.high - spread.mean):.6g}, clipped at 0 (a rate "
                "is not negative): its runs' rates are too far apart for their mean to be known closely"
            )
        row.update(
            run_id=row.pop("_row"), config=row.pop("_config"), steady_global_steps_per_s=spread.mean,
            steady_ci_low=spread.low, steady_ci_high=spread.high,
            ci_scope=CI_BETWEEN_RUNS if spread.low is not None else None,
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
        usd_per_million_examples=USD_PER_MILLION_EXAMPLES,
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
    :data:`CONFIG_SCHEMA`, sorted by its name (``run_id``: the row's name, :func:`row_names`; ``config``: the
    configuration's name as given, stripped, or the run id of a run of its own). ``target``: N of the time and
    price to N steps (None: not asked)."""
    names = row_names(summary).select("run_id", _row="row", _given="config", _split="split_note")
    frame = conform(summary, SUMMARY_SCHEMA).join(names, on="run_id", how="left", maintain_order="left")
    frame = frame.with_columns(_config=pl.coalesce("_given", "run_id"))
    sizes = frame.group_by("_row").agg(n=pl.len())
    several = sizes.filter(pl.col("n") > 1)["_row"]
    one = (pl.col("_row") != pl.col("run_id")) & pl.col("_given").is_not_null()  # a configuration of one run
    alone = frame.filter(~pl.col("_row").is_in(several.implode())).with_columns(
        run_id=pl.col("_row"),
        config=pl.col("_config"),
        config_runs=pl.lit(1, pl.UInt32),
        rated_runs=rated().cast(pl.UInt32),
        run_ids=pl.col("run_id"),
        run_rate_min=pl.when(rated()).then(pl.col("steady_global_steps_per_s")),
        run_rate_max=pl.when(rated()).then(pl.col("steady_global_steps_per_s")),
        # the row is named by its configuration: which run it is, said (--each-run lists it under its id)
        config_note=pl.when(one).then(
            pl.concat_str(pl.format("its one run: {}", "run_id"), "_split", separator="; ", ignore_nulls=True)
        ),
    )
    base_run = summary["baseline_run_id"].drop_nulls().first()
    base_row = frame.filter(pl.col("run_id") == base_run)["_row"].first() if base_run is not None else None
    # the baseline is named as its row is (a run of a configuration of one run: the configuration's name)
    renamed = pl.col("baseline_run_id").replace(dict(zip(names["run_id"], names["_row"], strict=True)))
    if several.len() == 0:
        return conform(alone, CONFIG_SCHEMA).with_columns(baseline_run_id=renamed).sort("run_id")
    pooled = _valued_at_rate(_pooled(frame.filter(pl.col("_row").is_in(several.implode()))))
    joined = pl.concat([conform(alone, CONFIG_SCHEMA), pooled]).sort("run_id")
    if base_row is not None:
        compared = _against_baseline(joined, str(base_row))
        # a run's speedup interval is its bootstrap against the baseline run's: it holds only against that run alone
        keeps = (pl.col("config_runs") == 1) & pl.lit(base_row in set(alone["_row"]))
        joined = compared.with_columns(pl.when(keeps).then(pl.col(c)) for c in ("speedup_ci_low", "speedup_ci_high"))
    joined = joined.with_columns(baseline_run_id=renamed)
    pooled_rows = pl.col("config_runs") > 1
    timed = with_target(joined, target)
    joined = joined.with_columns(
        pl.when(pooled_rows).then(timed[c]).otherwise(pl.col(c)).alias(c)
        for c in ("target_steps", "target_examples", "hours_to_target", "usd_to_target", "steady_hours_to_target")
    )
    said = joined["withheld_figures"]  # a run's own (its figures nulled already): kept, not read again
    checked = withhold_non_finite(conform(joined, CONFIG_SCHEMA))
    return checked.with_columns(withheld_figures=pl.coalesce(pl.col("withheld_figures"), said))


def configuration_runs(runs: pl.DataFrame, table: pl.DataFrame, summary: pl.DataFrame) -> pl.DataFrame:
    """The run index ``runs`` (:func:`tierscope.analysis.summary.run_index`) keyed as ``table``'s rows are (a
    :func:`configurations` frame of ``summary``, maybe with runs of its own added): a configuration by its row
    name, with its first run's facts (its tier and machines: what prices it), and every run by its id."""
    names = row_names(summary).select("run_id", "row")
    named = (
        runs.join(names, on="run_id").sort("run_id").with_columns(run_id=pl.col("row")).drop("row")
        .unique("run_id", keep="first", maintain_order=True)
    )  # fmt: skip
    return pl.concat([runs, named.filter(~pl.col("run_id").is_in(runs["run_id"].implode()))]).filter(
        pl.col("run_id").is_in(table["run_id"].implode())
    )


def plan_rows(summary: pl.DataFrame, table: pl.DataFrame) -> pl.DataFrame:
    """What a plan chooses among: ``table``'s rows (:func:`configurations`) and the failed runs of its
    configurations of several runs, each a row of its own from ``summary`` (a failed run is evidence to show,
    never a candidate, and a configuration of several runs keeps its status from the others)."""
    pooled = table.filter(pl.col("config_runs") > 1)["run_id"]
    names = row_names(summary).select("run_id", "row")
    failed = summary.join(names, on="run_id").filter(
        (pl.col("status") == "failed") & pl.col("row").is_in(pooled.implode())
    )
    return pl.concat([table, conform(failed.drop("row"), CONFIG_SCHEMA)]) if failed.height else table
