"""The sustained rate: the global steps/s a run kept up over its life, what plans are made on.

The steady rate (:mod:`tierscope.analysis.throughput`) leaves out warm-up and stalls by design: it is the
pace of the machines. A job to N steps also pays for the checkpoints and evaluations it makes along the
way, every restart, and its start-up once. Planned at the steady rate, a job that checkpoints within every
5th logging interval (one 2x interval in five) is a sixth short: 100,000 steps at 10 global steps/s are
2.78 h where the run takes 3.33 h.

**Sustained global steps/s** = steady rate R x ``productive_at_steady_s`` / (``lifetime_s`` - once -
``badput_tail_s``): the steps the run made (its productive time valued at R,
:mod:`tierscope.analysis.goodput`) over the time it ran once started, so that start-up and the tail after
the last step (an export) are paid once, not in proportion to N. Once (:data:`ONCE_S`): ``startup_s``
(start-up and warm-up, :func:`tierscope.analysis.throughput.run_throughput`), else goodput's
``badput_startup_s``. Null where goodput has no lifetime (no clock) or no
productive time; a plan then falls back to the steady rate and says so (:data:`PLAN_BASIS`).

**Time to N steps** = once + N / sustained rate; the same at the steady rate is shown beside it.
"""

from __future__ import annotations

import polars as pl

#: The rate a plan was made on: the sustained rate, or the steady rate where the run's goodput is not known.
SUSTAINED, STEADY = "sustained", "steady"

#: What a run pays once before its steady pace (seconds): ``startup_s`` (start-up and warm-up), else, where the
#: lead task has no steady record of its own (the 2016 STANDARD_1 master logged once), goodput's start-up
#: badput; else 0.
ONCE_S = pl.coalesce("startup_s", "badput_startup_s", pl.lit(0.0))
#: The time the run ran once started (seconds): its lifetime less what it paid once and the tail after its
#: last step.
_RUNNING_S = pl.col("lifetime_s") - ONCE_S - pl.col("badput_tail_s").fill_null(0.0)

#: Sustained global steps/s over the summary's columns (``steady_global_steps_per_s``, ``productive_at_steady_s``,
#: ``lifetime_s``, ``startup_s``, ``badput_tail_s``); null where any is unknown or the time is not > 0.
SUSTAINED_RATE = (
    pl.when((_RUNNING_S > 0) & (pl.col("productive_at_steady_s") > 0))
    .then(pl.col("steady_global_steps_per_s") * pl.col("productive_at_steady_s") / _RUNNING_S)
    .alias("sustained_global_steps_per_s")
)

#: The rate a plan uses: sustained, else steady.
PLAN_RATE = pl.coalesce("sustained_global_steps_per_s", "steady_global_steps_per_s")
#: Which of the two :data:`PLAN_RATE` is: ``sustained`` or ``steady`` (null: neither known).
PLAN_BASIS = (
    pl.when(pl.col("sustained_global_steps_per_s").is_not_null())
    .then(pl.lit(SUSTAINED))
    .when(pl.col("steady_global_steps_per_s").is_not_null())
    .then(pl.lit(STEADY))
)


def hours_to(steps: int | pl.Expr, rate: str | pl.Expr, once: pl.Expr = ONCE_S) -> pl.Expr:
    """Hours to ``steps`` global steps (a number, or an expression: each row's own) at ``rate`` (a column or
    expression, global steps/s), ``once`` (seconds: :data:`ONCE_S` of the summary's columns) paid once."""
    rate = pl.col(rate) if isinstance(rate, str) else rate
    return (once + steps / rate) / 3600
