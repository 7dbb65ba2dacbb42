"""Section (d): the reference trainer's steps/s with and without structured logging.

The worker (:mod:`benchmarks.trainer_overhead`) runs the same loop with the log off, with a
JSON record at the trainer's default interval and with one every step (the worst case),
rounds alternating; figures are medians of the repeats of the loop after its first step
(tracing excluded). An overhead no larger than the spread between repeats of one variant is
marked "within noise"; the default interval's figure also gets a bottom-up estimate, the
in-loop cost per record (from the every-step runs, where it is far above noise) times its
records.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from benchmarks.measure import python, run
from benchmarks.table import Figure, Target
from benchmarks.trainer_overhead import NOT_AVAILABLE

if TYPE_CHECKING:
    from tierscope.trainer.bench import Comparison

SECTION = "trainer"
MAX_OVERHEAD_PCT = 2.0


@dataclass(frozen=True)
class TrainerOptions:
    steps: int
    repeat: int


def measure(opts: TrainerOptions) -> list[Figure]:
    name = "steps/s with structured logging (baseline: logging off)"
    if importlib.util.find_spec("tierscope.trainer.bench") is None:
        return [Figure(SECTION, name, "steps/s", None, note="not available yet (no tierscope.trainer.bench)")]
    proc = run(python("-m", "benchmarks.trainer_overhead", opts.steps, opts.repeat), check=False)
    if proc.returncode == NOT_AVAILABLE:
        return [Figure(SECTION, name, "steps/s", None, note=proc.stderr.strip().splitlines()[-1])]
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no message"]
        return [Figure(SECTION, name, "steps/s", None, note=f"failed: {tail[0][:200]}")]
    return figures(json.loads(proc.stdout.strip().splitlines()[-1]))


def figures(got: dict[str, Any]) -> list[Figure]:
    """The section's rows from the worker's JSON (see :mod:`benchmarks.trainer_overhead`)."""
    from tierscope.trainer.bench import LoopRun, compare

    runs = {label: [LoopRun(**r) for r in rs] for label, rs in got["runs"].items()}
    every = got["log_every_steps"]
    timed = runs["off"][0].steps
    window = f"{timed} steps after the first, median of {len(runs['off'])}"
    default, worst = compare(runs["off"], runs[f"json/{every}"]), compare(runs["off"], runs["json/1"])
    out = [
        *_pair(f"a record every {every} steps", timed, window, default, (Target("<", MAX_OVERHEAD_PCT),)),
        *_pair("a record every step (worst case)", timed, window, worst, ()),
    ]
    if worst.per_record_s is not None:
        records = statistics.median(r.records for r in runs[f"json/{every}"])
        estimate = worst.per_record_s * records / default.base_s * 100
        out[1].note += (
            f"; bottom-up: {worst.per_record_s * 1e6:.0f} µs per record in the loop (every-step runs)"
            f" × {records:g} records = {estimate:.2f} %"
            + (" (rough: the every-step difference is within noise too)" if worst.within_noise else "")
        )
        out[1].extra["bottom_up_pct"] = estimate
    out.append(
        Figure(SECTION, "JSON step record through the handler alone (emit_seconds)", "µs",
               got["emit_s_per_record"] * 1e6, higher_is_better=False, note="to /dev/null, no TensorFlow")
    )  # fmt: skip
    return out


def _pair(how: str, steps: int, window: str, c: Comparison, targets: tuple[Target, ...]) -> list[Figure]:
    """Steps/s over ``steps`` timed steps with the log (baseline: off) and the overhead, with a note on noise."""
    if c.noise_pct is None:
        noise = "one repeat: noise unknown"
    else:
        noise = f"{'within' if c.within_noise else 'above'} noise (repeats of one variant spread ±{c.noise_pct:.1f} %)"
    return [
        Figure(SECTION, f"steps/s, JSON log, {how} (baseline: log off; {window})", "steps/s",
               steps / c.other_s, steps / c.base_s),
        Figure(SECTION, f"structured-logging overhead, {how}", "%", c.overhead_pct, higher_is_better=False,
               targets=targets, note=noise, extra=asdict(c)),
    ]  # fmt: skip
