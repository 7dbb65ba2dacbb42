"""The sweep's loop: submit each configuration's job (once, whatever kills the sweep), follow the jobs, collect
each finished one into the dataset (once), and keep the ledger of it all.

One pass of :func:`run_sweep`:

1. before the sweep's first submission, the estimates are checked: an unpriced configuration (unless allowed)
   or a budget below the first configuration's estimate refuses the sweep, nothing submitted; configurations
   a budget kept back on an earlier run are weighed again against this run's;
2. each configuration without a job id is looked for by its labels (an earlier, killed sweep may have
   submitted it and died before saving its id), else submitted while the budget allows; a refusal is a
   failed configuration with the platform's reason;
3. every job is followed until it ends (a job queued past ``queue_timeout_s`` is cancelled, and failed with that
   reason); an ended job's logs are collected as the configuration's run (``<sweep id>-<configuration>``),
   with its machine facts; a job that never ran gets a ``failed`` event saying why, so the dataset knows the
   configuration failed.

Every change of an entry is saved to the ledger before the next step acts on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tierscope.analysis import machines
from tierscope.sweep import estimate as estimating
from tierscope.sweep.errors import SweepError
from tierscope.sweep.launchers import JobLogs, JobState, Launcher, SubmitRefused, check_labels, label_value
from tierscope.sweep.ledger import PLANNED, SKIPPED, Entry, Ledger, LedgerStore, fingerprint
from tierscope.sweep.plan import Configuration, Plan

#: Seconds between two looks at the jobs.
POLL_S = 2.0


@dataclass(frozen=True)
class Options:
    """How a sweep runs: ``budget`` (USD; None: the plan's, else none), ``allow_unpriced``, ``spends`` (False for
    local runs: nothing is billed, so neither the budget nor the prices stop them), ``queue_timeout_s``,
    ``poll_s``, the dataset's ``lock_timeout``."""

    budget: float | None = None
    allow_unpriced: bool = False
    spends: bool = True
    queue_timeout_s: float | None = None
    poll_s: float = POLL_S
    lock_timeout: float = 60.0


@dataclass(frozen=True)
class Line:
    """One line of the live table: a configuration, its state, and what to say about it (steps/s, a reason)."""

    configuration: str
    state: str
    detail: str = ""
    estimate_usd: float | None = None
    ran_usd: float | None = None


Listener = Callable[[list[Line]], None]


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _age_s(text: str | None) -> float:
    if text is None:
        return 0.0
    return (datetime.now(UTC) - datetime.fromisoformat(text.replace("Z", "+00:00"))).total_seconds()


def open_ledger(plan: Plan, launcher: Launcher, store: LedgerStore, budget: float | None) -> Ledger:
    """The plan's ledger in the dataset, begun (and saved) if there is none; configurations added to the plan
    since are added to it. Raises :class:`SweepError` for a ledger of another launcher."""
    name = getattr(launcher, "name", type(launcher).__name__)
    ledger = store.load(plan.sweep_id)
    if ledger is None:
        ledger = Ledger(plan.sweep_id, str(plan.path), name, budget=budget)
        changed = True
    elif ledger.launcher != name:
        raise SweepError(
            f"sweep {plan.sweep_id} was begun on {ledger.launcher}, not {name}; give the plan another id to run it "
            f"on {name}"
        )
    else:
        changed = False
    for c in plan.configurations:
        if c.name not in ledger.entries:
            ledger.entries[c.name] = Entry()
            changed = True
    where = getattr(launcher, "where", None)
    if where is not None and ledger.where != where:
        ledger.where, changed = where, True
    if changed:
        store.save(ledger)
    return ledger


