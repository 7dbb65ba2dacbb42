"""The runs a ``collect files`` names and what it reports per file: light enough (the standard
library, the manifest's records) to be imported before deciding whether a collect has anything
to read (:mod:`tierscope.collector.unchanged`)."""

from __future__ import annotations

import errno
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tierscope import gcs
from tierscope.atomic import TMP_PREFIX
from tierscope.collector.errors import InputError, MissingInputError
from tierscope.collector.manifest import HARDWARE_KEYS, RunSpec
from tierscope.collector.sources.eventfiles import EVENT_FILE_PREFIX, is_event_file
from tierscope.contract import JSON_LOG_SUFFIX, RUN_FILE, TEXT_LOG_SUFFIX, RunDoc
from tierscope.gcs import is_url, other_store

if TYPE_CHECKING:
    import polars as pl

    from tierscope.collector.sources import objects

#: The files of a run directory read as logs (a directory written by ``tierscope train local``
#: holds RUN_FILE and logs; see :mod:`tierscope.contract`).
LOG_SUFFIXES = (TEXT_LOG_SUFFIX, JSON_LOG_SUFFIX, ".txt", ".gz", ".json", ".out", ".err")


@dataclass
class SourceCounts:
    """What one collect did with one input file.

    ``steps``, ``events``, ``duplicates`` and ``rejects`` count rows (records, events, rejects);
    the ``*_lines`` figures count lines by outcome, so that ``step_lines + event_lines +
    duplicate_lines + rejected_lines + skipped == lines`` whatever a line holds. A line's outcome is
    the first of: it stored a step record (however many: a glued Keras line may hold several), it
    stored an event, it held only rows already stored (duplicates), it gave only rejects, it gave
    nothing (``skipped``). A reject on a line of another outcome, or a second one on a rejected
    line, is a *rejected piece* (``rejects - rejected_lines``): kept in the rejects table, not a line.
    """

    source: str
    run_id: str
    lines: int = 0
    steps: int = 0
    events: int = 0
    rejects: int = 0
    duplicates: int = 0
    #: Of ``duplicates``, the records (and events) repeated within this file as read (a tqdm bar printing its
    #: last step, ``1000/1000``, twice), not held from before.
    repeated: int = 0
    skipped: int = 0
    step_lines: int = 0
    event_lines: int = 0
    duplicate_lines: int = 0
    rejected_lines: int = 0
    #: The format sniffed from the file's first lines (or given), None when none matched.
    format: str | None = None
    #: What was unusual: a rotation, a line left for the next collect, an unchanged file.
    notes: list[str] = field(default_factory=list)
    #: Step records stored with a NaN loss, and the line (entry) number of the first.
    nan_loss: int = 0
    first_nan_loss: int | None = None
    #: True when the file was read for the first time and none of its lines gave anything (no record,
    #: event, reject or duplicate): its position is not kept, so the next collect (after a format of the
    #: user's own is declared) reads it from its start, and no run is recorded for it alone.
    unread: bool = False
    #: True when this collect read the file from its start (no position of it was kept).
    first_read: bool = False
    #: Step records kept aside (as rejects) because a record of the same step, task and time was held with other
    #: figures (:data:`~tierscope.dataset.schema.STEP_FIGURES`); the first as (line, step, other source, its line).
    conflicts: int = 0
    first_conflict: tuple[int | None, int | None, str | None, int | None] | None = None
    #: The runs this file's step records went to: its own, or those its records name (a Cloud Logging
    #: export's job ids), whose facts are then those the user gave for the file.
    stored_runs: set[str] = field(default_factory=set, compare=False)

    @property
    def nothing_read(self) -> bool:
        """True when the file had lines and none gave a record, an event, a reject or a duplicate."""
        return bool(self.lines) and not (self.steps or self.events or self.rejects or self.duplicates)

    def note_conflicts(self, conflicts: pl.DataFrame) -> None:
        """Count ``conflicts`` (step records of this file that claim steps held with other figures, as
        :attr:`~tierscope.dataset.store.AppendResult.conflicts` gives them) and keep the first for the warning."""
        if conflicts.height == 0:
            return
        self.conflicts += conflicts.height
        if self.first_conflict is None:
            first = conflicts.sort("source_offset", nulls_last=True).row(0, named=True)
            self.first_conflict = (
                first["source_offset"],
                first["step"],
                first["source_held"],
                first["source_offset_held"],
            )

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
    #: Why the collect stopped before its last file (``--max-seconds``); None: it read them all.
    stopped: str | None = None
    #: One line each: what the collect found doubtful in what it stored (a run whose tasks disagree).
    warnings: list[str] = field(default_factory=list)
    #: Per run collected before whose facts this collect changed (``--machine`` given on a collect again):
    #: the runs table's columns that changed (:class:`tierscope.collector.sink.RecordedFacts`).
    facts_changed: dict[str, list[str]] = field(default_factory=dict)

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


