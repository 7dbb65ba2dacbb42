"""The sink: the one way from a reader's batches into the dataset.

Every reader (:mod:`tierscope.collector.reading`) hands its batches here: a :class:`Sink`
appends each batch's step records, events and rejects to the dataset (:func:`store_parsed`:
run, tier and source filled in where the rows carry none) and then saves the position after
it (:mod:`tierscope.collector.positions`), so a kill in between only makes the next collect
re-read records it then skips as duplicates. It also appends the runs' facts
(:func:`record_runs`) and holds the dataset's lock (:func:`dataset_lock`).

A reading that allows it (:attr:`~tierscope.collector.reading.Reading.pipelined`) is stored on
threads of its own (:class:`_Storing`): the reader parses batch N+2 while N+1 is written and N
committed, in exactly the order a collect without the threads has.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from tierscope.collector.formats.base import Parsed
from tierscope.collector.manifest import RunSpec
from tierscope.collector.positions import OffsetStore, Position, Positions
from tierscope.collector.reading import Batch, Reading
from tierscope.collector.runs import NAMED_BY_CONTENT, SourceCounts, default_run_id, run_facts, task_of_file
from tierscope.collector.sources.eventfiles import is_event_file
from tierscope.dataset import rewind
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.lock import locked
from tierscope.dataset.schema import REJECT_RAW_MAX, RUN_KEY, RUN_SCHEMA, STEP_FIGURES, off_the_clock
from tierscope.dataset.store import AppendResult, Dataset, Staged, import_writer


def _fill(frame: pl.DataFrame, **values: str | None) -> pl.DataFrame:
    """Add or complete columns with a constant, keeping values the records carry themselves."""
    for name, value in values.items():
        if name in frame.columns:
            frame = frame.with_columns(pl.col(name).fill_null(pl.lit(value, dtype=pl.String)))
        else:
            frame = frame.with_columns(pl.lit(value, dtype=pl.String).alias(name))
    return frame


def _set(frame: pl.DataFrame, **values: str | None) -> pl.DataFrame:
    """Set columns to a constant, whatever the rows carry."""
    return frame.with_columns(pl.lit(v, dtype=pl.String).alias(k) for k, v in values.items())


def _off_the_clock(frame: pl.DataFrame, what: pl.Expr) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``frame``'s rows at a time within 1970-9999 (:func:`tierscope.dataset.schema.off_the_clock`), and
    a reject for each other one: ``what`` (String) names the record, the reason its time. No figure can
    be reckoned from such a time, and a reader's calendar ends with the year 9999."""
    if "timestamp" not in frame.columns or not frame.select(off_the_clock().any()).item():
        return frame, pl.DataFrame()
    odd = frame.filter(off_the_clock())
    offsets = pl.col("source_offset") if "source_offset" in odd.columns else pl.lit(None, pl.Int64)
    entry = pl.col("entry_id") if "entry_id" in odd.columns else pl.lit(None, pl.String)
    when = pl.col("timestamp").dt.to_string("%Y-%m-%dT%H:%M:%S")
    rejects = odd.select(
        source_offset=offsets,
        reason=pl.format("{}: time {}Z is outside 1970-9999", what, when),
        raw=pl.coalesce(entry, pl.lit("")),  # an entry of Cloud Logging has no line: its id tells two apart
    )
    return frame.filter(~off_the_clock()), rejects


def _timed(parsed: Parsed) -> Parsed:
    """``parsed`` with its records and events at a time outside 1970-9999 made rejects (:func:`_off_the_clock`)."""
    steps, events = parsed.steps, parsed.events
    at_step = pl.format("step record at step {}", "step") if "step" in steps.columns else pl.lit(None, pl.String)
    steps, odd_steps = _off_the_clock(steps, pl.coalesce(at_step, pl.lit("step record")))
    named = pl.format("event {}", "event") if "event" in events.columns else pl.lit("event")
    events, odd_events = _off_the_clock(events, named)
    if not (odd_steps.height or odd_events.height):
        return parsed
    rejects = pl.concat([parsed.rejects, odd_steps, odd_events], how="diagonal_relaxed")
    return dataclasses.replace(parsed, steps=steps, events=events, rejects=rejects)


