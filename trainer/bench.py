"""What the step log costs: functions for ``benchmarks/`` (no timing assertions live in tests).

- :func:`logging_overhead` trains the same single-process loop with each log format and
  returns the loop's seconds, so ``json`` minus ``off`` is what structured logging costs a run
  (building the record, fetching loss and accuracy from TensorFlow, the handler, the write).
- :func:`emit_seconds` times the handler alone, without TensorFlow.

Output goes to ``os.devnull``, so disk speed does not count.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from trainer.roles import SINGLE
from trainer.steplog import Identity, LogFormat, StepLog
from trainer.train import TrainConfig, run_task


def logging_overhead(
    steps: int = 2000,
    log_every_steps: int = 1,
    formats: Sequence[LogFormat] = ("off", "json", "text"),
    repeats: int = 3,
    batch_size: int = 100,
) -> dict[str, list[float]]:
    """Seconds in the training loop (``TrainResult.train_s``) per log format, ``repeats`` runs each.

    Each run is a fresh single-process model on the synthetic set, in this process; runs
    alternate between formats so drift (thermal, other load) hits all alike. The first
    step's ``tf.function`` tracing is inside every figure. ``log_every_steps=1`` makes every
    step pay for a record, the worst case. Raises :class:`RuntimeError` if a run fails.
    """
    out: dict[str, list[float]] = {fmt: [] for fmt in formats}
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for _ in range(repeats):
            for fmt in formats:
                config = TrainConfig(
                    run_id="bench", tier="local", steps=steps, batch_size=batch_size,
                    log_every_steps=log_every_steps, log_format=fmt,
                )  # fmt: skip
                code, result = run_task(config, SINGLE, stream=sink)
                if code or result is None:
                    raise RuntimeError(f"benchmark run with log format {fmt!r} failed (exit code {code})")
                out[fmt].append(result.train_s)
    return out


def emit_seconds(records: int = 10_000, fmt: LogFormat = "json") -> float:
    """Seconds to write ``records`` step records through :class:`~trainer.steplog.StepLog` (no TensorFlow)."""
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
