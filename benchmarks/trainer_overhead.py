"""Section (d) worker: ``python -m benchmarks.trainer_overhead STEPS REPEAT``.

Runs :func:`trainer.bench.logging_overhead` (the same single-process training loop with the
step log ``off`` and ``json``, alternating, written to ``os.devnull``) at the trainer's
default logging interval, and prints JSON: the best loop seconds of each. Exits 3 if the
trainer is not available yet.
"""

from __future__ import annotations

import json
import sys

NOT_AVAILABLE = 3


def main(steps: int, repeat: int) -> dict[str, float]:
    try:
        from trainer.bench import logging_overhead
        from trainer.train import TrainConfig
    except ImportError as exc:
        print(f"not available yet ({exc})", file=sys.stderr)
        sys.exit(NOT_AVAILABLE)
    every = TrainConfig().log_every_steps
    seconds = logging_overhead(steps=steps, log_every_steps=every, formats=("off", "json"), repeats=repeat)
    return {"log_every_steps": every, **{fmt: min(runs) for fmt, runs in seconds.items()}}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]))))
