"""A ``collect files`` of a small append to a 2016-format log, without polars.

A cron collect of one log that grew by a few thousand lines spends most of its CPU importing polars.
:func:`collect_small_append` does that collect with the standard library and pyarrow alone, storing what
:func:`tierscope.collector.collect.collect_runs` would store: the records of
:func:`tierscope.collector.small_append.parse_append` in one data file written byte for byte as the store
writes it (:mod:`tierscope.dataset.arrow_steps`), the run's data files verified first as a read of them
verifies them (:class:`tierscope.dataset.verified.VerifiedFiles`), then the file's position, then the note
of the run facts. It returns None, having written nothing, whenever the full collect could do anything
else: another source or format, options, anything to recover, run facts not known to be stored, a file
rotated, replaced or read whole, a status carried that the append's lines could change, an append larger than
:data:`~tierscope.collector.small_append.MAX_APPEND_BYTES`, a line the small read does not know, an
unterminated last line, a carriage return, records whose steps reach
those of a stored file (the store would read them back to drop duplicates), a data file whose bytes do
not match its name. ``tests/collector/test_small_collect.py`` checks both collects leave the same dataset.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from urllib.parse import quote

from tierscope.collector.manifest import RunSpec
from tierscope.collector.offsets import plan_reads, snapshot
from tierscope.collector.positions import OffsetStore
from tierscope.collector.runs import CollectResult, SourceCounts, task_of_file
from tierscope.collector.small_append import FORMAT, MAX_APPEND_BYTES, carry_after, parse_append
from tierscope.collector.sources.eventfiles import is_event_file
from tierscope.collector.unchanged import _facts_held, _nothing_to_recover, note_recorded
from tierscope.dataset.durable import commit, temp_path, writing
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.lock import held
from tierscope.dataset.objects import GsPath, as_location
from tierscope.dataset.state import state_dir
from tierscope.dataset.store_options import (
    file_digest,
    import_writer_without_numpy,
    named_digest,
    new_part_path,
    with_digest,
)
from tierscope.dataset.verified import VerifiedFiles
from tierscope.gcs import is_url

_GZIP_MAGIC = b"\x1f\x8b"
_STEPS = "steps"
#: The dataset's tables (:data:`tierscope.dataset.store.TABLES`) and the files of a run past which a collect
#: suggests compacting it (:data:`tierscope.dataset.compact.SUGGEST_COMPACT_FILES`): a collect that would say
#: so is the full one's. Both defined there (those modules import polars); the tests check they agree.
TABLE_NAMES = ("steps", "events", "rejects", "runs")
SUGGEST_COMPACT_FILES = 500


class _Declined(Exception):
    """The full collect's work: nothing was written."""


def collect_small_append(
    dataset: Path | str,
    runs: list[RunSpec],
    lock_timeout: float = 60.0,
    *,
    reread: bool = False,
    without_numpy: bool = False,
) -> CollectResult | None:
    """What :func:`tierscope.collector.collect.collect_runs` would store and return for ``runs``, stored and
    returned without polars, if the collect is one small append to one 2016-format log; else None with
    nothing written (then call ``collect_runs``). Holds the dataset's lock throughout; raises
    :class:`~tierscope.dataset.errors.DatasetBusyError` after ``lock_timeout`` seconds, and
    :class:`OSError` if the dataset cannot be written (then nothing is half-done: the data file is
    committed whole before the position, as the full collect does). ``without_numpy``: this process is the
    collect's own, and imports pyarrow without numpy
    (:func:`~tierscope.dataset.store_options.import_writer_without_numpy`) once it needs it."""
    root = as_location(dataset)
    if reread or isinstance(root, GsPath) or not state_dir(root).is_dir() or len(runs) != 1:
        return None
    run = runs[0]
    if len(run.files) != 1 or run.format is not None or run.formats or run.olddirs:
        return None
    path = run.files[0]
    if not isinstance(path, Path) or is_url(path) or is_event_file(path) or task_of_file(str(path)) is not None:
        return None
    try:
        with held(root, lock_timeout):
            return _collect(root, run, path, without_numpy)
    except (_Declined, StateCorruptError, ValueError):
        return None


