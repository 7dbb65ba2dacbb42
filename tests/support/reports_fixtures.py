"""A small dataset written for the report tests: hostile names everywhere, known rates.

- ``EVIL_RUN`` (BASIC, one master): 30 records, global step 100, 200, ... 3000, 5.0 global
  steps/s, timestamps every 20 s, from a file whose name is itself hostile. (``evil_run`` of
  :func:`hostile_dataset` names it otherwise: :data:`BIDI_RUN` adds a right-to-left override and escapes.)
- Every record's training loss is 30 / (i + 10) for its i-th record (2.727 .. 0.75; at 1.0 from the 20th,
  global step 2000 of ``EVIL_RUN`` at 400 s, 2000 of std's master at 100 s), its accuracy i / 30.
- ``std`` (STANDARD_1, master + workers 0-3): each task 30 records, 20.0 global steps/s;
  local steps/s 4.0 for every task but worker 3, which logs 2.0 (a straggler: 2.0 < 0.8 × 4.0).
- ``EVIL_FAILED`` (PREMIUM_1): no steps, one failed event whose reason is hostile.

Both measured runs are dated 2016-12-31, so the price table gives ML units (BASIC 1,
STANDARD_1 10) and no dollar price.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl

from tierscope.dataset.schema import EVENT_SCHEMA, RUN_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset

EVIL_RUN = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
EVIL_FAILED = "fail<script>alert(4)</script>"
EVIL_REASON = '"><img src=x onerror=alert(5)>'
EVIL_FILE = '/logs/"><img src=x onerror=alert(3)>.log'
T0 = datetime(2016, 12, 31, 9, 0, tzinfo=UTC)
#: A run id that would reorder the text around it (U+202E) and clear a terminal, around ``EVIL_RUN``.
BIDI_RUN = f"\u202e{EVIL_RUN}\x1b[2J\u2066x"
#: The loss target the report fixtures ask for: reached at the 20th record of each task.
TARGET_LOSS = 1.0


def _records(
    run_id: str, tier: str, role: str, index: int, offset: int, rate: float, local: float, source: str | None = None
) -> list[dict]:
    rows = []
    for i in range(1, 31):
        step = 100 * i + offset
        rows.append(
            {
                "run_id": run_id,
                "tier": tier,
                "role": role,
                "task_index": index,
                "step": step,
                "elapsed_s": step / rate,
                "global_steps_per_s": rate,
                "local_steps_per_s": local,
                "loss": 30 / (i + 10),
                "accuracy": i / 30,
                "timestamp": T0 + timedelta(seconds=step / rate),
                "source": source or f"/logs/{run_id}-{role}{index}.log",
                "source_offset": i,
                "format": "structured",
            }
        )
    return rows


def hostile_dataset(root: Path, evil_run: str = EVIL_RUN) -> Dataset:
    """Write the dataset described in the module doc under ``root`` (its BASIC run named ``evil_run``) and return it."""
    dataset = Dataset(root)
    rows = _records(evil_run, "BASIC", "master", 0, 0, 5.0, 5.0, EVIL_FILE)
    for k, (role, index) in enumerate([("master", 0), ("worker", 0), ("worker", 1), ("worker", 2), ("worker", 3)]):
        rows += _records(
            "std", "STANDARD_1", role, index, 20 * k, 20.0, 2.0 if index == 3 and role == "worker" else 4.0
        )
    dataset.append("steps", conform(pl.DataFrame(rows), STEP_SCHEMA))
    event = {"run_id": EVIL_FAILED, "tier": "PREMIUM_1", "event": "failed", "reason": EVIL_REASON, "source": EVIL_FILE}
    dataset.append("events", conform(pl.DataFrame([event]), EVENT_SCHEMA))
    facts = [
        {"run_id": r, "tier": tier, "date": date(2016, 12, 31), "note": EVIL_RUN, "collected_at": T0}
        for r, tier in ((evil_run, "BASIC"), ("std", "STANDARD_1"), (EVIL_FAILED, "PREMIUM_1"))
    ]
    dataset.append("runs", conform(pl.DataFrame(facts), RUN_SCHEMA))
    return dataset