#: What :func:`not_a_file` says of a path whose links lead back to themselves.
LINK_LOOP = "a symbolic link loop (the link leads back to itself)"
#: What :func:`not_a_file` says of a path naming nothing.
NO_SUCH_FILE = "no such file or directory"


def not_a_file(path: Path) -> str:
    """What ``path``, no regular file, is instead: a directory, another kind of file (a device, a pipe, a socket),
    a :data:`LINK_LOOP`, or nothing (:data:`NO_SUCH_FILE`)."""
    if path.is_dir():
        return "a directory"
    if path.exists():
        return "not a regular file"
    return LINK_LOOP if is_link_loop(path) else NO_SUCH_FILE


def check_readable(path: Path) -> None:
    """Raise :class:`MissingInputError` if ``path`` is not a regular file (saying what it is, :func:`not_a_file`),
    :class:`InputError` if its name is not UTF-8."""
    if not path.is_file():
        raise MissingInputError(f"cannot read {path}: {not_a_file(path)}")
    check_utf8_name(path)


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
        hardware=_declared_hardware(meta, meta_path),
    )


def _declared_hardware(meta: RunDoc, meta_path: Path | str) -> dict[str, object] | None:
    """run.json's machine keys (``machine``, ``accelerator``, ``tpu``, ``spot``, ``region``, ``job_spec`` beside it),
    which a cloud job's run directory may add to what the trainer writes (:class:`tierscope.contract.RunDoc`)."""
    given: dict[str, object] = dict(meta)
    found = {k: given[k] for k in HARDWARE_KEYS if k in given}
    if isinstance(found.get("job_spec"), str) and isinstance(meta_path, Path):
        found["job_spec"] = meta_path.parent / str(found["job_spec"])
    return found or None


def missing_input(path: Path) -> InputError:
    """The error of a log path that is not there (one wording wherever a path is named); another store's URL
    (``s3://``, which a path folds to ``s3:/``) is said to be one."""
    url = other_store(str(path))
    if url is not None:
        return InputError(f"cannot read {url}: tierscope reads local files and gs:// objects; copy it to one")
    return InputError(f"cannot read {path}: {NO_SUCH_FILE}; check the path")


def runs_from_paths(paths: list[Path | str], run_id: str | None, tier: str | None, fmt: str | None) -> list[RunSpec]:
    """Runs for ``collect files PATH...``: a run directory (with ``run.json``) is a run of its
    own; plain files are grouped by :func:`loose_runs` (all of them one run with ``run_id``).
    ``gs://`` URLs are objects, prefixes or globs (:func:`runs_from_urls`).
    Raises :class:`InputError` for a path that does not exist."""
    specs: list[RunSpec] = []
    loose: list[Path | str] = []
    if any(is_url(p) for p in paths):
        local = runs_from_paths([p for p in paths if not is_url(p)], run_id, tier, fmt)
        return local + runs_from_urls([str(p) for p in paths if is_url(p)], run_id, tier, fmt)
    for path in map(Path, paths):
        check_utf8_name(path)
        if not path.exists():
            if is_link_loop(path):
                raise InputError(f"cannot read {path}: {LINK_LOOP}; fix the link")
            raise missing_input(path)
        if path.is_dir():
            found = _directory_runs(path, run_id, tier, fmt)
            if not found:
                raise InputError(
                    f"{path} is a directory with no log files ({', '.join(LOG_SUFFIXES)}) "
                    f"and no TensorBoard event files ({EVENT_FILE_PREFIX}*) at any depth"
                )
            specs += found
        else:
            loose.append(path)
    return specs + loose_runs(loose, [Path(p).name for p in loose], run_id, tier, fmt)


