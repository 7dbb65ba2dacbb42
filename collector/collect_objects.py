"""Collect logs kept on Cloud Storage: ``tierscope collect files gs://...``.

The object counterpart of :func:`tierscope.collector.collect.collect_file`: the same line
reader, format chain and appends, fed by a stream of the object
(:mod:`tierscope.collector.sources.objects`) instead of a local file.

What a URL gives (:func:`runs_from_urls`):

- a prefix (``gs://bucket/jobs/job42/``, or ``gs://bucket/`` itself) is a run directory:
  every log object under it, at any depth (per-task subdirectories, a Cloud Logging sink's
  ``<log>/YYYY/MM/DD/08:00:00_08:59:59_S0.json`` hours). A ``run.json`` under it makes
  its folder a run of its own (``gs://bucket/jobs/`` holding ``job42/run.json`` and
  ``job43/run.json`` is two runs); objects outside any such folder belong to the prefix's
  run, named after its last part (the bucket for ``gs://bucket/``). Records that name their
  run (a job's structured records, LogEntries with a job id) keep it.
- a glob (``gs://bucket/logs/*.log``) or a single object: loose files, as on the command line.

Incremental: each object's state is kept in ``state/files.json`` like a local file's, keyed
by its URL, with its generation as the fingerprint. The same generation is not read again;
a new one (the object was rewritten) is read from its start, the records already stored
skipped as duplicates. An object is read whole in one collect and marked read at its end, so
a collect killed half way reads it again (objects do not grow: nothing is left for later).
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from tierscope import gcs
from tierscope.collector.collect import (
    DEFAULT_SETTLE_S,
    SourceCounts,
    _Reading,
    collect_whole,
    default_run_id,
    directory_run,
    is_log_name,
    parse_run_meta,
)
from tierscope.collector.errors import InputError
from tierscope.collector.formats import HEAD_BYTES, FileFormat, ParseContext, check_format, sniff_file
from tierscope.collector.manifest import RunSpec
from tierscope.collector.offsets import FileState, OffsetStore, Segment
from tierscope.collector.sources import objects
from tierscope.collector.sources.files import DEFAULT_BATCH_BYTES, WHOLE_FILE_MAX_BYTES
from tierscope.contract import RUN_FILE
from tierscope.dataset.store import Dataset

#: The most of a run.json read (it is a few hundred bytes).
RUN_FILE_MAX_BYTES = 1 << 20


def _event_files_error(url: str, events: list[str]) -> InputError:
    return InputError(
        f"{url} holds TensorBoard event files ({len(events)}, e.g. {events[0]}), which are read from "
        f"local files only: copy them (`gcloud storage cp -r {url} DIR`) and collect the copy"
    )


def runs_from_urls(urls: list[str], run_id: str | None, tier: str | None, fmt: str | None) -> list[RunSpec]:
    """Runs for ``collect files gs://...`` (see the module doc). Raises :class:`InputError` for a
    URL naming nothing, a prefix without logs, TensorBoard event files (named alone, or a prefix's
    only files: they are read from local files only), or a bucket that cannot be listed."""
    from tierscope.collector.sources.tfevents import is_event_file

    specs: list[RunSpec] = []
    loose: list[Path | str] = []
    for url in urls:
        is_prefix, found = objects.listing(url)
        events = [o.name for o in found if is_event_file(Path(o.name))]
        if events and not is_prefix:
            # Read as text they gave no record and no reject: only a local file is read as records.
            raise _event_files_error(url, events)
        if not is_prefix:
            loose += [objects.ObjectURL(o) for o in found if o.name != RUN_FILE]
            continue
        runs = _prefix_runs(url.rstrip("/") + "/", found, run_id, tier, fmt)
        if not runs and events:
            raise _event_files_error(url, events)
        if not runs:
            suffixes = ", ".join(sorted({Path(o.name).suffix or "(none)" for o in found}))
            raise InputError(f"{url} holds {len(found)} objects but no log files (their suffixes: {suffixes})")
        specs += runs
    if loose:
        first = Path(gcs.split(str(loose[0]))[1])
        specs.append(RunSpec(run_id=run_id or default_run_id(first), tier=tier, files=loose, format=fmt))
    return specs


def _prefix_runs(
    prefix: str, found: list[objects.StoredObject], run_id: str | None, tier: str | None, fmt: str | None
) -> list[RunSpec]:
    """The runs under ``prefix``: one per folder holding a ``run.json``, and the prefix's own."""
    roots = sorted({gcs.parent(o.url) for o in found if o.name == RUN_FILE} | {prefix}, key=len, reverse=True)
    logs: dict[str, list[Path | str]] = {}
    for obj in found:
        if is_log_name(obj.name):
            root = next(r for r in roots if obj.url.startswith(r))  # the deepest: roots are longest first
            logs.setdefault(root, []).append(objects.ObjectURL(obj))
    specs = []
    for root in sorted(logs):
        meta_url = root + RUN_FILE
        has_meta = any(o.url == meta_url for o in found)
        meta = parse_run_meta(objects.read_bytes(meta_url, RUN_FILE_MAX_BYTES), meta_url) if has_meta else {}
        name = root.rstrip("/").rsplit("/", 1)[-1]
        specs.append(directory_run(name, meta, meta_url, logs[root], run_id, tier, fmt))
    return specs