def same_log(one: str, other: str) -> bool:
    """Whether sources ``one`` and ``other`` are one log's copies: one name up to its first dot (``train.log``,
    ``train.log.1``, ``train.log.2.gz``: logrotate's names) in one folder (by its name: a path given relative
    and absolute is one folder; a path with no folder matches any)."""
    a, b = Path(one.rstrip("/")), Path(other.rstrip("/"))
    folders = a.parent.name, b.parent.name
    return default_run_id(Path(a.name)) == default_run_id(Path(b.name)) and ("" in folders or folders[0] == folders[1])


#: How a Cloud Logging query's records name their source (:mod:`tierscope.collector.readers.cloud_logging`):
#: no file name, so no task from one.
CLOUD_LOGGING_SOURCE = "cloud-logging:"


#: A task: ``(role, task_index)``, either None.
Task = tuple[str | None, int | None]


def _stated(steps: pl.DataFrame) -> tuple[pl.Expr, pl.Expr]:
    """The role and task index ``steps``' lines state (null columns if the frame has none)."""
    role = pl.col("role") if "role" in steps.columns else pl.lit(None, pl.String)
    index = pl.col("task_index") if "task_index" in steps.columns else pl.lit(None, pl.Int32)
    return role, index


def with_task(steps: pl.DataFrame, task: Callable[[], Task]) -> pl.DataFrame:
    """``steps`` with the records naming no task (no role, no task index) given ``task()``, asked only
    if there are such records."""
    role, index = _stated(steps)
    untasked = role.is_null() & index.is_null()
    if not steps.height or not steps.select(untasked.any()).item():
        return steps
    given_role, given_index = task()
    if given_role is None and given_index is None:
        return steps
    return steps.with_columns(
        pl.when(untasked).then(pl.lit(given_role, pl.String)).otherwise(role).alias("role"),
        pl.when(untasked).then(pl.lit(given_index, pl.Int32)).otherwise(index).alias("task_index"),
    )


def with_named_index(steps: pl.DataFrame, named: tuple[str, int] | None, counts: SourceCounts) -> pl.DataFrame:
    """``steps`` whose lines state the role the file's name states (``named``) but no index given the
    name's index; a role or task index the lines state otherwise wins, a note in ``counts`` saying so."""
    if named is None or not steps.height:
        return steps
    name_role, name_index = named
    role, index = _stated(steps)
    same_role = role == name_role
    other = steps.filter(role.is_not_null() & ~(same_role & (index.is_null() | (index == name_index))))
    if other.height:
        note = (
            f"{other.height} step records state another task than the file name ({name_role} {name_index}): "
            "the lines' task is kept"
        )
        if note not in counts.notes:
            counts.notes.append(note)
    if not steps.select((same_role & index.is_null()).any()).item():
        return steps
    return steps.with_columns(
        pl.when(same_role & index.is_null()).then(pl.lit(name_index, pl.Int32)).otherwise(index).alias("task_index")
    )


def named_task(source: str) -> tuple[str, int] | None:
    """The task ``source``'s name states (:func:`~tierscope.collector.runs.task_of_file`), None for a
    Cloud Logging query's records (no file name)."""
    return None if source.startswith(CLOUD_LOGGING_SOURCE) else task_of_file(source)


