"""The one interface every input kind implements: a reader opens a source and yields batches.

A **reader** (:class:`Reader`) is one input kind: text logs (local files and ``gs://`` objects),
TensorBoard event files, Cloud Logging. It says which sources are its (:meth:`Reader.claims`)
and opens one (:meth:`Reader.open`), given the run it belongs to, the positions saved so far
and the collect's options. What it opens is a **reading** (:class:`Reading`): its
:meth:`~Reading.batches` yield each :class:`Batch` of records with the position after it, and
its ``counts`` say what it has read. The sink (:mod:`tierscope.collector.sink`) stores each
batch and then saves its position; the registry (:mod:`tierscope.collector.registry`) lists the
readers. A reader never writes to the dataset itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tierscope.collector.held import DEFAULT_SETTLE_S
from tierscope.collector.limits import DEFAULT_EXPAND_RATIO, Deadline
from tierscope.collector.sources.files import DEFAULT_BATCH_BYTES

if TYPE_CHECKING:
    from tierscope.collector.formats.base import Parsed
    from tierscope.collector.manifest import RunSpec
    from tierscope.collector.positions import Position, Positions
    from tierscope.collector.runs import SourceCounts


@dataclass(frozen=True)
class ReadOptions:
    """How a collect reads its sources.

    ``fmt``: a format name for every file (else the run's, else sniffed); ``year``: the year of
    glog timestamps (default: each file's modification year); ``batch_bytes``: bytes of a text log
    per batch; ``settle_s``: seconds without change after which an unfinished last line or step
    is taken; ``reread``: read every source from its start, whatever the positions say;
    ``max_expand``, ``deadline``: the bounds on a compressed file and on the collect's time.
    """

    fmt: str | None = None
    year: int | None = None
    batch_bytes: int = DEFAULT_BATCH_BYTES
    settle_s: float = DEFAULT_SETTLE_S
    reread: bool = False
    #: A gzip may decompress to this many times its size (:func:`tierscope.collector.limits.expand_limit`).
    max_expand: float = DEFAULT_EXPAND_RATIO
    #: Seconds a collect may take (None: no limit); the collect sets ``deadline`` from it when it starts.
    max_seconds: float | None = None
    #: Past it a reading stops after the batch in hand (:class:`~tierscope.collector.limits.Deadline`).
    deadline: Deadline = field(default_factory=Deadline)


@dataclass
class Batch:
    """What a reader hands the sink at a time: ``parsed`` records, events and rejects (None: a
    position alone), then ``position``, saved once they are stored (None: nothing to save)."""

    parsed: Parsed | None
    position: Position | None = None


class Reading(Protocol):
    """One source opened by a reader."""

    #: What it has read so far (lines or entries, the format, notes); the sink adds what it stored.
    counts: SourceCounts
    #: Whether the sink may store a batch while the next one is read (each still stored, and its
    #: position saved, in order).
    pipelined: bool

    def batches(self) -> Iterator[Batch]:
        """The batches, in order. Raises :class:`~tierscope.collector.errors.InputError` for a
        source that cannot be read (batches already yielded stay stored)."""
        ...


class Reader(Protocol):
    """One input kind (see the module doc)."""

    #: The kind's name, as ``tierscope`` shows it.
    name: str

    def claims(self, source: Path | str | object) -> bool:
        """Whether ``source`` (a path, a ``gs://`` URL, a query) is this kind's."""
        ...

    def open(self, source: Path | str | object, run: RunSpec, positions: Positions, options: ReadOptions) -> Reading:
        """Open ``source`` of ``run``, to be read from where ``positions`` say the last collect
        stopped. Raises :class:`~tierscope.collector.errors.InputError` (or its
        :class:`~tierscope.collector.errors.MissingInputError`) for a source that cannot be opened."""
        ...