def unread_in_folders(paths: list[Path | str]) -> list[Path]:
    """The files below the local folders among ``paths`` that a collect of them leaves unread: named as no log
    (:data:`LOG_SUFFIXES`: ``a.csv``, ``notes.md``), no TensorBoard event file, no ``run.json``, no rotated copy
    of a log beside it (``train.log.1``, read with ``train.log``), not hidden (``.DS_Store``), not in a dataset kept
    there. Sorted; empty where no folder is given."""
    from tierscope.collector.positions import positions_below  # here: a cron collect of a file never asks

    unread: list[Path] = []
    for top in (Path(p) for p in paths if not is_url(p)):
        if not top.is_dir():
            continue
        datasets = positions_below(top)
        files = [p for p in top.rglob("*") if p.is_file() and not any(d in p.parents for d in datasets)]
        logs = {p.name for p in files if is_log_name(p.name)}
        unread += [
            p
            for p in files
            if not (
                is_log_name(p.name) or is_event_file(p) or p.name == RUN_FILE or p.name.startswith((".", TMP_PREFIX))
            )
            and not any(p.name.startswith(f"{log}.") for log in logs)
        ]
    return sorted(unread)


def unread_note(unread: list[Path], shown: int = 3) -> str | None:
    """The one line that tells of ``unread`` (:func:`unread_in_folders`): how many, the first ``shown`` names, why,
    and what to do; None if there are none."""
    if not unread:
        return None
    names = ", ".join(p.name for p in unread[:shown]) + (", ..." if len(unread) > shown else "")
    files, them = ("1 file", "it") if len(unread) == 1 else (f"{len(unread)} files", "them")
    return (
        f"skipped {files} not named as logs ({names}; a log ends in {', '.join(LOG_SUFFIXES)}): "
        f"collect {them} by name to read {them}"
    )


#: The roles a file or folder name may state (:data:`tierscope.dataset.schema.ROLES`), and the words naming a
#: training task by its index alone (``replica-2``, ``rank3``, ``task-2``, ``node-1``: a worker, as a bare rank is).
_NAMED_ROLES = "master|chief|worker|ps|evaluator"
_INDEX_WORDS = "replica|rank|task|node"
#: A name (a file's stem, or a folder's) stating one task of a run: a prefix (the run's, maybe empty), a role or
#: a word of :data:`_INDEX_WORDS`, ``replica`` maybe, an index: ``worker-1``, ``worker_1``, ``worker1``,
#: ``master-replica-0``, ``std-master0``, ``mnist-chief-0``, ``rank-3``, Vertex AI ``workerpool1-2``; or a role
#: alone (``chief``, ``evaluator``: task 0). Sources: Vertex AI's worker pools
#: (https://cloud.google.com/vertex-ai/docs/training/distributed-training, 2026-12), TF_CONFIG task types
#: (https://www.tensorflow.org/guide/distributed_training, 2026-12), Kubeflow TFJob pod names
#: (``<job>-<type>-<index>``, github.com/kubeflow/training-operator).
TASK_NAME = re.compile(
    rf"^(?:(?P<prefix>.*?)[-_.])??(?:(?P<role>{_NAMED_ROLES})|(?P<word>{_INDEX_WORDS})|workerpool(?P<pool>[0-3]))"
    r"(?:[-_]?replica)?(?:[-_]?(?P<index>\d+))?$",
    re.IGNORECASE,
)
#: The role of a task named by :data:`_INDEX_WORDS` (a rank of a data-parallel job is a worker).
INDEX_ROLE = "worker"
#: The most a task index may be (the ``task_index`` column is Int32).
_TASK_INDEX_MAX = 2**31 - 1
#: Files whose records may name their own run (a Cloud Logging export or sink: the entries' job id; tierscope's
#: structured log: its records' run id): a run of such files that stored nothing under its own name is only their
#: name (collector.collect). Loose, each is a run of its own as any log is (a trainer's JSON log names no run).
NAMED_BY_CONTENT = (".json", JSON_LOG_SUFFIX)