def store_parsed(
    dataset: Dataset,
    parsed: Parsed,
    run: RunSpec,
    source: str,
    counts: SourceCounts,
    staged: Staged | None = None,
    own_task: Callable[[], Task] | None = None,
) -> None:
    """Append what ``parsed`` holds to ``dataset`` and add to ``counts``; run, tier and source
    fill in only where the rows carry none (as does a task: ``own_task``), but a run id or tier the user
    gave (``run.run_id_given``, ``run.tier_given``) is set on every row. A record whose time lies outside
    1970-9999 is a reject. ``own_task``: the task of the records whose lines name none
    (:meth:`Sink.own_task`), asked only if there are any; without it, the task the source's name states
    (:func:`named_task`). Caller holds the lock. With ``staged``, the files are left for
    :meth:`~tierscope.dataset.store.Dataset.commit_staged` (see :class:`_Storing`)."""
    counts.skipped += parsed.skipped
    counts.notes.extend(parsed.notes)
    given = {k: v for k, v, on in (("run_id", run.run_id, run.run_id_given), ("tier", run.tier, run.tier_given)) if on}
    ctx = {"run_id": run.run_id, "tier": run.tier, "source": source}
    parsed = _timed(parsed)
    lines = _LineOutcomes()
    if parsed.steps.height:
        if "loss" in parsed.steps.columns:
            nan = parsed.steps.filter(pl.col("loss").is_nan())
            if nan.height:
                counts.nan_loss += nan.height
                if counts.first_nan_loss is None and "source_offset" in nan.columns:
                    counts.first_nan_loss = nan.get_column("source_offset").min()  # type: ignore[assignment]
        named = named_task(source)
        steps = with_task(parsed.steps, own_task or (lambda: named or (None, None)))
        steps = with_named_index(steps, named, counts)
        steps = _set(_fill(steps, **ctx), **given)
        counts.stored_runs.update(steps.get_column("run_id").unique().drop_nulls().to_list())
        got = dataset.append("steps", steps, staged)
        counts.steps += got.stored
        counts.duplicates += got.duplicates
        counts.repeated += got.repeated
        lines.stored("steps", got)
        lines.held(parsed.steps)
        if got.conflicts:
            conflicts = pl.concat(got.conflicts, how="vertical_relaxed")
            counts.note_conflicts(conflicts)
            counts.rejects += dataset.append("rejects", conflict_rejects(conflicts), staged).stored
            lines.conflicted(conflicts)
    if parsed.events.height:
        got = dataset.append("events", _set(_fill(parsed.events, **ctx), **given), staged)
        counts.events += got.stored
        counts.duplicates += got.duplicates
        counts.repeated += got.repeated
        lines.stored("events", got)
        lines.held(parsed.events)
    if parsed.rejects.height:
        rejects = _fill(parsed.rejects, run_id=run.run_id, source=source).with_columns(
            pl.col("raw").str.slice(0, REJECT_RAW_MAX)
        )
        rejects = _set(rejects, run_id=run.run_id) if run.run_id_given else rejects
        got = dataset.append("rejects", rejects, staged)
        counts.rejects += got.stored + got.duplicates
        lines.rejected(parsed.rejects)
    lines.add_to(counts)


_NO_OFFSETS = pl.Series("source_offset", [], pl.Int64)


def conflict_rejects(conflicts: pl.DataFrame) -> pl.DataFrame:
    """Rejects (:data:`~tierscope.dataset.schema.REJECT_SCHEMA`) of step records that claim a step already held
    with other figures (:attr:`~tierscope.dataset.store.AppendResult.conflicts`): where the other one is, and the
    first figure that differs; ``raw`` is the record's step and figures."""
    return conflicts.select(
        "run_id",
        "source",
        "source_offset",
        "format",
        pl.format(
            "step {} conflicts with the record of that step at {}:{}: {} (two runs read as one?)",
            "step",
            pl.col("source_held").fill_null("?"),
            pl.col("source_offset_held").cast(pl.String).fill_null("?"),
            _first_difference(),
        ).alias("reason"),
        pl.concat_str(
            [pl.format("step={}", "step")]
            + [pl.format(f"{n}={{}}", pl.col(n)) for n in STEP_FIGURES if n != "rate_derived"],
            separator=" ",
            ignore_nulls=True,
        )
        .str.slice(0, REJECT_RAW_MAX)
        .alias("raw"),
    )


def _first_difference() -> pl.Expr:
    """The first figure of :data:`STEP_FIGURES` stated both ways, as ``name A here, B there``."""
    return pl.coalesce(
        pl.when(pl.col(n).is_not_null() & pl.col(f"{n}_held").is_not_null() & (pl.col(n) != pl.col(f"{n}_held"))).then(
            pl.format(f"{n} {{}} here, {{}} there", n, f"{n}_held")
        )
        for n in STEP_FIGURES
    )