def run_sweep(
    plan: Plan,
    launcher: Launcher,
    logs: JobLogs,
    options: Options = Options(),
    on_update: Listener | None = None,
) -> Ledger:
    """Run ``plan`` with ``launcher`` until every configuration has ended and been collected (see the module);
    returns the ledger. Raises :class:`~tierscope.sweep.estimate.BudgetError` (nothing submitted),
    :class:`~tierscope.sweep.ledger.SweepBusyError` (another process runs this sweep), :class:`SweepError`.
    ``KeyboardInterrupt`` (Ctrl-C) leaves the jobs as they are and the ledger saved: the caller decides
    whether to :func:`cancel` them."""
    from tierscope.dataset.store import Dataset

    budget = options.budget if options.budget is not None else plan.budget
    found = estimating.estimates(plan)
    usd = {e.configuration: e.usd for e in found}
    hourly = {e.configuration: e.usd_per_hour for e in found}
    store = LedgerStore(plan.dataset, options.lock_timeout)
    dataset = Dataset(plan.dataset)
    with store.running(plan.sweep_id):
        earlier = store.load(plan.sweep_id)  # checked before a ledger is begun: a refused sweep leaves none
        if earlier is None:
            earlier = Ledger(plan.sweep_id, str(plan.path), "")
        begun = any(e.job_id is not None or e.submitted_at is not None for e in earlier.entries.values())
        if options.spends and not begun:
            # Before the first submission only: a resumed sweep must go on following and collecting its jobs.
            estimating.check(found, budget, options.allow_unpriced)
        ledger = open_ledger(plan, launcher, store, budget)
        _check_jobs(plan, launcher, ledger)
        _reconsider(ledger, store)
        _submit(plan, launcher, store, ledger, usd, budget if options.spends else None, hourly)
        while True:
            lines = _follow(plan, launcher, logs, store, ledger, dataset, options)
            if on_update is not None:
                on_update(lines)
            if all(e.final and e.collected for e in ledger.entries.values() if _planned(plan, e, ledger)):
                return ledger
            time.sleep(options.poll_s)


def _check_jobs(plan: Plan, launcher: Launcher, ledger: Ledger) -> None:
    """Each configuration submitted is the one the plan says now (its job body's fingerprint), and each job id of
    the ledger not collected yet belongs to its configuration (by its labels): a resumed sweep never passes a
    changed configuration off as the one that ran, nor collects another configuration's job as this one's run.
    Raises :class:`SweepError`."""
    for c in plan.configurations:
        entry = ledger.entries[c.name]
        if entry.job_sha256 is not None and entry.job_sha256 != fingerprint(c.job):
            raise SweepError(
                f"configuration {c.name} changed since sweep {plan.sweep_id} submitted it (its job body differs "
                f"from the one in the ledger); give the plan another id to run the changed one"
            )
        if entry.job_id is not None and not entry.collected:
            check_labels(launcher.labels_of(entry.job_id), plan.sweep_id, c.name, entry.job_id)


def _planned(plan: Plan, entry: Entry, ledger: Ledger) -> bool:
    return any(ledger.entries.get(c.name) is entry for c in plan.configurations)


#: How the reason of a configuration the budget kept back begins.
OVER_BUDGET = "not submitted: its estimate"


def _reconsider(ledger: Ledger, store: LedgerStore) -> None:
    """Configurations the budget kept back are planned again: this run's budget (maybe a higher one) decides."""
    changed = False
    for entry in ledger.entries.values():
        if entry.state == SKIPPED and entry.job_id is None and (entry.reason or "").startswith(OVER_BUDGET):
            entry.state, entry.reason, entry.collected = PLANNED, None, False
            changed = True
    if changed:
        store.save(ledger)


def spent(ledger: Ledger, usd: dict[str, float | None]) -> float:
    """The estimates of the configurations submitted, or being submitted by a sweep that died doing it (a
    refused one spends nothing)."""
    return sum(
        usd.get(name) or 0.0
        for name, e in ledger.entries.items()
        if e.job_id is not None or (e.submitted_at is not None and not e.final)
    )


def running_detail(launcher: Launcher, job_id: str) -> str:
    """What the live table says of a running job: its steps/s where the launcher can tell (the local one)."""
    rate_of = getattr(launcher, "steps_per_s", None)
    if rate_of is None:
        return ""
    rate = rate_of(job_id)
    return f"{rate:,.2f} steps/s" if rate is not None else "no step yet"


