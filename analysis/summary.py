"""One row per run: status, throughput, cost and speedup (the frame behind ``tierscope summary``),
built from what the analysis pass (:func:`tierscope.analysis.analyze`) holds; nothing here reads the dataset."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import polars as pl

from tierscope.analysis.batches import IntervalFigures
from tierscope.analysis.bootstrap import BOOTSTRAP_SEED, Sample, percentile_interval, steady_draws
from tierscope.analysis.comparable import apart_from_baseline
from tierscope.analysis.cost import LOCAL_TIER_RE
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.goodput import GOODPUT_SCHEMA
from tierscope.analysis.options import AnalysisOptions
from tierscope.analysis.options import SummaryOptions as SummaryOptions  # the former name, re-exported
from tierscope.analysis.printed_rates import CLOCK_TOLERANCE, MAX_RATIO
from tierscope.analysis.steadiness import STILL_RISING, STILL_RISING_NOTE
from tierscope.analysis.sustained import PLAN_BASIS, PLAN_RATE, SUSTAINED_RATE, hours_to
from tierscope.analysis.target import TARGET_SCHEMA
from tierscope.analysis.tasks import MODE_TOLERANCE, async_check
from tierscope.analysis.topology import COORDINATOR_STRATEGY, declared_tasks, load_tiers, run_hardware
from tierscope.analysis.whole_run import (
    WHOLE_RUN_MEAN,
    WHOLE_RUN_MEAN_NOTE,
    WHOLE_RUN_SCHEMA,
    mean_note,
    whole_run_steady,
)
from tierscope.contract import LOCAL_PREFIX
from tierscope.dataset.schema import conform, cut_traceback

#: The columns of :func:`summary`, in order, with their dtypes and meaning.
SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tier": pl.String(),
    "status": pl.String(),  # failed / ok (the log says it finished) / unknown (records, no end) / empty
    "records": pl.UInt32(),  # step records stored for the run
    "tasks": pl.UInt32(),  # training tasks of the run's topology (tasks_origin); else those that logged
    "steady_global_steps_per_s": pl.Float64(),  # steady intervals' steps / their time, warm-up and stalls out
    # pooled steps / seconds, warm-up excluded; for a run with no step record, the whole-run mean its log's closing
    # summary states (analysis.whole_run; mean_note says so)
    "mean_global_steps_per_s": pl.Float64(),
    "stated_examples_per_s": pl.Float64(),  # ... and the examples/s it states (null: records, or none stated)
    "mean_note": pl.String(),  # where a mean no record measures comes from (null: measured, or none)
    "last_step": pl.Int64(),  # highest global step logged
    "ml_units_per_hour": pl.Float64(),  # from the price table on price_date
    "usd_per_hour": pl.Float64(),  # ml_units_per_hour x USD per ML unit-hour in the region
    "steps_per_ml_unit_hour": pl.Float64(),  # steady rate x 3600 / ML units per hour
    "usd_per_1000_steps": pl.Float64(),  # USD per hour / (steady rate x 3600) x 1000
    "speedup_vs_baseline": pl.Float64(),  # steady rate / the baseline run's steady rate
    "scaling_efficiency_tasks": pl.Float64(),  # speedup / (tasks / baseline tasks)
    "scaling_efficiency_units": pl.Float64(),  # speedup / (ML units / baseline ML units)
    "baseline_run_id": pl.String(),
    "failure_reason": pl.String(),  # the first failed event's reason that stands
    # a failure its log went on from, steps then its own word that it finished (summary.overcome_failures)
    "earlier_failure": pl.String(),
    "price_date": pl.Date(),
    "ran_on": pl.String(),
    "note": pl.String(),
    "config": pl.String(),  # the configuration the run repeats (the manifest's config); null: its own
    # copies, segments, steady state, intervals, tasks, time to N steps (definitions: the throughput,
    # tasks and plan modules)
    "duplicates": pl.UInt32(),  # training-task rows merged as copies of another record
    "segments": pl.UInt32(),  # task segments (one per task, plus one per restart/resume)
    "restarts": pl.UInt32(),  # segments begun by a restart or resume (not by a record without a time)
    # intervals whose clock was set back or ran ahead (the steps went on: no restart), their clock time left out
    "clock_setbacks": pl.UInt32(),
    "steady_intervals": pl.UInt32(),  # intervals past warm-up behind the steady rate
    "steady_stalls": pl.UInt32(),  # of those, the ones the stall bound weighed down or left out
    # of those, the ones holding an evaluation or checkpoint save: left out (badput), unless all do (then in)
    "steady_pauses": pl.UInt32(),
    "steady_status": pl.String(),  # why there is no steady rate (STEADY_REASONS' keys; null: there is one)
    "steady_reason": pl.String(),  # the same in words, one short phrase
    "steady_assumption": pl.String(),  # what the steady rate assumes (STEADY_ASSUMPTIONS' keys; null: nothing)
    "steady_assumption_note": pl.String(),  # the same in words
    # the printed global rate set aside for the log's clock, with both figures (analysis.printed_rates), or kept
    # where the clock's mean and sustained rates differ from it, saying so (printed_apart_from_clock; null: none)
    "steady_clock_note": pl.String(),
    "steady_ci_low": pl.Float64(),  # bootstrap 95 % interval of the steady rate (null: < 2 intervals)
    "steady_ci_high": pl.Float64(),
    "ci_scope": pl.String(),  # what the interval samples: within-run (one run's intervals; null: no interval)
    "steady_rise": pl.Float64(),  # the lead's steady rates, last third over first, less 1 (analysis.steadiness)
    "startup_s": pl.Float64(),  # seconds the lead task lost to warm-up (elapsed_s, else its timestamp clock)
    "speedup_ci_low": pl.Float64(),  # bootstrap 95 % interval of the speedup (ratio of steady rates)
    "speedup_ci_high": pl.Float64(),
    "stragglers": pl.UInt32(),  # tasks flagged as stragglers (tierscope.analysis.tasks)
    "local_sum_steps_per_s": pl.Float64(),  # sum of the tasks' local steps/s
    "local_to_global": pl.Float64(),  # that sum / steady global rate: ~1 async, ~tasks sync
    "training_mode": pl.String(),  # single / async / sync / inconsistent
    "units_basis": pl.String(),  # tier (its price row) / machine types (sum over replicas)
    "usd_per_ml_unit_hour": pl.Float64(),
    # AnalysisOptions.steps, steps of the baseline's work: the run's own global steps to do that work
    # (with_target: fewer where a step processes more examples; null: not asked)
    "target_steps": pl.Int64(),
    "target_examples": pl.Float64(),  # the examples those are where the comparison is on examples/s (else null)
    "hours_to_target": pl.Float64(),  # (startup_s + target / sustained rate) / 3600 (tierscope.analysis.sustained)
    "usd_to_target": pl.Float64(),  # hours_to_target x usd_per_hour
    "plan_basis": pl.String(),  # the rate hours_to_target is on: sustained, or steady (goodput unknown)
    "steady_hours_to_target": pl.Float64(),  # the same at the steady rate, beside it
    # the declared topology (tierscope.analysis.topology.declared_tasks)
    "logging_tasks": pl.UInt32(),  # distinct training tasks (master/chief, workers) that logged steps
    "ps_tasks": pl.UInt32(),  # parameter servers of the topology (null: topology unknown)
    "evaluator_tasks": pl.UInt32(),
    "tasks_origin": pl.String(),  # declared (run.json / manifest counts) / manifest / tier table / logs
    "topology_note": pl.String(),  # set when the tasks that logged disagree with the declared ones
    # goodput (tierscope.analysis.goodput: seconds on the lead task's clock, shares of lifetime_s)
    **{k: v for k, v in GOODPUT_SCHEMA.items() if k not in ("run_id", "clock_startup_s")},
    "price_per_1000_productive_steps": pl.Float64(),  # usd_per_1000_steps / goodput
    "sustained_global_steps_per_s": pl.Float64(),  # steps over the time run once started (analysis.sustained)
    # the derived figures withheld (null) for not being finite, and why (withhold_non_finite)
    "withheld_figures": pl.String(),
    # examples/s: what a step is worth
    "batch_size": pl.Float64(),  # examples per replica per step: declared, else examples/s / local steps/s
    "update_mode": pl.String(),  # sync / async / single: run.json's strategy, else training_mode
    "examples_per_s": pl.Float64(),  # steady rate x batch_size (x training tasks when sync)
    "speedup_basis": pl.String(),  # steps/s, or examples/s where batch size or mode differ from the baseline's
    "usd_per_million_examples": pl.Float64(),  # usd_per_hour / (examples_per_s x 3600) x 10^6 (null: no batch)
    # what examples_per_s counts: "tokens" where the batch is the log's and its examples/s were tokens/s, else
    # "examples"; null where examples_per_s is
    "examples_unit": pl.String(),
    # time to a target loss or accuracy (tierscope.analysis.target; null without --target-loss/--target-accuracy)
    **{k: v for k, v in TARGET_SCHEMA.items() if k != "run_id"},
    # hardware (tierscope.analysis.machines) and what the price rests on (tierscope.analysis.cost.run_costs)
    "hardware": pl.String(),  # its worker pools in one line: 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)
    "accelerator": pl.String(),  # the training pools' accelerator type (mixed: several); null: CPUs only
    "devices": pl.UInt32(),  # GPUs or TPU chips of the training pools; else the training tasks
    "device_basis": pl.String(),  # "GPU", "TPU chip" or "task": what devices counts
    "steps_per_s_per_device": pl.Float64(),  # steady global steps/s / devices
    "steps_per_usd": pl.Float64(),  # steady global steps/s x 3600 / USD per hour
    "scaling_efficiency_devices": pl.Float64(),  # speedup / (devices / baseline devices), same device type only
    "price_date_origin": pl.String(),  # run / log / --price-date / today
    "price_rows": pl.String(),  # the rows behind usd_per_hour (resource, region, date, source)
    "price_stale": pl.Boolean(),  # a row older than 180 days at price_date (tierscope prices update)
    "price_note": pl.String(),  # why there is no price, stale rows, a row of another date
    # a sweep's run (tierscope sweep): what it was estimated to cost before it ran, beside what it cost as it ran
    "estimate_usd": pl.Float64(),  # the runs table's fact: price rows x the sweep's time cap (null: not swept)
    "measured_usd": pl.Float64(),  # usd_per_hour x lifetime_s / 3600: its price over the lifetime its log shows
    # how the run's work differs from the baseline's, where its logs show it (tierscope.analysis.comparable):
    # not compared with it (speedup and efficiencies null), unless --baseline named it
    "baseline_note": pl.String(),
}


#: The columns of the run index (:func:`run_index`): the runs table's facts but its collection time.
RUN_INDEX = (
    "run_id", "tier", "ran_on", "date", "note", "topology", "replicas", "strategy", "batch_size", "config",
    "estimate_usd",
)  # fmt: skip


#: Why a run has no steady-state rate, by ``steady_status``, as the steady-state rules of
#: :mod:`tierscope.analysis.throughput` give it: the steady rate is over the training tasks'
#: intervals past warm-up, and a segment's first record is warm-up (it has no interval of its
#: own), and a record naming neither a time nor a global rate starts a segment. ``no_clock`` only where
#: every segment's record names no time at all: neither a clock nor a step time (a record stating its
#: ``sec/step`` is timed by it, and one that is still its segment's only record is ``warmup_only``).
#: ``{segments}``: the run's segments (here each holds one record, all of them warm-up).
STEADY_REASONS = {
    "no_records": "no step records",
    # a finished run's end is no step report (Hugging Face's train_runtime summary); a log of metrics alone
    # (loss, learning rate, epoch) states no step with a time or a rate
    "finished_without_steps": (
        "no step records: its log says it finished, but none of its lines states a step with a time or a rate "
        "(`tierscope formats --try` on its log shows how each line was read)"
    ),
    # a closing summary's examples/s alone (a benchmark's ``total images/sec``: analysis.whole_run): its global
    # steps/s, where it states them, stand for the steady rate (steady_assumption whole_run_mean)
    "whole_run_only": (
        "no step records: only the log's closing summary states a speed, examples/s over the whole run "
        "(warm-up and pauses in), which make no global steps/s without the global batch"
    ),
    "no_training_records": "only ps or evaluator records",
    # what analysis.clock and analysis.stated_rates leave out: a run left with nothing says so, not a reason of
    # the records that were never there
    "elapsed_impossible": (
        "every training record states an elapsed time beyond any run's length (over 1,000 years): all left out"
    ),
    # analysis.clock.clock_jumps: a run whose clock jumps by days between steps of seconds (analyze's note says where)
    "clock_jump": "its clock jumps by days between two steps of one process (a clock set wrong): its records set aside",
    "rate_zero": "its records state 0 global steps/s, which times no step: a zero rate is no measurement",
    "rate_implausible": (
        "its records state global steps/s beyond any machine (over 1,000,000, a step a microsecond): left out"
    ),
    "one_record": "only warm-up records (1 record)",
    "no_clock": (
        "no time or global rate: no record states a time, a clock or global steps/s "
        "(examples/s make none without the global batch)"
    ),
    "warmup_only": "only warm-up records ({segments} segments of 1 record)",
    "no_rate": "records past warm-up have no step or rate",
    # lines skipped, or a task logging every N steps (withhold_step_times)
    "step_time_contradicted": "sec/step times contradict the tasks' local steps/s",
}


#: ``ci_scope`` of an interval from one run's own intervals (bootstrap over them): it says nothing of how
#: another run of the same configuration would do (:mod:`tierscope.analysis.configurations` gives the
#: interval between the runs of a configuration: ``between-runs``).
CI_WITHIN_RUN = "within-run"


#: What a run's steady rate assumes beyond the log's figures, by ``steady_assumption``. ``logs_every_step``:
#: some steady intervals have no clock and are timed by their records' step time
#: (:func:`tierscope.analysis.throughput.step_time_seconds`), one local step between two lines of a task
#: unless they name their local steps: right only if the task logged every step (TF-slim's default).
#: ``logs_every_step_unchecked``: the same for a run of one logging task and no declared topology whose
#: global step moves faster than its own steps (case24: +3 a step): other replicas explain that, and so
#: does a task that logs every N steps, which makes the rate N times too high; a topology tells them apart
#: (:func:`withhold_step_times`).
#: ``step_time_alone``: the run's one training task (its topology) made every global step, so an interval is the
#: global steps since its line before at the line's step time (:mod:`tierscope.analysis.lone_task`).
#: ``logs_every_n_alone``: the same read from the steps of a run with no topology: one task, its lines mostly a
#: round stride apart at multiples of it, read as logging every N steps (a decision the note gives both ways).
STEADY_ASSUMPTIONS = {
    "logs_every_step": "times from each line's sec/step: assumes the task logs every step",
    "step_time_alone": (
        "times from each line's sec/step over the global steps since the line before: the run's one task makes "
        "every global step, the logged step's time standing for those between its lines"
    ),
    "logs_every_n_alone": (
        "times from each line's sec/step over the global steps since the line before: read as one task logging "
        "every N steps (its lines mostly a round stride apart, at multiples of it); were other replicas moving "
        "the global step, the rate is N times higher; --machine, --tier or a manifest's topology settles it"
    ),
    WHOLE_RUN_MEAN: WHOLE_RUN_MEAN_NOTE,
    STILL_RISING: STILL_RISING_NOTE,
    "logs_every_step_unchecked": (
        "times from each line's sec/step: assumes the task logs every step; its global step moves faster "
        "than its own steps: other replicas, or logged every N steps (then N times too high); --tier or a "
        "manifest's topology checks it"
    ),
}


def steady_assumption() -> pl.Expr:
    """``steady_assumption`` of a summary row (:data:`STEADY_ASSUMPTIONS`' keys; null where the steady
    rate rests on the log's own clocks and rates, or there is none), from ``step_timed_intervals``, the
    topology's origin, ``local_to_global`` and ``alone_by`` (:func:`tierscope.analysis.lone_task.lone_tasks`)."""
    assumed = pl.col("steady_global_steps_per_s").is_not_null() & (pl.col("step_timed_intervals") > 0)
    unchecked = (
        (pl.col("tasks_origin") == "logs")
        & (pl.col("logging_tasks") == 1)
        & (pl.col("local_to_global") < 1 - MODE_TOLERANCE)
    ).fill_null(False)
    alone_by = pl.col("alone_by")
    stated = pl.col("steady_global_steps_per_s").is_not_null() & pl.col("mean_note").is_not_null()
    rising = pl.col("steady_global_steps_per_s").is_not_null() & pl.col("still_rising")
    return (
        pl.when(stated.fill_null(False))
        .then(pl.lit(WHOLE_RUN_MEAN))
        .when(rising.fill_null(False))
        .then(pl.lit(STILL_RISING))
        .when(assumed.fill_null(False))
        .then(
            pl.when(alone_by == "stride")
            .then(pl.lit("logs_every_n_alone"))
            .when(alone_by == "topology")
            .then(pl.lit("step_time_alone"))
            .when(unchecked)
            .then(pl.lit("logs_every_step_unchecked"))
            .otherwise(pl.lit("logs_every_step"))
        )
    )


#: How far from the steady rate the clock's own figures (the mean, the sustained rate) lie before the summary
#: says why (:func:`printed_apart_from_clock`): under 1 % no figure a user reads moves (rates print to 3 digits).
APART_FROM_STEADY = 0.01


#: Why the clock's figures lie above (``more``) or below (``less``) a steady rate of printed rates.
APART_WHY = {
    "more": "the printed figure lags or rounds below the clock",
    "less": "a pause the printed figure does not show, or a printed figure above the clock",
}


def clock_gives_more() -> pl.Expr:
    """Boolean, per summary row: the run's mean or sustained rate lies over :data:`APART_FROM_STEADY` above its
    steady rate. Only printed rates below the clock do that: on clock-timed intervals the steady rate leaves out
    stalls and pauses, the slow ones, and is the higher. A tqdm bar's ``it/s`` is a moving average that lags a
    speeding bar (3.20 it/s kept, within :data:`tierscope.analysis.printed_rates.CLOCK_TOLERANCE` of the 3.33 its
    clock gives: 100 steps in 30 s)."""
    steady = pl.col("steady_global_steps_per_s")
    return (pl.col("mean_global_steps_per_s") > steady * (1 + APART_FROM_STEADY)).fill_null(False) | (
        pl.col("sustained_global_steps_per_s") > steady * (1 + APART_FROM_STEADY)
    ).fill_null(False)


def clock_far() -> pl.Expr:
    """Boolean, per summary row: the run's mean or sustained rate lies :data:`MAX_RATIO` times or more from its
    steady rate either way. No interval's printed rate is compared with a clock that far from
    it (the two count steps in different units, or one of them is wrong), so a printed rate kept then was never
    checked against the clock."""
    steady = pl.col("steady_global_steps_per_s")
    far = [
        (pl.col(c) >= steady * MAX_RATIO) | (pl.col(c) * MAX_RATIO <= steady)
        for c in ("mean_global_steps_per_s", "sustained_global_steps_per_s")
    ]
    return (far[0].fill_null(False) | far[1].fill_null(False)) & (steady > 0).fill_null(False)


def printed_apart_from_clock(set_aside: pl.Expr | None = None) -> pl.Expr:
    """Boolean, per summary row: the run's steady rate rests on the rates its log printed (kept: ``set_aside``,
    whether they were set aside for the clock, is false; default ``printed_set_aside`` is not null), and the
    clock's own figures differ from it by over :data:`APART_FROM_STEADY`: higher (:func:`clock_gives_more`), or
    a mean lower where no stall or pause was left out of the steady rate and the run was not still speeding up
    (nothing else makes them differ: on clock-timed intervals without either the steady rate is the mean; a run still
    rising is rated at its last third, its ``steady_assumption`` says so)."""
    set_aside = pl.col("printed_set_aside").is_not_null() if set_aside is None else set_aside
    steady = pl.col("steady_global_steps_per_s")
    less = (
        (pl.col("mean_global_steps_per_s") < steady * (1 - APART_FROM_STEADY))
        & (pl.col("steady_stalls").fill_null(0) == 0)
        & (pl.col("steady_pauses").fill_null(0) == 0)
        & (pl.col("steady_assumption").fill_null("") != STILL_RISING)
    ).fill_null(False)
    return (steady.is_not_null() & ~set_aside.fill_null(False) & (clock_gives_more() | less)).fill_null(False)


def steady_clock_note() -> pl.Expr:
    """``steady_clock_note`` of a summary row (one line; null where the steady rate and the log's clock agree),
    from ``printed_set_aside``, ``clock_beside`` and ``printed_off_rounding``
    (:mod:`tierscope.analysis.printed_rates`): which rate the steady rate does not rest on, and why; or, where the
    printed rates were kept and the clock's own figures differ (:func:`printed_apart_from_clock`), why the mean
    and the sustained rate are not the steady one."""
    printed = pl.col("printed_set_aside").round_sig_figs(3).cast(pl.String)
    clock = pl.col("clock_beside").round_sig_figs(3).cast(pl.String)
    why = (
        pl.when(pl.col("printed_off_rounding"))
        .then(pl.lit("outside what the printed figure's rounding allows"))
        .otherwise(pl.lit("the printed figure is rounded more coarsely than the clock measures"))
    )

    def shown(column: str) -> pl.Expr:
        return pl.col(column).round_sig_figs(3).cast(pl.String).fill_null("-")

    return (
        pl.when(pl.col("printed_set_aside").is_not_null())
        .then(
            pl.format(
                "steady rate from the log's clock: its printed {} global steps/s set aside, the clock gives {} over "
                "the same intervals ({})",
                printed,
                clock,
                why,
            )
        )
        .when(printed_apart_from_clock() & clock_far())
        .then(
            pl.format(
                f"steady rate {{}} global steps/s is the rate the log printed, never checked against its clock: "
                f"the mean ({{}}) and sustained ({{}}) rates, its steps over its clock's time, lie {MAX_RATIO:g} "
                "times or more apart from it, too far to compare (the two count steps in different units, or one "
                "is wrong): check which the log means",
                shown("steady_global_steps_per_s"),
                shown("mean_global_steps_per_s"),
                shown("sustained_global_steps_per_s"),
            )
        )
        .when(printed_apart_from_clock())
        .then(
            pl.format(
                f"steady rate {{}} global steps/s is the rate the log printed, kept beside its clock (within "
                f"{CLOCK_TOLERANCE:.0%} on most intervals); the mean ({{}}) and sustained ({{}}) rates are its steps "
                "over its clock's time, which gives {}",
                shown("steady_global_steps_per_s"),
                shown("mean_global_steps_per_s"),
                shown("sustained_global_steps_per_s"),
                pl.when(clock_gives_more())
                .then(pl.lit(f"more: {APART_WHY['more']}"))
                .otherwise(pl.lit(f"less: {APART_WHY['less']}")),
            )
        )
    )


def steady_status() -> pl.Expr:
    """``steady_status`` of a summary row (:data:`STEADY_REASONS`' keys; null where the run has a
    steady rate), from its ``records``, ``logging_tasks``, ``segments``, ``steady_records``,
    ``untimed_records`` and the records left out (``impossible_elapsed``, ``zero_rates``, ``implausible_rates``:
    :data:`SET_ASIDE_SCHEMA`). Every warm-up interval of a segment but its first runs below half the run's
    median in-segment rate, which no median allows for all of them: a run without steady records
    holds only segments' first records."""
    return (
        pl.when(pl.col("steady_global_steps_per_s").is_not_null())
        .then(None)
        .when(pl.col(WITHHELD).fill_null(False))
        .then(pl.lit("step_time_contradicted"))
        .when((pl.col("records").fill_null(0) == 0) & pl.col("mean_note").is_not_null())
        .then(pl.lit("whole_run_only"))
        .when(pl.col("records").fill_null(0) == 0)
        .then(pl.when(pl.col("status") == "ok").then(pl.lit("finished_without_steps")).otherwise(pl.lit("no_records")))
        .when(pl.col("clock_jumps").fill_null(0) > 0)
        .then(pl.lit("clock_jump"))
        .when((pl.col("logging_tasks").fill_null(0) == 0) & (pl.col("impossible_elapsed").fill_null(0) > 0))
        .then(pl.lit("elapsed_impossible"))
        .when(pl.col("logging_tasks").fill_null(0) == 0)
        .then(pl.lit("no_training_records"))
        # a run left without a rate where stated ones were left out: they are why (a zero rate, or 1e300)
        .when(pl.col("implausible_rates").fill_null(0) > 0)
        .then(pl.lit("rate_implausible"))
        .when(pl.col("zero_rates").fill_null(0) > 0)
        .then(pl.lit("rate_zero"))
        .when(pl.col("steady_records").fill_null(0) == 0)
        .then(
            pl.when(pl.col("segments") == 1)
            .then(pl.lit("one_record"))
            .when(pl.col("untimed_records") == pl.col("segments"))
            .then(pl.lit("no_clock"))
            .otherwise(pl.lit("warmup_only"))
        )
        .otherwise(pl.lit("no_rate"))
    )


def steady_reason() -> pl.Expr:
    """``steady_reason``: :data:`STEADY_REASONS`' phrase of the row's ``steady_status``."""
    phrase = pl.col("steady_status").replace_strict(STEADY_REASONS, default=None, return_dtype=pl.String)
    return phrase.str.replace("{segments}", pl.col("segments").cast(pl.String), literal=True)


class BaselineError(AnalysisError, ValueError):
    """``--baseline`` names a run the dataset does not hold, or one without a steady rate."""


def latest_runs(facts: pl.DataFrame) -> pl.DataFrame:
    """The newest facts collected about each run, from the runs table (:data:`tierscope.dataset.schema.RUN_SCHEMA`):
    :data:`RUN_INDEX`."""
    return facts.sort("collected_at").group_by("run_id", maintain_order=True).last().select(*RUN_INDEX)


def run_index(facts: pl.DataFrame, seen: pl.DataFrame) -> pl.DataFrame:
    """Every run the dataset knows of, with its tier: :data:`RUN_INDEX`.

    ``facts``: the runs table; ``seen``: ``run_id, tier`` of the runs that have step records or
    events (a run's first non-null tier in row order stands in where its facts give none)."""
    tiers = seen.group_by("run_id", maintain_order=True).agg(pl.col("tier").drop_nulls().first().alias("seen_tier"))
    return (
        tiers.join(latest_runs(facts), on="run_id", how="full", coalesce=True)
        .with_columns(pl.coalesce("tier", "seen_tier").alias("tier"))
        .select(*RUN_INDEX)
    )


def failures(events: pl.DataFrame, steps: pl.LazyFrame | None = None) -> pl.DataFrame:
    """``run_id, failure_reason, finished, earlier_failure``, one row per run with events: the first failed
    event's reason that stands (by source and offset; null when none does), whether an event says the run finished
    (a ``completed successfully`` line, an exit code 0, the trainer's ``finished``), and the first failure its log
    went on from (:func:`overcome_failures`; null: none). ``events``: the events table's ``run_id, event, reason,
    source, source_offset``; ``steps``: the step records (``run_id, source, source_offset``; None: no failure is
    overcome)."""
    overcome = overcome_failures(events, steps).with_columns(_gone=pl.lit(True))
    failed = pl.col("event") == "failed"
    # a traceback a collect read up to its frames, whose exception line a later collect read: the later failed
    # event of the file says the cause, the first only that there was one
    completed = cut_traceback() & (failed.cast(pl.UInt32).cum_sum(reverse=True).over("run_id", "source") > 1)
    return (
        events.sort("run_id", "source", "source_offset")
        .join(overcome, on=["run_id", "source", "source_offset"], how="left", maintain_order="left")
        .with_columns(pl.col("_gone").fill_null(False) & failed, _completed=failed & completed)
        .group_by("run_id", maintain_order=True)
        .agg(
            pl.col("reason")
            .filter(failed & ~pl.col("_gone") & ~pl.col("_completed"))
            .fill_null("failed (no reason logged)")
            .first()
            .alias("failure_reason"),
            (pl.col("event") == "finished").any().alias("finished"),
            pl.col("reason")
            .filter(pl.col("_gone"))
            .fill_null("failed (no reason logged)")
            .first()
            .alias("earlier_failure"),
        )
    )


def overcome_failures(events: pl.DataFrame, steps: pl.LazyFrame | None) -> pl.DataFrame:
    """``run_id, source, source_offset`` of the failed events a file's own later word overrules: the last ending
    event of that file (``finished`` or ``failed``) is ``finished``, after the failure, and a step record of the
    file lies between the two (the steps went on: TensorFlow's session recovering from a lost worker, a wrapper
    retrying). A failure that ends its file, or that only a bare ``finished`` line follows, stands. A file's word
    rules only its own failures (a worker's error is not overruled by the chief's ``finished``)."""
    schema = {"run_id": pl.String(), "source": pl.String(), "source_offset": pl.Int64()}
    ends = events.filter(pl.col("event").is_in(["failed", "finished"])).sort("run_id", "source", "source_offset")
    if steps is None or not ends.height:
        return pl.DataFrame(schema=schema)
    last = ends.group_by("run_id", "source").agg(
        last_event=pl.col("event").last(), finished_at=pl.col("source_offset").last()
    )
    candidates = (
        ends.filter(pl.col("event") == "failed")
        .join(last.filter(pl.col("last_event") == "finished"), on=["run_id", "source"])
        .select("run_id", "source", "source_offset", "finished_at")
    )
    if not candidates.height:
        return pl.DataFrame(schema=schema)
    between = (
        steps.select("run_id", "source", step_at="source_offset")
        .filter(pl.col("run_id").is_in(candidates["run_id"].unique().implode()))
        .join(candidates.lazy(), on=["run_id", "source"])
        .filter((pl.col("step_at") > pl.col("source_offset")) & (pl.col("step_at") < pl.col("finished_at")))
        .select("run_id", "source", "source_offset")
        .unique()
        .collect()
    )
    return between.cast(schema)  # type: ignore[arg-type]


def pick_baseline(frame: pl.DataFrame, baseline: str | None) -> pl.DataFrame:
    """The baseline row of ``frame`` (steady rate, tasks, ``usd_per_hour``): ``baseline`` if given, else the
    first BASIC run with a steady rate (by run id), else the measured run with the lowest price per hour
    (runs without a price after the priced ones), then the fewest training tasks, then by run id, runs with step
    records before runs measured by a closing summary alone. Raises
    :class:`BaselineError` for a ``baseline`` that is missing or unmeasured."""
    if baseline is not None:
        row = frame.filter(pl.col("run_id") == baseline)
        if row.height == 0:
            known = ", ".join(frame["run_id"].to_list())
            raise BaselineError(f"baseline run {baseline!r} is not in the dataset (runs: {known})")
        if row["steady_global_steps_per_s"][0] is None:
            raise BaselineError(f"baseline run {baseline!r} has no steady-state rate: {row['steady_reason'][0]}")
        return row
    measured = frame.filter(pl.col("steady_global_steps_per_s").is_not_null())
    basic = measured.filter(pl.col("tier").str.to_uppercase() == "BASIC").sort("run_id")
    if basic.height:
        return basic.head(1)
    # No BASIC run (today's machines, local clusters, custom tiers): the question is what paying more buys,
    # so the cheapest configuration an hour is the one to scale from (a T4 before an A100 whatever their
    # names); without prices, the smallest run is the natural "one machine".
    price = pl.col("usd_per_hour") if "usd_per_hour" in measured.columns else pl.lit(None, pl.Float64)
    # a run measured by step records before one whose only figure is its closing summary's mean (no tasks: it would
    # be the "fewest", and no log of it says which job it ran, so the other-job check could not apply)
    unrecorded = [pl.col("records").fill_null(0) == 0] if "records" in measured.columns else []
    return measured.sort(*unrecorded, price, "tasks", "run_id", nulls_last=True).head(1)


#: The summary's column marking a run whose step-timed steady rate is withheld (:func:`withhold_step_times`).
WITHHELD = "_step_time_withheld"
#: What a withheld run loses: every figure valued at its steady rate.
_VALUED_AT_RATE = tuple(
    dict.fromkeys(
        ["steady_global_steps_per_s", "steady_ci_low", "steady_ci_high", "mean_global_steps_per_s", "startup_s",
         *(c for c in GOODPUT_SCHEMA if c not in ("run_id", "stalls", "goodput_clock", "clock_missing"))]
    )
)  # fmt: skip


def withhold_step_times(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (the summary's rows with the throughput, topology and ``training_mode`` columns joined)
    with :data:`WITHHELD` set, and the figures valued at the steady rate (:data:`_VALUED_AT_RATE`)
    null, where the steady rate rests on step times (``step_timed_intervals``: one local step assumed
    between two lines of a task) that the tasks' own local rates contradict: ``training_mode``
    inconsistent (their sum is neither the global rate nor a multiple of it; case01: 9 global steps in
    one 0.48 s step, 18.75 global steps/s, where the three tasks' local rates add up to 5.1), or a run of
    one training task by its declared topology or tier, all of it logged, whose global step moves more
    than :data:`tierscope.analysis.tasks.MODE_TOLERANCE` away from its own local rate. A task alone that logs
    every 10 steps (TF-slim's ``train_image_classifier.py``) is no longer such a run: its step times are
    stretched over the global steps between its lines (:mod:`tierscope.analysis.lone_task`), and its local rate
    agrees with its global one. A run whose topology the log
    alone gives keeps its rate with the assumption noted: unlogged replicas move the global step too
    (case24: +3 a master step, a worker not in the excerpt)."""
    step_timed = (pl.col("step_timed_intervals").fill_null(0) > 0) & pl.col("steady_global_steps_per_s").is_not_null()
    alone = (
        (pl.col("tasks_origin") != "logs")
        & (pl.col("training_tasks") == 1)
        & (pl.col("logging_tasks") == 1)
        & ((pl.col("local_to_global") - 1).abs() > MODE_TOLERANCE)
    )
    withheld = (step_timed & ((pl.col("training_mode") == "inconsistent") | alone)).fill_null(False)
    return frame.with_columns(withheld.alias(WITHHELD)).with_columns(
        pl.when(pl.col(WITHHELD)).then(None).otherwise(pl.col(c)).alias(c)
        for c in _VALUED_AT_RATE
        if c in frame.columns
    )


def summary_frame(
    runs: pl.DataFrame,
    figures: IntervalFigures,
    costs: pl.DataFrame,
    failed: pl.DataFrame,
    options: AnalysisOptions,
    target: int | None = None,
    log_batches: pl.DataFrame | None = None,
    stated: pl.DataFrame | None = None,
    set_aside: pl.DataFrame | None = None,
    lone: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per run with :data:`SUMMARY_SCHEMA`'s columns, sorted by run id: the summary of
    :func:`tierscope.analysis.analyze`, from what its pass holds.

    ``runs``: :func:`run_index`; ``figures``: :func:`tierscope.analysis.batches.interval_figures` of
    the steps with ``options.seed``; ``costs``: :func:`tierscope.analysis.cost.tier_costs` of ``runs``;
    ``failed``: :func:`failures`; ``target``: N for the time and price columns (None: none);
    ``log_batches``: ``run_id, log_batch_size`` (the batch the logs show,
    :func:`tierscope.analysis.analyze.step_overview`); ``stated``: :func:`tierscope.analysis.whole_run.whole_run_rates`
    (None: none), a run's mean only where it stored no step record; ``set_aside``: :data:`SET_ASIDE_SCHEMA`, the
    records the analysis left out (None: none), which say why a run left without a rate has none; ``lone``:
    :func:`tierscope.analysis.lone_task.lone_tasks`, the runs whose task's step times time all its steps (None:
    none), which its ``steady_assumption`` says.
    Raises :class:`BaselineError` for a bad ``options.baseline``.
    """
    throughput, tasks = figures.throughput, figures.tasks
    mode = async_check(tasks, throughput).select(
        "run_id", local_sum_steps_per_s="sum_local_steps_per_s", local_to_global="local_to_global",
        training_mode="mode",
    )  # fmt: skip
    stragglers = tasks.group_by("run_id").agg(stragglers=pl.col("straggler").fill_null(False).sum())
    frame = (
        runs.join(throughput.rename({"tasks": "logging_tasks"}), on="run_id", how="left")
        .join(declared_tasks(runs), on="run_id", how="left")
        .join(_tier_table_tasks(runs), on="run_id", how="left")
        .with_columns(
            pl.col("logging_tasks").fill_null(0),
            tasks=pl.coalesce("training_tasks", pl.col("logging_tasks").fill_null(0)),
            tasks_origin=pl.col("tasks_origin").fill_null(pl.lit("logs")),
        )
        .with_columns(topology_note=topology_note())
        .drop("tier_training_tasks", "tier_ps_tasks")
        .join(costs, on="run_id", how="left")
        .join(failed, on="run_id", how="left")
        .join(mode, on="run_id", how="left")
        .join(stragglers, on="run_id", how="left")
        .join(figures.goodput, on="run_id", how="left")
        .join(stated if stated is not None else pl.DataFrame(schema=WHOLE_RUN_SCHEMA), on="run_id", how="left")
        .join(_set_aside(set_aside), on="run_id", how="left")
        .join(lone.select("run_id", "alone_by") if lone is not None else _NO_LONE, on="run_id", how="left")
        .pipe(withhold_step_times)
        .with_columns(mean_note=mean_note())
        # a run no step record times: its closing summary's mean is its steady rate, the assumption said
        .with_columns(steady_global_steps_per_s=whole_run_steady())
        .with_columns(
            # a lead logging no elapsed_s (timestamps only, case22): its start-up on the job's clock
            startup_s=pl.coalesce("startup_s", "clock_startup_s"),
            records=pl.col("records").fill_null(0),
            tasks=pl.col("tasks").fill_null(0),
            # Only what the log says: a failure, an end (ok), or records with neither (a log cut
            # short, a job still running, an excerpt: unknown, never taken for success).
            status=pl.when(pl.col("failure_reason").is_not_null())
            .then(pl.lit("failed"))
            .when(pl.col("finished").fill_null(False))
            .then(pl.lit("ok"))
            .when(pl.col("records").fill_null(0) > 0)
            .then(pl.lit("unknown"))
            .otherwise(pl.lit("empty")),
            steps_per_ml_unit_hour=pl.col("steady_global_steps_per_s") * 3600 / pl.col("ml_units_per_hour"),
            usd_per_1000_steps=pl.col("usd_per_hour") / (pl.col("steady_global_steps_per_s") * 3600) * 1000,
            usd_per_ml_unit_hour=pl.col("usd_per_hour") / pl.col("ml_units_per_hour"),
            measured_usd=pl.col("usd_per_hour") * pl.col("lifetime_s") / 3600,
        )
        .with_columns(
            # the closing summary's figures only where nothing else measures: a run with records keeps its own
            mean_global_steps_per_s=pl.when(pl.col("mean_note").is_not_null())
            .then(pl.col("stated_global_steps_per_s"))
            .otherwise(pl.col("mean_global_steps_per_s")),
            stated_examples_per_s=pl.when(pl.col("mean_note").is_not_null()).then(pl.col("stated_examples_per_s")),
        )
        .with_columns(SUSTAINED_RATE, price_per_1000_productive_steps=pl.col("usd_per_1000_steps") / pl.col("goodput"))
        .with_columns(
            steady_status=steady_status(),
            steady_assumption=steady_assumption(),
            # one run's intervals resampled: run-to-run variation (placement, neighbours) is not in it
            ci_scope=pl.when(pl.col("steady_ci_low").is_not_null()).then(pl.lit(CI_WITHIN_RUN)),
        )
        .with_columns(
            steady_reason=steady_reason(),
            steady_assumption_note=pl.col("steady_assumption").replace_strict(
                STEADY_ASSUMPTIONS, default=None, return_dtype=pl.String
            ),
            steady_clock_note=steady_clock_note(),
        )
        .pipe(with_examples, log_batches)
        .pipe(with_devices)
    )
    base = pick_baseline(frame, options.baseline)
    if base.height:
        b = base.row(0, named=True)
        # Steps are not work: where batch size or update mode differ, a step of one run is not one of
        # the other's, so the two compare on examples/s (the steady rate times a constant per run).
        # a step's worth in tokens is not one in images: only runs counting the baseline's unit compare on it
        worth = pl.col("examples_per_s") / pl.col("steady_global_steps_per_s")  # examples per global step
        base_worth = b["examples_per_s"] / b["steady_global_steps_per_s"] if b["examples_per_s"] is not None else 1.0
        on_examples = (
            pl.col("examples_per_s").is_not_null()
            & pl.lit(b["examples_per_s"] is not None)
            & pl.col("examples_unit").eq_missing(pl.lit(b["examples_unit"], pl.String))
            & (
                pl.col("batch_size").ne_missing(pl.lit(b["batch_size"], pl.Float64))
                | pl.col("update_mode").ne_missing(pl.lit(b["update_mode"], pl.String))
                # as many examples a replica, but more replicas a step (8 TPU cores against 4 chips)
                | ((worth / base_worth - 1).abs() > 1e-9)
            )
        )
        factor = pl.when(on_examples).then(worth / base_worth).otherwise(1.0)
        frame = frame.with_columns(
            baseline_run_id=pl.lit(b["run_id"]),
            speedup_vs_baseline=pl.col("steady_global_steps_per_s") / b["steady_global_steps_per_s"] * factor,
            speedup_basis=pl.when(on_examples).then(pl.lit("examples/s")).otherwise(pl.lit("steps/s")),
            _factor=factor,
        ).with_columns(
            # per task only where neither run has accelerators: the resource that scales is the device
            scaling_efficiency_tasks=pl.when(
                (pl.col("device_basis") == "task") & pl.lit(b["device_basis"] == "task")
            ).then(pl.col("speedup_vs_baseline") / (pl.col("tasks") / b["tasks"])),
            scaling_efficiency_units=pl.col("speedup_vs_baseline")
            / (pl.col("ml_units_per_hour") / b["ml_units_per_hour"]),
            # per device only against a baseline of the same device: a T4 is not an A100
            scaling_efficiency_devices=pl.when(
                # (a baseline of no known device, a run timed by its closing summary alone, compares none)
                pl.col("device_basis").eq_missing(pl.lit(b["device_basis"], pl.String))
                & pl.col("accelerator").eq_missing(b["accelerator"])
            ).then(pl.col("speedup_vs_baseline") / (pl.col("devices") / b["devices"])),
        )
        drawn = figures.draws if figures.draws_seed == options.seed else None
        withheld = set(frame.filter(pl.col(WITHHELD))["run_id"])
        samples = {run: values for run, values in figures.samples.items() if run not in withheld}
        speedups = speedup_intervals(samples, b["run_id"], options.seed, drawn)
        frame = frame.join(speedups, on="run_id", how="left").with_columns(
            pl.col("speedup_ci_low", "speedup_ci_high") * pl.col("_factor")
        )
        # what each run's examples/s count, which with_examples has folded into examples_unit (a batch declared
        # counts examples whatever the log's rate said): the logs' own unit is the mark of the work
        if log_batches is not None and "log_examples_unit" in log_batches.columns:
            units = log_batches.select("run_id", "log_examples_unit")
            frame = frame.join(units, on="run_id", how="left", maintain_order="left")
            b = {**b, "log_examples_unit": dict(units.iter_rows()).get(b["run_id"])}
        frame = apart_from_baseline(frame, b, named=options.baseline is not None)
    return with_target(conform(frame, SUMMARY_SCHEMA).sort("run_id"), target)


#: Per run, the records the analysis leaves out before its rates (:func:`summary_frame`'s ``set_aside``): stating an
#: elapsed time no process can have run (:func:`tierscope.analysis.clock.impossible_elapsed`), a global rate of 0
#: or beyond any machine (:mod:`tierscope.analysis.stated_rates`); the intervals of a clock that jumps by days
#: (:func:`tierscope.analysis.clock.clock_jumps`: the run's records all set aside).
SET_ASIDE_SCHEMA = {"run_id": pl.String(), "impossible_elapsed": pl.UInt32(), "zero_rates": pl.UInt32(),
                    "implausible_rates": pl.UInt32(), "clock_jumps": pl.UInt32()}  # fmt: skip


_NO_LONE = pl.DataFrame(schema={"run_id": pl.String(), "alone_by": pl.String()})


def _set_aside(frame: pl.DataFrame | None) -> pl.DataFrame:
    """:data:`SET_ASIDE_SCHEMA`'s columns of ``frame`` (missing ones null; None: no row)."""
    if frame is None:
        return pl.DataFrame(schema=SET_ASIDE_SCHEMA)
    return conform(frame, SET_ASIDE_SCHEMA)


def _tier_table_tasks(runs: pl.DataFrame) -> pl.DataFrame:
    """``run_id, tier_training_tasks, tier_ps_tasks``: each run's tier as the tier table composes it (a
    local run's: the cloud tier it emulates), whatever the run declared."""
    by_tier = declared_tasks(runs.select("run_id", "tier"))
    return by_tier.select("run_id", tier_training_tasks="training_tasks", tier_ps_tasks="ps_tasks")


def with_devices(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (the summary's rows, with ``tier``, ``topology``, ``tasks``, the steady rate and ``usd_per_hour``)
    with its hardware columns: ``devices`` are the GPUs or TPU chips of the training pools
    (:func:`tierscope.analysis.topology.run_hardware`), else its training tasks; per-device and per-dollar rates."""
    rows = []
    tiers = None  # the tier table read once (a few ms a read), where a run needs it
    for run_id, tier, topology in frame.select("run_id", "tier", "topology").iter_rows():
        if tier and not topology and tiers is None:
            with contextlib.suppress(ValueError):  # unreadable: each run's look-up says so as before (None)
                tiers = load_tiers()
        hardware = None if tier and LOCAL_TIER_RE.search(tier) else run_hardware(tier, topology, tiers)
        device = hardware.device_type if hardware is not None else None
        rows.append(
            {"run_id": run_id, "hardware": hardware.describe() if hardware else None, "accelerator": device,
             "hw_devices": hardware.devices if hardware and device else None,
             "device_basis": None if not device else "TPU chip" if device.startswith("TPU") else "GPU"}
        )  # fmt: skip
    schema = {"run_id": pl.String, "hardware": pl.String, "accelerator": pl.String, "hw_devices": pl.UInt32,
              "device_basis": pl.String}  # fmt: skip
    rate = pl.col("steady_global_steps_per_s")
    return (
        frame.join(pl.DataFrame(rows, schema=schema), on="run_id", how="left")
        .with_columns(
            devices=pl.coalesce("hw_devices", pl.when(pl.col("tasks") > 0).then("tasks")).cast(pl.UInt32),
            device_basis=pl.coalesce("device_basis", pl.when(pl.col("tasks") > 0).then(pl.lit("task"))),
        )
        .with_columns(
            steps_per_s_per_device=rate / pl.col("devices"),
            steps_per_usd=pl.when(pl.col("usd_per_hour") > 0).then(rate * 3600 / pl.col("usd_per_hour")),
        )
        .drop("hw_devices")
    )


def withhold_non_finite(summary: pl.DataFrame) -> pl.DataFrame:
    """``summary`` (:data:`SUMMARY_SCHEMA`) with every Float64 figure that is not finite (a price per
    step at 0 steps/s, a speedup against a baseline at 0 steps/s, a rate near 1e308 times 3,600) null,
    and ``withheld_figures`` naming them and why: ``usd_per_1000_steps, ...: its steady rate is 0
    steps/s``. No figure that cannot be reaches a table, a chart or JSON."""
    figures = [name for name, dtype in summary.schema.items() if dtype == pl.Float64]
    if not figures:
        return summary
    bad = [pl.when(~pl.col(c).is_finite()).then(pl.lit(c)) for c in figures]
    rate = pl.col("steady_global_steps_per_s")
    base = summary.filter(pl.col("run_id") == pl.col("baseline_run_id"))["steady_global_steps_per_s"]
    base_zero = base.len() > 0 and base[0] == 0
    why = (
        pl.when(rate == 0)
        .then(pl.lit("its steady rate is 0 steps/s (no step to price or compare)"))
        .when(pl.lit(base_zero))
        .then(pl.lit("the baseline's steady rate is 0 steps/s"))
        .otherwise(pl.lit("not a finite number (a figure too large, or a division by 0)"))
    )
    named = pl.concat_str(bad, separator=", ", ignore_nulls=True)
    return summary.with_columns(
        withheld_figures=pl.when(named != "").then(pl.format("{}: {}", named, why)),
        **{c: pl.when(pl.col(c).is_finite()).then(pl.col(c)) for c in figures},
    )


def counted(column: str, noun: str) -> pl.Expr:
    """``column``'s count with ``noun`` agreeing: ``1 training task``, ``2 training tasks``."""
    return pl.format("{} {}", column, pl.when(pl.col(column) == 1).then(pl.lit(noun)).otherwise(pl.lit(noun + "s")))


#: Where a topology came from, in a note's words: a stored one describes machines (a manifest's, or collect's
#: --machine, --tpu, --job-spec), each one training task, which "manifest" alone misnamed for a --tpu run.
ORIGIN_WORDS = {"manifest": "a task a machine, as described"}


def _origin() -> pl.Expr:
    return pl.col("tasks_origin").replace(ORIGIN_WORDS)


def topology_note() -> pl.Expr:
    """What a run's tasks say of its topology, or null when they agree with it: a parameter-server run of
    the ``ps`` strategy whose chief alone logged says so (by design its coordinator logs the global steps of
    every worker: no warning); a run whose training tasks that logged (``logging_tasks``) are not its
    declared ``training_tasks`` says both (a task lost its log); a local run (``local-<TIER>``) whose
    declared topology is not the cloud tier's (``tier_training_tasks``, ``tier_ps_tasks``: the tier table's)
    says why. Needs the columns ``strategy``, ``tier``, ``tasks_origin`` and those named here."""
    ps_run = pl.col("strategy").eq_missing(pl.lit(COORDINATOR_STRATEGY))
    chief_alone = ps_run & (pl.col("logging_tasks") == 1)
    logged = pl.when(chief_alone).then(
        pl.format(
            "a parameter-server run: its chief alone logs steps, the global steps of its {} and {} ps",
            counted("training_tasks", "training task"), pl.col("ps_tasks").fill_null(0),
        )
    )  # fmt: skip
    declared = pl.format(
        "its topology ({}) has {} and {} ps, but {} logged steps; the figures count the topology's {}",
        _origin(), counted("training_tasks", "training task"), pl.col("ps_tasks").fill_null(0),
        counted("logging_tasks", "training task"), counted("training_tasks", "training task"),
    )  # fmt: skip
    disagree = (pl.col("logging_tasks") > 0) & (pl.col("logging_tasks") != pl.col("training_tasks")) & ~chief_alone
    cloud_tier = pl.col("tier").str.slice(len(LOCAL_PREFIX))
    why = pl.when(ps_run).then(
        pl.lit("under the ps strategy the chief coordinates and does not train, where the cloud tier's master trains")
    ).otherwise(pl.lit("as the run declares"))  # fmt: skip
    local = pl.col("tier").str.to_lowercase().str.starts_with(LOCAL_PREFIX.lower()).fill_null(False)
    differs = (
        local
        & (pl.col("tasks_origin") == "declared")
        & (
            pl.col("training_tasks").ne_missing(pl.col("tier_training_tasks"))
            | pl.col("ps_tasks").ne_missing(pl.col("tier_ps_tasks"))
        )
        & pl.col("tier_training_tasks").is_not_null()
    )
    local_note = pl.when(differs).then(
        pl.format(
            "run locally as {} training tasks and {} ps, where the cloud {} has {} and {} ps: {}",
            "training_tasks", pl.col("ps_tasks").fill_null(0), cloud_tier, "tier_training_tasks",
            pl.col("tier_ps_tasks").fill_null(0), why,
        )
    )  # fmt: skip
    parts = [logged, pl.when(disagree.fill_null(False)).then(declared), local_note]
    return pl.concat_str(parts, separator="; ", ignore_nulls=True).replace("", None)


#: run.json's strategies and the update mode each means.
STRATEGY_MODE = {"mirrored": "sync", "ps": "async", "single": "single"}


#: USD a million examples cost at a row's steady rate: USD an hour / (examples/s x 3,600) x 10^6.
USD_PER_MILLION_EXAMPLES = pl.col("usd_per_hour") / (pl.col("examples_per_s") * 3600) * 1e6


def shared_examples_word(frame: pl.DataFrame) -> str | None:
    """The one thing ``frame``'s (a summary's) rows with examples count (``tokens`` or ``examples``:
    :func:`examples_word`), None where they differ (a language model's tokens beside an image model's
    examples): then each row's ``examples_unit`` names its own, and no figure adds or compares the two."""
    if "examples_unit" not in frame.columns or frame["examples_unit"].drop_nulls().n_unique() <= 1:
        return examples_word(frame)
    return None


def examples_word(frame: pl.DataFrame) -> str:
    """What ``frame``'s (a summary's) examples are, to name them: ``tokens`` where every row with an
    ``examples_unit`` counted tokens (a language model's log measured tokens/s), else ``examples``."""
    if "examples_unit" not in frame.columns:
        return "examples"
    units = set(frame["examples_unit"].drop_nulls())
    return "tokens" if units == {"tokens"} else "examples"


def with_examples(frame: pl.DataFrame, log_batches: pl.DataFrame | None) -> pl.DataFrame:
    """``frame`` with ``batch_size`` (declared, else the logs' ``log_batch_size``, else, for a run whose local
    steps are global ones, the logs' ``log_examples_per_s`` over its steady rate), ``usd_per_million_examples``,
    ``examples_unit`` (``tokens`` where the batch is the log's and the log counted tokens, its
    ``log_examples_unit``; else ``examples``),
    ``update_mode``
    (run.json's strategy, else the summary's ``training_mode`` when it is sync, async or single) and
    ``examples_per_s`` = steady global steps/s x batch size, x the replicas when sync (every replica
    processes a batch per global step; a parameter-server step is one replica's batch). The replicas are
    the training tasks, or the logs' ``log_replicas`` where more tasks than those reported the same global
    steps (:func:`tierscope.analysis.analyze.lockstep_replicas`: a process per TPU core or GPU on a machine
    the topology counts once), which also make the mode sync where nothing else tells it and say so in
    ``topology_note``."""
    if log_batches is not None:
        frame = frame.join(log_batches, on="run_id", how="left")
    for name, dtype in (
        ("log_batch_size", pl.Float64),
        ("log_examples_unit", pl.String),
        ("log_examples_per_s", pl.Float64),
        ("log_replicas", pl.UInt32),
    ):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype).alias(name))
    # a declared batch_size is examples (a manifest's, run.json's); the log's is what its examples/s counted
    unit = (
        pl.when(pl.col("batch_size").is_null() & pl.col("log_examples_unit").is_not_null())
        .then("log_examples_unit")
        .otherwise(pl.lit("examples"))
    )
    inferred = pl.when(pl.col("training_mode").is_in(["sync", "async", "single"])).then(pl.col("training_mode"))
    lockstep = pl.when(pl.col("log_replicas") >= 2).then(pl.lit("sync"))
    mode = pl.coalesce(pl.col("strategy").replace_strict(STRATEGY_MODE, default=None), inferred, lockstep)
    # processes that each logged the same global steps outnumber the topology's tasks: they are the replicas
    more = (pl.col("update_mode") == "sync") & (pl.col("log_replicas") > pl.col("tasks")).fill_null(False)
    replicas = pl.when(more).then(pl.col("log_replicas")).otherwise(pl.col("tasks"))
    declared = pl.col("strategy").replace_strict(STRATEGY_MODE, default=None)
    # A log timed by its clock alone states its examples/s but no local steps/s to divide them by: where a
    # task's local step is a global one (one training task, or sync replicas), a step's examples are its
    # examples/s over the steady rate (16,384 tokens/s at 2 steps/s: 8,192 tokens a step), so the examples/s
    # figured from them is the log's own. Async tasks' local rates are unknown: none.
    local_is_global = (pl.col("tasks") == 1) | mode.eq_missing(pl.lit("sync"))
    clocked = pl.when(local_is_global & (pl.col("steady_global_steps_per_s") > 0)).then(
        pl.col("log_examples_per_s") / pl.col("steady_global_steps_per_s")
    )
    return (
        frame.with_columns(
            batch_size=pl.coalesce(pl.col("batch_size").cast(pl.Float64), "log_batch_size", clocked),
            examples_unit=unit,
            update_mode=mode,
            # one task that logged cannot show a mode ("single"): a declared strategy says what it was
            training_mode=pl.when((pl.col("training_mode") == "single") & declared.is_not_null())
            .then(declared)
            .otherwise(pl.col("training_mode")),
        )
        .with_columns(
            examples_per_s=pl.col("steady_global_steps_per_s")
            * pl.col("batch_size")
            * pl.when(pl.col("update_mode") == "sync").then(replicas).otherwise(1),
            topology_note=pl.when(more).then(lockstep_note()).otherwise("topology_note"),
        )
        .with_columns(
            usd_per_million_examples=USD_PER_MILLION_EXAMPLES,
            examples_unit=pl.when(pl.col("examples_per_s").is_not_null()).then("examples_unit"),
        )
        .drop("log_batch_size", "log_examples_unit", "log_examples_per_s", "log_replicas", strict=False)
    )


def lockstep_note() -> pl.Expr:
    """Why a run's examples/s count more replicas than its topology's training tasks (``tasks``,
    ``logging_tasks``, ``log_replicas``, ``tasks_origin``), replacing the note that the two disagree."""
    return pl.format(
        "its topology ({}) has {}, but {} tasks logged the same global steps, each its own examples/s: "
        "replicas in lockstep (a process per TPU core or GPU), so its examples/s add the {} replicas' batches",
        _origin(), counted("tasks", "training task"), "log_replicas", "log_replicas",
    )  # fmt: skip


def mixed_unit_notes(overview: pl.DataFrame) -> list[tuple[str, str]]:
    """``(run id, sentence)`` per run whose records state examples/s in tokens and in examples both
    (``overview``: ``run_id, log_examples_unit, log_examples_other``, :func:`tierscope.analysis.analyze.log_examples`):
    the unit its figures count, and how many records of the other were left out (never added to them)."""
    mixed = overview.filter(pl.col("log_examples_other").fill_null(0) > 0)
    other = {"tokens": "examples", "examples": "tokens"}
    return [
        (
            run_id,
            f"its records state examples/s in tokens and in examples (images, samples): its examples/s and price "
            f"per 1M {unit} are of the {unit} the most of them count; {left:,} record{'s' if left != 1 else ''} "
            f"counting {other[unit]} left out (never added to them)",
        )
        for run_id, unit, left in mixed.select("run_id", "log_examples_unit", "log_examples_other").iter_rows()
    ]


def batch_notes(runs: pl.DataFrame, log_batches: pl.DataFrame) -> list[tuple[str, str]]:
    """``(run id, sentence)`` per run whose declared ``batch_size`` (``runs``: :func:`run_index`) is not the
    batch its log shows (``log_batches``: ``run_id, log_batch_size``, off by more than 1 %): the declared one
    is used, and the sentence says what it means (a batch per GPU given for a job of several GPUs on one VM
    makes its examples/s a fraction of what it did)."""
    both = runs.select("run_id", "batch_size").join(log_batches, on="run_id", how="inner")
    differ = both.filter(
        pl.col("batch_size").is_not_null()
        & pl.col("log_batch_size").is_not_null()
        & ((pl.col("log_batch_size") / pl.col("batch_size").cast(pl.Float64) - 1).abs() > 0.01)
    )
    return [
        (
            run_id,
            f"its declared batch_size {declared} is not the {logged:g} examples a step its log shows; the figures "
            f"use {declared}: batch_size is the examples one training task processes a step, all its devices "
            "(the global batch of a one-VM job), not a per-GPU batch",
        )
        for run_id, declared, logged in differ.select("run_id", "batch_size", "log_batch_size").iter_rows()
    ]


#: The columns :func:`with_target` fills.
TARGET_COLUMNS = (
    "target_steps", "target_examples", "hours_to_target", "usd_to_target", "plan_basis", "steady_hours_to_target",
)  # fmt: skip

#: A row's examples per global step: its examples/s over its steady global steps/s (null: batch unknown).
EXAMPLES_PER_STEP = pl.col("examples_per_s") / pl.col("steady_global_steps_per_s")


def baseline_examples_per_step(frame: pl.DataFrame) -> float | None:
    """The examples one global step of ``frame``'s baseline row (``run_id == baseline_run_id``) processes, where
    a row of ``frame`` compares with it on examples/s (``speedup_basis``); None where every row compares on
    steps/s, the baseline is not in ``frame`` or its batch is unknown."""
    needed = ("run_id", "baseline_run_id", "speedup_basis", "examples_per_s", "steady_global_steps_per_s")
    if any(c not in frame.columns for c in needed) or not (frame["speedup_basis"] == "examples/s").any():
        return None
    base = frame.filter(pl.col("run_id") == pl.col("baseline_run_id")).select(EXAMPLES_PER_STEP.alias("e"))
    value = base["e"][0] if base.height else None
    return float(value) if value is not None and math.isfinite(value) and value > 0 else None


def own_steps(steps: int, base_examples: float | None) -> pl.Expr:
    """Each row's own global steps for a target of ``steps`` steps of the baseline's work (Int64): where the
    row compares with the baseline on examples/s, ``steps x base_examples / the row's examples per global
    step``, rounded up (32 examples a step on the baseline, 128 on the row: 6,000 steps are 1,500); else
    ``steps``. ``base_examples``: :func:`baseline_examples_per_step`."""
    if base_examples is None:
        return pl.lit(steps, pl.Int64)
    # rounded before the ceiling: 6,000 x 32 / 128.0000001 is 1,500 steps, not 1,501
    scaled = (steps * base_examples / EXAMPLES_PER_STEP).round(6).ceil()
    on_examples = (pl.col("speedup_basis") == "examples/s") & scaled.is_finite()
    return pl.when(on_examples.fill_null(False)).then(scaled).otherwise(steps).cast(pl.Int64)


def with_target(summary: pl.DataFrame, steps: int | None) -> pl.DataFrame:
    """``summary`` (:data:`SUMMARY_SCHEMA`) with its time and price columns for a target of ``steps``
    global steps of the baseline's work, on the sustained rate (:mod:`tierscope.analysis.sustained`; the
    steady rate where it is unknown, ``plan_basis`` says which): ``target_steps`` the row's own steps
    (:func:`own_steps`: more or fewer than ``steps`` where it compares on examples/s), ``target_examples`` the
    examples they are (``steps`` x the baseline's examples per global step; null where the comparison is on
    steps/s), ``hours_to_target = (startup_s + target_steps / rate) / 3600`` (start-up 0 when unknown),
    ``usd_to_target = hours x usd_per_hour``, ``steady_hours_to_target`` at the steady rate beside it. None
    empties :data:`TARGET_COLUMNS`."""
    if steps is None:
        return summary.with_columns(pl.lit(None, SUMMARY_SCHEMA[c]).alias(c) for c in TARGET_COLUMNS)
    base_examples = baseline_examples_per_step(summary)
    return (
        summary.with_columns(
            target_steps=own_steps(steps, base_examples),
            target_examples=pl.lit(steps * base_examples if base_examples is not None else None, pl.Float64),
            plan_basis=PLAN_BASIS,
        )
        .with_columns(
            hours_to_target=hours_to(pl.col("target_steps"), PLAN_RATE),
            steady_hours_to_target=hours_to(pl.col("target_steps"), "steady_global_steps_per_s"),
        )
        .with_columns(usd_to_target=pl.col("hours_to_target") * pl.col("usd_per_hour"))
    )


def speedup_intervals(
    samples: dict[str, Sample],
    baseline: str,
    seed: int = BOOTSTRAP_SEED,
    drawn: dict[str, np.ndarray] | None = None,
) -> pl.DataFrame:
    """``run_id, speedup_ci_low, speedup_ci_high``: bootstrap 95 % interval of each run's speedup.

    Each draw divides the run's resampled steady rate by the baseline's (resampled
    independently; the draws of :func:`tierscope.analysis.throughput.run_throughput`'s intervals).
    Runs or a baseline with fewer than two steady intervals get no row. The baseline's
    own interval is the spread of a ratio of two independent draws of the same data.
    ``samples``: the runs' steady interval rates (:func:`tierscope.analysis.throughput.steady_samples`);
    ``drawn``: draws of those steady rates made already with ``seed`` (the steady intervals'), taken as they are.
    """
    drawn = drawn or {}
    base = samples.get(baseline)
    rows: list[dict[str, object]] = []
    if base is None or base.size < 2:
        return pl.DataFrame(schema={"run_id": pl.String, "speedup_ci_low": pl.Float64, "speedup_ci_high": pl.Float64})
    base_draws = drawn[baseline] if baseline in drawn else steady_draws(base, baseline, seed)
    for run, values in samples.items():
        if values.size < 2:
            continue
        # a run against itself would reuse its own draws: ratio 1 exactly, which hides the noise
        if run != baseline and run in drawn:
            draws = drawn[run]
        else:
            draws = steady_draws(values, run, seed + 1 if run == baseline else seed)
        with np.errstate(divide="ignore", invalid="ignore"):  # a baseline at 0 steps/s: no ratio, no warning
            ratios = draws / base_draws
        low, high = percentile_interval(ratios)
        rows.append({"run_id": run, "speedup_ci_low": low, "speedup_ci_high": high})
    return pl.DataFrame(rows, schema={"run_id": pl.String, "speedup_ci_low": pl.Float64, "speedup_ci_high": pl.Float64})
