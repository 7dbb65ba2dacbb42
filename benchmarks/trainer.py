"""Section (d): the reference trainer's steps/s with and without structured logging."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass

from benchmarks.measure import python, run
from benchmarks.table import Figure, Target
from benchmarks.trainer_overhead import NOT_AVAILABLE

SECTION = "trainer"
MAX_OVERHEAD_PCT = 2.0


@dataclass(frozen=True)
class TrainerOptions:
    steps: int
    repeat: int


def measure(opts: TrainerOptions) -> list[Figure]:
    name = "steps/s with structured logging (baseline: logging off)"
    if importlib.util.find_spec("trainer.bench") is None:
        return [Figure(SECTION, name, "steps/s", None, note="not available yet (no trainer.bench)")]
    proc = run(python("-m", "benchmarks.trainer_overhead", opts.steps, opts.repeat), check=False)
    if proc.returncode == NOT_AVAILABLE:
        return [Figure(SECTION, name, "steps/s", None, note=proc.stderr.strip().splitlines()[-1])]
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no message"]
        return [Figure(SECTION, name, "steps/s", None, note=f"failed: {tail[0][:200]}")]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    rates = {fmt: opts.steps / got[fmt] for fmt in ("off", "json")}
    overhead = (rates["off"] - rates["json"]) / rates["off"] * 100
    every = got["log_every_steps"]
    return [
        Figure(SECTION, f"{name}, {opts.steps} steps, a record every {every}", "steps/s", rates["json"], rates["off"]),
        Figure(SECTION, "structured-logging overhead", "%", overhead, higher_is_better=False,
               targets=(Target("<", MAX_OVERHEAD_PCT),)),
    ]  # fmt: skip