def _submit(
    plan: Plan, launcher: Launcher, store: LedgerStore, ledger: Ledger, usd: dict[str, float | None],
    budget: float | None, hourly: dict[str, float | None],
) -> None:  # fmt: skip
    spent_usd = spent(ledger, usd)
    stop: str | None = next((e.reason for e in ledger.entries.values() if e.state == SKIPPED), None)
    for c in plan.configurations:
        entry = ledger.entries[c.name]
        if entry.job_id is not None or entry.final:
            continue
        entry.estimate_usd, entry.usd_per_hour = usd.get(c.name), hourly.get(c.name)
        earlier = launcher.find(plan.sweep_id, c.name)  # submitted by a sweep killed before it saved the id
        if earlier is not None:
            entry.job_id, entry.state = earlier, "queued"
            entry.job_sha256 = entry.job_sha256 or fingerprint(c.job)
            entry.submitted_at = entry.submitted_at or _iso(datetime.now(UTC))
            store.save(ledger)
            continue
        if stop is None and not estimating.affordable(spent_usd, usd.get(c.name), budget):
            stop = (
                f"{OVER_BUDGET} ${usd.get(c.name) or 0:,.2f} after ${spent_usd:,.2f} would pass the "
                f"budget ${budget:,.2f}"
            )
        if stop is not None:
            entry.state, entry.reason, entry.collected = SKIPPED, stop, True
            store.save(ledger)
            continue
        entry.submitted_at, entry.job_sha256 = _iso(datetime.now(UTC)), fingerprint(c.job)
        store.save(ledger)  # the intent first: what it spends counts even if the sweep dies submitting
        try:
            entry.job_id = launcher.submit(plan.sweep_id, c.name, c.job)
            entry.state = "queued"
        except SubmitRefused as exc:
            entry.state, entry.reason = "failed", str(exc)
        if entry.job_id is not None:
            spent_usd += usd.get(c.name) or 0.0
        store.save(ledger)


def _follow(
    plan: Plan, launcher: Launcher, logs: JobLogs, store: LedgerStore, ledger: Ledger, dataset: Any, options: Options
) -> list[Line]:
    lines = []
    for c in plan.configurations:
        entry = ledger.entries[c.name]
        detail = ""
        if entry.job_id is not None and not entry.final:
            state = launcher.state(entry.job_id)
            if state.state == "queued" and options.queue_timeout_s is not None:
                waited = _age_s(entry.submitted_at)
                if waited > options.queue_timeout_s:
                    launcher.cancel(entry.job_id)
                    state = JobState(
                        "failed", f"still queued after {waited:.0f} s (--queue-timeout {options.queue_timeout_s:g}): "
                        "cancelled", state.start_time, state.end_time,
                    )  # fmt: skip
            if _changed(entry, state):
                store.save(ledger)
            if state.state == "running":
                detail = running_detail(launcher, entry.job_id)
        if entry.final and not entry.collected:
            _collect(plan, c, entry, logs, dataset)
            entry.collected = True
            store.save(ledger)
        if entry.final:
            detail = entry.reason or ("collected" if entry.collected else "")
        lines.append(line(c.name, entry, detail))
    return lines


def line(name: str, entry: Entry, detail: str | None = None) -> Line:
    """The table's line of an entry (``detail``: what to say, default its reason)."""
    said = (entry.reason or "") if detail is None else detail
    return Line(name, "done" if entry.state == "succeeded" else entry.state, said, entry.estimate_usd, entry.ran_usd)


def _changed(entry: Entry, state: JobState) -> bool:
    new = (state.state, state.reason, _iso(state.start_time) or entry.start_time, _iso(state.end_time))
    old = (entry.state, entry.reason, entry.start_time, entry.end_time)
    if new == old:
        return False
    entry.state, entry.reason, entry.start_time, entry.end_time = new
    return True


def run_facts(plan: Plan, c: Configuration, entry: Entry) -> Any:
    """The run a configuration's logs are collected as: ``c.run_id`` (the sweep's id and the configuration's
    label, so two sweeps of one configuration make two runs), its machine facts (the plan's region
    where a pool names none), dated by its job's start, noted with the sweep's id; its ``config`` the
    configuration's name (a later run given that config is pooled with it as a repeat) and its
    ``estimate_usd`` the sweep's estimate (the report shows it beside the measured cost)."""
    from tierscope.collector.manifest import RunSpec

    started = entry.start_time or entry.submitted_at
    day = datetime.fromisoformat(started.replace("Z", "+00:00")).date() if started else None
    return RunSpec(
        run_id=c.run_id,
        tier=c.tier,
        files=[],
        date=day,
        note=f"sweep {plan.sweep_id}",
        topology=machines.with_region(c.hardware, plan.region).to_json(),
        run_id_given=True,
        config=c.name,
        estimate_usd=entry.estimate_usd,
    )