def _name_task(name: str) -> tuple[str, int, str] | None:
    """``(role, task_index, prefix)`` stated by one name (see :data:`TASK_NAME`), or None."""
    m = TASK_NAME.match(name)
    if m is None:
        return None
    index = m["index"]
    if m["pool"] is not None:
        # here, not at the top: the schema loads polars, which a collect with nothing new does without
        from tierscope.dataset.schema import POOL_ROLES

        role = POOL_ROLES[int(m["pool"])]
    elif m["word"] is not None:
        role = INDEX_ROLE
    else:
        role = m["role"].lower()
    if index is None and (m["word"] is not None or m["pool"] is not None or role == "worker"):
        return None  # ``node``, ``workerpool1``, ``worker``: which one is not said
    number = int(index) if index is not None else 0
    if number > _TASK_INDEX_MAX:
        return None
    return role, number, (m["prefix"] or "").strip("-_.")


def task_of_file(path: Path | str) -> tuple[str, int] | None:
    """``(role, task_index)`` that a log's name states (its stem: ``worker-1.log``), else the name of the
    folder holding it (``worker-1/train.log``); None if neither does. ``path``: a local path or a
    ``gs://`` URL. Only the nearest folder counts: a home directory named ``node-1`` two levels up says
    nothing about the log."""
    parts = str(path).rstrip("/").split("/") if isinstance(path, str) and is_url(path) else Path(path).parts
    if not parts:
        return None
    stem = default_run_id(Path(parts[-1])) if not is_event_file(Path(parts[-1])) else ""
    for name in (stem, parts[-2] if len(parts) > 1 else ""):
        found = _name_task(name) if name else None
        if found is not None:
            return found[0], found[1]
    return None


def _folder_name(path: Path | str) -> str:
    """The name of the folder holding ``path`` (a local path, absolute or not, or a URL); empty at a root."""
    if isinstance(path, str) and is_url(path):
        parts = path.split("/")
        return parts[-2] if len(parts) > 4 else ""  # gs://bucket/obj: the bucket is no folder
    return Path(path).absolute().parent.name


def _tasks_run_name(grouped: list[Path | str], stems: list[str]) -> tuple[str, str]:
    """The run name of files named after one run's tasks with no common prefix (``worker-0.log``,
    ``worker-1.log``), and how it was chosen: the folder holding them all (as ``collect files DIR``
    names the run after DIR), else the stems' common start (``worker``), else the first stem."""
    folders = {_folder_name(f) for f in grouped}
    if len(folders) == 1 and (folder := folders.pop()):
        return folder, "the folder holding them"
    # names, not paths: their common start by character (``worker-0``, ``worker-1``: ``worker``)
    common = os.path.commonprefix([s.lower() for s in stems]).rstrip("-_.0123456789")  # noqa: RUF071
    if common:
        return stems[0][: len(common)], "their names' common start"
    return stems[0], "the first of them"


