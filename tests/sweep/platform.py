"""A platform in memory for the sweep's loop: jobs that go queued -> running -> succeeded as it is told, a
refusal for chosen configurations, and a count of every submission (what a double submission would show)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tierscope.sweep.launchers import JobState, SubmitRefused, labels


@dataclass
class MemoryPlatform:
    """``refuse``: configuration -> the refusal's reason; ``plan``: the states each job goes through, one per look."""

    refuse: dict[str, str] = field(default_factory=dict)
    plan: tuple[str, ...] = ("queued", "running", "succeeded")
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    submitted: Counter[str] = field(default_factory=Counter)
    cancelled: list[str] = field(default_factory=list)
    collected: Counter[str] = field(default_factory=Counter)
    name: str = "memory"

    def find(self, sweep_id: str, configuration: str) -> str | None:
        wanted = labels(sweep_id, configuration)
        return next((j for j, job in self.jobs.items() if job["labels"] == wanted), None)

    def submit(self, sweep_id: str, configuration: str, job: dict[str, Any]) -> str:
        if configuration in self.refuse:
            raise SubmitRefused(self.refuse[configuration])
        self.submitted[configuration] += 1
        job_id = f"job-{len(self.jobs) + 1}"
        self.jobs[job_id] = {"labels": labels(sweep_id, configuration), "looks": 0, "cancelled": False}
        return job_id

    def labels_of(self, job_id: str) -> dict[str, str]:
        return dict(self.jobs[job_id]["labels"])

    def state(self, job_id: str) -> JobState:
        job = self.jobs[job_id]
        if job["cancelled"]:
            return JobState("cancelled", "cancelled by the user")
        state = self.plan[min(job["looks"], len(self.plan) - 1)]
        job["looks"] += 1
        now = datetime.now(UTC)
        started = now if state in ("running", "succeeded") else None
        return JobState(state, None, started, now if state == "succeeded" else None)  # type: ignore[arg-type]

    def cancel(self, job_id: str) -> None:
        self.cancelled.append(job_id)
        self.jobs[job_id]["cancelled"] = True

    def collect(self, dataset: Any, job_id: str, run: Any) -> None:
        self.collected[job_id] += 1
