"""Section (d) worker: steps/s of the reference trainer's loop with and without structured logs.

``python -m benchmarks.trainer_overhead STEPS REPEAT`` trains alternately with
``log_format="off"`` and ``"json"`` (written to a real file), REPEAT times each, and
prints JSON: the best steps/s of each. Exits 3 if the trainer is not available yet.
Written against ``trainer.train.run_task(TrainConfig(...), stream=...)`` returning
``(exit code, TrainResult)`` with ``train_s`` (seconds in the training loop).
"""

from __future__ import annotations

import json
import sys
import tempfile

NOT_AVAILABLE = 3


def main(steps: int, repeat: int) -> dict[str, float]:
    try:
        from trainer.train import TrainConfig, run_task
    except ImportError as exc:
        print(f"not available yet ({exc})", file=sys.stderr)
        sys.exit(NOT_AVAILABLE)
    best: dict[str, float] = {"off": 0.0, "json": 0.0}
    run_task(TrainConfig(steps=min(steps, 50), log_format="off"))  # warm up TensorFlow (graph, kernels)
    for _ in range(repeat):
        for fmt in ("off", "json"):
            with tempfile.TemporaryFile("w+") as stream:
                code, result = run_task(TrainConfig(steps=steps, log_format=fmt), stream=stream)
            if code != 0 or result is None:
                raise RuntimeError(f"training with log_format={fmt} exited with {code}")
            best[fmt] = max(best[fmt], result.step / result.train_s)
    return best


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]))))
