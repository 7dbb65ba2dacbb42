"""A run's hardware from its Vertex AI CustomJob: what ``gcloud ai custom-jobs describe --format=json`` prints,
or the job's ``jobSpec`` alone (the body ``gcloud ai custom-jobs create --config`` takes), as JSON.

Read: ``jobSpec.workerPoolSpecs[i]`` (pool 0 the chief, then worker, ps, evaluator; an empty ``{}``
pool skipped): ``machineSpec.machineType``, ``acceleratorType``, ``acceleratorCount``, ``tpuTopology``,
and ``replicaCount``; ``jobSpec.scheduling.strategy`` (``SPOT``: spot VMs); the region from ``name``
(``projects/P/locations/us-central1/customJobs/N``); the date from ``startTime``, else ``createTime``.
Every other field is kept aside and listed in :attr:`JobHardware.ignored`, so a field that matters and is
not read is said, never silently dropped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from tierscope.analysis import machines
from tierscope.analysis.errors import AnalysisError
from tierscope.dataset.schema import POOL_ROLES
from tierscope.errors import UsageError

#: The fields read, or known and of no bearing on the hardware (the job's code, disks, state, labels).
_JOB_KEYS = {
    "name", "displayName", "jobSpec", "state", "createTime", "startTime", "endTime", "updateTime", "labels",
    "error", "webAccessUris", "encryptionSpec", "satisfiesPzs", "satisfiesPzi",
}  # fmt: skip
_SPEC_KEYS = {
    "workerPoolSpecs", "scheduling", "serviceAccount", "network", "baseOutputDirectory", "enableWebAccess",
    "enableDashboardAccess", "tensorboard", "experiment", "experimentRun", "reservedIpRanges",
    "protectedArtifactLocationId", "persistentResourceId", "models",
}  # fmt: skip
_POOL_KEYS = {"machineSpec", "replicaCount", "containerSpec", "pythonPackageSpec", "diskSpec", "nfsMounts"}
_MACHINE_KEYS = {"machineType", "acceleratorType", "acceleratorCount", "tpuTopology"}
_LOCATION = re.compile(r"/locations/([a-z]+-[a-z]+\d+)/")


class JobSpecError(AnalysisError, UsageError, ValueError):
    """A job description that is not a CustomJob or jobSpec, or describes hardware that cannot be: the file,
    the JSON path and what is wrong. A usage error (exit 2): it is what ``--job-spec`` was given."""


@dataclass(frozen=True)
class JobHardware:
    """What a CustomJob says of its run: ``hardware``, ``region`` and ``date`` (None: not said), and the
    fields ``ignored`` (dotted paths)."""

    hardware: machines.Hardware
    region: str | None = None
    date: date | None = None
    display_name: str | None = None
    ignored: list[str] = field(default_factory=list)


def _unknown(doc: dict[str, Any], known: set[str], where: str) -> list[str]:
    return [f"{where}{k}" for k in doc if k not in known]


def read(doc: dict[str, Any], where: str = "job") -> JobHardware:
    """The hardware of a CustomJob ``doc`` (or its ``jobSpec``). Raises :class:`JobSpecError` (naming ``where``)
    or :class:`tierscope.analysis.machines.UnknownMachineError` for a machine type or accelerator not known."""
    if not isinstance(doc, dict):
        raise JobSpecError(f"{where}: not a JSON object; give a CustomJob or its jobSpec")
    job = doc if "jobSpec" in doc else {"jobSpec": doc}
    spec = job["jobSpec"]
    if not isinstance(spec, dict) or not isinstance(spec.get("workerPoolSpecs"), list):
        raise JobSpecError(f"{where}: no jobSpec.workerPoolSpecs; give a CustomJob (gcloud ai custom-jobs describe)")
    ignored = _unknown(job, _JOB_KEYS, "") if "jobSpec" in doc else []
    ignored += _unknown(spec, _SPEC_KEYS, "jobSpec.")
    scheduling = spec.get("scheduling") or {}
    if not isinstance(scheduling, dict):
        raise JobSpecError(f'{where}: jobSpec.scheduling {scheduling!r} is not an object like {{"strategy": "SPOT"}}')
    strategy = scheduling.get("strategy", "")
    if not isinstance(strategy, str):
        raise JobSpecError(
            f'{where}: jobSpec.scheduling.strategy {strategy!r} is not a string like "SPOT" or "STANDARD"'
        )
    spot = strategy.upper() == "SPOT"
    region = None
    found = _LOCATION.search(str(job.get("name", "")) + "/")
    if found:
        region = found[1]
    pools = []
    for i, entry in enumerate(spec["workerPoolSpecs"]):
        if not entry:
            continue  # an empty pool holds a place (no workers, but parameter servers)
        at = f"jobSpec.workerPoolSpecs[{i}]."
        if not isinstance(entry, dict):
            raise JobSpecError(f"{where}: {at[:-1]} is not an object with machineSpec and replicaCount")
        ignored += _unknown(entry, _POOL_KEYS, at)
        ms = entry.get("machineSpec") or {}
        if not isinstance(ms, dict):
            raise JobSpecError(f"{where}: {at}machineSpec is not an object with machineType")
        ignored += _unknown(ms, _MACHINE_KEYS, f"{at}machineSpec.")
        machine_type = ms.get("machineType")
        if not isinstance(machine_type, str) or not machine_type.strip():
            said = "has no machineType" if machine_type is None else f"machineType {machine_type!r} is not a name"
            raise JobSpecError(f'{where}: {at}machineSpec {said}; give one like "n1-standard-8"')
        kind = ms.get("acceleratorType") or None
        if kind is not None and not isinstance(kind, str):
            raise JobSpecError(f"{where}: {at}machineSpec.acceleratorType {kind!r} is not a name like NVIDIA_TESLA_T4")
        topology = ms.get("tpuTopology") or None
        if topology is not None and not isinstance(topology, str):
            raise JobSpecError(f'{where}: {at}machineSpec.tpuTopology {topology!r} is not a topology like "2x4"')
        role = POOL_ROLES[i] if i < len(POOL_ROLES) else f"pool{i}"
        try:
            replicas = machines.whole_count(entry.get("replicaCount", 1), f"{at}replicaCount", 1, machines.MAX_REPLICAS)
            count = ms.get("acceleratorCount")
            if count is not None:
                top = (
                    machines.MAX_GPUS_PER_REPLICA
                    if kind is None or machines.accelerator(kind).kind == "gpu"
                    else machines.MAX_TPU_COUNT
                )
                count = machines.whole_count(count, f"{at}machineSpec.acceleratorCount", 0, top)
            made = machines.pool(role, machine_type, replicas, kind, count, topology, spot, region)
            pools.append(machines.check_pool(made))
        except machines.HardwareError as exc:
            # the pool by its JSON path, which the user can find in the file, not by its role
            said = str(exc).removeprefix(f"{role}: ")
            raise JobSpecError(f"{where}: {said if said.startswith(at) else f'{at[:-1]}: {said}'}") from None
    if not pools:
        raise JobSpecError(f"{where}: jobSpec.workerPoolSpecs has no pool")
    return JobHardware(
        machines.Hardware(tuple(pools)), region, _day(job, where), _text(job.get("displayName")), ignored
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _day(job: dict[str, Any], where: str) -> date | None:
    """The job's date: ``startTime``, else ``createTime`` (RFC 3339 timestamps); None: neither."""
    for key in ("startTime", "createTime"):
        when = job.get(key)
        if when in (None, ""):
            continue
        try:
            if not isinstance(when, str):
                raise ValueError
            return datetime.fromisoformat(when.strip().replace("Z", "+00:00")).date()
        except ValueError:
            raise JobSpecError(
                f'{where}: {key} {when!r} is not a timestamp like "2026-10-01T10:00:00Z"; give it as '
                "gcloud ai custom-jobs describe prints it, or leave it out"
            ) from None
    return None


def read_file(path: Path) -> JobHardware:
    """:func:`read` of a JSON file. Raises :class:`JobSpecError` for a file that is not JSON."""
    try:
        # utf-8-sig: a byte-order mark (Windows editors write one) is not part of the JSON
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except RecursionError:
        raise JobSpecError(
            f"the job spec {path} is nested too deeply to read (thousands of levels); a CustomJob is a few levels deep"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JobSpecError(f"cannot read the job spec {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise JobSpecError(
            f"the job spec {path} is not JSON ({exc}): give it as gcloud ai custom-jobs describe JOB --format=json "
            "prints it (a YAML config is not read)"
        ) from None
    return read(doc, str(path))
