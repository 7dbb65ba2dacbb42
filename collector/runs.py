"""The runs a ``collect files`` names and what it reports per file: light enough (the standard
library, the manifest's records) to be imported before deciding whether a collect has anything
to read (:mod:`tierscope.collector.unchanged`); :mod:`tierscope.collector.collect` re-exports
all of it."""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from tierscope.atomic import TMP_PREFIX
from tierscope.collector.errors import InputError
from tierscope.collector.manifest import RunSpec
from tierscope.collector.sources.eventfiles import EVENT_FILE_PREFIX, event_files, is_event_file
from tierscope.contract import JSON_LOG_SUFFIX, RUN_FILE, TEXT_LOG_SUFFIX, RunDoc
from tierscope.gcs import is_url

#: The files of a run directory read as logs (a directory written by ``tierscope train local``
#: holds RUN_FILE and logs; see :mod:`tierscope.contract`).
LOG_SUFFIXES = (TEXT_LOG_SUFFIX, JSON_LOG_SUFFIX, ".txt", ".gz", ".json", ".out", ".err")


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
    #: What was unusual: a rotation, a line left for the next collect, an unchanged file.
    notes: list[str] = field(default_factory=list)
    #: Step records stored with a NaN loss, and the line (entry) number of the first.
    nan_loss: int = 0
    first_nan_loss: int | None = None

    def note_nan_loss(self) -> None:
        """Add the note on NaN losses, if any. A NaN loss is noted, not rejected: the step and
        its timing are real (tierscope measures speed, and a diverged model steps as fast), so
        the record is stored with its loss NaN, and the user learns where the model diverged."""
        if self.nan_loss:
            at = f" (first at line {self.first_nan_loss})" if self.first_nan_loss is not None else ""
            self.notes.append(
                f"{self.nan_loss} step records have loss NaN{at}: the model diverged; they are stored, "
                "their timing is real"
            )


@dataclass
class CollectResult:
    """Counts per input file, and the files that could not be read (the others were collected)."""

    sources: list[SourceCounts] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.sources)


def check_utf8_name(path: Path) -> None:
    """Raise :class:`InputError` if ``path`` is not valid UTF-8: the dataset, its state and
    run ids derived from file names are UTF-8 text."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")  # the undecodable bytes, escaped
        raise InputError(f"cannot read {shown}: its name is not valid UTF-8; rename it") from None


def _run_meta(path: Path) -> RunDoc:
    """A run directory's ``run.json``; raises :class:`InputError` when it is not a JSON object."""
    return parse_run_meta(path.read_bytes(), path)


def parse_run_meta(data: bytes, path: Path | str) -> RunDoc:
    """``run.json``'s bytes ``data`` (read from ``path``); raises :class:`InputError` if not a JSON object."""
    try:
        meta = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(
            f"{path} is not valid JSON ({exc}); fix it or delete it (the run is then named after its directory)"
        ) from None
    if not isinstance(meta, dict):
        raise InputError(f"{path} holds a JSON {type(meta).__name__}, not an object; fix it or delete it")
    return cast(RunDoc, meta)


def _declared_replicas(meta: RunDoc, path: Path | str) -> str | None:
    """run.json's ``topology`` (``{role: count}``) as the runs table's ``replicas`` JSON, or None.
    Raises :class:`InputError` for a topology that is not a table of whole numbers."""
    topology = meta.get("topology")
    if topology is None:
        return None
    if not isinstance(topology, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in topology.values()
    ):
        raise InputError(f"{path}: 'topology' must be an object of replica counts like {{\"worker\": 2}}; fix it")
    return json.dumps({role: n for role, n in topology.items() if n}, sort_keys=True)


def _declared_batch(meta: RunDoc) -> int | None:
    """run.json's ``config.batch_size`` (examples per replica per step), or None."""
    config = meta.get("config")
    batch = config.get("batch_size") if isinstance(config, dict) else None
    return batch if isinstance(batch, int) and not isinstance(batch, bool) and batch > 0 else None


