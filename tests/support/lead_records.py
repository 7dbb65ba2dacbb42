"""Step records of one run's master, built as a frame for ``Dataset.append`` or the store's writer:
what the analysis tests of odd datasets (many files, odd times, rates of 0) start from."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import polars as pl


def lead_frame(
    run_id: str,
    steps: Sequence[int],
    elapsed: Sequence[float],
    rate: float,
    tier: str = "BASIC",
    timestamps: Sequence[datetime] | None = None,
) -> pl.DataFrame:
    """Records of ``run_id``'s master 0 at global ``steps``, ``elapsed`` seconds, each logging ``rate``
    global steps/s, numbered lines of ``app.log`` (the step records' columns a log would fill)."""
    frame = pl.DataFrame(
        {
            "run_id": run_id,
            "tier": tier,
            "role": "master",
            "task_index": 0,
            "step": list(steps),
            "elapsed_s": list(elapsed),
            "global_steps_per_s": rate,
            "source": "app.log",
            "source_offset": list(range(1, len(steps) + 1)),
            "format": "cloudml",
        }
    )
    if timestamps is not None:
        frame = frame.with_columns(timestamp=pl.Series(list(timestamps), dtype=pl.Datetime("us", "UTC")))
    return frame