def _offsets(frame: pl.DataFrame) -> tuple[pl.Series, int]:
    """The lines of ``frame``'s rows: the distinct ``source_offset`` values, and the rows without one
    (each a line of its own: an entry of a source that numbers none)."""
    if "source_offset" not in frame.columns:
        return _NO_OFFSETS, frame.height
    offsets = frame.get_column("source_offset")
    return offsets.drop_nulls().unique(), offsets.null_count()


@dataclass
class _LineOutcomes:
    """One batch's lines by outcome (:class:`~tierscope.collector.runs.SourceCounts` says the order);
    polars series of line numbers, as a batch may hold half a million lines."""

    found: dict[str, list[pl.Series]] = dataclasses.field(default_factory=dict)
    #: Rows without a line number, per outcome: each is a line of its own.
    unnumbered: dict[str, int] = dataclasses.field(default_factory=dict)

    def _add(self, outcome: str, found: tuple[pl.Series, int]) -> None:
        self.found.setdefault(outcome, []).append(found[0])
        self.unnumbered[outcome] = self.unnumbered.get(outcome, 0) + found[1]

    def _lines(self, outcome: str) -> pl.Series:
        found = self.found.get(outcome)
        if not found:
            return _NO_OFFSETS
        return found[0] if len(found) == 1 else pl.concat(found).unique()  # each piece is distinct already

    def stored(self, table: str, got: AppendResult) -> None:
        stored = pl.concat(got.stored_offsets) if got.stored_offsets else _NO_OFFSETS
        self._add(table, (stored.drop_nulls().unique(), stored.null_count()))

    def held(self, frame: pl.DataFrame) -> None:
        self._add("held_rows", _offsets(frame))

    def rejected(self, frame: pl.DataFrame) -> None:
        self._add("rejects", _offsets(frame))

    def conflicted(self, frame: pl.DataFrame) -> None:
        self._add("conflicts", _offsets(frame))

    def add_to(self, counts: SourceCounts) -> None:
        steps, events, held, rejects = (self._lines(k) for k in ("steps", "events", "held_rows", "rejects"))
        conflicts = self._lines("conflicts")
        if events.len() and steps.len():
            events = events.filter(~events.is_in(steps.implode()))
        if rejects.len() and held.len():
            rejects = rejects.filter(~rejects.is_in(held.implode()))
        # a line whose record conflicts (and stored nothing) is rejected, not a duplicate's
        stored = pl.concat([steps, events])
        if conflicts.len() and stored.len():
            conflicts = conflicts.filter(~conflicts.is_in(stored.implode()))
        counts.duplicate_lines -= conflicts.len() + self.unnumbered.get("conflicts", 0)
        counts.rejected_lines += conflicts.len() + self.unnumbered.get("conflicts", 0)
        n = self.unnumbered.get
        counts.step_lines += steps.len() + n("steps", 0)
        counts.event_lines += events.len() + n("events", 0)
        # The lines of stored rows are among those of the rows given (held): the rest held only duplicates.
        counts.duplicate_lines += held.len() - steps.len() - events.len()
        counts.duplicate_lines += max(0, n("held_rows", 0) - n("steps", 0) - n("events", 0))
        counts.rejected_lines += rejects.len() + n("rejects", 0)


