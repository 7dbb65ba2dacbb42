"""The Parquet dataset: append-only, hive-partitioned by run, readable by any Parquet reader.

Layout under the dataset root::

    steps/run_id=<run>/part-<utc time>-<random>-<digest>.parquet  step records (STEP_SCHEMA)
    events/run_id=<run>/part-....parquet                     run events (EVENT_SCHEMA)
    rejects/run_id=<run>/part-....parquet                    lines kept aside (REJECT_SCHEMA)
    runs/run_id=<run>/part-....parquet                       run facts (RUN_SCHEMA)
    state/files.json                                         where the last collect stopped in each file
    state/compactions.json                                   compaction journal (tierscope.dataset.journal)
    state/rewinds.json                                       sources to read again after `doctor --fix`
    state/                                                   other collector state (watermarks)
    quarantine/                                              corrupt files moved aside by `doctor --fix`
    .lock                                                    held by the collect that is writing

The root may be ``gs://bucket/prefix`` (:mod:`tierscope.dataset.objects`): the same layout as
objects, appends uploaded write-once, ``.lock`` a lease with an expiry.

``run_id`` lives in the directory name (percent-encoded), not inside the files, as hive
partitioning expects. Every append writes a *new* file: to a dot-prefixed temporary name,
fsync, rename, fsync of the directory. A reader never sees a half-written file, and
readers only look at ``part-*.parquet``, so a temporary file left by a killed run is
ignored (and removed by the next collect). ``tierscope compact`` merges a partition's
files; the journal in ``state/`` (:mod:`tierscope.dataset.journal`) keeps readers from seeing a
merged file and the files it replaces at once.

Damage is detected, never read as values: ``<digest>`` is the first 16 hex digits of the
SHA-256 of the file's bytes, which every reader checks before reading a file (once per
:class:`Dataset`, and not again by later readers while the file's stamp is unchanged:
:mod:`tierscope.dataset.verified`), and pages carry CRC checksums (``doctor`` verifies them and
every digest, and files written before digests existed). A reader pins the files it lists
(:class:`_Pins`), so a compaction deleting them while a query runs changes nothing for that query.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote, unquote

import polars as pl

from tierscope import tempdirs
from tierscope.dataset import journal
from tierscope.dataset.durable import TMP_PREFIX, commit, temp_path, write_bytes_atomic, writing
from tierscope.dataset.errors import DatasetCorruptError, DatasetError, StateCorruptError
from tierscope.dataset.lock import LOCK_NAME
from tierscope.dataset.objects import GsPath, as_location, local_file
from tierscope.dataset.schema import (
    EVENT_KEY,
    EVENT_SCHEMA,
    REJECT_KEY,
    REJECT_SCHEMA,
    RUN_KEY,
    RUN_SCHEMA,
    STEP_FIGURES,
    STEP_KEY,
    STEP_SCHEMA,
    conform,
    figures_differ,
)
from tierscope.dataset.state import state_dir
from tierscope.dataset.store_options import DICTIONARY_PAGE_BYTES as DICTIONARY_PAGE_BYTES
from tierscope.dataset.store_options import DIGEST_CHARS as DIGEST_CHARS
from tierscope.dataset.store_options import SOURCES_KEY as SOURCES_KEY
from tierscope.dataset.store_options import file_digest as file_digest
from tierscope.dataset.store_options import import_writer as import_writer
from tierscope.dataset.store_options import import_writer_without_numpy as import_writer_without_numpy
from tierscope.dataset.store_options import named_digest as named_digest
from tierscope.dataset.store_options import new_part_path as new_part_path
from tierscope.dataset.store_options import part_stamp as part_stamp
from tierscope.dataset.store_options import with_digest as with_digest
from tierscope.dataset.verified import VerifiedFiles, stamp_of


@dataclass(frozen=True)
class Table:
    name: str
    schema: dict[str, pl.DataType]
    key: tuple[str, ...] | None  # None: every row is new
    #: A key column that mostly grows through a log (step, line number): an append reads back
    #: only the held rows within its range of that column, and the Parquet statistics let the
    #: reader skip the files outside it; rows in which it rises strictly need no duplicate check.
    range_key: str | None = None
    #: Columns two rows of one key must agree on to be one row (:func:`~tierscope.dataset.schema.figures_differ`):
    #: a row whose key is held but whose figures differ is a conflict, neither stored nor a duplicate.
    figures: tuple[str, ...] = ()


TABLES: dict[str, Table] = {
    "steps": Table("steps", STEP_SCHEMA, STEP_KEY, range_key="step", figures=(*STEP_FIGURES, "rate_derived")),
    "events": Table("events", EVENT_SCHEMA, EVENT_KEY),
    "rejects": Table("rejects", REJECT_SCHEMA, REJECT_KEY, range_key="source_offset"),
    "runs": Table("runs", RUN_SCHEMA, (*RUN_KEY, "collected_at")),
}

PART_GLOB = "part-*.parquet"
#: Rows per frame of :meth:`Dataset.chunks`.
CHUNK_ROWS = 131_072
#: How often a reader lists again when a compaction changed the journal while it listed.
LIST_ATTEMPTS = 50


#: The longest partition directory name written as is: file systems take 255 bytes, and 28
#: Japanese characters percent-encode to 252.
MAX_DIR_NAME = 200
#: Characters of a long run id's percent-encoding kept in its directory's short name.
_SHORT_PREFIX = 100
#: In a short-named partition directory: the run id it holds, in full (UTF-8). Dot-prefixed,
#: so Parquet readers (``part-*.parquet``) never read it.
RUN_ID_FILE = ".run_id"


def partition_dir_name(run_id: str) -> str:
    """``run_id=<percent-encoded run>``: safe for any run id, decoded by polars, DuckDB and pyarrow.

    A run id whose encoding would make a name longer than :data:`MAX_DIR_NAME` gets a short
    stable one: the encoding's first characters (whole ``%XX`` only), ``~`` and 16 hex digits of
    the id's SHA-256. Such a directory holds :data:`RUN_ID_FILE`, the full id, which
    :meth:`Dataset.scan` puts in ``run_id`` (:func:`partition_run_id`); plain Parquet readers
    see the short name.
    """
    encoded = quote(run_id, safe="")
    if len("run_id=") + len(encoded) <= MAX_DIR_NAME:
        return "run_id=" + encoded
    prefix = encoded[:_SHORT_PREFIX]
    if "%" in prefix[-2:]:  # never cut inside a %XX
        prefix = prefix[: prefix.rindex("%")]
    digest = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:16]
    return f"run_id={prefix.replace('~', '%7E')}~{digest}"


def decoded_name(name: str) -> str:
    """The run id a partition directory's ``name`` (``run_id=<...>``) spells: the full id, or a short
    name's prefix and digest (:func:`partition_run_id` reads the full one)."""
    return unquote(name[len("run_id=") :])


