"""Collect step logs from files into a dataset: the library behind ``tierscope collect files``.

The loop over readers and the sink: for every file of every run, the registry's reader for it
(:mod:`tierscope.collector.registry`) opens it where the last collect stopped, and the sink
(:mod:`tierscope.collector.sink`) stores its batches and saves its positions, all under the
dataset's lock; then the runs' facts are recorded.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tierscope.collector import registry
from tierscope.collector.errors import InputError, MissingInputError
from tierscope.collector.formats import UnknownFormatError
from tierscope.collector.limits import Deadline
from tierscope.collector.manifest import RunSpec
from tierscope.collector.positions import Positions, check_positions
from tierscope.collector.reading import DEFAULT_BATCH_BYTES, DEFAULT_SETTLE_S, ReadOptions
from tierscope.collector.runs import NAMED_BY_CONTENT, CollectResult, SourceCounts, run_facts
from tierscope.collector.runs import runs_from_paths as runs_from_paths
from tierscope.collector.same_content import same_content, same_content_warning
from tierscope.collector.sink import RUN_FACTS, Sink, dataset_lock, file_positions, record_runs
from tierscope.collector.task_agreement import COLUMNS, disagreement, training_records
from tierscope.collector.unchanged import facts_recorded, note_recorded
from tierscope.dataset.doctor import StateCheck
from tierscope.dataset.lock import let_waiters_in
from tierscope.dataset.store import Dataset

#: The state documents a collect keeps, checked by ``tierscope doctor`` (:func:`tierscope.dataset.doctor.check`):
#: every position (:mod:`tierscope.collector.positions`).
STATE_CHECKS: tuple[StateCheck, ...] = (check_positions,)

__all__ = [
    "DEFAULT_BATCH_BYTES",
    "DEFAULT_SETTLE_S",
    "STATE_CHECKS",
    "CollectResult",
    "SourceCounts",
    "collect_file",
    "collect_runs",
    "runs_from_paths",
]


def collect_file(
    dataset: Dataset,
    source: Path | str,
    run: RunSpec,
    options: ReadOptions = ReadOptions(),  # noqa: B008 (frozen: one shared default is safe)
    positions: Positions | None = None,
) -> SourceCounts:
    """Read what is new in ``source`` (a log file, a ``gs://`` object, an event file) with the
    registry's reader for it and append it to ``dataset``, each batch's position saved after its
    records (in ``positions``, default: the dataset's). Caller holds the lock.

    Raises :class:`InputError` (:class:`MissingInputError` for a file that is not there) and
    :class:`~tierscope.collector.formats.UnknownFormatError` for an unknown ``options.fmt``.
    """
    sink = Sink(dataset, positions)
    prev = sink.positions.offsets.get(source, run.run_id)
    # a position before any line (the file was empty when last collected) says nothing was read of it yet
    known = prev is not None and (prev.offset > 0 or prev.line > 0)
    reading = registry.reader_for(source).open(source, run, sink.positions, options)
    counts = sink.take(reading, run)
    counts.first_read = not known
    if not known and counts.nothing_read:
        # a log no format reads is not done with: once the user declares its format, the next collect reads it
        sink.positions.offsets.forget(run.run_id, (str(source),))
        counts.unread = True
    return counts


def _say_same_content(path: str, run_id: str, positions: Positions, result: CollectResult) -> None:
    """A warning in ``result`` where the file ``path`` just read for run ``run_id`` holds another run's file's text
    (:mod:`tierscope.collector.same_content`)."""
    read = positions.offsets.get(path, run_id)
    other = same_content(read, positions.offsets.states()) if read is not None else None
    if read is not None and other is not None:
        result.warnings.append(same_content_warning(read, other))


#: Seconds a collect holds the dataset's lock before it lets a waiting collect in between two files
#: (:func:`tierscope.dataset.lock.let_waiters_in`): a third of the default lock timeout, so a cron collect
#: started while a long one runs gets its turn before it gives up (exit 75).
LOCK_SLICE_S = 20.0


def collect_runs(
    dataset: Dataset,
    runs: list[RunSpec],
    lock_timeout: float = 60.0,
    on_file: Callable[[SourceCounts], None] | None = None,
    year: int | None = None,
    lock_slice_s: float = LOCK_SLICE_S,
    **read: Any,
) -> CollectResult:
    """Collect what is new in every file of every run into ``dataset``, holding the dataset's lock.

    ``year`` dates glog timestamps (default: each file's modification year); ``read``: the other
    fields of :class:`~tierscope.collector.reading.ReadOptions` (``settle_s``, ``reread``,
    ``batch_bytes``, ``max_expand``, ``max_seconds``). Past ``max_seconds`` the collect stops at the
    next safe point (after a batch, or between files) and says so in ``stopped``: what was read is
    stored, the lock let go, and the next collect goes on. Between two files, once it has held the lock
    ``lock_slice_s`` seconds, it lets a collect waiting for the lock in (and then loads the positions
    again, which that one may have moved); a single file holds it throughout, for at most
    ``max_seconds`` and one batch. An unreadable input file is listed in
    ``errors`` and the others are collected. Raises :class:`TypeError` for a field ReadOptions has
    not, :class:`DatasetBusyError` if another collect holds the lock for longer than ``lock_timeout``
    seconds, :class:`StateCorruptError` / :class:`DatasetCorruptError` for a damaged dataset,
    :class:`OSError` if the dataset cannot be written (disk full).
    """
    asked = ReadOptions(year=year, **read)
    options = dataclasses.replace(asked, deadline=Deadline.after(asked.max_seconds))  # the clock starts here
    deadline = options.deadline
    with dataset_lock(dataset, lock_timeout), ExitStack() as saving:
        positions = file_positions(dataset)
        # saved in shares, not at each file (OffsetStore.deferring): all of it before the lock is let go
        saving.enter_context(positions.offsets.deferring())
        held_since = time.monotonic()
        result = CollectResult()
        absent: set[str] = set()  # runs none of whose files is there: nothing is known of them yet
        for run in runs:
            missing = 0
            for path in run.files:
                if deadline.passed():
                    said = f"{options.max_seconds:g}"
                    result.stopped = f"stopped by --max-seconds {said}: files not read yet are read next time"
                    break
                if time.monotonic() - held_since >= lock_slice_s:
                    positions.offsets.flush()  # the collect let in reads them
                    let_waiters_in(dataset)
                    positions = file_positions(dataset)
                    saving.enter_context(positions.offsets.deferring())
                    held_since = time.monotonic()
                try:
                    counts = collect_file(dataset, path, run, options, positions)
                except MissingInputError as exc:
                    missing += 1
                    result.errors.append(_in_manifest(exc, run))
                    continue
                except InputError as exc:
                    # One unreadable log must not stop the others; what it held so far is stored.
                    result.errors.append(_in_manifest(exc, run))
                    continue
                except UnknownFormatError as exc:
                    # Nor one run of a manifest naming a format that does not exist.
                    result.errors.append(UnknownFormatError(f"run {run.run_id!r} ({path}): {exc}"))
                    continue
                result.sources.append(counts)
                if counts.first_read and (counts.steps or counts.events):
                    _say_same_content(str(path), run.run_id, positions, result)
                # nothing read from it (no format reads it, or it is empty so far): nothing is known of the run from
                # it either
                missing += counts.unread or (counts.first_read and not counts.lines)
                if on_file:
                    on_file(counts)
            if run.files and missing == len(run.files):
                absent.add(run.run_id)
        for run in runs:
            # logs of two jobs named as one run's tasks (worker-0.log, worker-1.log): said once, when first read
            stored = [s for s in result.sources if s.run_id == run.run_id and s.steps]
            if len(run.files) > 1 and any(s.first_read for s in stored):
                steps = dataset.read("steps", run.run_id, where=training_records(), columns=COLUMNS)
                warning = disagreement(run.run_id, steps)
                if warning:
                    result.warnings.append(warning)
        # A run whose files are all missing (a typo in a manifest), unread (no format reads them) or empty would be
        # a row of facts with no records, an `empty` run in every summary; it is recorded once a file of
        # it is read. So would a run named after files whose records all name their own runs. A row an
        # earlier collect wrote stays.
        read = [run for run in runs if run.run_id not in absent]
        if not facts_recorded(dataset.root, read):  # a cron collect's usual case: read no Parquet to know it
            named = [run for run in read if _named_by_records(dataset, run)]
            own = [run for run in read if run not in named]
            recorded = record_runs(dataset, own + [r for run in named for r in _facts_of_named(run, result)])
            result.facts_changed = recorded.changed
        # a run left out for its records is noted all the same: collected again unchanged, it is left out again
        note_recorded(dataset.root, read)  # the next collect can tell it has nothing to do (collector.unchanged)
        return result


def _named_by_records(dataset: Dataset, run: RunSpec) -> bool:
    """Whether ``run`` is only the name of its files, whose records all went to the runs they name: a run the user
    did not name, of files whose records name their run (a Cloud Logging export: its entries' job ids), and no
    record, event or reject of its own in ``dataset``."""
    if run.run_id_given or not run.files or not all(str(f).endswith(NAMED_BY_CONTENT) for f in run.files):
        return False
    return not any(dataset.files(table, run.run_id) for table in ("steps", "events", "rejects"))


def _facts_of_named(run: RunSpec, result: CollectResult) -> list[RunSpec]:
    """``run``'s facts under each run its files' records named (a Cloud Logging export's job ids), where the
    user gave any (``--machine``, ``--tier``, a date): what was said of the files is said of the runs they
    hold. None given: nothing to record (the runs named by records get their facts from them)."""
    if all(run_facts(run)[c] is None for c in RUN_FACTS):
        return []
    named = {rid for s in result.sources if s.run_id == run.run_id for rid in s.stored_runs}
    return [dataclasses.replace(run, run_id=rid) for rid in sorted(named)]


def _in_manifest(error: InputError, run: RunSpec) -> InputError:
    """``error`` naming the manifest that declared ``run`` (and, for a file that is not there, what to do
    there); unchanged for a file named on the command line: its message already names what the user typed."""
    if run.manifest is None:
        return error
    if isinstance(error, MissingInputError):
        return MissingInputError(
            f"{error} (run {run.run_id!r} of manifest {run.manifest}, whose paths are relative to its folder); "
            "correct the path there and collect again"
        )
    return InputError(f"{error} (run {run.run_id!r} of manifest {run.manifest})")