class Sink:
    """Stores what readers read into ``dataset`` and saves their positions in ``positions``
    (default: the dataset's, loaded when first needed). Use it holding the dataset's lock."""

    def __init__(self, dataset: Dataset, positions: Positions | None = None) -> None:
        self.dataset = dataset
        self.positions = positions if positions is not None else Positions(dataset.state_dir)
        self._own_tasks: dict[tuple[str, str], tuple[Task, str | None]] = {}

    def own_task(self, run: RunSpec, source: str) -> tuple[Task, str | None]:
        """The task of ``source``'s records of ``run`` whose lines name none, and a note on it (or None).

        - The task these records were stored with before, from this log or one of its rotated copies
          (:func:`same_log`), when they were stored naming none: a collect again finds them duplicates (a
          log collected before its name gave a task keeps none; the note says so).
        - Else the task the log's name states (:func:`named_task`: ``worker-1.log``, ``worker-1/train.log``):
          two tasks' logs whose lines name no task (``step 100 loss 0.5``) are two tasks, not one whose
          second log's records all pass for duplicates of the first's.
        - Else none (as a run of one log) unless the run holds records naming no task from another log: then
          no role and one more task index than the highest of those (the first log's none counting as 0), so
          that two logs of one run naming no task (``--run-id job42 a.log b.log``) are two tasks. A file whose
          records name their own run and task (a Cloud Logging export, a structured log, an event file)
          keeps none: its records name what they are.

        Found once per run and log in a collect."""
        key = (run.run_id, source)
        if key not in self._own_tasks:
            self._own_tasks[key] = self._find_own_task(run.run_id, source)
        return self._own_tasks[key]

    def _find_own_task(self, run_id: str, source: str) -> tuple[Task, str | None]:
        named = named_task(source)
        name = Path(source.rstrip("/")).name
        by_content = name.endswith(NAMED_BY_CONTENT) or is_event_file(Path(name))
        # the run's own files: the whole table's listing was one folder a run, for every log (quadratic in runs)
        if source.startswith(CLOUD_LOGGING_SOURCE) or not self.dataset.files("steps", run_id):
            return named or (None, None), None
        untasked = pl.col("role").is_null() & (pl.col("run_id") == run_id)
        held = self.dataset.read("steps", run_id, where=untasked, columns=["source", "task_index"]).unique()
        mine = [index for other, index in held.iter_rows() if other == source or same_log(other, source)]
        if mine:
            kept: int | None = min(mine, key=lambda i: -1 if i is None else i)
            note = (
                f"its records were stored before without the task its name states ({named[0]} {named[1]}): "
                "they are kept so, the records read again being duplicates (collect it into a new dataset "
                "to give them that task)"
                if named
                else None
            )
            return (None, kept), note
        if named:
            return named, None
        others = [index for other, index in held.iter_rows() if other != source]
        if by_content or not others:
            return (None, None), None
        index = 1 + max(0 if i is None else i for i in others)  # the first log's none: task 0 as it were
        note = (
            f"its records name no task, nor does its name, and run {run_id!r} holds such records of another "
            f"log: they are task {index} of their own (a log named after its task, worker-1.log, gives them its role)"
        )
        return (None, index), note

    def take(self, reading: Reading, run: RunSpec) -> SourceCounts:
        """Store every batch of ``reading`` (records of ``run``), each followed by its position;
        returns the reading's counts with what was stored added. An error of the reading's (an
        unreadable file) is raised once the batches before it are stored."""
        counts = reading.counts
        if run.naming and run.files and counts.source == str(run.files[0]):
            counts.notes.append(run.naming)
        if reading.pipelined:
            with _Storing() as storing:
                for batch in reading.batches():
                    storing.then(lambda batch=batch: self._stage(batch, run, counts))
        else:
            for batch in reading.batches():
                self.store(batch, run, counts)
        counts.note_nan_loss()
        return counts

    def _own(self, run: RunSpec, counts: SourceCounts) -> Callable[[], Task]:
        def own() -> Task:
            task, note = self.own_task(run, counts.source)
            if note is not None and note not in counts.notes:
                counts.notes.append(note)
            return task

        return own

    def store(self, batch: Batch, run: RunSpec, counts: SourceCounts) -> None:
        """Append ``batch``'s records (of ``run``, adding to ``counts``), then save its position."""
        if batch.parsed is not None:
            store_parsed(self.dataset, batch.parsed, run, counts.source, counts, None, self._own(run, counts))
        if batch.position is not None:
            self.positions.put(batch.position)

    def _stage(self, batch: Batch, run: RunSpec, counts: SourceCounts) -> _Commit:
        """Write ``batch``'s records under temporary names; returns what makes them visible and
        then saves its position."""
        staged = Staged()
        try:
            if batch.parsed is not None:
                store_parsed(self.dataset, batch.parsed, run, counts.source, counts, staged, self._own(run, counts))
        except BaseException:
            self.dataset.discard_staged(staged)
            raise
        return _Commit(self.dataset, staged, self.positions, batch.position)