def _collect(root: Path, run: RunSpec, path: Path, without_numpy: bool) -> CollectResult:
    if not _nothing_to_recover(root) or not _facts_held(root, [run]):
        raise _Declined
    partition_name = "run_id=" + quote(run.run_id, safe="")
    if len(partition_name) > 200:  # a short-named partition (tierscope.dataset.store.MAX_DIR_NAME)
        raise _Declined
    partition = root / _STEPS / partition_name
    stored = sum(len(list((root / table / partition_name).glob("part-*.parquet"))) for table in TABLE_NAMES)
    if stored + 1 > SUGGEST_COMPACT_FILES:
        raise _Declined
    offsets = OffsetStore(state_dir(root))
    prev = offsets.get(path, run.run_id)
    if prev is None or prev.whole or prev.format != FORMAT or prev.resume_line is not None:
        raise _Declined
    if not path.is_file():
        raise _Declined
    with path.open("rb") as raw:
        fd = raw.fileno()
        if os.pread(fd, 2, 0) == _GZIP_MAGIC:
            raise _Declined
        size = os.fstat(fd).st_size
        segments = plan_reads(raw, path, prev, False)
        if [(s.why, s.start_offset, s.current, s.missing) for s in segments] != [("grown", prev.offset, True, ())]:
            raise _Declined
        if not 0 < size - prev.offset <= MAX_APPEND_BYTES:
            raise _Declined
        data = os.pread(fd, size - prev.offset, prev.offset)
        if len(data) != size - prev.offset or b"\r" in data:
            raise _Declined
        if not data.endswith(b"\n"):
            raise _Declined  # an unterminated last line: the reader's wait (or its settle time) decides
        text = data.decode("utf-8")  # a UnicodeDecodeError is a ValueError: declined
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        parsed = parse_append(lines, prev.line + 1)
        carry = None if parsed is None else carry_after(prev.carry, parsed)
        if parsed is None or carry is None:
            raise _Declined
        files = _verified_files(root, partition)
        if without_numpy:
            import_writer_without_numpy("pyarrow._parquet")
        if _reaches_stored(files, min(parsed.columns["step"])):  # type: ignore[type-var]
            raise _Declined
        position = snapshot(raw, path, run.run_id, size, prev.line + len(lines), False, FORMAT)
        position = dataclasses.replace(position, carry=carry)
        _write(partition, parsed.columns, run, str(path))
        offsets.put(position)
    note_recorded(root, [run])
    records = parsed.records
    counts = SourceCounts(
        source=str(path),
        run_id=run.run_id,
        lines=len(lines),
        steps=records,
        skipped=parsed.skipped,
        step_lines=records,
        format=FORMAT,
    )
    return CollectResult(sources=[counts])


def _verified_files(root: Path, partition: Path) -> list[Path]:
    """The run's data files, each checked against the digest in its name as a read of them checks them
    (:meth:`tierscope.dataset.store.Dataset.verify`: hashed unless noted verified, noted after), the note
    saved. A file without a digest in its name, or whose bytes do not match it, is the full collect's."""
    files = sorted(partition.glob("part-*.parquet")) if partition.is_dir() else []
    if not files:
        return files
    import time

    cache = VerifiedFiles(root)
    for path in files:
        named = named_digest(path)
        if named is None:
            raise _Declined
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            if cache.holds(path, st):
                continue
            hashed_at = time.time_ns()
            if file_digest(handle) != named:
                raise _Declined
        cache.note(path, st, hashed_at)
    cache.save()
    return files


def _reaches_stored(files: list[Path], first_step: int) -> bool:
    """Whether any of ``files`` may hold a step record at ``first_step`` or later (its footer's
    statistics of ``step`` say so, or it has none): the store would read such rows back."""
    if not files:
        return False
    from tierscope.dataset.arrow_steps import read_footer

    for path in files:
        meta = read_footer(path)
        column = meta.schema.names.index("step") if "step" in meta.schema.names else None
        if column is None:
            return True
        for group in range(meta.num_row_groups):
            stats = meta.row_group(group).column(column).statistics
            if meta.row_group(group).num_rows == 0:
                continue
            if stats is None or not stats.has_min_max or stats.max >= first_step:
                return True
    return False


def _write(partition: Path, columns: dict[str, list[object]], run: RunSpec, source: str) -> None:
    """The records as one data file of the run's partition, committed (fsync, rename, fsync of the folder)."""
    from tierscope.dataset.arrow_steps import step_table, write_step_file

    table = step_table(columns, {"tier": run.tier, "source": source})
    partition.mkdir(parents=True, exist_ok=True)
    final = new_part_path(partition)
    tmp = temp_path(final)
    with writing(tmp, final):
        write_step_file(table, tmp)
        with tmp.open("rb") as handle:
            final = with_digest(final, file_digest(handle))
        commit(tmp, final)
