"""Section (d) worker: ``python -m benchmarks.trainer_overhead STEPS REPEAT``.

Runs :func:`tierscope.trainer.bench.logging_overhead` (the same single-process training loop with the
step log off, JSON at the trainer's default interval and JSON every step, alternating,
written to ``os.devnull``; the first step of every run untimed) and times the JSON handler
alone (:func:`tierscope.trainer.bench.emit_seconds`). Prints one JSON object::

    {"steps": STEPS, "log_every_steps": 100, "emit_s_per_record": 3.8e-05,
     "runs": {"off": [LoopRun fields, ...], "json/100": [...], "json/1": [...]}}

Exits 3 if the trainer is not available yet.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

NOT_AVAILABLE = 3
#: Records timed for the handler-alone figure.
EMIT_RECORDS = 10_000


def main(steps: int, repeat: int) -> dict[str, Any]:
    try:
        from tierscope.trainer.bench import Variant, emit_seconds, logging_overhead
        from tierscope.trainer.train import TrainConfig
    except ImportError as exc:
        print(f"not available yet ({exc})", file=sys.stderr)
        sys.exit(NOT_AVAILABLE)
    every = TrainConfig().log_every_steps
    variants = (Variant("off"), Variant("json", every), Variant("json", 1))
    runs = logging_overhead(variants, steps=steps, repeats=repeat)
    return {
        "steps": steps,
        "log_every_steps": every,
        "emit_s_per_record": emit_seconds(EMIT_RECORDS, "json") / EMIT_RECORDS,
        "runs": {v.label: [asdict(r) for r in rs] for v, rs in runs.items()},
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]))))
