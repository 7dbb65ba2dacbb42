"""The Parquet dataset: append-only, hive-partitioned by run, readable by any Parquet reader.

Layout under the dataset root::

    steps/run_id=<run>/part-<utc time>-<random>.parquet     step records (STEP_SCHEMA)
    events/run_id=<run>/part-....parquet                     run events (EVENT_SCHEMA)
    rejects/run_id=<run>/part-....parquet                    lines kept aside (REJECT_SCHEMA)
    runs/run_id=<run>/part-....parquet                       run facts (RUN_SCHEMA)
    state/                                                   collector state (file offsets, watermarks)
    quarantine/                                              corrupt files moved aside by `doctor --fix`
    .lock                                                    held by the collect that is writing

``run_id`` lives in the directory name (percent-encoded), not inside the files, as hive
partitioning expects. Every append writes a *new* file: to a dot-prefixed temporary name,
fsync, rename, fsync of the directory. A reader never sees a half-written file, and
readers only look at ``part-*.parquet``, so a temporary file left by a killed run is
ignored (and removed by the next collect).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import polars as pl
import pyarrow.parquet as pq

from collector.errors import DatasetCorruptError
from collector.schema import (
    EVENT_KEY,
    EVENT_SCHEMA,
    REJECT_KEY,
    REJECT_SCHEMA,
    RUN_KEY,
    RUN_SCHEMA,
    STEP_KEY,
    STEP_SCHEMA,
    conform,
)


@dataclass(frozen=True)
class Table:
    name: str
    schema: dict[str, pl.DataType]
    key: tuple[str, ...] | None  # None: every row is new


TABLES: dict[str, Table] = {
    "steps": Table("steps", STEP_SCHEMA, STEP_KEY),
    "events": Table("events", EVENT_SCHEMA, EVENT_KEY),
    "rejects": Table("rejects", REJECT_SCHEMA, REJECT_KEY),
    "runs": Table("runs", RUN_SCHEMA, RUN_KEY),
}

PART_GLOB = "part-*.parquet"
TMP_PREFIX = ".tmp-"


def partition_dir_name(run_id: str) -> str:
    """``run_id=<percent-encoded run>``: safe for any run id, decoded by polars, DuckDB and pyarrow."""
    return "run_id=" + quote(run_id, safe="")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(frame: pl.DataFrame, directory: Path) -> Path:
    """Write ``frame`` as a new Parquet file in ``directory``; it appears whole or not at all."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    final = directory / f"part-{stamp}-{uuid.uuid4().hex[:12]}.parquet"
    tmp = directory / f"{TMP_PREFIX}{final.name}"
    try:
        frame.write_parquet(tmp, compression="zstd", statistics=True)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(directory)
    return final


@dataclass
class AppendResult:
    stored: int = 0
    duplicates: int = 0

    def __iadd__(self, other: AppendResult) -> AppendResult:
        self.stored += other.stored
        self.duplicates += other.duplicates
        return self


class Dataset:
    """A tierscope dataset rooted at ``root`` (created on first append)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def quarantine_dir(self) -> Path:
        return self.root / "quarantine"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    def exists(self) -> bool:
        return any((self.root / name).is_dir() for name in TABLES)

    def files(self, table: str, run_id: str | None = None) -> list[Path]:
        """The data files of ``table`` (optionally of one run), sorted by path."""
        base = self.root / table
        if run_id is not None:
            base = base / partition_dir_name(run_id)
            return sorted(base.glob(PART_GLOB)) if base.is_dir() else []
        return sorted(base.glob(f"run_id=*/{PART_GLOB}")) if base.is_dir() else []

    def temp_files(self) -> list[Path]:
        return sorted(p for name in TABLES for p in (self.root / name).glob(f"run_id=*/{TMP_PREFIX}*"))

    def remove_temp_files(self) -> int:
        """Delete temporary files left by a killed collect. Call only while holding the lock."""
        stale = self.temp_files()
        for path in stale:
            path.unlink(missing_ok=True)
        return len(stale)

    def scan(self, table: str, run_id: str | None = None) -> pl.LazyFrame:
        """``table`` as a LazyFrame with exactly its schema's columns (``run_id`` from the path).

        Reading may raise :class:`DatasetCorruptError` on ``collect()``; use :meth:`read`
        to get that error with the culprit named.
        """
        spec = TABLES[table]
        files = self.files(table, run_id)
        if not files:
            return pl.LazyFrame(schema=spec.schema)
        file_schema = {k: v for k, v in spec.schema.items() if k != "run_id"}
        lazy = pl.scan_parquet(
            files,
            schema=file_schema,
            hive_partitioning=True,
            hive_schema={"run_id": pl.String()},
            missing_columns="insert",
            extra_columns="ignore",
        )
        return lazy.select(list(spec.schema))

    def read(self, table: str, run_id: str | None = None) -> pl.DataFrame:
        """``table`` as a DataFrame. Raises :class:`DatasetCorruptError` naming the first bad file."""
        try:
            return self.scan(table, run_id).collect()
        except (pl.exceptions.PolarsError, OSError) as exc:
            for path in self.files(table, run_id):
                problem = check_file(path, TABLES[table])
                if problem:
                    raise DatasetCorruptError(path, problem) from exc
            raise

    def append(self, table: str, frame: pl.DataFrame) -> AppendResult:
        """Add the rows of ``frame`` that the dataset does not hold yet; one new file per run.

        Rows are identified by the table's key columns (nulls equal nulls). Returns how
        many rows were stored and how many were already there (or repeated in ``frame``).
        """
        spec = TABLES[table]
        frame = conform(frame, spec.schema)
        result = AppendResult()
        if frame.height == 0:
            return result
        for (run_id,), part in frame.group_by("run_id", maintain_order=True):
            if run_id is None:
                raise ValueError(f"{table}: rows without a run_id cannot be stored")
            new = part
            if spec.key is not None:
                new = part.unique(subset=list(spec.key), keep="first", maintain_order=True)
                existing = self.files(table, str(run_id))
                if existing:
                    held = self.read(table, str(run_id)).select(spec.key).unique()
                    new = new.join(held, on=list(spec.key), how="anti", nulls_equal=True)
            result.duplicates += part.height - new.height
            if new.height:
                write_atomic(new.drop("run_id"), self.root / table / partition_dir_name(str(run_id)))
                result.stored += new.height
        return result


def check_file(path: Path, table: Table) -> str | None:
    """What is wrong with one data file, or None: unreadable footer, wrong column types."""
    try:
        if path.stat().st_size == 0:
            return "empty file (0 bytes)"
        pq.ParquetFile(path).metadata  # noqa: B018 (reads and checks the footer)
        found = pl.read_parquet_schema(path)
    except Exception as exc:
        return f"not a readable Parquet file ({type(exc).__name__}: {exc})"
    for name, dtype in found.items():
        want = table.schema.get(name)
        if want is not None and dtype != want:
            return f"column '{name}' has type {dtype}, expected {want}"
    return None


def all_files(dataset: Dataset) -> Iterable[tuple[Table, Path]]:
    for table in TABLES.values():
        for path in dataset.files(table.name):
            yield table, path
