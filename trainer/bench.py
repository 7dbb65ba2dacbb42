"""What the step log costs: functions for ``benchmarks/`` (no timing assertions live in tests).

- :func:`logging_overhead` trains the same single-process loop with the step log off and on
  (each :class:`Variant`: a format and a record interval) and returns each run's steady-state
  seconds: the loop after its first step, so ``tf.function`` tracing and the input pipeline's
  start (a third of a 300-step run, and varying by 2x from run to run) are left out.
- :func:`compare` turns the repeats of two variants into the overhead and says whether it is
  larger than the spread between repeats of the same variant.
- :func:`emit_seconds` times the handler alone, without TensorFlow.

Output goes to ``os.devnull``, so disk speed does not count.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from tierscope.trainer.roles import SINGLE
from tierscope.trainer.steplog import Identity, LogFormat, StepLog
from tierscope.trainer.train import TrainConfig, run_task

#: Steps of the untimed run of each variant that loads what a process does once (TensorFlow's
#: runtime, the logging handler's modules) before the first timed run.
WARMUP_STEPS = 20


@dataclass(frozen=True)
class Variant:
    """One way of running the loop: log format and ``log_every_steps`` (ignored when ``off``)."""

    fmt: LogFormat
    every: int = 1

    @property
    def label(self) -> str:
        """``off``, or ``json/100`` for JSON every 100 steps (the worker's JSON keys)."""
        return "off" if self.fmt == "off" else f"{self.fmt}/{self.every}"


@dataclass(frozen=True)
class LoopRun:
    """One timed run: ``seconds`` of the loop after its first step (steps 2..N and every
    record, which are all written after step 1 ends), ``steps`` in that window (N - 1),
    ``records`` step records written, ``first_step_s`` the excluded first step."""

    seconds: float
    steps: int
    records: int
    first_step_s: float


@dataclass(frozen=True)
class Comparison:
    """``base`` and ``other`` repeats compared. Seconds are medians of the repeats' steady-state
    loop time; ``overhead_pct`` = (other / base - 1) x 100, the extra share of step time;
    ``noise_pct`` the larger of the two variants' repeat spread (median absolute deviation
    as a percent of the median; None with one repeat); ``per_record_s`` the extra seconds
    per record written (None when ``other`` writes no more records than ``base``)."""

    base_s: float
    other_s: float
    overhead_pct: float
    noise_pct: float | None
    per_record_s: float | None

    @property
    def within_noise(self) -> bool:
        """Whether the overhead is no larger than repeats of one variant differ (False if unknown)."""
        return self.noise_pct is not None and abs(self.overhead_pct) <= self.noise_pct


def spread_pct(seconds: Sequence[float]) -> float | None:
    """Median absolute deviation of ``seconds`` as a percent of their median; None for fewer than 2."""
    if len(seconds) < 2:
        return None
    mid = statistics.median(seconds)
    return statistics.median(abs(s - mid) for s in seconds) / mid * 100


def compare(base: Sequence[LoopRun], other: Sequence[LoopRun]) -> Comparison:
    """Compare the repeats of two variants run with the same steps. Raises :class:`ValueError`
    if either has no runs or their step counts differ."""
    if not base or not other:
        raise ValueError("compare needs at least one run of each variant")
    if {r.steps for r in base} != {r.steps for r in other} or len({r.steps for r in base}) != 1:
        raise ValueError("compare needs runs of the same number of steps")
    base_s = statistics.median(r.seconds for r in base)
    other_s = statistics.median(r.seconds for r in other)
    spreads = [s for s in (spread_pct([r.seconds for r in runs]) for runs in (base, other)) if s is not None]
    extra_records = statistics.median(r.records for r in other) - statistics.median(r.records for r in base)
    return Comparison(
        base_s=base_s,
        other_s=other_s,
        overhead_pct=(other_s / base_s - 1) * 100,
        noise_pct=max(spreads) if spreads else None,
        per_record_s=(other_s - base_s) / extra_records if extra_records > 0 else None,
    )


def _run(variant: Variant, steps: int, batch_size: int, sink: TextIO) -> LoopRun:
    config = TrainConfig(
        run_id="bench", tier="local", steps=steps, batch_size=batch_size,
        log_every_steps=variant.every, log_format=variant.fmt,
    )  # fmt: skip
    # The previous run's model and traced function are garbage now; collect them here, not
    # inside the next run's timed loop.
    gc.collect()
    code, result = run_task(config, SINGLE, stream=sink)
    if code or result is None:
        raise RuntimeError(f"benchmark run {variant.label!r} failed (exit code {code})")
    return LoopRun(result.train_s - result.first_step_s, steps - 1, result.records, result.first_step_s)


def logging_overhead(
    variants: Sequence[Variant] = (Variant("off"), Variant("json", 100), Variant("json", 1)),
    steps: int = 2000,
    repeats: int = 5,
    batch_size: int = 100,
) -> dict[Variant, list[LoopRun]]:
    """``repeats`` timed runs of each variant: a fresh single-process model on the synthetic
    set, in this process, ``steps`` steps (at least 2).

    Every variant first runs :data:`WARMUP_STEPS` untimed steps. Then each round runs every
    variant once, the order rotating from round to round, so drift (other load, thermal)
    and any effect of the run before hit all alike. Raises :class:`RuntimeError` if a run
    fails, :class:`ValueError` for fewer than 2 steps.
    """
    if steps < 2:
        raise ValueError(f"steps ({steps}) must be at least 2: the first one is not timed")
    out: dict[Variant, list[LoopRun]] = {v: [] for v in variants}
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for variant in variants:
            _run(variant, WARMUP_STEPS, batch_size, sink)
        for round_ in range(repeats):
            shift = round_ % len(variants)
            for variant in (*variants[shift:], *variants[:shift]):
                out[variant].append(_run(variant, steps, batch_size, sink))
    return out


def emit_seconds(records: int = 10_000, fmt: LogFormat = "json") -> float:
    """Seconds to write ``records`` step records through :class:`~tierscope.trainer.steplog.StepLog` (no TensorFlow)."""
    with open(os.devnull, "w", encoding="utf-8") as sink:
        log = StepLog(Identity("bench", "local", "worker", 0), fmt, sink)
        log.step(step=0, local_step=0, loss=0.0, accuracy=0.0, elapsed_s=0.0,
                 global_steps_per_s=0.0, local_steps_per_s=0.0, batch_size=100)  # fmt: skip
        start = time.perf_counter()
        for i in range(records):
            log.step(
                step=i, local_step=i, loss=0.5, accuracy=0.9, elapsed_s=i * 0.01,
                global_steps_per_s=100.0, local_steps_per_s=100.0, batch_size=100,
            )  # fmt: skip
        seconds = time.perf_counter() - start
        log.close()
    return seconds