def _collect(plan: Plan, c: Configuration, entry: Entry, logs: JobLogs, dataset: Any) -> None:
    if entry.state == SKIPPED:
        return
    run = run_facts(plan, c, entry)
    if entry.job_id is not None and entry.start_time is not None:
        logs.collect(dataset, entry.job_id, run)
    if entry.state in ("failed", "cancelled") and entry.start_time is None:
        _collect_failure(plan, c, entry, run, dataset)


def failure_log(plan: Plan, configuration: str) -> Path:
    """Where the ``failed`` event of a configuration whose job never ran is written (then collected)."""
    return plan.work_dir / label_value(plan.sweep_id) / f"{label_value(configuration)}.failed.jsonl"


def _collect_failure(plan: Plan, c: Configuration, entry: Entry, run: Any, dataset: Any) -> None:
    """Record that ``c`` never ran, and why, as the run's ``failed`` event: written once to a file of its own
    (kept: a repeated collect finds it read already) and collected like any log."""
    import io

    from tierscope.atomic import write_text_atomic
    from tierscope.collector.collect import collect_runs
    from tierscope.trainer.steplog import Identity, StepLog

    path = failure_log(plan, c.name)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        text = io.StringIO()
        log = StepLog(Identity(c.run_id, c.tier or "CUSTOM", None, None), "json", text, diagnostics=None)
        detail = {"sweep": plan.sweep_id, "job_id": entry.job_id, "state": entry.state}
        log.event("failed", reason=entry.reason or entry.state, detail=detail)
        log.close()
        write_text_atomic(path, text.getvalue())
    result = collect_runs(dataset, [replace(run, files=[path])], settle_s=0.0)
    if result.errors:
        raise result.errors[0]


def cancel(store: LedgerStore, sweep_id: str, launcher: Launcher, reason: str = "cancelled") -> Ledger:
    """Cancel every job of the sweep that has not ended and stop what was not submitted (a resumed sweep then
    submits nothing more). Returns the ledger; the jobs' ends are recorded when the sweep (or ``--status``)
    next looks at them. Raises :class:`SweepError` for an unknown sweep."""
    ledger = load(store, sweep_id)
    for entry in ledger.entries.values():
        if entry.final:
            continue
        if entry.job_id is not None:
            launcher.cancel(entry.job_id)
        elif entry.state == PLANNED:
            entry.state, entry.reason, entry.collected = SKIPPED, f"not submitted: {reason}", True
    store.save(ledger)
    return ledger


def load(store: LedgerStore, sweep_id: str) -> Ledger:
    """The ledger of ``sweep_id``; :class:`SweepError` naming the known sweeps if there is none (the one meant
    first when ``sweep_id`` differs from it only in case or in characters a label cannot hold)."""
    known = store.sweeps()
    if sweep_id not in known:
        meant = [k for k in known if label_value(k) == label_value(sweep_id)]
        if meant:
            raise SweepError(f"no sweep {sweep_id!r} in the dataset {store.root}; did you mean {meant[0]}? "
                             "(sweep ids are as the plan spells them)")  # fmt: skip
    ledger = store.load(sweep_id)
    if ledger is None:
        said = ", ".join(known) or "none"
        raise SweepError(f"no sweep {sweep_id!r} in the dataset {store.root} (sweeps there: {said}); give --dataset")
    return ledger


def refresh(store: LedgerStore, ledger: Ledger, launcher: Launcher) -> list[Line]:
    """``--status``: each entry's state asked of its launcher (saved when it changed), one :class:`Line` each."""
    lines = []
    for name, entry in ledger.entries.items():
        detail = entry.reason or ""
        if entry.job_id is not None and not entry.final:
            state = launcher.state(entry.job_id)
            if _changed(entry, state):
                store.save(ledger)
            detail = entry.reason or ""
            if state.state == "running":
                detail = running_detail(launcher, entry.job_id)
        elif entry.final and not entry.collected and entry.state != SKIPPED:
            detail = (detail + "; " if detail else "") + "not collected yet: run the sweep again to collect it"
        lines.append(line(name, entry, detail))
    return lines
