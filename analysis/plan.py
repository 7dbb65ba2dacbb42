"""Time and price to reach N steps on each tier, measured or predicted, and the recommendation.

A **candidate** is a measured run (its steady rate and interval) or a scale tier nobody
measured, predicted by the scaling model (:func:`tierscope.analysis.scaling.best_fit`) at the
tier's number of training tasks (the tier table, :mod:`tierscope.tiertable`). Only CPU tiers are predicted: the
model is throughput against task count on like machines, and says nothing about a GPU
or TPU. Every candidate is priced on one date (``price_date``, default today) in one
region, since the question is what a job would cost now, whenever the run was measured.

Time to N steps: ``once + N / rate`` hours for a measured run, on its **sustained** rate (the steps it
made over the time it ran, checkpoints, evaluations and restarts included; start-up paid once:
:mod:`tierscope.analysis.sustained`), the steady rate where its goodput is unknown (``rate_basis`` says
which); the hours at its steady rate beside (``steady_hours``). ``N / rate`` for a predicted tier (no start-up
known): the model is fitted to steady rates, so its prediction is a steady rate; it is planned on that rate x
the measured candidates' :func:`sustained_share` (``rate_basis`` ``sustained``: the unmeasured configuration
pays checkpoints and evaluations as the measured ones did), else on the steady rate (``steady``), so that
measured and predicted rows are compared on one basis. Its interval uses the rate's interval (a sustained
rate's: the steady interval scaled by the same ratio).
Price: hours x USD/hour (ML units x USD per ML unit-hour).

A predicted candidate carries its fit's status (``exactly determined``: nothing checks it, and
it has no interval) and caveat (:func:`tierscope.analysis.scaling.prediction_caveat`); a
recommendation resting on a caveated prediction says so before anything else
(:attr:`Recommendation.caveat`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from tierscope.analysis import machines
from tierscope.analysis.cost import run_costs
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.machines import Hardware
from tierscope.analysis.prices import PriceTable, quote, region_of
from tierscope.analysis.quotas import refusal, usage
from tierscope.analysis.scaling import EXACT, ScalingFit, best_fit, prediction_caveat
from tierscope.analysis.summary import baseline_examples_per_step, own_steps
from tierscope.analysis.sustained import ONCE_S, PLAN_BASIS, PLAN_RATE, STEADY, SUSTAINED, hours_to
from tierscope.analysis.topology import load_tiers, run_hardware, tier_hardware, training_tasks
from tierscope.contract import LOCAL_TIER_PATTERN
from tierscope.decimals import two_decimals
from tierscope.tiertable import ACCELERATOR

#: Columns of :func:`frontier`.
FRONTIER_SCHEMA: dict[str, pl.DataType] = {
    "candidate": pl.String(),  # the run id (measured), the tier or machine configuration (predicted)
    "tier": pl.String(),
    "basis": pl.String(),  # "measured", "predicted (usl)" / "predicted (amdahl)", or "failed (evidence)"
    "tasks": pl.UInt32(),  # training tasks
    "hardware": pl.String(),  # the configuration's worker pools in one line (tierscope.analysis.machines)
    "topology": pl.String(),  # the same as the runs table stores it (Hardware.to_json); null: a legacy tier's
    "accelerator": pl.String(),  # GPU or TPU type of the training pools (null: CPUs)
    "devices": pl.UInt32(),  # GPUs or TPU chips (else training tasks)
    "device_basis": pl.String(),  # GPU / TPU chip / task
    "global_steps_per_s": pl.Float64(),  # the rate planned on: sustained (measured), else steady
    "rate_ci_low": pl.Float64(),
    "rate_ci_high": pl.Float64(),
    "rate_basis": pl.String(),  # sustained / steady (tierscope.analysis.sustained; a prediction's: see sustained_share)
    "steady_global_steps_per_s": pl.Float64(),  # the steady rate, measured or predicted, beside it
    "ml_units_per_hour": pl.Float64(),  # on price_date; null: no price (a laptop) or today's machines
    "usd_per_hour": pl.Float64(),
    "price_rows": pl.String(),  # the rows behind usd_per_hour (resource, region, date, source)
    "price_note": pl.String(),  # stale rows, a missing row, a row of another date
    "target_steps": pl.Int64(),  # the target N: global steps of the baseline's work
    "target_examples": pl.Float64(),  # the examples N steps of the baseline are (null: compared on steps/s)
    "steps": pl.Int64(),  # the candidate's own global steps to N (fewer where its step processes more examples)
    "hours": pl.Float64(),  # to reach N steps
    # seconds paid once before the steady pace (sustained.ONCE_S), in hours: a measured run's; null: none known
    "startup_s": pl.Float64(),
    "steady_hours": pl.Float64(),  # the same at the steady rate
    "hours_low": pl.Float64(),  # at the rate's interval high end
    "hours_high": pl.Float64(),  # at the rate's interval low end
    "ml_unit_hours": pl.Float64(),  # ML units consumed to reach N
    "usd": pl.Float64(),  # price to reach N steps
    "usd_low": pl.Float64(),
    "usd_high": pl.Float64(),
    "status": pl.String(),  # "measured", the fit's status (fitted / exactly determined), or "failed"
    "extrapolation": pl.Float64(),  # predicted: devices / the largest measured device count
    "caveat": pl.String(),  # predicted: tierscope.analysis.scaling.prediction_caveat (null: none)
    "evidence": pl.String(),  # a failed run: "failed on <configuration> with <reason>"
    "refused": pl.String(),  # the quotas it exceeds (null: within every quota given)
}


class RecommendError(AnalysisError, ValueError):
    """Neither or both of deadline and budget given, a target below one step, or no candidate can be priced or timed."""


def _to_steps(frame: pl.DataFrame, steps: int) -> pl.DataFrame:
    per_hour = pl.col("usd_per_hour")
    once = pl.col("startup_s").fill_null(0.0)  # a measured run's ONCE_S; a prediction's none known
    # a measured candidate's own steps (the baseline's work); a prediction's are N
    own = pl.coalesce(pl.col("steps") if "steps" in frame.columns else None, pl.lit(steps, pl.Int64))
    return (
        frame.with_columns(steps=own, target_steps=pl.lit(steps, pl.Int64))
        .with_columns(
            hours=hours_to(pl.col("steps"), "global_steps_per_s", once),
            hours_low=hours_to(pl.col("steps"), "rate_ci_high", once),
            hours_high=hours_to(pl.col("steps"), "rate_ci_low", once),
            steady_hours=hours_to(pl.col("steps"), "steady_global_steps_per_s", once),
        )
        .with_columns(
            ml_unit_hours=pl.col("hours") * pl.col("ml_units_per_hour"),
            usd=pl.col("hours") * per_hour,
            usd_low=pl.col("hours_low") * per_hour,
            usd_high=pl.col("hours_high") * per_hour,
        )
    )


#: What a measured run's steady figures are scaled by to plan on: its sustained rate over its steady one.
_SCALED = PLAN_RATE / pl.col("steady_global_steps_per_s")

#: A summary row's columns a candidate keeps as they are (its id is the candidate's name).
_RUN_COLUMNS = (
    pl.col("run_id").alias("candidate"),
    *(pl.col(c) for c in ("tier", "topology", "tasks", "hardware", "accelerator", "devices", "device_basis")),
)


@dataclass(frozen=True)
class Group:
    """The device type the scaling model was fitted over (:func:`tierscope.analysis.forecast.fit_group`)."""

    basis: str = "task"
    accelerator: str | None = None


def frontier(
    summary: pl.DataFrame,
    runs: pl.DataFrame,
    fits: list[ScalingFit],
    steps: int,
    price_date: date,
    region: str = "us",
    table: PriceTable | None = None,
    group: Group | None = None,
    quotas: dict[str, float] | None = None,
) -> pl.DataFrame:
    """Every candidate's time and price to ``steps`` global steps of the baseline's work: :data:`FRONTIER_SCHEMA`,
    measured runs first, then predictions, each fastest first, then the failed runs as evidence. Where the
    summary compares a run with its baseline on examples/s, its own steps are ``steps`` x the baseline's
    examples per global step / its own (:func:`tierscope.analysis.summary.own_steps`); a prediction's are ``steps``.

    ``summary``: the summary frame (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`): its runs with a steady
    rate that did not fail are the measured candidates; a failed run is never one, only evidence. ``runs``:
    ``run_id, tier, topology`` (:func:`tierscope.analysis.summary.run_index`); ``fits``:
    :func:`tierscope.analysis.scaling.fit_scaling` over ``group``'s device type: CPU tiers are predicted
    at their training tasks, an accelerator type at its other configurations (machine types bundling it,
    its TPU slices). Every candidate is priced on ``price_date`` in ``region`` from ``table``; one above
    ``quotas`` (:mod:`tierscope.analysis.quotas`) is refused with the reason.
    Raises :class:`RecommendError` for ``steps < 1``.
    """
    if steps < 1:
        raise RecommendError(f"steps must be at least 1, got {steps}")
    table = table or PriceTable()
    group = group or Group()
    if "topology" not in summary.columns:
        stored = runs.select("run_id", "topology") if "topology" in runs.columns else runs.select("run_id")
        summary = summary.join(stored, on="run_id", how="left")
        if "topology" not in summary.columns:
            summary = summary.with_columns(topology=pl.lit(None, pl.String))
    for name in ("sustained_global_steps_per_s", "badput_startup_s"):  # a summary of before sustained rates
        if name not in summary.columns:
            summary = summary.with_columns(pl.lit(None, pl.Float64).alias(name))
    failed = pl.col("status") == "failed"
    # own hardware (a laptop, a local cluster) is no configuration to buy
    local = pl.col("tier").str.contains(LOCAL_TIER_PATTERN).fill_null(False)
    # a run of another job's work (analysis.comparable: not compared with the baseline) is no way to do this job
    apart = pl.col("baseline_run_id").is_null() & pl.col("baseline_note").is_not_null()
    if "baseline_note" not in summary.columns:
        apart = pl.lit(False)
    measured = summary.filter(pl.col("steady_global_steps_per_s").is_not_null() & ~failed & ~local & ~apart)
    base_examples = baseline_examples_per_step(summary)
    priced_now = run_costs(
        runs.filter(pl.col("run_id").is_in(measured["run_id"].to_list())).with_columns(date=pl.lit(price_date)),
        price_date,
        region,
        table,
        date_asked=True,
    )
    measured_rows = measured.join(priced_now.select("run_id", "ml_units_per_hour", "usd_per_hour", "price_rows",
                                                    "price_note"),
                                  on="run_id", how="left", suffix="_now").select(
        *_RUN_COLUMNS,
        basis=pl.lit("measured"),
        global_steps_per_s=PLAN_RATE,
        # the steady interval, scaled as the rate is (sustained / steady)
        rate_ci_low=pl.coalesce("steady_ci_low", "steady_global_steps_per_s") * _SCALED,
        rate_ci_high=pl.coalesce("steady_ci_high", "steady_global_steps_per_s") * _SCALED,
        rate_basis=PLAN_BASIS,
        steady_global_steps_per_s="steady_global_steps_per_s",
        ml_units_per_hour="ml_units_per_hour_now",
        usd_per_hour="usd_per_hour_now",
        price_rows="price_rows_now",
        price_note="price_note_now",
        startup_s=ONCE_S,
        status=pl.lit("measured"),
        steps=own_steps(steps, base_examples),
        target_examples=pl.lit(steps * base_examples if base_examples is not None else None, pl.Float64),
    )  # fmt: skip
    frames = [measured_rows.sort("global_steps_per_s", descending=True)]
    model = best_fit(fits)
    if model is not None:
        if group.basis == "task":
            predicted = _predicted(model, measured, price_date, region)
        else:
            # a configuration that failed is not offered again as a prediction
            tried = summary.filter(pl.col("steady_global_steps_per_s").is_not_null() | failed)
            predicted = _predicted_devices(model, group, tried, price_date, region, table)
        share = sustained_share(measured_rows)
        if share is not None and predicted.height:
            predicted = predicted.with_columns(
                pl.col("global_steps_per_s", "rate_ci_low", "rate_ci_high") * share, rate_basis=pl.lit(SUSTAINED)
            )
        frames.append(predicted.sort("global_steps_per_s", descending=True) if predicted.height else predicted)
    evidence = summary.filter(failed).select(
        *_RUN_COLUMNS,
        basis=pl.lit("failed (evidence)"),
        status=pl.lit("failed"),
        evidence=pl.format(
            "failed on {} with {}", pl.coalesce("tier", "hardware", pl.lit("its machines")), "failure_reason"
        ),
    )
    frames.append(evidence)
    if not any(f.height for f in frames):
        return pl.DataFrame(schema=FRONTIER_SCHEMA)
    joined = pl.concat([f for f in frames if f.height], how="diagonal_relaxed")
    # evidence alone (every run failed) has no rate, start-up or price to time
    for name in ("startup_s", "global_steps_per_s", "rate_ci_low", "rate_ci_high", "usd_per_hour",
                 "ml_units_per_hour", "steady_global_steps_per_s"):  # fmt: skip
        if name not in joined.columns:
            joined = joined.with_columns(pl.lit(None, pl.Float64).alias(name))
    rows = _to_steps(joined, steps)
    # measured rows have no extrapolation or caveat: without a predicted row (one task count, or every
    # predictable tier measured) those columns are missing, not null
    columns = [(pl.col(n) if n in rows.columns else pl.lit(None)).cast(t).alias(n) for n, t in FRONTIER_SCHEMA.items()]
    out = rows.select(columns)
    return _refused(out, quotas) if quotas else out


def sustained_share(rows: pl.DataFrame) -> float | None:
    """The share of their steady rate that ``rows`` (candidates: ``global_steps_per_s``, ``rate_basis``,
    ``steady_global_steps_per_s``) planned on their sustained rate kept up over their lives: the median of
    sustained / steady, at most 1 (a prediction is never planned above its steady rate); None where no row has a
    sustained rate."""
    ratio = (pl.col("global_steps_per_s") / pl.col("steady_global_steps_per_s")).filter(
        (pl.col("rate_basis") == SUSTAINED) & (pl.col("steady_global_steps_per_s") > 0)
    )
    share = rows.select(ratio.median()).item() if rows.height else None
    return None if share is None else min(float(share), 1.0)


def _refused(frame: pl.DataFrame, quotas: dict[str, float]) -> pl.DataFrame:
    """``frame`` with ``refused`` set on every candidate above ``quotas``."""
    reasons = []
    for row in frame.iter_rows(named=True):
        hardware = run_hardware(row["tier"], row["topology"])
        reasons.append(refusal(usage(hardware, row["ml_units_per_hour"]), quotas))
    return frame.with_columns(refused=pl.Series(reasons, dtype=pl.String))


def _predicted(model: ScalingFit, measured: pl.DataFrame, price_date: date, region: str) -> pl.DataFrame:
    tiers = load_tiers()
    cpu_only = tiers.group_by("tier").agg(accel=pl.col("machine_type").str.contains(ACCELERATOR).any())
    seen = {t.upper() for t in measured["tier"].drop_nulls().to_list()}
    sizes = (
        training_tasks(tiers, key="tier")
        .join(cpu_only, on="tier")
        .filter(~pl.col("accel") & ~pl.col("tier").is_in(list(seen)))
        .sort("tier")
    )
    if sizes.height == 0:
        return pl.DataFrame()
    # priced as a measured run is on that date, its price note too: a stale row flags the prediction as it
    # flags the runs (the demo's PREMIUM_1 at 2019's 33.7829 ML units/h, not the README's 2016 75, went unsaid)
    costs = run_costs(sizes.select(run_id="tier", tier="tier", date=pl.lit(price_date)), price_date, region,
                      date_asked=True).select(
        tier="run_id", ml_units_per_hour="ml_units_per_hour", usd_per_hour="usd_per_hour",
        price_rows="price_rows", price_note="price_note",
    )  # fmt: skip
    rows = []
    for tier, tasks in sizes.select("tier", "training_tasks").iter_rows():
        point, low, high = model.predict(tasks)
        hardware = tier_hardware(tier, tiers)
        rows.append(
            {
                "candidate": tier,
                "tier": tier,
                "basis": f"predicted ({model.model})",
                "tasks": tasks,
                "hardware": hardware.describe() if hardware else None,
                "devices": tasks,
                "device_basis": "task",
                "global_steps_per_s": point,
                "rate_ci_low": low,
                "rate_ci_high": high,
                "rate_basis": STEADY,
                "steady_global_steps_per_s": point,
                "status": model.status,
                "extrapolation": model.extrapolation(tasks),
                "caveat": prediction_caveat(model, tasks),
            }
        )
    schema = {"rate_ci_low": pl.Float64, "rate_ci_high": pl.Float64, "caveat": pl.String}  # nulls when exact
    return pl.DataFrame(rows, schema_overrides=schema).join(costs, on="tier", how="left")


def device_configurations(group: Group, measured: pl.DataFrame) -> list[Hardware]:
    """The configurations of ``group``'s accelerator nobody ran: the machine types bundling it (a2-highgpu-Ng
    for NVIDIA_TESLA_A100), its TPU slices, or, for a GPU attached to a machine type (T4 on n1), 1, 2, 4 and 8 of
    it on the measured runs' machine type; each as one replica. Device counts of ``measured`` (the runs measured,
    and those that failed) are left out."""
    accelerator = group.accelerator
    seen = {int(d) for d in measured.filter(pl.col("accelerator") == accelerator)["devices"].drop_nulls()}
    specs = [spec for spec in machines.catalog().values() if spec.accelerator == accelerator]
    # a TPU slice is run on its host machine type (v5litepod-1 on ct5lp-hightpu-1t): the slice, which states its
    # topology, stands for both, each configuration offered once
    found = [Hardware((machines.slice_pool(spec.name),)) for spec in specs if spec.kind == "tpu_slice"]
    slices = {h.describe() for h in found}
    for spec in specs:
        if spec.kind == "machine":
            hardware = Hardware((machines.pool("chief", spec.name),))
            if hardware.describe() not in slices:
                found.append(hardware)
    if not found:  # an attached GPU: more of it on the machine type it was measured on
        hosts = measured.filter(pl.col("accelerator") == accelerator)["hardware"].drop_nulls()
        host = hosts[0].split(" x ", 1)[1].split(" ", 1)[0] if hosts.len() else None
        if host is not None:
            found = [Hardware((machines.pool("chief", host, 1, accelerator, k),)) for k in (1, 2, 4, 8)]
    return [h for h in found if h.devices not in seen]


def _predicted_devices(
    model: ScalingFit, group: Group, measured: pl.DataFrame, price_date: date, region: str, table: PriceTable
) -> pl.DataFrame:
    rows = []
    for hardware in device_configurations(group, measured):
        devices = hardware.devices
        point, low, high = model.predict(devices)
        quoted = quote(hardware, price_date, region_of(region), table)
        name = hardware.describe()
        rows.append(
            {
                "candidate": name, "tier": None, "basis": f"predicted ({model.model})", "tasks": 1,
                "hardware": name, "topology": hardware.to_json(), "accelerator": group.accelerator, "devices": devices,
                "device_basis": group.basis, "global_steps_per_s": point, "rate_ci_low": low, "rate_ci_high": high,
                "rate_basis": STEADY, "steady_global_steps_per_s": point,
                "usd_per_hour": quoted.usd_per_hour, "price_rows": quoted.sources() or None,
                "price_note": quoted.missing or quoted.stale_note(), "status": model.status,
                "extrapolation": model.extrapolation(devices), "caveat": prediction_caveat(model, devices),
            }
        )  # fmt: skip
    if not rows:
        return pl.DataFrame()
    schema = {"rate_ci_low": pl.Float64, "rate_ci_high": pl.Float64, "caveat": pl.String, "tier": pl.String,
              "usd_per_hour": pl.Float64, "price_rows": pl.String, "price_note": pl.String,
              "topology": pl.String}  # fmt: skip
    return pl.DataFrame(rows, schema_overrides=schema)


@dataclass
class Recommendation:
    """The chosen candidate (a :data:`FRONTIER_SCHEMA` row as a dict, or None) and why.

    ``caveat``: the sentence to say first when the choice rests on a prediction nothing checks
    or on an extrapolation (``Caveat: the choice rests on an unchecked extrapolation: ...``), else None.
    """

    choice: dict | None
    reason: str
    candidates: pl.DataFrame  # the frontier with ``meets`` (Boolean) and ``meets_at_interval`` added
    caveat: str | None = None


def choose(
    frontier_frame: pl.DataFrame,
    deadline_h: float | None = None,
    budget_usd: float | None = None,
    deadline_said: str | None = None,
) -> Recommendation:
    """The cheapest candidate meeting ``deadline_h`` hours, or the fastest within ``budget_usd``.
    ``deadline_said``: the deadline as the user gave it (``10m``), echoed in the reason (default: in hours).

    Chosen on the point estimates; ``meets_at_interval`` says whether the pessimistic end
    of the interval meets the constraint too. Candidates without a price are left out.
    Raises :class:`RecommendError` unless exactly one of the two is given, when no candidate
    has a rate (no time to N steps), or when no candidate has a price.
    """
    if (deadline_h is None) == (budget_usd is None):
        raise RecommendError("give exactly one of a deadline (hours) or a budget (USD)")
    if frontier_frame.filter(pl.col("hours").is_not_null()).height == 0:
        # Nothing to time: blaming the price table (below) would send the user the wrong way.
        failed = frontier_frame.filter(pl.col("status") == "failed")
        if failed.height:
            # a failed run may well show a steady rate in `summary`: say why it is not planned from
            said = "; ".join(f"run {r['candidate']} {r['evidence']}" for r in failed.iter_rows(named=True))
            raise RecommendError(
                f"no run that finished has a steady-state rate to plan from; a failed run is evidence, not a "
                f"candidate ({said}): collect the step logs of a run that finished"
            )
        raise RecommendError(
            "no run in the dataset has a steady-state rate to plan from (no step records, or too few); "
            "collect the step logs of a finished run first"
        )
    usable = pl.col("refused").is_null() & (pl.col("status") != "failed")
    priced = frontier_frame.filter(pl.col("usd").is_not_null() & usable)
    if priced.height == 0:
        refused = frontier_frame.filter(pl.col("refused").is_not_null())
        if refused.height:
            said = "; ".join(f"{r['candidate']}: {r['refused']}" for r in refused.iter_rows(named=True))
            return Recommendation(None, f"every priced candidate is above a quota ({said})",
                                  _marked(frontier_frame, deadline_h, budget_usd))  # fmt: skip
        raise RecommendError(
            "no candidate has a price on that date and region (the legacy tiers' 2016 beta table gives ML "
            "units only, no USD; a machine type needs a price row of that date): pass --price-date 2018-01-01 or "
            "later for the legacy tiers, --region, or --prices FILE"
        )
    marked = _marked(frontier_frame, deadline_h, budget_usd)
    goal = _goal(priced)
    if deadline_h is not None:
        within = deadline_said or f"{_as_given(deadline_h)} h"
        wanted = f"reach {goal} within {within}"
        pick_order = "cheapest"
    else:
        wanted = f"reach {goal} for at most USD {two_decimals(budget_usd)}"
        pick_order = "fastest"
    meeting = marked.filter(pl.col("meets"))
    if meeting.height == 0:
        nearest = _nearest(marked, deadline_h)
        return Recommendation(None, f"no measured or predicted configuration can {wanted}{nearest}", marked)
    # a measured configuration before any prediction: a prediction is chosen only when no measured one meets
    choice = meeting.row(0, named=True)
    if choice["meets_at_interval"] is None:
        hedge = " (no interval: the prediction is exactly determined)"
    else:
        hedge = "" if choice["meets_at_interval"] else " (but not at the pessimistic end of its interval)"
    basis = f"{choice['basis']}, {EXACT}" if choice["status"] == EXACT else choice["basis"]
    measured = choice["basis"] == "measured"
    reason = (
        f"{choice['candidate']} ({basis}) is the {pick_order}{' measured run' if measured else ''} that can "
        f"{wanted}: {two_decimals(choice['hours'])} h, USD {two_decimals(choice['usd'])}{hedge}"
        f"{_passed_over(meeting, choice, deadline_h) if measured else ''}"
    )
    caveat = f"Caveat: the choice rests on {choice['caveat']}." if choice.get("caveat") else None
    return Recommendation(choice, reason, marked, caveat)


def _passed_over(meeting: pl.DataFrame, choice: dict, deadline_h: float | None) -> str:
    """The prediction that meets the goal better than the measured ``choice`` (cheaper for a deadline, faster
    for a budget), in words, or "". Measured runs are chosen first (docs/machines-and-prices.md), so a better
    prediction is named, not chosen: ``; PREMIUM_1 (predicted (amdahl)) would be faster, 3.51 h, USD 58.06,
    but it is a prediction: measure it to be sure``."""
    key, better = ("usd", "cheaper") if deadline_h is not None else ("hours", "faster")
    rows = meeting.filter((pl.col("basis") != "measured") & (pl.col(key) < choice[key])).sort([key, "candidate"])
    if rows.height == 0:
        return ""
    row = rows.row(0, named=True)
    basis = f"{row['basis']}, {EXACT}" if row["status"] == EXACT else row["basis"]
    return (
        f"; {row['candidate']} ({basis}) would be {better}, {two_decimals(row['hours'])} h, "
        f"USD {two_decimals(row['usd'])}, but it is a prediction: measure it to be sure"
    )


def _goal(priced: pl.DataFrame) -> str:
    """The target in words: ``6,000 steps``, or ``6,000 steps of the baseline's work (192,000 examples)``."""
    row = priced.row(0, named=True)
    steps = row.get("target_steps") or row["steps"]
    examples = row.get("target_examples")
    work = f" of the baseline's work ({round(examples):,} examples)" if examples is not None else ""
    return f"{steps:,} steps{work}"


def _nearest(marked: pl.DataFrame, deadline_h: float | None) -> str:
    """The candidate that comes closest to a deadline (the fastest) or a budget (the cheapest), in words
    (``; the nearest is a100 (measured): 27.78 h, USD 102.04``): what a user would relax the constraint
    to. Only a candidate that could be chosen (priced, not refused, not failed); "" without one."""
    can = pl.col("refused").is_null() & (pl.col("status") != "failed") & pl.col("usd").is_not_null()
    order = ["hours", "usd"] if deadline_h is not None else ["usd", "hours"]
    rows = marked.filter(can & pl.col("hours").is_not_null()).sort([*order, "candidate"])
    if rows.height == 0:
        return ""
    row = rows.row(0, named=True)
    basis = f"{row['basis']}, {EXACT}" if row["status"] == EXACT else row["basis"]
    hours, usd = two_decimals(row["hours"]), two_decimals(row["usd"])
    return f"; the nearest is {row['candidate']} ({basis}): {hours} h, USD {usd}"


def _marked(frame: pl.DataFrame, deadline_h: float | None, budget_usd: float | None) -> pl.DataFrame:
    """``frame`` with ``meets`` and ``meets_at_interval``: measured runs first, then predictions, then the
    failed runs; within each, cheapest first (a deadline) or fastest first (a budget). A refused or failed
    candidate, or one without a price, never meets."""
    can = pl.col("refused").is_null() & (pl.col("status") != "failed") & pl.col("usd").is_not_null()
    if deadline_h is not None:
        meets, at_interval, order = pl.col("hours") <= deadline_h, pl.col("hours_high") <= deadline_h, ["usd", "hours"]
    else:
        meets, at_interval, order = pl.col("usd") <= budget_usd, pl.col("usd_high") <= budget_usd, ["hours", "usd"]
    rank = pl.when(pl.col("basis") == "measured").then(0).when(pl.col("status") == "failed").then(2).otherwise(1)
    return (
        frame.with_columns(meets=(meets & can).fill_null(False), meets_at_interval=at_interval & can, _rank=rank)
        .sort(["_rank", *order], nulls_last=True)
        .drop("_rank")
    )


def _as_given(hours: float) -> str:
    """A deadline in hours as a user states one: ``1``, ``1.5``, ``1,234.5`` (two decimals at most, no
    trailing zeros), and below 0.1 with 3 significant digits (``--deadline 1s``: ``0.000278``, where ``:g``
    printed ``0.000277778``)."""
    text = two_decimals(hours)
    return text.rstrip("0").rstrip(".") if abs(hours) >= 0.1 and "." in text else text
