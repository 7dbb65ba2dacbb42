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


class JobSpecError(AnalysisError, ValueError):
    """A job description that is not a CustomJob or jobSpec: the file and what is wrong."""


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
    spot = str((spec.get("scheduling") or {}).get("strategy", "")).upper() == "SPOT"
    region = None
    found = _LOCATION.search(str(job.get("name", "")) + "/")
    if found:
        region = found[1]
    pools = []
    for i, entry in enumerate(spec["workerPoolSpecs"]):
        if not entry:
            continue  # an empty pool holds a place (no workers, but parameter servers)
        at = f"jobSpec.workerPoolSpecs[{i}]."
        ignored += _unknown(entry, _POOL_KEYS, at)
        ms = entry.get("machineSpec") or {}
        ignored += _unknown(ms, _MACHINE_KEYS, f"{at}machineSpec.")
        if "machineType" not in ms:
            raise JobSpecError(f"{where}: {at}machineSpec has no machineType")
        role = machines.POOL_ROLES[i] if i < len(machines.POOL_ROLES) else f"pool{i}"
        count = ms.get("acceleratorCount")
        pools.append(
            machines.pool(
                role,
                ms["machineType"],
                int(entry.get("replicaCount", 1)),
                ms.get("acceleratorType") or None,
                int(count) if count is not None else None,
                ms.get("tpuTopology"),
                spot,
                region,
            )
        )
    if not pools:
        raise JobSpecError(f"{where}: jobSpec.workerPoolSpecs has no pool")
    when = job.get("startTime") or job.get("createTime")
    day = datetime.fromisoformat(str(when).replace("Z", "+00:00")).date() if when else None
    return JobHardware(machines.Hardware(tuple(pools)), region, day, job.get("displayName"), ignored)


def read_file(path: Path) -> JobHardware:
    """:func:`read` of a JSON file. Raises :class:`JobSpecError` for a file that is not JSON."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise JobSpecError(f"cannot read the job spec {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise JobSpecError(
            f"the job spec {path} is not JSON ({exc}): give it as gcloud ai custom-jobs describe JOB --format=json "
            "prints it (a YAML config is not read)"
        ) from None
    return read(doc, str(path))
