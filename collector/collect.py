"""Collect step logs from files into a dataset: the library behind ``tierscope collect files``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
from filelock import FileLock, Timeout

from collector.dataset import AppendResult, Dataset
from collector.errors import DatasetBusyError, InputError
from collector.formats import ParseContext, Parsed, parse_lines, sniff_format
from collector.manifest import RunSpec
from collector.schema import REJECT_RAW_MAX, RUN_SCHEMA
from collector.sources.console_csv import CONSOLE_CSV, looks_like_console_csv, parse_entries, read_console_csv
from collector.sources.files import DEFAULT_BATCH_BYTES, LineBatch, iter_line_batches
from collector.sources.logentries import EXPORT_FORMAT, looks_like_export, read_export, records_from_entries

#: File names a run directory written by ``tierscope train local`` holds.
RUN_FILE = "run.json"
LOG_SUFFIXES = (".log", ".jsonl", ".txt", ".gz", ".json", ".out", ".err")
#: Entries of a Cloud Logging export turned into records at a time (one page of the live API).
EXPORT_CHUNK = 1000


@dataclass
class SourceCounts:
    """What one collect did with one input file."""

    source: str
    run_id: str
    lines: int = 0
    steps: int = 0
    events: int = 0
    rejects: int = 0
    duplicates: int = 0
    skipped: int = 0
    #: The format sniffed from the file's first lines (or given), None when none matched.
    format: str | None = None


@dataclass
class CollectResult:
    sources: list[SourceCounts] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.sources)


def runs_from_paths(paths: list[Path], run_id: str | None, tier: str | None, fmt: str | None) -> list[RunSpec]:
    """Runs for ``collect files PATH...``: a run directory (with ``run.json``) is a run of its
    own; plain files all belong to ``run_id`` (default: the first file's name without suffix).
    Raises :class:`InputError` for a path that does not exist."""
    specs: list[RunSpec] = []
    loose: list[Path] = []
    for path in paths:
        if not path.exists():
            raise InputError(f"no such file or directory: {path}")
        if path.is_dir():
            meta_path = path / RUN_FILE
            meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
            logs = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in LOG_SUFFIXES and p.name != RUN_FILE)
            if not logs:
                raise InputError(f"{path} is a directory with no log files ({', '.join(LOG_SUFFIXES)})")
            specs.append(
                RunSpec(
                    run_id=run_id or meta.get("run_id") or path.name,
                    tier=tier or meta.get("tier"),
                    files=logs,
                    ran_on=meta.get("host"),
                    format=fmt,
                )
            )
        else:
            loose.append(path)
    if loose:
        specs.append(RunSpec(run_id=run_id or loose[0].name.split(".")[0], tier=tier, files=loose, format=fmt))
    return specs


def _fill(frame: pl.DataFrame, **values: str | None) -> pl.DataFrame:
    """Add or complete columns with a constant, keeping values the records carry themselves."""
    for name, value in values.items():
        if name in frame.columns:
            frame = frame.with_columns(pl.col(name).fill_null(pl.lit(value, dtype=pl.String)))
        else:
            frame = frame.with_columns(pl.lit(value, dtype=pl.String).alias(name))
    return frame


def file_year(path: Path) -> int:
    """The year of ``path``'s last modification (UTC): the default year of glog timestamps."""
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).year


def _with_lookahead(batches: Iterator[LineBatch]) -> Iterator[tuple[LineBatch, bool]]:
    """``(batch, is_last)`` pairs."""
    previous = next(batches, None)
    for batch in batches:
        yield previous, False  # type: ignore[misc]
        previous = batch
    if previous is not None:
        yield previous, True


def store_parsed(dataset: Dataset, parsed: Parsed, run: RunSpec, source: str, counts: SourceCounts) -> None:
    """Append what ``parsed`` holds to ``dataset`` and add to ``counts``; run, tier and source
    fill in only where the rows carry none. Caller holds the lock."""
    counts.skipped += parsed.skipped
    ctx = {"run_id": run.run_id, "tier": run.tier, "source": source}
    if parsed.steps.height:
        got = dataset.append("steps", _fill(parsed.steps, **ctx))
        counts.steps += got.stored
        counts.duplicates += got.duplicates
    if parsed.events.height:
        got = dataset.append("events", _fill(parsed.events, **ctx))
        counts.events += got.stored
        counts.duplicates += got.duplicates
    if parsed.rejects.height:
        rejects = _fill(parsed.rejects, run_id=run.run_id, source=source).with_columns(
            pl.col("raw").str.slice(0, REJECT_RAW_MAX)
        )
        got = dataset.append("rejects", rejects)
        counts.rejects += got.stored + got.duplicates