def collect_object(
    dataset: Dataset,
    url: str,
    run: RunSpec,
    fmt: str | None = None,
    year: int | None = None,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    *,
    offsets: OffsetStore | None = None,
    settle_s: float = DEFAULT_SETTLE_S,
    reread: bool = False,
) -> SourceCounts:
    """Parse the object at ``url`` unless this generation of it was read already, and append
    what it holds to ``dataset``. Caller holds the lock.

    As :func:`~tierscope.collector.collect.collect_file` (``fmt``, ``year`` default: the year the
    object was last written, ``reread``); ``settle_s`` is not used: an object is complete once
    it exists. Plain and gzip objects are streamed; a whole-file format (a JSON export) is
    downloaded to a temporary file, at most :data:`WHOLE_FILE_MAX_BYTES`. Raises
    :class:`InputError` for an object that cannot be read.
    """
    only = fmt or run.format
    named = check_format(only, run.formats) if only else None
    offsets = offsets if offsets is not None else OffsetStore(dataset.state_dir)
    obj = objects.stat(url)
    url = obj.url  # a plain str from here on: it goes into frames and state documents
    prev = offsets.get(url, run.run_id)
    if not reread and prev is not None and prev.whole and prev.generation == obj.generation:
        return SourceCounts(source=url, run_id=run.run_id, format=prev.format, notes=["unchanged"])
    if year is None and obj.updated is not None:
        year = obj.updated.year
    with objects.opened(url) as raw:
        whole_file = named if isinstance(named, FileFormat) else None if only else sniff_file(_head(raw))
        if whole_file is not None:
            counts = _collect_downloaded(dataset, raw, obj, run, whole_file, year)
        else:
            counts = SourceCounts(source=url, run_id=run.run_id, format=only or (prev.format if prev else None))
            if prev is not None and not reread:
                counts.notes.append(f"a new generation of the object ({obj.generation}): read from its start")
            why = "reread" if reread else "new" if prev is None else "rewritten"
            reading = _Reading(dataset, run, only, ParseContext(year=year, formats=run.formats), counts, batch_bytes)
            reading.segment(Segment(url, 0, 0, why), _lines(raw), raw, None, 0.0, True)
            counts.note_nan_loss()
    offsets.put(_state(obj, run.run_id, counts))
    return counts


def _lines(raw: BinaryIO) -> BinaryIO:
    """A reader of ``raw``'s bytes from its start: itself, or gzip decompressing it."""
    raw.seek(0)
    magic = raw.read(2)
    raw.seek(0)
    return gzip.GzipFile(fileobj=raw, mode="rb") if magic == b"\x1f\x8b" else raw  # type: ignore[return-value]


def _head(raw: BinaryIO) -> str:
    """The object's first :data:`HEAD_BYTES` (decompressed), decoded, for sniffing; empty if unreadable."""
    try:
        return _lines(raw).read(HEAD_BYTES).decode("utf-8", errors="replace")
    except (OSError, EOFError):
        return ""


def _collect_downloaded(
    dataset: Dataset, raw: BinaryIO, obj: objects.StoredObject, run: RunSpec, fmt: FileFormat, year: int | None
) -> SourceCounts:
    """Read the object ``raw`` whole with ``fmt`` from a temporary copy (the whole-file readers take a path)."""
    if obj.size > WHOLE_FILE_MAX_BYTES:
        raise InputError(
            f"{obj.url} is a {fmt.name} file of {obj.size >> 20} MiB, more than tierscope reads whole "
            f"({WHOLE_FILE_MAX_BYTES >> 20} MiB): split it (export shorter time ranges)"
        )
    with tempfile.TemporaryDirectory(prefix="tierscope-object-") as tmp:
        local = Path(tmp) / obj.name
        raw.seek(0)
        with local.open("wb") as out:
            shutil.copyfileobj(raw, out)
        return collect_whole(dataset, local, run, fmt, year, source=obj.url)


def _state(obj: objects.StoredObject, run_id: str, counts: SourceCounts) -> FileState:
    """What is kept of an object read whole: its generation (the fingerprint), size and lines."""
    updated = obj.updated or datetime.fromtimestamp(0, UTC)
    return FileState(
        path=obj.url,
        run_id=run_id,
        device=0,
        inode=0,
        size=obj.size,
        mtime_ns=int(updated.timestamp() * 1e9),
        offset=obj.size,
        line=counts.lines,
        head_sha256="",
        head_len=0,
        tail_sha256="",
        tail_len=0,
        whole=True,
        collected_at=datetime.now(UTC).isoformat(timespec="seconds"),
        format=counts.format,
        generation=obj.generation,
    )
