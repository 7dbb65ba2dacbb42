"""The sweep's loop against a platform in memory: each configuration submitted once, refusals and the budget
recorded, a resumed sweep finding its jobs by label, a job stuck in the queue cancelled."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.sweep.platform import MemoryPlatform
from tierscope.dataset.store import Dataset
from tierscope.sweep.estimate import BudgetError
from tierscope.sweep.ledger import Entry, LedgerStore, SweepBusyError
from tierscope.sweep.plan import load_plan
from tierscope.sweep.run import Options, run_sweep

PLAN = """\
id = "loop"
dataset = "ds"
work_dir = "work"

[run]
steps = 60
minutes = 60

[[configuration]]
tier = "BASIC"

[[configuration]]
name = "two"
workers = 1

[[configuration]]
name = "premium"
workers = 9
ps = 3
"""
FAST = Options(poll_s=0.0)
QUOTA = "Quota exceeded for aiplatform.googleapis.com/custom_model_training_cpus: 48 requested, 24 available"


def plan_in(tmp_path: Path):
    path = tmp_path / "plan.toml"
    path.write_text(PLAN, encoding="utf-8")
    return load_plan(path)


def test_each_configuration_once_and_a_refusal_recorded_with_its_reason(tmp_path: Path) -> None:
    plan = plan_in(tmp_path)
    platform = MemoryPlatform(refuse={"premium": QUOTA})
    ledger = run_sweep(plan, platform, platform, FAST)
    assert platform.submitted == {"BASIC": 1, "two": 1}
    states = {n: (e.state, e.reason, e.collected) for n, e in ledger.entries.items()}
    assert states == {"BASIC": ("succeeded", None, True), "two": ("succeeded", None, True),
                      "premium": ("failed", QUOTA, True)}  # fmt: skip
    assert sum(platform.collected.values()) == 2
    # The refusal is the run's failed event in the dataset, with the API's reason
    events = Dataset(plan.dataset).read("events", "loop-premium")
    assert events.select("run_id", "event", "reason").rows() == [("loop-premium", "failed", QUOTA)]
    runs = Dataset(plan.dataset).read("runs").filter(pl.col("run_id") == "loop-premium")
    assert runs["note"].to_list() == ["sweep loop"] and '"count": 9' in runs["topology"][0]
    assert runs["config"].to_list() == ["premium"]
    # A second sweep of the same plan submits and collects nothing more
    again = run_sweep(plan, platform, platform, FAST)
    assert platform.submitted == {"BASIC": 1, "two": 1} and sum(platform.collected.values()) == 2
    assert Dataset(plan.dataset).read("events", "loop-premium").height == 1
    assert again.entries.keys() == ledger.entries.keys()


def test_a_sweep_killed_after_submitting_finds_its_job_by_label(tmp_path: Path) -> None:
    plan = plan_in(tmp_path)
    platform = MemoryPlatform()
    # submitted by a sweep that died before saving the job id in its ledger
    earlier = platform.submit(plan.sweep_id, "two", plan.configuration("two").job)
    ledger = run_sweep(plan, platform, platform, FAST)
    assert platform.submitted == {"BASIC": 1, "two": 1, "premium": 1}
    assert ledger.entries["two"].job_id == earlier


def test_submission_stops_when_the_next_configuration_would_pass_the_budget(tmp_path: Path) -> None:
    plan = plan_in(tmp_path)
    platform = MemoryPlatform()
    # an hour each (minutes = 60): BASIC 1 x n1-standard-4 = $0.189999; two 2 x 0.189999 = $0.379998;
    # premium 13 x 0.189999 = $2.469987. $0.60 pays for the first two (0.569997), not the third.
    ledger = run_sweep(plan, platform, platform, Options(budget=0.60, poll_s=0.0))
    assert platform.submitted == {"BASIC": 1, "two": 1}
    premium = ledger.entries["premium"]
    assert premium.state == "skipped" and premium.job_id is None
    assert premium.reason == "not submitted: its estimate $2.47 after $0.57 would pass the budget $0.60"
    assert "loop-premium" not in Dataset(plan.dataset).read("runs")["run_id"].to_list()
    # The same sweep with the same budget keeps it back; with a higher one it submits it, and nothing else again
    run_sweep(plan, platform, platform, Options(budget=0.60, poll_s=0.0))
    assert platform.submitted == {"BASIC": 1, "two": 1}
    ledger = run_sweep(plan, platform, platform, Options(budget=3.04, poll_s=0.0))
    assert platform.submitted == {"BASIC": 1, "two": 1, "premium": 1}
    assert ledger.entries["premium"].state == "succeeded"


def test_a_budget_below_one_run_submits_nothing(tmp_path: Path) -> None:
    plan = plan_in(tmp_path)
    platform = MemoryPlatform()
    with pytest.raises(BudgetError, match=r"budget \$0.10 is below one run: BASIC alone is estimated at \$0.19"):
        run_sweep(plan, platform, platform, Options(budget=0.10, poll_s=0.0))
    assert not platform.submitted and LedgerStore(plan.dataset).load(plan.sweep_id) is None


def test_a_job_queued_past_the_queue_timeout_is_cancelled_and_failed(tmp_path: Path) -> None:
    plan = plan_in(tmp_path)
    platform = MemoryPlatform(plan=("queued",))
    ledger = run_sweep(plan, platform, platform, Options(queue_timeout_s=0.0, poll_s=0.0))
    assert sorted(platform.cancelled) == ["job-1", "job-2", "job-3"]
    basic = ledger.entries["BASIC"]
    assert basic.state == "failed" and basic.reason is not None
    assert basic.reason.startswith("still queued after") and basic.reason.endswith("(--queue-timeout 0): cancelled")
    reasons = Dataset(plan.dataset).read("events", "loop-basic")["reason"].to_list()
    assert reasons == [basic.reason]


def test_what_a_configuration_cost_as_it_ran() -> None:
    # n1-standard-4 at 0.189999 an hour for the 30 minutes from start to end: 0.0949995
    entry = Entry(usd_per_hour=0.189999, start_time="2026-12-06T10:00:00.000000Z", end_time="2026-12-06T10:30:00Z")
    assert entry.ran_usd == pytest.approx(0.0949995)
    assert Entry(usd_per_hour=0.189999, start_time="2026-12-06T10:00:00Z").ran_usd is None


def test_a_second_sweep_of_the_same_plan_is_refused_while_one_runs(tmp_path: Path) -> None:
    plan = plan_in(tmp_path)
    platform = MemoryPlatform()
    busy = pytest.raises(SweepBusyError, match="sweep loop is being run by another tierscope sweep")
    with LedgerStore(plan.dataset).running(plan.sweep_id), busy:
        run_sweep(plan, platform, platform, FAST)
    assert not platform.submitted


def test_two_sweeps_of_one_configuration_make_two_runs_of_one_config(tmp_path: Path) -> None:
    runs_of = []
    for sweep in ("t1", "t2"):
        path = tmp_path / f"{sweep}.toml"
        path.write_text(f'id = "{sweep}"\ndataset = "ds"\nwork_dir = "work"\nconfiguration = ["BASIC"]\n'
                        '[run]\nsteps = 5\nminutes = 1\n', encoding="utf-8")  # fmt: skip
        plan = load_plan(path)
        (basic,) = plan.configurations
        runs_of.append(basic.run_id)
        platform = MemoryPlatform(refuse={"BASIC": QUOTA})  # a refusal: the sweep's own failed event is collected
        run_sweep(plan, platform, platform, FAST)
    assert runs_of == ["t1-basic", "t2-basic"]
    runs = Dataset(tmp_path / "ds").read("runs").sort("run_id")
    # one run each, both of the configuration BASIC (summary pools them as repeats of one configuration)
    assert runs.select("run_id", "config").rows() == [("t1-basic", "BASIC"), ("t2-basic", "BASIC")]
    events = Dataset(tmp_path / "ds").read("events")
    assert sorted(events["run_id"].to_list()) == ["t1-basic", "t2-basic"]


def test_a_ledger_giving_a_configuration_another_configurations_job_is_refused(tmp_path: Path) -> None:
    from tierscope.sweep.errors import SweepError
    from tierscope.sweep.ledger import Ledger

    plan = plan_in(tmp_path)
    platform = MemoryPlatform()
    basic = platform.submit(plan.sweep_id, "BASIC", plan.configuration("BASIC").job)
    two = platform.submit(plan.sweep_id, "two", plan.configuration("two").job)
    # a hand-edited ledger: BASIC's job id is two's
    entries = {"BASIC": Entry(job_id=two, state="queued"), "two": Entry(job_id=two, state="queued")}
    LedgerStore(plan.dataset).save(Ledger(plan.sweep_id, str(plan.path), "memory", entries))
    with pytest.raises(SweepError) as caught:
        run_sweep(plan, platform, platform, FAST)
    said = str(caught.value)
    assert "\n" not in said and f"gives configuration BASIC the job {two}" in said
    assert "tierscope-config=two, not tierscope-sweep=loop, tierscope-config=basic" in said
    # nothing collected, nothing more submitted
    assert not platform.collected and platform.submitted == {"BASIC": 1, "two": 1} and basic == "job-1"


def test_a_configuration_changed_under_the_same_sweep_id_is_refused(tmp_path: Path) -> None:
    from tierscope.sweep.errors import SweepError

    plan = plan_in(tmp_path)
    platform = MemoryPlatform()
    run_sweep(plan, platform, platform, FAST)
    # the same id, BASIC's steps changed (60 -> 90): its job body is another; the ledger remembers the first
    path = tmp_path / "plan.toml"
    path.write_text(PLAN.replace("steps = 60", "steps = 90"), encoding="utf-8")
    with pytest.raises(SweepError) as caught:
        run_sweep(load_plan(path), platform, platform, FAST)
    said = str(caught.value)
    assert said == (
        "configuration BASIC changed since sweep loop submitted it (its job body differs from the one in the "
        "ledger); give the plan another id to run the changed one"
    )
    assert platform.submitted == {"BASIC": 1, "two": 1, "premium": 1}
    # the plan as it was resumes quietly
    run_sweep(plan, platform, platform, FAST)
    assert platform.submitted == {"BASIC": 1, "two": 1, "premium": 1}