def partition_run_id(directory: Path) -> str:
    """The run id of the partition ``directory`` (``.../run_id=<...>``): its :data:`RUN_ID_FILE`
    if it has one (a short name), else the name decoded."""
    try:
        return (directory / RUN_ID_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return decoded_name(directory.name)


#: Written plain: integers and clocks that grow through a log (step, line number, timestamp),
#: nearly all distinct, and booleans (bit-packed). DELTA_BINARY_PACKED would pack the growing
#: integers better, but several readers still reject it in version 1 data pages (Spark's
#: vectorized reader before 3.3, StarRocks, Parquet.Net, parquetjs): the files stay readable by
#: any Parquet reader.
_PLAIN_TYPES = (pl.Int64, pl.Datetime, pl.Boolean)


def _writer_options(schema: pl.Schema) -> dict[str, Any]:
    """pyarrow ``write_table`` options for a frame of ``schema``.

    zstd level 1: about 30 % less write time than the default level (3), for files about a
    quarter larger. Dictionaries for every column but :data:`_PLAIN_TYPES`: measured on a batch
    of 278,000 step records of the 2016 log, 20 % less write time than plain floats, files 20 %
    smaller and read back 30 % faster (the floats repeat: a 2016 log prints them with three decimals).
    """
    return {
        "compression": "zstd",
        "compression_level": 1,
        "write_statistics": True,
        "write_page_checksum": True,
        "use_dictionary": [name for name, dtype in schema.items() if not isinstance(dtype, _PLAIN_TYPES)],
        "dictionary_pagesize_limit": DICTIONARY_PAGE_BYTES,
    }


def write_temp(frame: pl.DataFrame, final: Path, metadata: dict[bytes, bytes] | None = None) -> tuple[Path, Path]:
    """Write ``frame`` to a temporary file next to ``final`` (not yet visible).

    Raises :class:`OSError` naming ``final`` (disk full, a file size limit); nothing is left then.
    Returns the temporary file and the name to commit it under: ``final`` with the digest of
    its bytes added, which every reader checks (:meth:`Dataset.verify`). Pages carry CRC
    checksums too (``write_page_checksum``), which ``doctor`` verifies, and the footer the
    ``source`` values of the rows (:data:`SOURCES_KEY`) plus ``metadata``.
    """
    import pyarrow.parquet as pq  # polars' writer has no page checksums

    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    # A failure names the data file being written (pyarrow's names none); for an object, the local
    # temporary file: that is the disk that failed.
    with writing(tmp, tmp if isinstance(final, GsPath) else final):
        table = frame.to_arrow()
        meta = dict(metadata or {})
        if "source" in frame.columns:
            meta[SOURCES_KEY] = json.dumps(_sources(frame.get_column("source"))).encode()
        table = table.replace_schema_metadata(meta)
        pq.write_table(table, tmp, **_writer_options(frame.schema))
        with tmp.open("rb") as fh:
            digest = file_digest(fh)
    return tmp, with_digest(final, digest)


def _sources(column: pl.Series) -> list[str]:
    """The distinct values of ``column`` (nulls left out), sorted. A batch of one log holds one:
    comparing every value with the first is a few times cheaper than hashing them all."""
    first = column.first() if column.null_count() == 0 else None
    if first is not None and bool((column == first).all()):
        return [first]  # type: ignore[list-item]
    return column.drop_nulls().unique().sort().to_list()


def write_atomic(frame: pl.DataFrame, directory: Path) -> Path:
    """Write ``frame`` as a new Parquet file in ``directory``; it appears whole or not at all.

    Raises :class:`OSError` naming the file (disk full, permissions); nothing is left visible then.
    """
    tmp, final = write_temp(frame, new_part_path(directory))
    with writing(tmp, final):
        commit(tmp, final)
    return final


#: Threads that hash the data files a reader checks (:meth:`Dataset._hash_ahead`).
HASH_THREADS = 2


@dataclass(frozen=True)
class _Hashed:
    """A data file hashed ahead of its check: its stamp then (:func:`stamp_of`), when the hash began
    (``time.time_ns()``) and the digest (:func:`file_digest`)."""

    stamp: tuple[int, int, int, int, int]
    hashed_at: int
    digest: str


#: The prefix of a reader's directory of links (:class:`_Pins`) in the temporary folder.
PINS_PREFIX = "tierscope-pins-"


class _Pins:
    """Open handles on the data files a reader listed, so a compaction deleting one cannot
    break a query built on it: an open file stays readable on POSIX after its name is gone.

    Polars reads the files through symbolic links to ``/proc/self/fd/<n>`` under a private
    temporary directory laid out like the dataset (``<table>/run_id=<run>/<name>``), so hive
    partitioning still yields ``run_id`` and prunes files by it. Where ``/proc/self/fd`` does
    not exist the real paths are used (a vanished file then makes :meth:`Dataset.read` list
    again). Everything is closed and removed when the :class:`Dataset` is collected or at exit.

    The process holds at most :func:`pin_budget` pins (all instances together): past it a local
    file is read by its real path, as where ``/proc/self/fd`` is missing, so a dataset of more
    files than the process may open stays readable (polars opens a scan's files a few at a time).
    """

    FD_DIR = Path("/proc/self/fd")

    def __init__(self) -> None:
        self.handles: dict[Path, tuple[BinaryIO, Path]] = {}
        self.farm: Path | None = None
        self.enabled = self.FD_DIR.is_dir()

    def full(self, path: Path) -> bool:
        """Whether ``path`` is not pinned and the process has no pin left to give it."""
        return path not in self.handles and _PINNED.count >= pin_budget()

    def pin(self, path: Path, relative: Path) -> tuple[BinaryIO, Path]:
        """An open handle on ``path`` and the path readers should use. Raises :class:`FileNotFoundError`."""
        held = self.handles.get(path)
        if held is not None:
            return held
        handle = path.open("rb")
        _PINNED.add(1)
        link = path
        if self.enabled:
            if self.farm is None:
                # owned (tierscope.tempdirs): a reader killed by SIGKILL left its farm in the temp folder for good
                self.farm, lock = tempdirs.claim(PINS_PREFIX)
                weakref.finalize(self, _release, self.handles, self.farm, lock)
            link = self.farm / relative
            link.parent.mkdir(parents=True, exist_ok=True)
            link.unlink(missing_ok=True)
            os.symlink(self.FD_DIR / str(handle.fileno()), link)
        self.handles[path] = (handle, link)
        return handle, link

    def unpin(self, path: Path) -> None:
        held = self.handles.pop(path, None)
        if held is not None:
            held[0].close()
            _PINNED.add(-1)


def _release(handles: dict[Path, tuple[BinaryIO, Path]], farm: Path, lock: int) -> None:
    for handle, _ in handles.values():
        handle.close()
    _PINNED.add(-len(handles))
    handles.clear()
    tempdirs.release(farm, lock)


class _Count:
    """A count shared by threads."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        with self._lock:
            self.count += n


#: Data files pinned open by every :class:`_Pins` of the process.
_PINNED = _Count()


def pin_budget() -> int:
    """How many data files the process keeps pinned open (:class:`_Pins`) at most: a quarter of
    its soft limit on open files (``ulimit -n``; 1,024 on most Linux systems gives 256), the rest
    left to polars, pyarrow, imports and threads. Read at each call: a test or a caller may lower it."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return PIN_MAX
    return min(PIN_MAX, soft // PIN_SHARE)


#: The share of the open-file limit given to pins (1 / PIN_SHARE) and their greatest number.
PIN_SHARE = 4
PIN_MAX = 16_384


@dataclass
class AppendResult:
    stored: int = 0
    duplicates: int = 0
    #: Of ``duplicates``, the rows repeated within the frame given (a progress bar printing its last step twice
    #: in one log), not held before.
    repeated: int = 0
    #: The ``source_offset`` of each row stored (Int64, nulls kept), for tables that have one: which
    #: lines stored a row and which only repeated rows already held (a collect counts lines by outcome).
    stored_offsets: list[pl.Series] = field(default_factory=list)
    #: Rows whose key was held (or came earlier in the frame) with other figures: each row's columns, and the
    #: row it met as ``source_held``, ``source_offset_held`` and its figures suffixed ``_held``. Not stored,
    #: not counted as duplicates.
    conflicts: list[pl.DataFrame] = field(default_factory=list)

    def __iadd__(self, other: AppendResult) -> AppendResult:
        self.stored += other.stored
        self.duplicates += other.duplicates
        self.repeated += other.repeated
        self.stored_offsets += other.stored_offsets
        self.conflicts += other.conflicts
        return self

    @property
    def conflicted(self) -> int:
        """How many rows conflicted."""
        return sum(c.height for c in self.conflicts)


@dataclass
class Staged:
    """Data files that appends given this wrote under temporary names, not yet visible:
    :meth:`Dataset.commit_staged` makes them visible (in the order written), or
    :meth:`Dataset.discard_staged` removes them. A kill in between leaves only temporary files,
    which readers ignore and the next collect removes."""

    #: ``(temporary file, final name)``, in the order written.
    files: list[tuple[Path, Path]] = field(default_factory=list)


class Dataset:
    """A tierscope dataset rooted at ``root`` (created on first append).

    ``scans`` counts, per table name, how often this instance opened a table for reading: every
    :meth:`scan` (and so every :meth:`read`, and the read-back of :meth:`append`) lists the
    table's files, checks them and builds one LazyFrame over them, and adds 1. It counts
    openings, not file reads: a LazyFrame collected in several queries (the analysis' batches
    of runs, each reading its runs' partitions) counts once. One analysis pass opens each table
    once (tests/analysis/test_analyze_scans.py).
    """

    def __init__(self, root: Path | GsPath | str) -> None:
        #: A local directory, or a prefix in a bucket for ``gs://bucket/prefix`` (:mod:`.objects`).
        self.root = as_location(root)
        self._verified: dict[Path, tuple[int, int, int]] = {}
        #: Files verified by earlier readers (``state/digests.cache``): not hashed again while unchanged.
        self._digests = None if isinstance(self.root, GsPath) else VerifiedFiles(self.root)
        #: The files (paths to read them by) of each table's latest :meth:`scan`, for :meth:`chunks`.
        self._scanned: dict[str, list[Path]] = {}
        #: Per table's latest :meth:`scan`, the run ids of its short-named partitions (by decoded name).
        self._long_ids: dict[str, dict[str, str]] = {}
        #: The range of the table's range key in each file this instance wrote (None: it has nulls).
        self._ranges: dict[Path, tuple[Any, Any] | None] = {}
        self.scans: Counter[str] = Counter()
        self._pins = _Pins()
        #: Set while this process holds the dataset's lock (:func:`tierscope.dataset.lock.locked`).
        self.holding_lock = False
        #: One line each about what a command repaired on its way (a state document moved
        #: aside); the CLI prints them on stderr.
        self.notices: list[str] = []
        #: Final names of staged files not yet committed or discarded, per partition directory;
        #: an append that must read a partition back waits for them (:meth:`_wait_staged`).
        self._uncommitted: dict[Path, set[Path]] = {}
        self._staging = threading.Condition()

    @property
    def state_dir(self) -> Path:
        return state_dir(self.root)

    @property
    def quarantine_dir(self) -> Path:
        return self.root / "quarantine"

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK_NAME

    def exists(self) -> bool:
        return any((self.root / name).is_dir() for name in TABLES)

    def _partition(self, table: str, run_id: str) -> Path:
        """The partition directory of ``run_id`` in ``table``; a short-named one gets its
        :data:`RUN_ID_FILE` before any data file."""
        directory = self.root / table / partition_dir_name(run_id)
        if directory.name != "run_id=" + quote(run_id, safe="") and not (directory / RUN_ID_FILE).is_file():
            directory.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(directory / RUN_ID_FILE, run_id.encode("utf-8"))
        return directory

    def _scope(self, table: str, run_id: str | None) -> Path:
        base = self.root / table
        return base / partition_dir_name(run_id) if run_id is not None else base

    def _list(self, table: str, run_id: str | None) -> list[Path]:
        base = self._scope(table, run_id)
        if not base.is_dir():
            return []
        return sorted(base.glob(PART_GLOB if run_id is not None else f"run_id=*/{PART_GLOB}"))

    def stored_files(self, table: str, run_id: str | None = None) -> list[Path]:
        """Every ``part-*.parquet`` of ``table``, including files a finished compaction hides."""
        return self._list(table, run_id)

    def files(self, table: str, run_id: str | None = None) -> list[Path]:
        """The live data files of ``table`` (optionally of one run), sorted by path.

        Files replaced by a compacted file are left out, and its staged file is in until it is
        renamed in (see :mod:`tierscope.dataset.journal`). A compaction left half done by a
        killed process is finished first if the dataset's lock is free. Raises
        :class:`~tierscope.dataset.errors.StateCorruptError` if the journal is unreadable.
        """
        before = journal.load(self.root)
        if before.entries and not self.holding_lock:
            from tierscope.dataset.lock import recover_if_free  # lock builds on this module

            if recover_if_free(self):
                before = journal.load(self.root)
        for _ in range(LIST_ATTEMPTS):
            listed = self._list(table, run_id)
            live = journal.live_files(self.root, before, self._scope(table, run_id), listed)
            after = journal.load(self.root)
            if after.generation == before.generation:
                return live
            # A compaction changed the journal while we listed: the listing may mix states.
            before = after
            time.sleep(0.01)
        raise DatasetError(f"dataset {self.root} kept changing while being listed; try again")

    def temp_files(self) -> list[Path]:
        """Temporary files (data and state) left by a killed collect or compact."""
        found = [p for name in TABLES for p in (self.root / name).glob(f"run_id=*/{TMP_PREFIX}*")]
        found += self.state_dir.glob(f"{TMP_PREFIX}*")
        return sorted(found)

    def remove_temp_files(self) -> int:
        """Delete temporary files left by a killed collect. Call only while holding the lock."""
        stale = self.temp_files()
        for path in stale:
            path.unlink(missing_ok=True)
        return len(stale)

    def verify(self, files: list[Path], table: str) -> list[Path]:
        """Check each of ``files`` once per instance (data files never change once written) and
        pin it open (see :class:`_Pins`); returns the paths to read them by, in order.

        A file whose name carries a digest must have exactly those bytes; an older file gets its
        footer and column types checked. Raises :class:`DatasetCorruptError` naming the first bad
        one, :class:`FileNotFoundError` if one was deleted since it was listed (by a compaction).
        """
        readable: list[Path] = []
        ahead = self._hash_ahead(files)
        for path in files:
            local = not isinstance(path, GsPath)
            if local and (self.holding_lock or self._pins.full(path)):
                # No compaction can run while this process holds the lock: nothing to pin; past
                # the pin budget the real path is read (a file a compaction deletes meanwhile
                # makes read() list again). An object is always pinned: polars reads the local
                # copy made on opening.
                with path.open("rb") as handle:
                    self._check(path, path, handle, table, ahead.get(path))
                readable.append(path)
                continue
            handle, link = self._pins.pin(path, path.relative_to(self.root))
            try:
                self._check(path, link, handle, table, ahead.get(path))
            except DatasetCorruptError:
                self._pins.unpin(path)
                raise
            readable.append(link)
        return readable

    def _hash_ahead(self, files: list[Path]) -> dict[Path, _Hashed]:
        """The digests of those of ``files`` that :meth:`_check` would hash (a digest in the name, not
        verified yet), each file hashed on one of :data:`HASH_THREADS` threads (hashlib releases the
        GIL: the first read after a collect hashes every new file). Each is opened on its own: the
        check takes its digest only for the file it pinned (the same stamp), else hashes that one."""
        todo = [
            p for p in files if not isinstance(p, GsPath) and named_digest(p) is not None and p not in self._verified
        ]
        if len(todo) < 2:
            return {}
        if self._digests is not None:
            self._digests.holds(todo[0], os.stat(todo[0]))  # the cache loaded once, before the threads

        def one(path: Path) -> tuple[Path, _Hashed] | None:
            with path.open("rb") as handle:
                st = os.fstat(handle.fileno())
                if self._digests is not None and self._digests.holds(path, st):
                    return None
                hashed_at = time.time_ns()
                return path, _Hashed(stamp_of(st), hashed_at, file_digest(handle))

        with ThreadPoolExecutor(max_workers=HASH_THREADS, thread_name_prefix="tierscope-hash") as pool:
            return dict(found for found in pool.map(one, todo) if found is not None)

    def _check(self, path: Path, link: Path, handle: BinaryIO, table: str, ahead: _Hashed | None = None) -> None:
        st = os.fstat(handle.fileno())
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        if self._verified.get(path) == stamp:
            return
        remembered = self._digests is not None and named_digest(path) is not None
        if remembered and self._digests.holds(path, st):  # type: ignore[union-attr]
            self._verified[path] = stamp
            return
        if ahead is not None and ahead.stamp == stamp_of(st):  # hashed ahead, the very file pinned
            hashed_at, problem = ahead.hashed_at, digest_problem(path, ahead.digest)
        else:
            hashed_at = time.time_ns()
            problem = check_digest(path, handle)
        if problem is None and named_digest(path) is None:
            problem = check_file(link, TABLES[table])
        if problem:
            raise DatasetCorruptError(path, problem)
        self._verified[path] = stamp
        if remembered:
            self._digests.note(path, st, hashed_at)  # type: ignore[union-attr]

    def _checked_files(self, table: str, run_id: str | None) -> list[Path]:
        """The live files, verified and pinned, listed again while a compaction removes some."""
        for _ in range(LIST_ATTEMPTS):
            files = self.files(table, run_id)
            try:
                readable = self.verify(files, table)
            except FileNotFoundError:
                continue  # a compaction replaced a file since the listing: list again
            if self._digests is not None:
                if run_id is None:
                    self._digests.forget_missing(table, files)
                self._digests.save()
            return readable
        raise DatasetError(f"dataset {self.root} kept changing while being listed; try again")

    def scan(self, table: str, run_id: str | None = None) -> pl.LazyFrame:
        """``table`` as a LazyFrame with exactly its schema's columns (``run_id`` from the path).

        Every file is checked first (:meth:`verify`), so a corrupt file raises
        :class:`DatasetCorruptError` (naming it) here rather than a polars error on ``collect()``,
        and pinned open, so the frame stays readable while a compaction replaces its files. The pins
        are this instance's: keep it referenced until the frame is collected (``Dataset(p).scan(t)``
        collected after the Dataset is gone raises ``FileNotFoundError`` on a pinned path). To read
        without tierscope, scan ``DIR/<table>/`` with polars or DuckDB (docs/team-dataset.md, "Its files").
        """
        spec = TABLES[table]
        self.scans[table] += 1
        files = self._checked_files(table, run_id)
        self._scanned[table] = files
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
        # The files may be pinned copies laid out like the dataset: the directory's name is the same.
        long_ids = {
            decoded_name(d.name): partition_run_id(d)
            for d in {self.root / table / f.parent.name for f in files}
            if (d / RUN_ID_FILE).is_file()
        }
        self._long_ids[table] = long_ids
        if long_ids:
            lazy = lazy.with_columns(pl.col("run_id").replace(long_ids))
        return lazy.select(list(spec.schema))

    def footers(self, table: str, columns: list[str]) -> pl.DataFrame:
        """What the footers of the files of the table's latest :meth:`scan` say of ``columns``, one
        row per file (:func:`tierscope.dataset.footers.column_statistics`: ``run_id``, ``rows`` and per
        column its least and greatest value and nulls). Raises :class:`ValueError` before a scan."""
        from tierscope.dataset.footers import column_statistics

        if table not in self._scanned:
            raise ValueError(f"footers of {table!r} before it was scanned")
        long_ids = self._long_ids.get(table, {})

        def run_of(path: Path) -> str:
            decoded = decoded_name(path.parent.name)
            return long_ids.get(decoded, decoded)

        schema = TABLES[table].schema
        return column_statistics(self._scanned[table], run_of, {c: schema[c] for c in columns})

    def chunks(self, table: str, run_id: str, columns: list[str], rows: int = CHUNK_ROWS) -> Iterator[pl.DataFrame]:
        """The rows of run ``run_id`` in ``table``, ``columns`` only (dtypes of its schema; ``run_id``
        too if asked), in stored order, at most ``rows`` at a time: each file is read a slice of a
        row group at a time (pyarrow), so memory stays bounded however large the run (a compacted
        run is one file), where a streaming polars query reads several row groups ahead.

        The files are those of the table's latest :meth:`scan` (checked and pinned: the same rows
        as that frame, whatever a compaction or collect did since), else checked and pinned now.
        """
        import pyarrow.parquet as pq

        spec = TABLES[table]
        schema = {name: spec.schema[name] for name in columns}
        directory = partition_dir_name(run_id)
        scanned = self._scanned.get(table)
        files = self._checked_files(table, run_id) if scanned is None else scanned
        for path in (f for f in files if f.parent.name == directory):
            parquet = pq.ParquetFile(path, buffer_size=1 << 20)  # a column chunk read 1 MB at a time
            present = [name for name in columns if name in parquet.schema_arrow.names and name != "run_id"]
            for batch in parquet.iter_batches(batch_size=rows, columns=present):
                frame = pl.DataFrame(pl.from_arrow(batch))
                yield conform(frame.with_columns(run_id=pl.lit(run_id)), schema)

    def read(
        self,
        table: str,
        run_id: str | None = None,
        where: pl.Expr | None = None,
        columns: list[str] | None = None,
    ) -> pl.DataFrame:
        """``table`` as a DataFrame (only the rows ``where`` holds and the ``columns`` given, if
        given). Raises :class:`DatasetCorruptError` naming the first bad file.

        A file deleted by a concurrent compaction between listing and reading makes it list
        and read again.
        """
        for _ in range(LIST_ATTEMPTS):
            lazy = self.scan(table, run_id)
            if where is not None:
                lazy = lazy.filter(where)
            if columns is not None:
                lazy = lazy.select(columns)
            try:
                return lazy.collect()
            except (pl.exceptions.PolarsError, OSError) as exc:
                if _is_not_found(exc):
                    continue
                try:
                    found = self.corrupt_file(table, run_id)
                except FileNotFoundError:
                    continue
                if found is not None:
                    raise found from exc
                raise
        raise DatasetError(f"dataset {self.root} kept changing while being read; try again")

    def corrupt_file(self, table: str, run_id: str | None = None) -> DatasetCorruptError | None:
        """The error naming the first live file of ``table`` (of one run) whose pages do not decode
        (:func:`check_file` deep), or None: what a query of a :meth:`scan` that failed says (an
        error path: it decodes every file). Raises :class:`FileNotFoundError` if one is gone."""
        for path in self.files(table, run_id):
            problem = check_file(path, TABLES[table], deep=True)
            if problem:
                return DatasetCorruptError(path, problem)
        return None

    def set_aside_state(self, error: StateCorruptError) -> Path:
        """Move the unreadable state document ``error`` names to ``quarantine/`` (call holding
        the lock) and add a notice saying so; returns where it went."""
        from tierscope.dataset.state import move_aside, set_aside_note

        moved = move_aside(self.root, error.path)
        self.notices.append(set_aside_note(error, moved))
        return moved

    def written(self, path: Path) -> None:
        """Note that this instance just wrote ``path``: it need not be read back to be verified."""
        st = path.stat()
        self._verified[path] = (st.st_size, st.st_mtime_ns, st.st_ino)

    def append(self, table: str, frame: pl.DataFrame, staged: Staged | None = None) -> AppendResult:
        """Add the rows of ``frame`` that the dataset does not hold yet; one new file per run.

        Rows are identified by the table's key columns (nulls equal nulls). Returns how
        many rows were stored and how many were already there (or repeated in ``frame``).
        With ``staged``, the new files are only written under temporary names and added to it,
        to be made visible by :meth:`commit_staged` (possibly on another thread, while the next
        append runs: later appends count staged rows as held).
        """
        spec = TABLES[table]
        frame = conform(frame, spec.schema)
        result = AppendResult()
        if frame.height == 0:
            return result
        for run_id, part in _by_run(frame):
            if run_id is None:
                raise ValueError(f"{table}: rows without a run_id cannot be stored")
            new = part
            found: list[pl.DataFrame] = []  # this run's conflicts
            if spec.key is not None:
                key = list(spec.key)
                # A key column rising strictly from row to row proves the rows distinct (a log's
                # steps, a batch's line numbers): one comparison a row. Else equal rows hash
                # equal, so distinct hashes prove distinct rows; hashing is far cheaper than the
                # exact unique, which is needed only when two hashes meet.
                if not _rising(part, spec.range_key):
                    hashes = part.select(key).hash_rows()
                    if hashes.n_unique() < hashes.len():
                        new = part.unique(subset=key, keep="first", maintain_order=True)
                        if spec.figures:
                            repeated = part.filter(~pl.struct(key).is_first_distinct())
                            found += _conflicts(repeated, new, spec)
                        result.repeated += part.height - new.height - sum(c.height for c in found)
                directory = self._scope(table, str(run_id))
                pending = self._staged_in(directory)
                if pending and not self._beyond_written(pending, new, spec.range_key):
                    self._wait_staged(directory, staged)  # rows they hold must be read back
                held_files = self.files(table, str(run_id))
                if held_files and not self._beyond_written(held_files, new, spec.range_key):
                    told = [*spec.figures, "source", "source_offset"] if spec.figures else []
                    held = self.read(table, str(run_id), where=_within(new, spec.range_key), columns=key + told)
                    held = held.unique(subset=key, keep="first") if told else held.unique()
                    if held.height:
                        if told:
                            found += _conflicts(new, held, spec)
                        new = new.join(held.select(key), on=key, how="anti", nulls_equal=True)
            result.conflicts += found
            result.duplicates += part.height - new.height - sum(c.height for c in found)
            if new.height:
                directory = self._partition(table, str(run_id))
                if staged is None:
                    path = write_atomic(new.drop("run_id"), directory)
                    self.written(path)
                else:
                    tmp, path = write_temp(new.drop("run_id"), new_part_path(directory))
                    with self._staging:
                        staged.files.append((tmp, path))
                        self._uncommitted.setdefault(directory, set()).add(path)
                if spec.range_key is not None:
                    self._ranges[path] = _range(new, spec.range_key)
                result.stored += new.height
                if "source_offset" in new.columns:
                    result.stored_offsets.append(new.get_column("source_offset"))
        return result

    def commit_staged(self, staged: Staged) -> None:
        """Make ``staged``'s files visible, in the order written, each durably (fsync, rename,
        fsync of its directory). Raises :class:`OSError`; the files not committed are removed then."""
        try:
            while staged.files:
                tmp, final = staged.files[0]
                with writing(tmp, final):  # a failure names the data file, as write_atomic's does
                    commit(tmp, final)
                self.written(final)
                staged.files.pop(0)
                self._settle([final])
        finally:
            self.discard_staged(staged)

    def discard_staged(self, staged: Staged) -> None:
        """Remove ``staged``'s files not committed (their rows were never stored)."""
        for tmp, _ in staged.files:
            tmp.unlink(missing_ok=True)
        finals = [final for _, final in staged.files]
        staged.files.clear()
        self._settle(finals)

    def _settle(self, finals: list[Path]) -> None:
        """Note that ``finals`` are committed or discarded; wake appends waiting for them."""
        with self._staging:
            for final in finals:
                waiting = self._uncommitted.get(final.parent)
                if waiting is not None:
                    waiting.discard(final)
                    if not waiting:
                        del self._uncommitted[final.parent]
            self._staging.notify_all()

    def _staged_in(self, directory: Path) -> list[Path]:
        with self._staging:
            return list(self._uncommitted.get(directory, ()))

    def _wait_staged(self, directory: Path, own: Staged | None) -> None:
        """Wait until the files staged in ``directory`` are committed or discarded (``own``'s, the
        caller's own uncommitted ones, are committed here: nobody else would)."""
        if own is not None and any(final.parent == directory for _, final in own.files):
            self.commit_staged(own)
        with self._staging:
            self._staging.wait_for(lambda: directory not in self._uncommitted)

    def _beyond_written(self, files: list[Path], frame: pl.DataFrame, column: str | None) -> bool:
        """Whether ``frame``'s range of ``column`` (a key column) meets none of ``files``, all written
        by this instance: then no held row can equal a row of ``frame``, and nothing is read back.
        False whenever it cannot tell (a file written by another process, nulls)."""
        mine = [self._ranges.get(path) for path in files]
        if column is None or None in mine:
            return False
        lo, hi = _range(frame, column) or (None, None)
        return lo is not None and all(hi < held_lo or lo > held_hi for held_lo, held_hi in mine)  # type: ignore[union-attr]


def _by_run(frame: pl.DataFrame) -> Iterable[tuple[Any, pl.DataFrame]]:
    """``(run_id, rows)`` for each run in ``frame``, in order of appearance. A batch of one log
    nearly always holds one run: then ``frame`` itself, without the group-by's copy of every column."""
    runs = frame.get_column("run_id")
    first = runs[0]
    if first is not None and runs.null_count() == 0 and bool((runs == first).all()):
        return [(first, frame)]
    return ((run_id, part) for (run_id,), part in frame.group_by("run_id", maintain_order=True))


def _rising(frame: pl.DataFrame, column: str | None) -> bool:
    """Whether ``frame[column]`` holds no null and each value is greater than the one before it
    (then no two rows share it; False for no ``column``)."""
    if column is None:
        return False
    values = frame.get_column(column)
    if values.null_count():
        return False
    return values.len() < 2 or bool((values.slice(1) > values.slice(0, values.len() - 1)).all())


def _conflicts(rows: pl.DataFrame, kept: pl.DataFrame, spec: Table) -> list[pl.DataFrame]:
    """The rows of ``rows`` whose key ``kept`` holds with other figures (:func:`figures_differ`), each with the
    kept row's source, line and figures suffixed ``_held``; an empty list when there are none."""
    key = list(spec.key or ())
    told = [*spec.figures, "source", "source_offset"]
    met = rows.join(kept.select(*key, *told), on=key, how="inner", nulls_equal=True, suffix="_held")
    differ = met.filter(figures_differ("_held"))
    return [differ] if differ.height else []


def _within(frame: pl.DataFrame, column: str | None) -> pl.Expr | None:
    """Held rows that can equal a row of ``frame`` on ``column`` (None: any row can)."""
    if column is None or frame[column].null_count():
        return None
    return pl.col(column).is_between(frame[column].min(), frame[column].max())


def _range(frame: pl.DataFrame, column: str) -> tuple[Any, Any] | None:
    """``(min, max)`` of ``frame[column]``, or None if it holds a null (or nothing)."""
    values = frame.get_column(column)
    if values.null_count() or values.is_empty():
        return None
    return values.min(), values.max()


def _is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, FileNotFoundError) or "No such file" in str(exc)


def check_file(path: Path, table: Table, deep: bool = False) -> str | None:
    """What is wrong with one data file, or None. Raises :class:`FileNotFoundError` if it is gone.

    Checks the digest in its name (see :func:`write_temp`), the footer (zero-byte, truncated,
    not Parquet) and the column types against ``table``'s schema; with ``deep`` also decodes
    every page, verifying the page checksums of files that have them.
    """
    import pyarrow.parquet as pq  # only doctor and error paths need it: keeps it off collect's start-up

    if isinstance(path, GsPath):
        with local_file(path) as copy:  # pyarrow and polars read local files
            return check_file(copy, table, deep)
    try:
        if path.stat().st_size == 0:
            return "empty file (0 bytes)"
        with path.open("rb") as handle:
            damaged = check_digest(path, handle)
        if damaged:
            return damaged
        pq.ParquetFile(path).metadata  # noqa: B018 (reads and checks the footer)
        found = pl.read_parquet_schema(path)
    except FileNotFoundError:
        raise
    except Exception as exc:
        if not path.exists():
            raise FileNotFoundError(path) from exc
        return f"not a readable Parquet file ({type(exc).__name__}: {_first_line(exc)})"
    for name, dtype in found.items():
        want = table.schema.get(name)
        if want is not None and dtype != want:
            return f"column '{name}' has type {dtype}, expected {want}"
    if deep:
        try:
            rows = pq.read_table(path, page_checksum_verification=True).num_rows
        except FileNotFoundError:
            raise
        except Exception as exc:
            return f"damaged data pages ({type(exc).__name__}: {_first_line(exc)})"
        listed = pq.read_metadata(path).num_rows
        if rows != listed:
            return f"holds {rows} rows, its footer says {listed}"
    return None


def check_digest(path: Path, handle: BinaryIO) -> str | None:
    """What is wrong with the bytes of ``path`` (open as ``handle``) against the digest in its
    name, or None (also for a file whose name has no digest)."""
    return digest_problem(path, file_digest(handle)) if named_digest(path) is not None else None


def digest_problem(path: Path, got: str) -> str | None:
    """What is wrong with ``got``, the digest of ``path``'s bytes, against the one in its name, or None."""
    want = named_digest(path)
    if want is not None and got != want:
        return f"its bytes changed since it was written (SHA-256 {got}..., its name says {want}...)"
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def all_files(dataset: Dataset) -> Iterable[tuple[Table, Path]]:
    """Every stored data file with its table, hidden (compacted-away) files included."""
    for table in TABLES.values():
        for path in dataset.stored_files(table.name):
            yield table, path
