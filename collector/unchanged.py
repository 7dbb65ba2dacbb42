"""A ``collect files`` that finds nothing new, told from the dataset's state alone.

A cron job runs the same collect every few minutes, and mostly nothing was written since the
last one. :func:`collect_unchanged` answers that collect with the standard library only (no
polars, no pyarrow: their import was most of its second): under the dataset's lock it checks
that every file is exactly as far read as the offsets say, and that nothing of
:func:`tierscope.collector.collect.collect_runs` would have any work to do. Whenever it cannot
tell cheaply (a file grew, changed, is gzip or an event file or a URL, a format or declared
formats are given, the dataset has anything to recover or rewind, the run facts are not known
to be stored), it returns None and the caller runs the collect in full, which then does
exactly what it always did. What it returns is what ``collect_runs`` would have returned, and
like it, it writes nothing.

The run facts: ``collect_runs`` appends each run's facts to the ``runs`` table (those not given
taken from the run's newest row), a no-op when they are the newest row's. To know that without
reading Parquet, ``collect_runs`` notes after each append (:func:`note_recorded`) the facts it
was given and the files of the ``runs`` table then: as long as those files are all still there,
unchanged, and nothing else is, the same facts given again append nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tierscope.collector.held import DEFAULT_SETTLE_S, held_note, still_held
from tierscope.collector.manifest import RunSpec
from tierscope.collector.offsets import plan_reads
from tierscope.collector.positions import OffsetStore
from tierscope.collector.runs import CollectResult, SourceCounts, run_facts
from tierscope.collector.sources.eventfiles import is_event_file
from tierscope.dataset import journal, rewind, state
from tierscope.dataset.durable import TMP_PREFIX, read_regular, write_bytes_atomic
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.lock import held
from tierscope.dataset.objects import GsPath, as_location
from tierscope.dataset.state import STATE_FOLDER, state_dir
from tierscope.gcs import is_url

#: The note of :func:`note_recorded`, in the state folder: dot-prefixed without .json, so no state document:
#: a cache, not state (``doctor`` neither checks nor counts it; one that does not parse is
#: only a collect that takes the full path and writes it anew).
RECORDED = ".recorded-runs"
RECORDED_VERSION = 1
#: The largest note read (bytes): one line per file of the ``runs`` table, far below this; a larger
#: one is not what :func:`note_recorded` wrote, and the full collect writes it anew.
RECORDED_MAX_BYTES = 16 << 20
#: The first bytes of a gzip file (read whole: its state is checked by the full collect).
_GZIP_MAGIC = b"\x1f\x8b"


def _facts_json(run: RunSpec) -> dict[str, Any]:
    facts = run_facts(run)
    facts["date"] = None if run.date is None else run.date.isoformat()
    return facts


def _runs_files(root: Path) -> list[str]:
    """Every file under the ``runs`` table, as ``relative path:size:mtime_ns``, sorted."""
    found = []
    for directory, _, names in os.walk(root / "runs"):
        for name in names:
            path = Path(directory, name)
            st = path.stat()
            found.append(f"{path.relative_to(root).as_posix()}:{st.st_size}:{st.st_mtime_ns}")
    return sorted(found)


def note_recorded(root: Path | GsPath, runs: list[RunSpec]) -> None:
    """Note that the ``runs`` table of the dataset at ``root`` holds a row with each of ``runs``'
    facts (call holding the lock, right after appending them). A dataset on Cloud Storage keeps
    no note: its collects always take the full path."""
    if isinstance(root, GsPath):
        return
    doc = {
        "version": RECORDED_VERSION,
        "runs": {run.run_id: _facts_json(run) for run in runs},
        "files": _runs_files(root),
    }
    write_bytes_atomic(state_dir(root) / RECORDED, json.dumps(doc, sort_keys=True).encode())


def facts_recorded(root: Path | GsPath, runs: list[RunSpec]) -> bool:
    """Whether the ``runs`` table of the dataset at ``root`` is known to hold each of ``runs``' facts as its
    run's newest row, so that appending them (:func:`tierscope.collector.sink.record_runs`) would append
    nothing: the note of :func:`note_recorded` says so and the table's files are those it lists. False
    when that cannot be told (no note, another table, two runs of one id, a dataset on Cloud Storage)."""
    if isinstance(root, GsPath) or len({run.run_id for run in runs}) < len(runs):
        return False
    return _facts_held(root, runs)


def _facts_held(root: Path, runs: list[RunSpec]) -> bool:
    try:
        # Never through a link, nor from a FIFO or a device: reading one could block or never end.
        data = read_regular(state_dir(root) / RECORDED, RECORDED_MAX_BYTES, follow_links=False)
        doc = None if data is None else json.loads(data)
    except (OSError, ValueError, RecursionError):  # none, unreadable, or not JSON (UnicodeDecodeError is a ValueError)
        return False
    if not isinstance(doc, dict) or doc.get("version") != RECORDED_VERSION or doc.get("files") != _runs_files(root):
        return False
    noted = doc.get("runs")
    return isinstance(noted, dict) and all(noted.get(run.run_id) == _facts_json(run) for run in runs)


def _nothing_to_recover(root: Path) -> bool:
    """Whether the lock's recovery (:func:`tierscope.dataset.lock.recover`) and the collector's
    rewinds would find nothing to do: every state document loads, no compaction is unfinished,
    no temporary file or staged merged file is left, no rewind is pending."""
    if state.unreadable(root) or journal.load(root).entries or rewind.pending(root):
        return False
    leftovers = (f"*/run_id=*/{TMP_PREFIX}*", f"*/run_id=*/{journal.STAGED_PREFIX}*", f"{STATE_FOLDER}/{TMP_PREFIX}*")
    return not any(next(root.glob(pattern), None) for pattern in leftovers)


def _unchanged(offsets: OffsetStore, path: Path, run: RunSpec, settle_s: float) -> SourceCounts | None:
    """What ``collect_file`` would count for ``path``, if it would read nothing; else None."""
    prev = offsets.get(path, run.run_id)
    if prev is None or not path.is_file():
        return None
    with path.open("rb") as raw:
        if os.pread(raw.fileno(), 2, 0) == _GZIP_MAGIC:
            return None
        if prev.whole:
            # A whole-file format (a Cloud Logging export, a console CSV): unchanged, or read whole again.
            if plan_reads(raw, path, prev, True):
                return None
            return SourceCounts(source=str(path), run_id=run.run_id, notes=["unchanged"])
        # A line log: read from the offset on, which is nothing when the file ends there, or when it ends in
        # the lines the last collect held back and is as it was then, not yet settled (they would be held again).
        segments = plan_reads(raw, path, prev, False)
        st = os.fstat(raw.fileno())
        if [(s.why, s.start_offset) for s in segments] != [("grown", prev.offset)]:
            return None
        if st.st_size == prev.offset:
            return SourceCounts(source=str(path), run_id=run.run_id, format=prev.format)
        if not still_held(prev, st, settle_s):
            return None
        note = held_note(prev.line + 1, prev.held_lines or 0, st.st_mtime, settle_s)
        return SourceCounts(source=str(path), run_id=run.run_id, format=prev.format, notes=[note])


def _files(runs: list[RunSpec]) -> Iterator[tuple[RunSpec, Path | str]]:
    for run in runs:
        for path in run.files:
            yield run, path


def _counts(root: Path, runs: list[RunSpec], settle_s: float) -> list[SourceCounts] | None:
    """Each file's counts if the collect of ``runs`` into ``root`` has nothing to do; else None."""
    if not _nothing_to_recover(root) or not _facts_held(root, runs):
        return None
    offsets = OffsetStore(state_dir(root))
    found = []
    for run, path in _files(runs):
        counts = _unchanged(offsets, path, run, settle_s) if isinstance(path, Path) else None
        if counts is None:
            return None
        found.append(counts)
    return found