def loose_runs(
    files: list[Path | str], names: list[str], run_id: str | None, tier: str | None, fmt: str | None
) -> list[RunSpec]:
    """The runs of loose files (``names``: each file's name; an object's for a URL). With ``run_id``, one run of
    them all. Else each file is a run of its own, named after the file (``logs/*.log`` of four tiers is four
    runs: their tasks, master 0 each, collided as one run's), except that files named after one run's tasks
    (:data:`TASK_NAME`) are that run's: named after their common prefix (``std-master0.log``, ``std-worker0.log``:
    ``std``), or with none (``wlogs/worker-0.log``, ``wlogs/worker-1.log``) after the folder holding them
    (``wlogs``; :func:`_tasks_run_name`), the run's :attr:`RunSpec.naming` saying so; files of one name in folders
    of their own a run each, named after its folder (:func:`_split_by_folder`), and TensorBoard event files
    one group, named after the first as before. A JSON log is a run of its own as any log is (a Cloud Logging
    export's entries go to the runs they name whatever run its file is given)."""
    if not files:
        return []
    if run_id is not None:
        return [RunSpec(run_id=run_id, tier=tier, files=files, format=fmt)]
    groups: dict[str, list[Path | str]] = {}
    for path, name in zip(files, names, strict=True):
        stem = default_run_id(Path(name))
        task = _name_task(stem)
        # event files are one group; a JSON log is a run of its own like any log: a trainer's (LLaMA-Factory's
        # trainer_log.jsonl, mmseg's .json) names no run, and an export's records go to the runs they name whatever
        # its file's group (its own run left empty is no run: collector.collect)
        if is_event_file(Path(name)):
            key = "\0content"
        elif task is not None:
            key = "\0tasks\0" + task[2].lower()
        else:
            key = stem
        groups.setdefault(key, []).append(path)
    groups = _split_by_folder(groups)
    runs: dict[str, RunSpec] = {}
    for key, grouped in groups.items():
        stems = [default_run_id(f if isinstance(f, Path) else Path(names[files.index(f)])) for f in grouped]
        named, naming = stems[0], None
        if key.startswith("\0folder\0"):
            named = key.split("\0")[-1]
            naming = (
                f"run {named!r} is named after the folder holding its log ({stems[0]} logs in folders of their own "
                "that name no task: runs of their own); --run-id ID names it"
            )
        if key.startswith("\0tasks\0"):
            prefix = key.split("\0")[-1]
            if prefix:
                named = named[: len(prefix)].rstrip("-_.")
            elif len(grouped) > 1:
                named, how = _tasks_run_name(grouped, stems)
                naming = (
                    f"run {named!r} is named after {how} ({len(grouped)} files named after one run's tasks); "
                    "--run-id ID names it"
                )
        if named in runs:  # two groups of one name are one run's files, as they always were
            runs[named].files = [*runs[named].files, *grouped]
        else:
            runs[named] = RunSpec(run_id=named, tier=tier, files=grouped, format=fmt, naming=naming)
    return list(runs.values())


def _split_by_folder(groups: dict[str, list[Path | str]]) -> dict[str, list[Path | str]]:
    """``groups`` (a name's files, by key) with each group of one log name in folders of distinct names that
    name no task (``a100/train.log``, ``t4/train.log``: a configuration a folder, as experiments are kept) made
    a group per folder, keyed ``\\0folder\\0<folder name>``: runs of their own, not tasks of one. Folders
    naming tasks (``worker-1/train.log``) keep their logs one run's; so do folders of one name
    (``a/run/train.log``, ``b/run/train.log``: nothing tells the runs apart)."""
    split: dict[str, list[Path | str]] = {}
    for key, grouped in groups.items():
        folders = [_folder_name(f) for f in grouped]
        apart = (
            not key.startswith("\0")
            and len(set(folders)) > 1
            and all(folders)
            and not any(task_of_file(f) is not None for f in grouped)
        )
        if not apart:
            split[key] = grouped
            continue
        by_folder: dict[str, list[Path | str]] = {}
        for folder, path in zip(folders, grouped, strict=True):
            by_folder.setdefault(folder, []).append(path)
        if len({f.lower() for f in by_folder}) < len(by_folder):
            split[key] = grouped
            continue
        for folder, paths in by_folder.items():
            split["\0folder\0" + folder] = paths
    return split


