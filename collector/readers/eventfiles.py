"""The TensorBoard event file reader: an event file read incrementally, like a text log.

The file is read from the byte where the last collect stopped (its file offset in
:mod:`tierscope.collector.positions`, the same :class:`~tierscope.collector.offsets.FileState` a
text log keeps: the offset past the last record taken, ``line`` the number of that record). The
records of the file's last step are held back while the file may still be written (a later event
of the same step would complete them): they are taken once the file has not changed for
``settle_s`` seconds, or at once by the file's first read
(:data:`~tierscope.collector.held.FIRST_READS`). So is a record the file ends inside: while the
file is fresh it is left for the next collect; once it has settled the file *ended early* (a writer
killed mid-record): every record before it is stored, the cut-off one is a reject with its bytes and
the collect's notes say so. Damage (a record failing its checksum) is a reject too; a length that
fails its checksum ends the reading there.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import polars as pl

from tierscope.collector.errors import InputError
from tierscope.collector.formats.base import Parsed
from tierscope.collector.held import FIRST_READS
from tierscope.collector.manifest import RunSpec
from tierscope.collector.offsets import Segment, plan_reads, snapshot
from tierscope.collector.positions import Positions
from tierscope.collector.reading import Batch, ReadOptions
from tierscope.collector.runs import SourceCounts, check_readable
from tierscope.collector.sources.eventfiles import TFEVENTS, is_event_file
from tierscope.collector.sources.files import open_raw
from tierscope.collector.sources.tfrecord import Ending, Record, read_records

if TYPE_CHECKING:
    from tierscope.collector.sources.tfevents import Place, Scalar


def declared_tags(run: RunSpec) -> dict[str, str]:
    """The shipped tag map with the run's declared tags on top."""
    from tierscope.collector.formats.declared import DeclaredTags
    from tierscope.collector.sources.tfevents import SHIPPED_TAGS

    declared = {tag: field for f in run.formats if isinstance(f, DeclaredTags) for tag, field in f.tags}
    return {**SHIPPED_TAGS, **declared}


#: Events per stored batch: bounds a collect's memory whatever the file's length (a scalar
#: waiting to be stored costs about 200 bytes in Python).
BATCH_EVENTS = 100_000


class EventFileReader:
    """TensorBoard event files (``events.out.tfevents.*``), local ones only (see the module doc)."""

    name = TFEVENTS

    def claims(self, source: Path | str | object) -> bool:
        return isinstance(source, Path) and is_event_file(source)

    def open(
        self, source: Path | str | object, run: RunSpec, positions: Positions, options: ReadOptions
    ) -> EventFileReading:
        path = Path(str(source))
        check_readable(path)
        return EventFileReading(path, run, positions, options)


