"""The one interface between the sweep and whatever runs its jobs (local clusters, Vertex AI).

A launcher submits a job for one configuration of one sweep, finds an earlier submission by its
labels (so a restarted sweep never submits twice), reports a job's state and cancels it. Every
launcher labels its jobs with :data:`SWEEP_LABEL` and :data:`CONFIG_LABEL`, their values made
Vertex-legal by :func:`label_value`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tierscope.sweep.errors import SweepError

if TYPE_CHECKING:
    from tierscope.collector.manifest import RunSpec
    from tierscope.dataset.store import Dataset

JobStateName = Literal["queued", "provisioning", "running", "succeeded", "failed", "cancelled"]

#: States a job never leaves.
FINAL_STATES: frozenset[str] = frozenset({"succeeded", "failed", "cancelled"})

#: Label keys every launcher sets on every job it submits.
SWEEP_LABEL = "tierscope-sweep"
CONFIG_LABEL = "tierscope-config"

#: Vertex AI label rules (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.customJobs,
#: "labels", read 2026-12-06; the same as Compute Engine's): at most 63 characters, lowercase letters,
#: digits, underscores and dashes.
LABEL_MAX = 63
_NOT_LABEL = re.compile(r"[^a-z0-9_-]")


@dataclass(frozen=True)
class JobState:
    """A job's state as its launcher reports it.

    ``reason`` is the platform's message for a failed or cancelled job (e.g. a quota refusal);
    ``start_time``/``end_time`` are when its replicas started running and when it ended (UTC),
    ``None`` while unknown.
    """

    state: JobStateName
    reason: str | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


class Launcher(Protocol):
    """What the sweep needs from a place that runs jobs."""

    def find(self, sweep_id: str, configuration: str) -> str | None:
        """The id of an earlier submission of ``configuration`` in ``sweep_id`` (by labels), or ``None``."""
        ...

    def submit(self, sweep_id: str, configuration: str, job: dict[str, Any]) -> str:
        """Submit ``job`` (a Vertex AI CustomJob body as ``trainer.spec.vertex_job`` builds it) labelled
        with the sweep and configuration; returns the job id. Raises :class:`SubmitRefused` with the
        platform's reason when the platform refuses it (quota, invalid spec, accelerator not in region)."""
        ...

    def state(self, job_id: str) -> JobState:
        """The job's current state."""
        ...

    def labels_of(self, job_id: str) -> dict[str, str]:
        """The labels of job ``job_id`` (a ledger's job id is checked against them before its job is collected).
        Raises :class:`~tierscope.sweep.errors.SweepError` for a job the platform does not know."""
        ...

    def cancel(self, job_id: str) -> None:
        """Ask the platform to cancel the job; returns without waiting for it to end."""
        ...


class JobLogs(Protocol):
    """How the sweep gets a finished job's logs into the dataset (each launcher has its own: a local run
    directory, Cloud Logging)."""

    def collect(self, dataset: Dataset, job_id: str, run: RunSpec) -> None:
        """Collect the logs of ``job_id`` into ``dataset`` as ``run`` (its ``run_id`` the configuration's
        name, its tier and machine facts set; ``files`` empty: the launcher knows where the logs are).
        Must be idempotent: a sweep killed after collecting but before noting it collects again, and
        the collector's positions and record keys make that store nothing twice."""
        ...


class SubmitRefused(SweepError):
    """The platform refused a submission; ``str(error)`` is its reason, recorded as the run's failure."""


def label_value(name: str) -> str:
    """``name`` as a Vertex AI label value: lowercased, every other character than ``a-z0-9_-`` turned
    into ``-``, and, when longer than 63 characters, cut to 54 plus ``-`` and 8 hex digits of its
    SHA-256 so that two long names stay apart. ``"STANDARD_1"`` -> ``"standard_1"``."""
    return _cut(_NOT_LABEL.sub("-", name.lower()), name)


def _cut(value: str, name: str) -> str:
    """``value`` as it is, or cut to 54 characters plus ``-`` and 8 hex digits of ``name``'s SHA-256 when longer
    than 63."""
    if len(value) > LABEL_MAX:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        value = f"{value[: LABEL_MAX - 9]}-{digest}"
    return value


def swept_run_id(sweep_id: str, configuration: str) -> str:
    """The run id of ``configuration``'s run in ``sweep_id``: ``<sweep id>-<configuration's label>``, cut as
    :func:`label_value` cuts (at most 63 characters). One per sweep and configuration, so two sweeps that
    both name ``BASIC`` make two runs (``t1-basic``, ``t2-basic``) instead of one run of two segments; the
    run's ``config`` fact, the configuration's name, pools them as repeats."""
    return _cut(f"{sweep_id}-{label_value(configuration)}", f"{sweep_id}\0{configuration}")


def check_labels(found: dict[str, str], sweep_id: str, configuration: str, job_id: str) -> None:
    """Raise :class:`SweepError` unless ``found`` (job ``job_id``'s labels) are those of ``configuration`` in
    ``sweep_id``: a ledger whose job id was edited, or copied from another sweep, would collect another
    configuration's job as this one's run."""
    from tierscope.sweep.errors import SweepError

    wanted = labels(sweep_id, configuration)
    seen = {k: found.get(k) for k in wanted}
    if seen != wanted:
        said = ", ".join(f"{k}={v}" for k, v in seen.items() if v is not None) or "no tierscope labels"
        raise SweepError(
            f"the ledger of sweep {sweep_id} gives configuration {configuration} the job {job_id}, whose labels "
            f"are {said}, not {', '.join(f'{k}={v}' for k, v in wanted.items())}; the ledger was edited or copied: "
            "put back the job id, or give the plan another id"
        )


def labels(sweep_id: str, configuration: str) -> dict[str, str]:
    """The labels a launcher puts on the job of ``configuration`` in ``sweep_id``."""
    return {SWEEP_LABEL: label_value(sweep_id), CONFIG_LABEL: label_value(configuration)}
