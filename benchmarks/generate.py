"""Deterministic benchmark inputs: a 2016-format step log, a step-record dataset, a gzip of newlines.

Both are built column-wise with numpy and polars (no Python loop per line or row), so
generating 2 GB of log takes seconds, and the same ``seed`` gives byte-identical output.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from tierscope.dataset.schema import RUN_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import partition_dir_name, write_atomic

#: The tasks that interleave in a STANDARD_1 job's log (the 2016 log has master/0 and worker/0-3).
LOG_TASKS: tuple[tuple[str, int], ...] = (("master", 0), ("worker", 0), ("worker", 1), ("worker", 2), ("worker", 3))
#: Every this many lines, one line carries no metric (a checkpoint save): skipped by the collector.
NOISE_EVERY = 97
#: Every this many lines, one step line is cut off (a killed writer): a reject.
TRUNCATED_EVERY = 100_003
#: Lines generated per chunk: bounds the generator's memory whatever the log size.
CHUNK_LINES = 1_000_000


@dataclass(frozen=True)
class LogFile:
    """A generated log: ``lines`` in total, of which ``noise`` skipped and ``truncated`` rejects."""

    path: Path
    lines: int
    noise: int
    truncated: int

    @property
    def bytes(self) -> int:
        return self.path.stat().st_size

    @property
    def steps(self) -> int:
        return self.lines - self.noise - self.truncated


def _fixed3(values: pl.Expr) -> pl.Expr:
    """A non-negative float as text with exactly 3 decimals (``4.5`` -> ``"4.500"``), like ``%.3f``."""
    milli = (values * 1000).round(0).cast(pl.Int64)
    return pl.format("{}.{}", milli // 1000, (milli % 1000).cast(pl.String).str.zfill(3))


def _log_chunk(first: int, count: int, total: int, rng: np.random.Generator) -> pl.DataFrame:
    """Lines ``first``..``first+count-1`` (0-based) of a ``total``-line log, as column ``line``."""
    i = np.arange(first, first + count, dtype=np.int64)
    task = rng.integers(0, len(LOG_TASKS), count)
    progress = i / max(total, 1)
    step = (i + 1) * 100  # the 2016 log: one record per 100 global steps, whichever task logs it
    rate = 22.8 * (1 + 0.05 * rng.standard_normal(count))
    start = np.array([0.0, 0.4, 1.1, 1.9, 2.6])[task]  # tasks start a little apart
    elapsed = np.maximum(step / 22.8 - start + 0.3 * rng.random(count), 0.001)
    loss = 2.3 * np.exp(-4 * progress) + 0.05 + 0.05 * rng.random(count)
    frame = pl.DataFrame(
        {
            "n": i,
            "role": np.array([r for r, _ in LOG_TASKS])[task],
            "task": np.array([t for _, t in LOG_TASKS])[task],
            "step": step,
            "loss": loss,
            "acc": np.clip(1.02 - loss / 2.4 + 0.02 * rng.standard_normal(count), 0, 1),
            "elapsed": elapsed,
            "g": rate,
            "l": rate / 4 * (1 + 0.05 * rng.standard_normal(count)),
        }
    )
    record = pl.format(
        "Train [{}/{}], step {}:loss:{}, accuracy:{} ({} sec) {} global_steps/s, {} local_steps/s",
        "role",
        "task",
        "step",
        _fixed3(pl.col("loss")),
        _fixed3(pl.col("acc")),
        _fixed3(pl.col("elapsed")),
        _fixed3(pl.col("g")),
        _fixed3(pl.col("l")),
    )
    noise = pl.format("INFO:root:Saving checkpoint to gs://bucket/job/model.ckpt-{}", "step")
    n = pl.col("n") + 1
    line = (
        pl.when(n % NOISE_EVERY == 0)
        .then(noise)
        .when(n % TRUNCATED_EVERY == 0)
        .then(record.str.slice(0, 60))
        .otherwise(record)
    )
    return frame.select(line=line)


def write_cloudml_log(path: Path, lines: int, seed: int = 2016) -> LogFile:
    """Write a ``lines``-line log in the 2016 experiment's format to ``path``.

    Interleaves master/0 and worker/0-3 (as the STANDARD_1 log does); one line in
    :data:`NOISE_EVERY` is a checkpoint message and one in :data:`TRUNCATED_EVERY` a cut-off
    record. About 118 bytes a line: 2,000,000 lines are about 236 MB.
    """
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        for first in range(0, lines, CHUNK_LINES):
            chunk = _log_chunk(first, min(CHUNK_LINES, lines - first), lines, rng)
            chunk.write_csv(fh, include_header=False, quote_style="never")
    n = np.arange(1, lines + 1)
    noise = int((n % NOISE_EVERY == 0).sum())
    truncated = int(((n % TRUNCATED_EVERY == 0) & (n % NOISE_EVERY != 0)).sum())
    return LogFile(path=path, lines=lines, noise=noise, truncated=truncated)


#: One step record and one broken record (a reject), at the start of a gzip of newlines.
NEWLINES_RECORD = b"INFO:tensorflow:global_step/sec: 4.5\n"
NEWLINES_REJECT = b"INFO:tensorflow:loss = 0.9, step = 1.5x\n"
#: Decompressed bytes per gzip member: compressed once, written as often as needed.
_NEWLINES_MEMBER = 64 << 20


def write_gzip_of_newlines(path: Path, size: int) -> LogFile:
    """Write a gzip of ``size`` decompressed bytes to ``path``: :data:`NEWLINES_RECORD`,
    :data:`NEWLINES_REJECT`, then newlines (empty lines) to the end. ``size`` must be a multiple
    of 1 MiB, at least 1 MiB.

    Written as repeated gzip members (a valid gzip stream, as ``cat a.gz b.gz`` makes), so 2 GiB
    take a second and a few MB on disk (64 MiB of newlines compress to 64 KB). The returned
    ``noise`` counts the empty lines, ``truncated`` the reject: ``steps`` is 1.
    """
    if size < 1 << 20 or size % (1 << 20):
        raise ValueError(f"size {size} is not a positive multiple of 1 MiB")
    head = NEWLINES_RECORD + NEWLINES_REJECT
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        first = min(size, _NEWLINES_MEMBER)
        fh.write(gzip.compress(head + b"\n" * (first - len(head)), compresslevel=9))
        full, rest = divmod(size - first, _NEWLINES_MEMBER)
        if full:
            member = gzip.compress(b"\n" * _NEWLINES_MEMBER, compresslevel=9)
            for _ in range(full):
                fh.write(member)
        if rest:
            fh.write(gzip.compress(b"\n" * rest, compresslevel=9))
    # Every byte after the two records is one empty line.
    return LogFile(path=path, lines=size - len(head) + 2, noise=size - len(head), truncated=1)


#: Scale tiers of the generated dataset, with training tasks and a typical steady global steps/s.
DATASET_TIERS: tuple[tuple[str, int, float], ...] = (
    ("local", 1, 18.0),
    ("BASIC", 1, 4.7),
    ("BASIC_GPU", 1, 40.0),
    ("BASIC_TPU", 1, 160.0),
    ("STANDARD_1", 5, 22.8),
    ("PREMIUM_1", 20, 70.0),
    ("CUSTOM", 9, 35.0),
    ("STANDARD_GPU", 5, 120.0),
)


def _run_steps(run_id: str, tier: str, tasks: int, base_rate: float, first: int, n: int, total: int,
               rng: np.random.Generator) -> pl.DataFrame:  # fmt: skip
    """Records ``first``..``first+n-1`` of a ``total``-record run: tasks in turn, one every 100 global
    steps, a steady ``base_rate`` global steps/s (5 % noise), in log order (:data:`STEP_SCHEMA` rows)."""
    i = np.arange(first, first + n, dtype=np.int64)
    task = i % tasks
    rate = base_rate * (1 + 0.05 * rng.standard_normal(n))
    step = (i + 1) * 100
    steps = pl.DataFrame(
        {
            "run_id": run_id,
            "tier": tier,
            "role": np.where(task == 0, "master", "worker"),
            "task_index": np.where(task == 0, 0, task - 1).astype(np.int32),
            "step": step,
            "loss": 2.3 * np.exp(-4 * i / total) + 0.05 * rng.random(n),
            "accuracy": np.clip(0.1 + 0.9 * i / total, 0, 1),
            "elapsed_s": step / base_rate + rng.random(n),
            "global_steps_per_s": rate,
            "local_steps_per_s": rate / tasks,
            "source": f"logs/{run_id}.log",
            "source_offset": i + 1,
            "format": "cloudml",
        }
    )
    return conform(steps, STEP_SCHEMA)


def _write_facts(root: Path, run_id: str, tier: str) -> None:
    facts = pl.DataFrame(
        [{"run_id": run_id, "tier": tier, "ran_on": "generated", "date": None, "note": None, "collected_at": None}],
        schema=RUN_SCHEMA,
    )
    write_atomic(facts.drop("run_id"), root / "runs" / partition_dir_name(run_id))


def write_step_dataset(root: Path, records: int, runs: int, seed: int = 2016) -> int:
    """Write ``records`` step records over ``runs`` runs (tiers in turn from :data:`DATASET_TIERS`)
    straight into a dataset at ``root`` with the dataset's own writer, plus each run's facts.

    Returns the number of step records written. One Parquet file per run, as one collect of
    one run's logs writes.
    """
    rng = np.random.default_rng(seed)
    per_run = records // runs
    written = 0
    for r in range(runs):
        tier, tasks, base_rate = DATASET_TIERS[r % len(DATASET_TIERS)]
        run_id = f"run-{r:03d}-{tier.lower()}"
        n = per_run + (records - per_run * runs if r == runs - 1 else 0)
        steps = _run_steps(run_id, tier, tasks, base_rate, 0, n, n, rng)
        write_atomic(steps.drop("run_id"), root / "steps" / partition_dir_name(run_id))
        _write_facts(root, run_id, tier)
        written += n
    return written


#: Records per file of :func:`write_big_run` (one collect's worth): bounds the generator's memory.
BIG_RUN_FILE_RECORDS = 2_000_000


def write_big_run(root: Path, records: int, seed: int = 2016) -> str:
    """Write one PREMIUM_1 run (20 training tasks logging in turn, as a long job logging every step
    does) of ``records`` step records into a dataset at ``root``, :data:`BIG_RUN_FILE_RECORDS` per
    file in log order (appended as successive collects would). Returns its run id."""
    tier, tasks, base_rate = next(t for t in DATASET_TIERS if t[0] == "PREMIUM_1")
    run_id = f"big-{tier.lower()}"
    rng = np.random.default_rng(seed)
    for first in range(0, records, BIG_RUN_FILE_RECORDS):
        n = min(BIG_RUN_FILE_RECORDS, records - first)
        steps = _run_steps(run_id, tier, tasks, base_rate, first, n, records, rng)
        write_atomic(steps.drop("run_id"), root / "steps" / partition_dir_name(run_id))
    _write_facts(root, run_id, tier)
    return run_id
