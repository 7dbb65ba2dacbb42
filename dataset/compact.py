"""``tierscope compact``: merge each partition's small files into one, atomically.

Every collect adds at least one file per run it touched, so a dataset collected every ten
minutes grows thousands of small files, each costing readers a footer read. Compaction
replaces a partition's small files by one file holding the same rows (duplicates by the
table's key dropped), following the journal protocol of :mod:`tierscope.dataset.journal`, so that
at every instant, and after a crash at any point, :class:`~tierscope.dataset.store.Dataset`
readers see each record exactly once.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tierscope.dataset import journal
from tierscope.dataset.durable import commit
from tierscope.dataset.lock import locked
from tierscope.dataset.store import TABLES, Dataset, new_part_path, part_stamp, write_temp

#: Files at least this large are left alone (already big enough to read efficiently).
DEFAULT_MAX_FILE_BYTES = 128 * 1024 * 1024


@dataclass
class CompactResult:
    """What one compact did: partitions merged, files before and after, rows in merged files."""

    partitions: int = 0
    files_before: int = 0
    files_after: int = 0
    rows: int = 0


def compact(
    dataset: Dataset, lock_timeout: float = 60.0, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> CompactResult:
    """Merge the files smaller than ``max_file_bytes`` of every partition that has two or more.

    Holds the dataset's lock (raises :class:`~tierscope.collector.errors.DatasetBusyError` after
    ``lock_timeout`` seconds). Raises :class:`~tierscope.collector.errors.DatasetCorruptError` if a file
    to merge is unreadable (run ``tierscope doctor --fix`` first); nothing is changed then.
    """
    result = CompactResult()
    with locked(dataset, lock_timeout):
        for name in TABLES:
            by_dir: dict[Path, list[Path]] = defaultdict(list)
            for path in dataset.files(name):
                if path.stat().st_size < max_file_bytes:
                    by_dir[path.parent].append(path)
            for small in by_dir.values():
                if len(small) < 2:
                    continue
                result.rows += compact_partition(dataset, name, small)
                result.partitions += 1
                result.files_before += len(small)
                result.files_after += 1
    return result


def _merged_frame(dataset: Dataset, table: str, files: list[Path]) -> pl.DataFrame:
    spec = TABLES[table]
    readable = dataset.verify(files, table)
    file_schema = {k: v for k, v in spec.schema.items() if k != "run_id"}
    frame = pl.scan_parquet(
        readable, schema=file_schema, hive_partitioning=False, missing_columns="insert", extra_columns="ignore"
    ).collect()
    if spec.key is not None:
        key = [k for k in spec.key if k != "run_id"]
        frame = frame.unique(subset=key, keep="first", maintain_order=True)
    if table == "steps":
        # The files are read in the order they were written (their names sort so), each in log
        # order: grouped by task, stably, each task's records stay in log order, which the
        # analysis then reads without sorting (tierscope.analysis.records.distinct_in_log_order).
        frame = frame.sort("role", "task_index", nulls_last=True, maintain_order=True)
    return frame


def compact_partition(dataset: Dataset, table: str, files: list[Path]) -> int:
    """Replace ``files`` (all in one partition directory) by one file; returns its row count.

    Call holding the lock. The order of steps is the journal protocol's; see
    :mod:`tierscope.dataset.journal` for why a crash between any two leaves every record once.
    """
    directory = files[0].parent
    frame = _merged_frame(dataset, table, files)
    replaces = tuple(p.name for p in files)
    # Named at the time of the earliest file it replaces, so it keeps that file's place in the listing order.
    name = new_part_path(directory, part_stamp(files[0]))
    tmp, final = write_temp(frame, name, {journal.REPLACES_KEY: json.dumps(replaces).encode()})
    # Step 1: the merged file under its staged name, durable before the journal names it.
    staged = directory / f"{journal.STAGED_PREFIX}{final.name}"
    commit(tmp, staged)
    entry = journal.Entry(
        dir=directory.relative_to(dataset.root).as_posix(), merged=final.name, replaces=replaces, staged=staged.name
    )
    doc = journal.load(dataset.root)
    doc.entries.append(entry)
    journal.save(dataset.root, doc)  # step 2
    journal.delete_replaced(files)  # step 3
    commit(staged, final)  # step 4
    doc.entries.remove(entry)
    journal.save(dataset.root, doc)  # step 5
    return frame.height


#: A run's data files (all tables) past which a collect suggests ``tierscope compact``: a run collected
#: every ten minutes writes about 150 a day to its steps alone, so about three days' worth. Readers
#: stay correct past it (:func:`tierscope.dataset.store.pin_budget`), only slower: each file costs a
#: footer read and a digest check.
SUGGEST_COMPACT_FILES = 500


def crowded_runs(dataset: Dataset, run_ids: list[str], threshold: int = SUGGEST_COMPACT_FILES) -> dict[str, int]:
    """Those of ``run_ids`` holding more than ``threshold`` data files (every table, compacted-away
    files still on disk included): run id -> number of files."""
    counts = {run: sum(len(dataset.stored_files(name, run)) for name in TABLES) for run in dict.fromkeys(run_ids)}
    return {run: n for run, n in counts.items() if n > threshold}