def collect_file(
    dataset: Dataset,
    path: Path,
    run: RunSpec,
    fmt: str | None = None,
    year: int | None = None,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> SourceCounts:
    """Parse ``path`` batch by batch and append what it holds to ``dataset``. Caller holds the lock.

    ``fmt`` (else the run's format) skips sniffing; ``year`` dates glog timestamps (default:
    the file's modification year). A Cloud Logging console CSV download is recognised by
    its header (or ``fmt="logging-csv"``). Raises :class:`InputError` for an unreadable file.
    """
    source = str(path)
    only = fmt or run.format
    if only is None and looks_like_export(path):
        return collect_export(dataset, path, run)
    counts = SourceCounts(source=source, run_id=run.run_id)
    context = ParseContext(year=year if year is not None else file_year(path))
    if only == CONSOLE_CSV or (only is None and _first_line_is_console_csv(path)):
        counts.format = CONSOLE_CSV
        entries = read_console_csv(path)
        counts.lines = entries.height
        store_parsed(dataset, parse_entries(entries, context=context), run, source, counts)
        return counts
    counts.format = only
    pending: pl.DataFrame | None = None
    for number, (batch, last) in enumerate(_with_lookahead(iter_line_batches(path, batch_bytes=batch_bytes))):
        counts.lines += batch.lines.height
        lines = batch.lines if pending is None else pl.concat([pending, batch.lines])
        if number == 0 and only is None:
            counts.format = sniff_format(lines.get_column("line"))
        parsed = parse_lines(lines, only=only, context=context, first=counts.format, final=last)
        pending = parsed.pending
        store_parsed(dataset, parsed, run, source, counts)
    return counts


def collect_export(dataset: Dataset, path: Path, run: RunSpec) -> SourceCounts:
    """Import a ``gcloud logging read --format=json`` file: the same records a live
    ``collect cloud`` of those entries stores (``lines`` counts entries). Caller holds the lock.

    Records without a run id of their own or a job id belong to ``run.run_id``; ``run.tier``
    fills in records without a tier. Raises :class:`InputError` if the file is not a JSON array.
    """
    export = read_export(path, run.run_id)
    counts = SourceCounts(source=str(path), run_id=run.run_id, lines=export.items, format=EXPORT_FORMAT)
    context = ParseContext()
    bad = Parsed(steps=pl.DataFrame(), events=pl.DataFrame(), rejects=export.rejects, rest=pl.DataFrame())
    store_parsed(dataset, bad, run, str(path), counts)
    for start in range(0, len(export.entries), EXPORT_CHUNK):
        chunk = export.entries[start : start + EXPORT_CHUNK]
        parsed = records_from_entries(chunk, run_id=run.run_id, tier=run.tier, context=context)
        store_parsed(dataset, parsed, run, str(path), counts)
    return counts


def _first_line_is_console_csv(path: Path) -> bool:
    for batch in iter_line_batches(path, batch_bytes=64 * 1024):
        return batch.lines.height > 0 and looks_like_console_csv(batch.lines.get_column("line")[0])
    return False


def record_runs(dataset: Dataset, runs: list[RunSpec]) -> AppendResult:
    """Append what is known about each run to the ``runs`` table (the newest row wins)."""
    now = datetime.now(UTC)
    rows = [
        {
            "run_id": r.run_id,
            "tier": r.tier,
            "ran_on": r.ran_on,
            "date": r.date,
            "note": r.note,
            "topology": r.topology,
            "collected_at": now,
        }
        for r in runs
    ]
    return dataset.append("runs", pl.DataFrame(rows, schema=RUN_SCHEMA))


def collect_runs(
    dataset: Dataset,
    runs: list[RunSpec],
    lock_timeout: float = 60.0,
    on_file: Callable[[SourceCounts], None] | None = None,
    year: int | None = None,
) -> CollectResult:
    """Collect every file of every run into ``dataset``, holding the dataset's lock.

    Raises :class:`DatasetBusyError` if another collect holds the lock for longer than
    ``lock_timeout`` seconds, :class:`InputError` for an unreadable file. ``year`` dates
    glog timestamps (default: each file's modification year).
    """
    with dataset_lock(dataset, lock_timeout):
        result = CollectResult()
        for run in runs:
            for path in run.files:
                counts = collect_file(dataset, path, run, year=year)
                result.sources.append(counts)
                if on_file:
                    on_file(counts)
        record_runs(dataset, runs)
        return result


@contextmanager
def dataset_lock(dataset: Dataset, lock_timeout: float = 60.0) -> Iterator[None]:
    """Hold ``dataset``'s lock (creating the dataset directory) and clear temporary files a
    killed collect left. Raises :class:`DatasetBusyError` after ``lock_timeout`` seconds."""
    dataset.root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(dataset.lock_path, timeout=lock_timeout)
    try:
        lock.acquire()
    except Timeout:
        raise DatasetBusyError(
            f"dataset {dataset.root} is locked by another collect (waited {lock_timeout:g} s); try again later"
        ) from None
    try:
        dataset.remove_temp_files()
        yield
    finally:
        lock.release()