def collect_unchanged(
    dataset: Path | str,
    runs: list[RunSpec],
    lock_timeout: float = 60.0,
    *,
    reread: bool = False,
    settle_s: float = DEFAULT_SETTLE_S,
) -> CollectResult | None:
    """What :func:`tierscope.collector.collect.collect_runs` would return for ``runs``, if it
    would read and write nothing (with ``settle_s``, as that collect's: lines held back while the file was
    written are read once it has not changed for so long); None whenever that cannot be told from the state alone (then
    call ``collect_runs``). Holds the dataset's lock while it checks; raises
    :class:`~tierscope.dataset.errors.DatasetBusyError` after ``lock_timeout`` seconds, as
    ``collect_runs`` does."""
    root = as_location(dataset)
    if reread or isinstance(root, GsPath) or not state_dir(root).is_dir():
        return None
    if len({run.run_id for run in runs}) < len(runs):
        return None  # two runs of one id: which facts the table ends with is the full collect's to say
    for run, path in _files(runs):
        if is_url(path) or run.format is not None or run.formats or is_event_file(Path(path)):
            return None
    try:
        if (
            _counts(root, runs, settle_s) is None
        ):  # most collects with work to do stop here, without waiting for the lock
            return None
        with held(root, lock_timeout):
            counts = _counts(root, runs, settle_s)  # again: another collect may have written meanwhile
    except (StateCorruptError, OSError, ValueError):
        return None  # the full collect says what is wrong, or repairs it
    return None if counts is None else CollectResult(sources=counts)
