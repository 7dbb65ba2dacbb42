"""Shared helpers of the ingest tests: step lines with a known step, and what a dataset holds."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset


def step_line(step: int, task: int = 0) -> str:
    """A valid cloudml-samples step line for global ``step`` (unique per step: elapsed = step / 10)."""
    return (
        f"Train [worker/{task}], step {step}:loss:2.0, accuracy:0.5 ({step / 10:.1f} sec) "
        "10.0 global_steps/s, 10.0 local_steps/s\n"
    )


def write_steps(path: Path, steps: range | list[int], mode: str = "a") -> None:
    with path.open(mode) as fh:
        fh.writelines(step_line(s) for s in steps)


def collect(dataset: Dataset, *paths: Path, run_id: str = "r", **kwargs: object) -> list[int]:
    """Collect ``paths`` as run ``run_id``; returns the lines read per file."""
    result = collect_runs(dataset, [RunSpec(run_id=run_id, tier="BASIC", files=list(paths))], **kwargs)  # type: ignore[arg-type]
    return [s.lines for s in result.sources]


def following(dataset: Dataset, path: Path, run_id: str = "r", **kwargs: object) -> None:
    """Create ``path`` empty and collect it: cron's first collect of a job's log just created. The collects after
    it follow the file as it grows: its open end waits (the settle time), where a first read of a file that already
    has lines takes them as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    assert collect(dataset, path, run_id=run_id, **kwargs) == [0]


def stored_steps(dataset: Dataset) -> list[int]:
    """Every stored global step, sorted, repeats kept (so a duplicate shows)."""
    return sorted(Dataset(dataset.root).read("steps")["step"].to_list())


def frame_of(dataset: Dataset, table: str) -> pl.DataFrame:
    """``table`` in a canonical row order (fresh Dataset: no cached state)."""
    frame = Dataset(dataset.root).read(table)
    return frame.sort(frame.columns, nulls_last=True)
