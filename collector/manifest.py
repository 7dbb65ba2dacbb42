"""The run manifest: which files belong to which run, and what is known about each run.

A TOML file with one ``[[run]]`` table per run, and optionally the formats files the runs'
logs need (:mod:`tierscope.collector.formats.declared`; paths relative to the manifest)::

    formats = "my-formats.toml"  # or a list of files

    [[run]]
    id = "standard_1"            # required: the run id
    tier = "STANDARD_1"          # the scale tier
    config = "std1-mnist"        # optional: the configuration this run repeats (see RunSpec.config)
    files = ["standard_1.log"]   # required: paths relative to the manifest, or gs:// URLs
    ran_on = "CloudML beta, us-central1"   # optional facts, shown in the report
    date = 2016-12-31            # optional: when it ran; picks the price table's rows
    note = "..."
    format = "cloudml"           # optional: skip sniffing (a shipped or a declared format)
    olddir = "old"               # optional: where the logs' rotated copies go (logrotate's olddir)
    batch_size = 128             # optional: examples one training task processes a step, all its devices
                                 # (a one-VM job of 4 GPUs: all 4; the log's stated batch where not given)
    # global_batch = 128         # or the whole job's examples a global step (divided over 1 + workers tasks)
    # optional, for a CUSTOM tier: the machine type of each role and the replica counts
    # (one master; ``workers``, ``ps`` and ``evaluators`` default to 0). Costed by
    # ``tierscope.analysis.cost`` as the sum over replicas.
    machine_types = {master = "standard", worker = "complex_model_s", ps = "standard"}
    workers = 4
    ps = 3
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tierscope.collector.errors import ManifestError
from tierscope.gcs import is_url, parent
from tierscope.gcs import join as gcs_join
from tierscope.text import has_controls, printable

if TYPE_CHECKING:
    from tierscope.collector.formats.base import LineFormat


@dataclass
class RunSpec:
    """One run: its id, tier, files and facts."""

    run_id: str
    tier: str | None
    #: Local paths, and ``gs://`` URLs (``str``) of objects on Cloud Storage.
    files: list[Path | str]
    ran_on: str | None = None
    date: date | None = None
    note: str | None = None
    format: str | None = None
    topology: str | None = None  # JSON {role: {"machine_type": str, "count": int}}, see topology_json
    #: Declared replicas, JSON {role: count} (run.json's topology, the manifest's workers/ps/evaluators).
    replicas: str | None = None
    #: How the replicas train (run.json's strategy: single, mirrored, ps); None: unknown.
    strategy: str | None = None
    #: Examples per replica (training task, all its devices) per step (run.json's config.batch_size, the
    #: manifest's batch_size, or its global_batch over the training tasks).
    batch_size: int | None = None
    #: Declared formats the run's logs are read with, before the shipped ones.
    formats: tuple[LineFormat, ...] = ()
    #: The manifest that declared the run (its path or URL; None: named on the command line). An error
    #: about one of its files names it: the fix is an edit there.
    manifest: str | None = None
    #: What the manifest says of the run's machines, as written (``machine``, ``accelerator``, ``tpu``, ``spot``,
    #: ``region``, ``job_spec`` as a path): read into its ``topology`` by the command, which knows the machines.
    hardware: dict[str, object] | None = None
    #: Folders where the logs' rotated copies are moved (logrotate's ``olddir``), besides each log's own
    #: (:mod:`tierscope.collector.rotation`).
    olddirs: tuple[Path, ...] = ()
    #: The user gave the run id (``--run-id``, a manifest's ``id``) or the tier (``--tier``, a manifest's
    #: ``tier``): it is set on every record, whatever the records carry. Otherwise a record's own run id
    #: or tier stands (a structured log names its run), and the spec's fills in where it names none.
    run_id_given: bool = False
    tier_given: bool = False
    #: The configuration the run is a repeat of (the manifest's ``config``, ``collect --config``): runs of one
    #: configuration (one job on the same tier or machines) are measured together, their spread between runs
    #: (:mod:`tierscope.analysis.configurations`); stripped, never blank (:func:`config_name`). None: the run is a
    #: configuration of its own. A tier alone never groups runs: two jobs on one tier are not repeats of each other.
    config: str | None = None
    #: How a run of loose files got its name when no file gave it (``wlogs/worker-0.log`` and ``worker-1.log``:
    #: the folder), for the collect's output; None: named as the user or its files said.
    naming: str | None = None
    #: The folder (``collect files DIR``) whose logs were not one job's and so were read as a run each, this run
    #: one of them (:func:`tierscope.collector.runs.runs_from_paths`), for the collect to say how it split them;
    #: None: not such a run.
    split_from: str | None = None
    #: What a sweep estimated the run would cost before it ran (USD; ``tierscope sweep`` sets it). None: not
    #: a sweep's run.
    estimate_usd: float | None = None


def config_name(raw: str) -> str:
    """A configuration's name as given (the manifest's ``config``, ``collect --config``) with the spaces around it
    dropped: ``" cfg "`` and ``"cfg"`` are one configuration. Raises :class:`ValueError` (a phrase to follow the
    key's name) where nothing is left, or where it holds a control character (an escape sequence, a newline, a
    right-to-left override: :func:`tierscope.text.has_controls`), which would make two names that look alike."""
    name = raw.strip()
    if not name:
        raise ValueError("is blank; give the configuration's name, or leave it out (the run is then its own)")
    if has_controls(name):
        raise ValueError(f"'{printable(name)}' holds a control character; give a name of printable characters")
    return name


#: Manifest keys describing the run's machines (see RunSpec.hardware).
HARDWARE_KEYS = ("machine", "accelerator", "tpu", "spot", "region", "job_spec")

#: Manifest keys giving each role's replica count (the master is always one).
REPLICA_KEYS = {"worker": "workers", "ps": "ps", "evaluator": "evaluators"}

#: Every key a [[run]] table may hold: a typo (``teir``) is an error, not a silently lost tier.
KNOWN_KEYS = {
    "id", "tier", "config", "files", "ran_on", "date", "note", "format", "machine_types", "batch_size", "olddir",
    "global_batch", *REPLICA_KEYS.values(), *HARDWARE_KEYS,
}  # fmt: skip


def _replica_counts(run: dict[str, object], where: str) -> dict[str, int]:
    """``{role: count}`` from ``workers``/``ps``/``evaluators`` (the master is always one).
    Raises :class:`ManifestError` for a count that is not a whole number >= 0."""
    counts: dict[str, int] = {"master": 1}
    for role, key in REPLICA_KEYS.items():
        count = run.get(key, 0)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ManifestError(f"{where}: '{key}' must be a whole number >= 0")
        counts[role] = count
    return counts


def _whole(run: dict[str, object], key: str, where: str) -> int | None:
    value = run.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ManifestError(f"{where}: '{key}' must be a whole number >= 1 (examples per step)")
    return value


def _batch_size(run: dict[str, object], where: str) -> int | None:
    """The examples one training task processes a step, all its devices (the dataset's ``batch_size``):
    ``batch_size`` as given, or ``global_batch`` (the examples one global step of the whole job processes)
    over the job's training tasks (1 + ``workers``; a one-VM job of 8 GPUs is one task: its global batch).
    Raises :class:`ManifestError` for both given, a job with parameter servers (a global step there is one
    replica's batch: give ``batch_size``) or a global batch the tasks do not divide."""
    batch, total = _whole(run, "batch_size", where), _whole(run, "global_batch", where)
    if total is None:
        return batch
    if batch is not None:
        raise ManifestError(
            f"{where}: give 'batch_size' (examples per training task a step) or 'global_batch' (the whole job's), "
            "not both"
        )
    if run.get("ps"):
        raise ManifestError(
            f"{where}: 'global_batch' with parameter servers is ambiguous (a global step is one replica's batch); "
            "give 'batch_size', the examples per training task a step"
        )
    workers = run.get("workers", 0)
    tasks = 1 + (workers if isinstance(workers, int) and not isinstance(workers, bool) and workers > 0 else 0)
    if total % tasks:
        raise ManifestError(
            f"{where}: 'global_batch' {total} is not a whole number of examples for each of its {tasks} training "
            "tasks; give 'batch_size', the examples per training task a step"
        )
    return total // tasks


def replicas_json(run: dict[str, object], where: str) -> str | None:
    """The run's declared replica counts as JSON ``{role: count}`` (roles with none left out), or
    None when the run gives none of ``workers``/``ps``/``evaluators`` (its tier then says).
    Raises :class:`ManifestError` for a malformed count."""
    if not any(key in run for key in REPLICA_KEYS.values()):
        return None
    counts = _replica_counts(run, where)
    return json.dumps({role: n for role, n in counts.items() if n}, sort_keys=True)


def topology_json(run: dict[str, object], where: str) -> str | None:
    """The run's topology as JSON ``{role: {"machine_type": ..., "count": ...}}``, or None.

    Read from ``machine_types`` (a table role -> machine type) and ``workers``/``ps``/
    ``evaluators`` (counts). Raises :class:`ManifestError` for a malformed table, an
    unknown role, a negative count, or a count for a role without a machine type.
    """
    types = run.get("machine_types")
    if types is None:
        return None
    if not isinstance(types, dict) or not all(isinstance(v, str) and v for v in types.values()):
        raise ManifestError(f"{where}: 'machine_types' must be a table like {{master = \"standard\"}}")
    unknown = set(types) - {"master", *REPLICA_KEYS}
    if unknown:
        raise ManifestError(f"{where}: 'machine_types' has unknown roles {sorted(unknown)}; use master, worker, ps")
    counts = _replica_counts(run, where)
    for role, key in REPLICA_KEYS.items():
        if counts[role] and role not in types:
            raise ManifestError(f"{where}: '{key}' = {counts[role]} but 'machine_types' gives no {role} machine type")
    return json.dumps(
        {role: {"machine_type": types[role], "count": counts[role]} for role in types if counts.get(role)},
        sort_keys=True,
    )


def manifest_formats(doc: dict[str, object], path: Path) -> tuple[LineFormat, ...]:
    """The formats declared in the files the manifest's ``formats`` key names (relative to the
    manifest). Raises :class:`ManifestError` for a malformed key and
    :class:`~tierscope.collector.formats.declared.FormatsFileError` for a bad formats file."""
    names = doc.get("formats", [])
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ManifestError(f"manifest {path}: 'formats' must be a path or a list of paths to formats files")
    if not names:
        return ()  # most manifests: no import of the formats (and polars) for a collect that may have nothing new
    from tierscope.collector.formats.declared import load_format_files  # polars: only for a manifest with formats

    return load_format_files(path.parent / n for n in names)


#: The most of a manifest on Cloud Storage read.
MANIFEST_MAX_BYTES = 16 << 20


def _manifest_text(path: Path | str) -> str:
    """The manifest's text, from a local file or a ``gs://`` object. Raises :class:`ManifestError`."""
    if not is_url(path):
        try:
            return Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ManifestError(f"cannot read manifest {path}: {exc.strerror or exc}") from exc
    from tierscope.collector.errors import InputError
    from tierscope.collector.sources.objects import read_bytes

    try:
        return read_bytes(str(path), MANIFEST_MAX_BYTES).decode("utf-8")
    except InputError as exc:
        raise ManifestError(f"manifest: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ManifestError(f"manifest {path} is not UTF-8 text ({exc.reason}); save it as UTF-8") from exc


def _file_in(manifest: Path | str, name: str, where: str = "") -> Path | str:
    """A manifest's file entry: a ``gs://`` URL or an absolute path as it is, else relative to the
    manifest's folder, within it. Raises :class:`ManifestError` for a local manifest's relative path
    that climbs out of its folder (``../../etc/shadow``): a manifest copied from elsewhere must not read
    any file of the machine; a file elsewhere is named by its absolute path, which says so."""
    if is_url(name) or Path(name).is_absolute():
        return name if is_url(name) else Path(name)
    # A manifest on Cloud Storage names objects of its bucket, `..` included: no local file is read.
    if not is_url(manifest) and os.path.normpath(name).split(os.sep)[0] == os.pardir:
        folder = Path(manifest).parent
        raise ManifestError(
            f"{where}: file {name!r} lies outside the manifest's folder {folder}; give its absolute path to "
            "read a file elsewhere"
        )
    return gcs_join(parent(manifest), name) if is_url(manifest) else Path(manifest).parent / name  # type: ignore[arg-type]


def load_manifest(path: Path | str) -> list[RunSpec]:
    """The runs of the manifest at ``path`` (a local file or a ``gs://`` URL), each with the
    manifest's declared formats; file entries are relative to the manifest, or ``gs://`` URLs.
    Raises :class:`ManifestError` saying what is wrong, :class:`FormatsFileError` for a bad formats file."""
    import tomllib  # here, not at the top: a collect of plain files (most cron jobs) reads no manifest

    try:
        doc = tomllib.loads(_manifest_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"manifest {path} is not valid TOML: {exc}") from exc
    runs = doc.get("run")
    if not isinstance(runs, list) or not runs:
        raise ManifestError(f"manifest {path} has no [[run]] tables; see `tierscope collect files --help`")
    if is_url(path) and doc.get("formats"):
        raise ManifestError(
            f"manifest {path} names formats files, which are read from local disk only; "
            "give them with --formats FILE instead"
        )
    formats = manifest_formats(doc, Path(path))
    specs = []
    seen: set[str] = set()
    for n, run in enumerate(runs, start=1):
        where = f"manifest {path}, run #{n}"
        if not isinstance(run, dict):
            raise ManifestError(f"{where}: not a table; write each run as a [[run]] table")
        run_id = run.get("id")
        if run_id is None or run_id == "":
            raise ManifestError(f"{where}: missing 'id' (a string)")
        if not isinstance(run_id, str):
            raise ManifestError(f"{where}: 'id' is {run_id!r}, not a string; quote it: id = \"{run_id}\"")
        for key in ("tier", "config", "ran_on", "note", "format"):
            if run.get(key) is not None and not isinstance(run[key], str):
                raise ManifestError(f"{where} ({run_id}): '{key}' is {run[key]!r}, not a string")
        files = run.get("files")
        if isinstance(files, str):
            files = [files]
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise ManifestError(f"{where} ({run_id}): 'files' must be a list of paths")
        when = run.get("date")
        if isinstance(when, datetime):  # a datetime is a date too: the check below would let it through
            raise ManifestError(
                f"{where} ({run_id}): 'date' is {when.isoformat()}, a date and time; give the date alone, "
                f"like {when.date().isoformat()}"
            )
        if when is not None and not isinstance(when, date):
            raise ManifestError(f"{where} ({run_id}): 'date' must be a TOML date like 2016-12-31")
        unknown = sorted(set(run) - KNOWN_KEYS)
        if unknown:
            raise ManifestError(
                f"{where} ({run_id}): unknown keys {unknown}; a run takes {', '.join(sorted(KNOWN_KEYS))}"
            )
        config = run.get("config")
        if config is not None:
            try:
                config = config_name(config)
            except ValueError as bad:
                raise ManifestError(f"{where} ({run_id}): 'config' {bad}") from None
        if run_id in seen:
            raise ManifestError(f"{where}: run id {run_id!r} appears twice; give each [[run]] its own id")
        seen.add(run_id)
        paths = [_file_in(path, f, f"{where} ({run_id})") for f in files]
        olddir = run.get("olddir")
        if olddir is not None and not isinstance(olddir, str):
            raise ManifestError(f"{where} ({run_id}): 'olddir' is {olddir!r}, not a folder's path")
        if olddir is not None and is_url(path):
            raise ManifestError(
                f"{where} ({run_id}): 'olddir' names a local folder, which a manifest on Cloud Storage cannot"
            )
        topology = topology_json(run, f"{where} ({run_id})")
        batch = _batch_size(run, f"{where} ({run_id})")
        specs.append(
            RunSpec(
                run_id=run_id,
                tier=run.get("tier"),
                files=paths,
                ran_on=run.get("ran_on"),
                date=when,
                note=run.get("note"),
                format=run.get("format"),
                topology=topology,
                replicas=replicas_json(run, f"{where} ({run_id})"),
                batch_size=batch,
                formats=formats,
                manifest=str(path),
                hardware=_hardware(run, path),
                olddirs=() if olddir is None else (Path(_file_in(path, olddir, f"{where} ({run_id})")),),
                run_id_given=True,
                tier_given=run.get("tier") is not None,
                config=config,
            )
        )
    return specs


def _hardware(run: dict[str, object], manifest: Path | str) -> dict[str, object] | None:
    """The run's machine keys (:data:`HARDWARE_KEYS`), ``job_spec`` made a path beside the manifest."""
    found = {k: run[k] for k in HARDWARE_KEYS if k in run}
    if isinstance(found.get("job_spec"), str):
        found["job_spec"] = _file_in(manifest, str(found["job_spec"]))
    return found or None