def _is_log(path: Path) -> bool:
    return path.is_file() and is_log_name(path.name)


def is_log_name(name: str) -> bool:
    """Whether a file (or object) named ``name`` in a run directory is read as a log."""
    # A temporary file left by a killed writer (tierscope.atomic) is neither a log nor run.json.
    return Path(name).suffix in LOG_SUFFIXES and name != RUN_FILE and not name.startswith(TMP_PREFIX)


def directory_run(
    name: str, meta: RunDoc, meta_path: Path | str, logs: list[Path | str], run_id: str | None,
    tier: str | None, fmt: str | None,
) -> RunSpec:  # fmt: skip
    """The run of a run directory named ``name`` holding ``logs``, its ``run.json`` ``meta``
    (read from ``meta_path``; empty if none) filling in what the command line leaves out."""
    return RunSpec(
        run_id=run_id or meta.get("run_id") or name,
        tier=tier or meta.get("tier"),
        files=logs,
        ran_on=meta.get("host"),
        format=fmt,
        replicas=_declared_replicas(meta, meta_path),
        strategy=meta.get("strategy") if isinstance(meta.get("strategy"), str) else None,
        batch_size=_declared_batch(meta),
    )


def missing_input(path: Path) -> InputError:
    """The error of a log path that is not there (one wording wherever a path is named)."""
    return InputError(f"cannot read {path}: no such file or directory; check the path")


def runs_from_paths(paths: list[Path | str], run_id: str | None, tier: str | None, fmt: str | None) -> list[RunSpec]:
    """Runs for ``collect files PATH...``: a run directory (with ``run.json``) is a run of its
    own; plain files all belong to ``run_id`` (default: the first file's name without suffix).
    ``gs://`` URLs are objects, prefixes or globs (:func:`tierscope.collector.collect_objects.runs_from_urls`).
    Raises :class:`InputError` for a path that does not exist."""
    specs: list[RunSpec] = []
    loose: list[Path | str] = []
    if any(is_url(p) for p in paths):
        from tierscope.collector.collect_objects import runs_from_urls

        local = runs_from_paths([p for p in paths if not is_url(p)], run_id, tier, fmt)
        return local + runs_from_urls([str(p) for p in paths if is_url(p)], run_id, tier, fmt)
    for path in map(Path, paths):
        check_utf8_name(path)
        if not path.exists():
            if _is_link_loop(path):
                raise InputError(
                    f"cannot read {path}: a symbolic link loop (the link leads back to itself); fix the link"
                )
            raise missing_input(path)
        if path.is_dir():
            meta_path = path / RUN_FILE
            meta = _run_meta(meta_path) if meta_path.is_file() else {}
            logs: list[Path | str] = sorted(p for p in path.iterdir() if _is_log(p))
            logs += event_files(path)
            if not logs:
                raise InputError(
                    f"{path} is a directory with no log files ({', '.join(LOG_SUFFIXES)}) "
                    f"and no TensorBoard event files ({EVENT_FILE_PREFIX}*)"
                )
            specs.append(directory_run(path.name, meta, meta_path, logs, run_id, tier, fmt))
        else:
            loose.append(path)
    if loose:
        specs.append(RunSpec(run_id=run_id or default_run_id(Path(loose[0])), tier=tier, files=loose, format=fmt))
    return specs


def default_run_id(path: Path) -> str:
    """The run id of a loose file: its name up to the first dot, leading dots skipped
    (``.hidden.log`` is ``hidden``); the whole name if that leaves nothing (``...``). An event
    file's run is its job directory (:func:`~tierscope.collector.sources.tfevents.run_name`)."""
    if is_event_file(path):
        from tierscope.collector.sources.tfevents import run_name  # polars: only for an event file given alone

        return run_name(path)
    return path.name.lstrip(".").split(".")[0] or path.name


def _is_link_loop(path: Path) -> bool:
    try:
        path.stat()
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