def _directory_runs(top: Path, run_id: str | None, tier: str | None, fmt: str | None) -> list[RunSpec]:
    """The runs of a local directory, read at any depth as a ``gs://`` prefix is: one per folder holding
    a ``run.json`` (a run directory: its own logs, as :mod:`tierscope.contract` says, and its event files
    at any depth), and ``top``'s own for the logs and event files elsewhere below it; none if it holds
    no log. Symbolic links to folders are not followed (a loop could not end). A tierscope dataset below ``top``
    (a dataset kept beside the logs it was collected from) holds no log: its state and tables are not read."""
    from tierscope.collector.positions import positions_below  # here: a cron collect of a file never asks

    described = {m.parent for m in top.rglob(RUN_FILE) if m.is_file()}
    datasets = positions_below(top)
    roots = {top} | described
    found: dict[Path, list[Path]] = {}
    for path in sorted(top.rglob("*")):
        if datasets and any(d in path.parents for d in datasets):
            continue
        event = path.is_file() and is_event_file(path)
        if not (event or _is_log(path)):
            continue
        root = max((r for r in roots if r in path.parents), key=lambda r: len(r.parts))
        if root in described and path.parent != root and not event:
            continue  # a run directory's logs are its own files (tierscope.contract: stderr/ is not one)
        found.setdefault(root, []).append(path)
    specs = []
    for root in sorted(found):
        meta_path = root / RUN_FILE
        meta = _run_meta(meta_path) if meta_path.is_file() else {}
        # logs first, then event files, as before: the run's order of reading
        files: list[Path | str] = sorted(found[root], key=lambda p: (is_event_file(p), p))
        if root in described or run_id is not None:
            specs.append(directory_run(root.name, meta, meta_path, files, run_id, tier, fmt))
        else:
            specs += _folder_runs(root, files, tier, fmt)
    return specs


def _job_key(top: Path, path: Path) -> str:
    """Which of a folder's logs ``path`` goes with: the job's tasks (its name, or a folder's between ``top``
    and it, names a task: ``worker-1.log``, ``worker-1/logs/train.log``), the files whose records name their
    run (TensorBoard event files: a job directory's, as a prefix's), or its own name
    (``hf_t4.log``; ``train.log`` and its rotated ``train.log.1.gz`` one log)."""
    if is_event_file(path):  # a JSON log is a log of its own, as in :func:`loose_runs`
        return "\0content"
    stem = default_run_id(path)
    folders = path.relative_to(top).parts[:-1]
    if any(_name_task(name) is not None for name in (stem, *folders)):
        return "\0tasks"
    return stem


def _folder_runs(top: Path, files: list[Path | str], tier: str | None, fmt: str | None) -> list[RunSpec]:
    """The runs of a folder's logs (no ``run.json`` describes them): one run named after the folder where they
    are one job's (a single log, its tasks' logs, records naming their run); else, as ``logs/*.log`` would, each
    log a run of its own named after it (``logs`` of hf_t4.log and loop_a100.log: two runs, not two tasks of
    one), the job's tasks' logs, if any, one run named as their glob names it (their names' prefix,
    :func:`_tasks_prefix`, else the folder); each run's :attr:`RunSpec.split_from` names the
    folder, for the collect to say how it split it."""
    groups: dict[str, list[Path | str]] = {}
    for path in files:
        groups.setdefault(_job_key(top, Path(path)), []).append(path)
    groups = _split_by_folder(groups)
    if len(groups) == 1:
        return [directory_run(top.name, {}, top / RUN_FILE, files, None, tier, fmt)]
    runs: dict[str, RunSpec] = {}
    for key, grouped in groups.items():
        if key.startswith("\0folder\0"):
            named = key.split("\0")[-1]
        else:
            named = (_tasks_prefix(grouped) or top.name) if key.startswith("\0") else key
        if named in runs:  # a log named as its folder is: the folder's run, as one name always was
            runs[named].files = [*runs[named].files, *grouped]
        else:
            runs[named] = RunSpec(run_id=named, tier=tier, files=grouped, format=fmt)
    for run in runs.values():
        run.split_from = str(top)
    return sorted(runs.values(), key=lambda r: str(r.files[0]))