class EventFileReading:
    """One event file opened by :class:`EventFileReader`; ``lines`` counts the events taken."""

    pipelined = False

    def __init__(self, path: Path, run: RunSpec, positions: Positions, options: ReadOptions) -> None:
        # Imported here (tensorboard's protos, the tag vocabulary): a collect of text logs needs none of it.
        from tierscope.collector.sources.tfevents import place_of

        self.path, self.run, self.options = path, run, options
        self.prev = positions.offsets.get(path, run.run_id)
        self.counts = SourceCounts(source=str(path), run_id=run.run_id, format=TFEVENTS)
        self.tags = declared_tags(run)
        self.place = place_of(path)
        self.first_wall: float | None = None

    def batches(self) -> Iterator[Batch]:
        path, counts = self.path, self.counts
        with open_raw(path) as raw:
            # Event files are never rotated: a changed one, or one read again, is read from its start.
            seg = Segment(path, 0, 0, "reread") if self.options.reread else plan_reads(raw, path, self.prev, False)[-1]
            if seg.why == "grown" and seg.start_offset == os.fstat(raw.fileno()).st_size:
                counts.notes.append("unchanged")
                return
            if seg.why not in ("new", "grown"):
                counts.notes.append(f"{seg.why}: read from its first record")
            settled = time.time() - os.fstat(raw.fileno()).st_mtime >= self.options.settle_s
            try:
                yield from self._read(raw, (seg.start_offset, seg.start_line), settled, seg.why in FIRST_READS)
            except OSError as exc:
                raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc

    def _batch(
        self, raw: BinaryIO, groups: list[list[Scalar]], rejects: list[dict[str, Any]], done: tuple[int, int],
        resume: tuple[int, int],
    ) -> Batch:  # fmt: skip
        """The records of ``groups`` and ``rejects`` (events after ``done`` up to ``resume``), then
        ``resume`` as where to go on."""
        taken = resume[1] - done[1]
        steps = place_records(groups, self.tags, self.place, self.first_wall)
        parsed = Parsed(steps=steps, events=pl.DataFrame(), rejects=pl.DataFrame(rejects), rest=pl.DataFrame())
        produced = {
            *(steps.get_column("source_offset") if steps.height else ()),
            *(r["source_offset"] for r in rejects),
        }
        parsed.skipped = max(0, taken - len(produced))
        self.counts.lines += taken
        return Batch(parsed, snapshot(raw, self.path, self.run.run_id, resume[0], resume[1], False, TFEVENTS))

    def _read(self, raw: BinaryIO, done: tuple[int, int], settled: bool, first: bool = False) -> Iterator[Batch]:
        """The batches from event ``done`` on (see the module doc); ``first``: no collect has read the file before,
        so its last step is taken as it is (a copy of an ended run's file, as often as a live one's), while a record it
        ends inside still waits for the file to settle (taken now, a live writer's cut would be read as damage)."""
        from tierscope.collector.sources.tfevents import step_groups

        counts, tags, place = self.counts, self.tags, self.place
        ending = Ending(*done)
        found: list[Scalar] = []
        rejects: list[dict[str, Any]] = []
        self.first_wall = _first_wall(raw)
        for record in read_records(raw, *done, ending=ending):
            rejects += _take(record, tags, place, found)
            if record.number - done[1] >= BATCH_EVENTS:
                groups = step_groups(found)
                if len(groups) > 1:  # every step but the last is whole: store them
                    head = groups[-1][0]
                    ready, rejects = _split(rejects, head.number)
                    resume = (head.at, head.number - 1)
                    yield self._batch(raw, groups[:-1], ready, done, resume)
                    done = resume
                    found = groups[-1]
        resume = (ending.offset, ending.number)
        groups = step_groups(found)
        if groups and not settled and not first:
            # The last step may get more events: read it again next time, whole.
            head = groups.pop()[0]
            held, resume = head.number, (head.at, head.number - 1)
            counts.notes.append(
                f"events from number {held} on may still be being written: left for the next collect"
                " (a job that has ended: collect with --settle 0 to take them now)"
            )
            rejects, _ = _split(rejects, held)
        if ending.how == "cut":
            if settled:
                rejects.append(_cut_reject(ending))
                counts.notes.append(_cut_note(ending))
                resume = (ending.size, ending.number)
            elif resume == (ending.offset, ending.number):
                counts.notes.append(
                    f"event {ending.number + 1} is not complete yet: left for the next collect"
                    " (a job that has ended: collect with --settle 0 to take it now)"
                )
        elif ending.how == "unframed":
            size = os.fstat(raw.fileno()).st_size
            rejects.append(
                _reject(
                    ending.number + 1,
                    f"the length of the record at byte {ending.offset:,} fails its checksum: the file is damaged "
                    f"from there, its last {size - ending.offset:,} bytes are not read",
                    size - ending.offset,
                    ending.offset,
                )
            )
            counts.notes.append(f"damaged from byte {ending.offset:,}: the records before it are stored")
            resume = (size, ending.number)
        yield self._batch(raw, groups, rejects, done, resume)


