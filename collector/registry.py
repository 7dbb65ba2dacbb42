"""The reader registry: every input kind the collector reads, in one place.

A collect asks the readers in :data:`READERS` in order whether a source is theirs
(:meth:`~tierscope.collector.reading.Reader.claims`); the first that claims it reads it. A new
input kind is one reader module (:mod:`tierscope.collector.reading` says what it implements) and
one line here.
"""

from __future__ import annotations

from pathlib import Path

from tierscope.collector.errors import InputError
from tierscope.collector.readers.cloud_logging import CloudLoggingReader
from tierscope.collector.readers.eventfiles import EventFileReader
from tierscope.collector.readers.logs import LogReader
from tierscope.collector.reading import Reader

#: The readers, asked in this order: an event file is named like no text log, and a text log
#: (any path or ``gs://`` URL) is what is left.
READERS: list[Reader] = [
    EventFileReader(),
    CloudLoggingReader(),
    LogReader(),
]


def reader_for(source: Path | str | object) -> Reader:
    """The first reader of :data:`READERS` that claims ``source``; raises :class:`InputError` if none does."""
    for reader in READERS:
        if reader.claims(source):
            return reader
    raise InputError(f"cannot read {source}: no reader reads it (readers: {', '.join(r.name for r in READERS)})")