def _tasks_prefix(grouped: list[Path | str]) -> str | None:
    """The run name the glob of a folder's task logs gives them where their names share a run's prefix
    (``a06_torchtitan_rank0.log``: ``a06_torchtitan``), else None (``worker-0.log``: named after the folder,
    as the glob names them too; a task named by a folder between the top and its log)."""
    stems = [default_run_id(Path(p)) for p in grouped]
    found = [_name_task(stem) for stem in stems]
    prefixes = {f[2].lower() for f in found if f is not None}
    if None in found or len(prefixes) != 1 or not (prefix := prefixes.pop()):
        return None
    return stems[0][: len(prefix)].rstrip("-_.") or None


def default_run_id(path: Path) -> str:
    """The run id of a loose file: its name up to the first dot, leading dots skipped
    (``.hidden.log`` is ``hidden``); the whole name if that leaves nothing (``...``). An event
    file's run is its job directory (:func:`~tierscope.collector.sources.tfevents.run_name`)."""
    if is_event_file(path):
        from tierscope.collector.sources.tfevents import run_name  # polars: only for an event file given alone

        return run_name(path)
    return path.name.lstrip(".").split(".")[0] or path.name


def is_link_loop(path: Path) -> bool:
    try:
        path.stat()
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def run_facts(run: RunSpec) -> dict[str, Any]:
    """The facts of ``run`` that the ``runs`` table holds (every column but ``collected_at``)."""
    return {
        "run_id": run.run_id,
        "tier": run.tier,
        "ran_on": run.ran_on,
        "date": run.date,
        "note": run.note,
        "topology": run.topology,
        "replicas": run.replicas,
        "strategy": run.strategy,
        "batch_size": run.batch_size,
        "config": run.config,
        "estimate_usd": run.estimate_usd,
    }


# --- runs on Cloud Storage: collect files gs://... ------------------------------------------------

#: The most of a run.json read (it is a few hundred bytes).
RUN_FILE_MAX_BYTES = 1 << 20


def _event_files_error(url: str, events: list[str]) -> InputError:
    return InputError(
        f"{url} holds TensorBoard event files ({len(events)}, e.g. {events[0]}), which are read from "
        f"local files only: copy them (`gcloud storage cp -r {url} DIR`) and collect the copy"
    )


def runs_from_urls(urls: list[str], run_id: str | None, tier: str | None, fmt: str | None) -> list[RunSpec]:
    """Runs for ``collect files gs://...``. What a URL gives:

    - a prefix (``gs://bucket/jobs/job42/``, or ``gs://bucket/`` itself) is a run directory:
      every log object under it, at any depth (per-task subdirectories, a Cloud Logging sink's
      ``<log>/YYYY/MM/DD/08:00:00_08:59:59_S0.json`` hours). A ``run.json`` under it makes
      its folder a run of its own (``gs://bucket/jobs/`` holding ``job42/run.json`` and
      ``job43/run.json`` is two runs); objects outside any such folder belong to the prefix's
      run, named after its last part (the bucket for ``gs://bucket/``). Records that name their
      run (a job's structured records, LogEntries with a job id) keep it.
    - a glob (``gs://bucket/logs/*.log``) or a single object: loose files, as on the command line
      (:func:`loose_runs`).

    Raises :class:`InputError` for a
    URL naming nothing, a prefix without logs, TensorBoard event files (named alone, or a prefix's
    only files: they are read from local files only), or a bucket that cannot be listed.
    """
    from tierscope.collector.sources import objects  # gcsfs: only for a collect of gs:// URLs

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
    return specs + loose_runs(loose, [Path(gcs.split(str(o))[1]).name for o in loose], run_id, tier, fmt)


def _prefix_runs(
    prefix: str, found: list[objects.StoredObject], run_id: str | None, tier: str | None, fmt: str | None
) -> list[RunSpec]:
    """The runs under ``prefix``: one per folder holding a ``run.json``, and the prefix's own."""
    from tierscope.collector.sources import objects

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