def _split(rejects: list[dict[str, Any]], number: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``rejects`` before event ``number``, and from it on."""
    return [r for r in rejects if r["source_offset"] < number], [r for r in rejects if r["source_offset"] >= number]


def tag_table(path: Path, run: RunSpec) -> list[tuple[str, int, str | None]]:
    """``(tag, events, field)`` for every scalar tag of the event file ``path``, in order of
    appearance: what ``tierscope formats --try`` shows; ``field`` None: not read (declare it).
    Raises :class:`InputError` for a file that cannot be read."""
    from tierscope.collector.sources.tfevents import field_of, place_of, scalars

    tags = declared_tags(run)
    place = place_of(path)
    seen: dict[str, int] = {}
    with open_raw(path) as raw:
        for record in read_records(raw):
            try:
                _, got = scalars(record.number, record.start, record.data, None) if record.data else (0.0, [])
            except ValueError:
                continue
            for s in got:
                seen[s.tag] = seen.get(s.tag, 0) + 1
    return [(tag, n, field_of(tag, tags, place)) for tag, n in seen.items()]


def place_records(
    groups: list[list[Scalar]], tags: dict[str, str], place: Place, first_wall: float | None
) -> pl.DataFrame:
    """:func:`~tierscope.collector.sources.tfevents.records`, empty without groups."""
    from tierscope.collector.sources.tfevents import records

    if not groups:
        return pl.DataFrame()
    return records(groups, tags, place, first_wall)


def _take(record: Record, tags: dict[str, str], place: Place, found: list[Scalar]) -> list[dict[str, Any]]:
    """Add ``record``'s storable scalars to ``found``; its rejects."""
    from tierscope.collector.sources.tfevents import bad_value, bad_wall_time, field_of, scalars

    size = record.end - record.start
    if record.damaged:
        return [_reject(record.number, "fails its checksum: damaged, not read", size, record.start)]
    if record.skipped:
        return []
    try:
        _, got = scalars(record.number, record.start, record.data, tags)
    except ValueError as exc:
        return [_reject(record.number, str(exc), size, record.start)]
    bad = []
    for s in got:
        field = field_of(s.tag, tags, place)
        why = bad_value(field, s.value) if field else None
        if (wall_why := bad_wall_time(s.wall_time)) is not None:
            bad.append(
                _reject(
                    record.number, f"{s.tag} at step {s.step}: wall time {s.wall_time!r} {wall_why}", size, record.start
                )
            )
        elif s.step < 0:
            bad.append(
                _reject(record.number, f"{s.tag} at step {s.step}: a step is a whole number >= 0", size, record.start)
            )
        elif why:
            bad.append(_reject(record.number, f"{s.tag} {s.value!r} at step {s.step} {why}", size, record.start))
        else:
            found.append(s)
    return bad


def _first_wall(raw: BinaryIO) -> float | None:
    """The wall time of the file's first event (the writer opening), None if it cannot be read."""
    from tierscope.collector.sources.tfevents import bad_wall_time, scalars

    for record in read_records(raw):
        if not record.data:
            return None
        try:
            wall, _ = scalars(record.number, record.start, record.data, {})
        except ValueError:
            return None
        return wall if bad_wall_time(wall) is None else None
    return None


def _reject(number: int, reason: str, size: int, at: int) -> dict[str, Any]:
    return {
        "source_offset": number,
        "format": TFEVENTS,
        "reason": f"event {number}: {reason}",
        "raw": f"<{size:,} bytes at byte {at:,}>",
    }


def _cut_reject(ending: Ending) -> dict[str, Any]:
    return _reject(
        ending.number + 1,
        "the file ends inside it (cut off: a writer killed mid-write, or a copy of a file being written)",
        ending.size - ending.offset,
        ending.offset,
    )


def _cut_note(ending: Ending) -> str:
    return (
        f"the file ended early: it ends inside event {ending.number + 1} (byte {ending.offset:,} of {ending.size:,}); "
        f"the {ending.number:,} events before it were read"
    )