@dataclass
class _Commit:
    """What makes one stored batch durable: its staged files, then its position."""

    dataset: Dataset
    staged: Staged
    positions: Positions
    position: Position | None

    def run(self) -> None:
        self.dataset.commit_staged(self.staged)
        if self.position is not None:
            self.positions.put(self.position)

    def discard(self) -> None:
        self.dataset.discard_staged(self.staged)


#: Stores queued at most, the one under way included: the caller parses batch N+2 while batch N
#: is written and N+1 waits, so a write that takes longer than a parse (the machine's other load,
#: a slow disk) no longer holds the next parse up, at the cost of one more batch's records held.
_QUEUED_STORES = 2


class _Storing:
    """Stores batches on a thread of their own while the caller reads and parses the next, and
    commits each (fsync, rename, position) on a third while the next batch is written.

    Polars and pyarrow release the GIL, and fsync waits on the disk, so parsing batch N+2,
    writing batch N+1 and committing batch N share the cores. One write at a time and one commit
    at a time, each in batch order: the writes run one after another on one thread (at most
    :data:`_QUEUED_STORES` queued: :meth:`then` waits for the oldest beyond that), a write runs
    only after every earlier write succeeded (after a failed one it raises that error instead of
    writing), and a commit only after the previous one succeeded (after a failed one it
    removes its files instead), so records become visible, and positions are saved after the
    records they cover, exactly in the order a collect without the threads has (a kill leaves
    the same states, plus temporary files the next collect removes). A write that must read back
    rows of a batch not yet committed waits for that commit (:meth:`Dataset.append`). About
    four batches' frames at the peak (with the reader's read-ahead). An error of a write or a
    commit is raised in the caller by a later :meth:`then` or on leaving the ``with`` block;
    leaving it on an error of the caller's first waits for the work under way (each commit is
    atomic, and its position follows it).
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tierscope-store")
        self._commits = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tierscope-commit")
        self._running: deque[Future[None]] = deque()
        self._committing: Future[None] | None = None
        # The writer's import (pyarrow, about 0.3 s) while the first batch is read and parsed.
        self._pool.submit(import_writer)

    def then(self, store: Callable[[], _Commit]) -> None:
        """Queue ``store`` after the stores before it, once fewer than :data:`_QUEUED_STORES` are
        queued (raising the error of a store or a commit that failed)."""
        while self._running and (len(self._running) >= _QUEUED_STORES or self._running[0].done()):
            self._running.popleft().result()
        committing = self._committing
        if committing is not None and committing.done():
            committing.result()
        previous = self._running[-1] if self._running else None
        self._running.append(self._pool.submit(self._store, store, previous))

    def _store(self, store: Callable[[], _Commit], previous: Future[None] | None) -> None:
        if previous is not None:
            previous.result()  # done (one thread, in order): a batch is written only after every batch before it
        done = store()
        self._committing = self._commits.submit(self._commit, done, self._committing)

    @staticmethod
    def _commit(done: _Commit, previous: Future[None] | None) -> None:
        try:
            if previous is not None:
                previous.result()  # a batch is committed only after every batch before it
        except BaseException:
            done.discard()
            raise
        done.run()

    def __enter__(self) -> _Storing:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                while self._running:
                    self._running.popleft().result()
                if self._committing is not None:
                    self._committing.result()
            else:
                # The caller's error wins over the store's; a store queued but not begun is dropped.
                for queued in self._running:
                    queued.cancel()
                wait(self._running)
                if self._committing is not None:
                    wait([self._committing])
        finally:
            self._pool.shutdown(wait=True)
            self._commits.shutdown(wait=True)


#: The facts of a run a collect may leave out: every column of the runs table's key but the run id.
RUN_FACTS = tuple(c for c in RUN_KEY if c != "run_id")


@dataclass
class RecordedFacts:
    """What :func:`record_runs` appended: ``stored`` rows, ``duplicates`` (runs whose facts were their newest
    row's already), and ``changed``: per run that had a row before and got a new one, the facts (the runs
    table's columns, :data:`RUN_FACTS`) that differ from it: what a collect again with ``--machine`` changed."""

    stored: int = 0
    duplicates: int = 0
    changed: dict[str, list[str]] = dataclasses.field(default_factory=dict)


def record_runs(dataset: Dataset, runs: Iterable[RunSpec]) -> RecordedFacts:
    """Append what is known about each run to the ``runs`` table where it differs from the run's
    newest row (the newest row wins: facts changed back to earlier ones are appended again).

    A fact a collect does not give (no ``--tier``, a file collected without the manifest that
    dated it) is the newest row's: "not given" keeps what is known, only a value given changes it.
    A fact once known can be changed, not unset."""
    now = datetime.now(UTC)
    rows = pl.DataFrame([{**run_facts(r), "collected_at": now} for r in runs], schema=RUN_SCHEMA)
    if rows.height and dataset.files("runs"):
        held = dataset.read("runs", where=pl.col("run_id").is_in(rows["run_id"].unique().to_list()))
        newest = held.sort("collected_at").group_by("run_id", maintain_order=True).last()
        rows = with_known_facts(rows, newest)
        unchanged = rows.join(newest.select(RUN_KEY), on=list(RUN_KEY), how="semi", nulls_equal=True)
        new = rows.join(unchanged, on=list(RUN_KEY), how="anti", nulls_equal=True)
        stored = dataset.append("runs", new).stored
        return RecordedFacts(stored, unchanged.height, _changed_facts(new, newest))
    return RecordedFacts(dataset.append("runs", rows).stored)


def _changed_facts(new: pl.DataFrame, newest: pl.DataFrame) -> dict[str, list[str]]:
    """Per run of ``new`` (rows about to be the newest) that has a row in ``newest``: the facts that differ."""
    before = {r["run_id"]: r for r in newest.iter_rows(named=True)}
    return {
        r["run_id"]: [c for c in RUN_FACTS if r[c] != before[r["run_id"]][c]]
        for r in new.iter_rows(named=True)
        if r["run_id"] in before
    }


def with_known_facts(rows: pl.DataFrame, newest: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (:data:`~tierscope.dataset.schema.RUN_SCHEMA`) with each of :data:`RUN_FACTS` they leave
    null taken from their run's row in ``newest`` (one row per run id; a run without one keeps its nulls)."""
    known = newest.select("run_id", *(pl.col(c).alias(f"_known_{c}") for c in RUN_FACTS))
    merged = rows.join(known, on="run_id", how="left", maintain_order="left")
    return merged.with_columns(pl.coalesce(c, f"_known_{c}").alias(c) for c in RUN_FACTS).select(list(RUN_SCHEMA))


def file_positions(dataset: Dataset) -> Positions:
    """The dataset's positions for a collect of files, after acting on what ``doctor --fix`` left
    to re-read (:mod:`tierscope.dataset.rewind`). Call holding the lock.

    A file-offsets document that does not load is moved aside (a notice on the dataset says so):
    correctness does not rest on it, only re-reading does.
    """
    try:
        offsets = OffsetStore(dataset.state_dir)
    except StateCorruptError as exc:
        dataset.set_aside_state(exc)
        offsets = OffsetStore(dataset.state_dir)
    todo = rewind.pending(dataset.root)
    for wanted in todo:
        offsets.forget(wanted.run_id, wanted.sources)
    if todo:
        rewind.clear(dataset.root)  # only once the offsets are saved: a kill before means doing it again
    return Positions(dataset.state_dir, offsets)


def dataset_lock(dataset: Dataset, lock_timeout: float = 60.0) -> AbstractContextManager[Dataset]:
    """Hold ``dataset``'s lock (creating the dataset directory) after finishing what a killed
    writer left (:func:`tierscope.dataset.lock.locked`). Raises :class:`DatasetBusyError` after
    ``lock_timeout`` seconds."""
    return locked(dataset, lock_timeout)
