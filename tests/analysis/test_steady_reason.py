"""Why a run has no steady-state rate: ``steady_status`` / ``steady_reason`` of the summary, the notes
under ``tierscope summary``'s table and under the report's (en, ja), on runs built to hit each of the
steady-state rules of :mod:`tierscope.analysis.throughput` and on the real cases that hit them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support import SHARED
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.summary import STEADY_ASSUMPTIONS, STEADY_REASONS, BaselineError
from tierscope.cli import app
from tierscope.dataset.schema import EVENT_SCHEMA, RUN_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import steady_notes

runner = CliRunner()
CASES = SHARED / "cases"
T0 = datetime(2017, 12, 7, 19, 0, tzinfo=UTC)


def _row(run: str, offset: int, **values: Any) -> dict[str, Any]:
    return {"run_id": run, "role": "master", "task_index": 0, "source": f"/logs/{run}.log", "source_offset": offset,
            "format": "structured", **values}  # fmt: skip


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """One run per rule (all on one master unless said):

    - ``ok``: steps 100, 200, 300 at elapsed 10, 20, 30 s: the first is warm-up, then 100/10 = 10 and
      10 global steps/s: steady median(10, 10) = 10 (no reason).
    - ``one``: one record (step 100, elapsed 10 s): it is its segment's first, warm-up.
    - ``pids``: steps 100 and 200 at T0 and T0 + 10 s from pids 35 and 31 (case07's shape): two
      processes, two segments of one record, both warm-up (read as one process, 100/10 = 10 steps/s).
    - ``untimed``: steps 100, 200, 300 with examples/s only, no time and no global rate (case06's
      shape): each starts a segment, 3 segments of one record.
    - ``once``: two workers' one ``sec/step`` line each (steps 100, 103; 2 and 4 s/step), no clock:
      each is its task's only record and warm-up, 2 segments of 1 record; not ``no_clock``, since each
      states a step time.
    - ``slim``: one master's ``sec/step`` lines (steps 100, 103, 106 at 2 s/step), no clock: timed
      by the step time, 3 / 2 = 1.5 global steps/s twice, steady 1.5, assuming one step a line.
    - ``skipped``: two workers' ``sec/step`` lines (each: steps +30 a line at 2 s/step), no clock: timed by
      the step time, 30 / 2 = 15 global steps/s, where the two workers' local rates add up to 0.5 + 0.5 = 1
      step/s: neither the global rate (async) nor 2 x it (sync): contradicted, no rate.
    - ``ps``: a parameter server's records alone (steps 100, 200 at 10, 20 s): no training task.
    - ``stepless``: two records naming no step, examples/s only, 10 s apart: the second is past
      warm-up but has no step gain to rate, and no logged rate.
    - ``failed``: a failed event, no step record.
    - ``rising``: steps 100, 200, 300, 400 at elapsed 10, 20, 26, 30 s: past the first record, 100/10 = 10,
      100/6 = 16.7 and 100/4 = 25 global steps/s, each over 10 % above the one before and 25 / 10 = 2.5x
      the first (over 1.25x): still rising, so no reason: its steady rate is the last third's (one interval, 25),
      said by its assumption (its mean rate 300 / 20 = 15 stays).
    - ``absurd``: steps 100, 200 at elapsed 1e23 and 2e23 s (over 1,000 years): both left out, no training record
      left (it said "only ps or evaluator records").
    - ``zero``: three records stating 0 global steps/s, no step, no clock: a zero rate times nothing (it was a
      steady 0.0).
    - ``huge``: three stating 1e300 global steps/s, beyond a step a microsecond (it was the steady rate).
    - ``jumped``: steps 100, 200, 300 at elapsed 10, 20 s, then 20 s + 300 x 365.25 x 86,400 s: the run's median
      is 10 s / 100 steps = 0.1 s a step, and 200 -> 300 takes 9,467,280,000 s, over a day and 100 x 10 s: a clock
      jump, the run set aside (it was a sustained rate of 2e-8 steps/s).
    """
    rows = [
        *(_row("ok", i, step=100 * i, elapsed_s=10.0 * i) for i in (1, 2, 3)),
        _row("one", 1, step=100, elapsed_s=10.0),
        _row("pids", 1, step=100, timestamp=T0, pid=35),
        _row("pids", 2, step=200, timestamp=T0 + timedelta(seconds=10), pid=31),
        *(_row("untimed", i, step=100 * i, examples_per_s=500.0) for i in (1, 2, 3)),
        *({**_row("once", i, step=97 + 3 * i, local_steps_per_s=1 / (2.0 * i)), "role": "worker", "task_index": i}
          for i in (1, 2)),
        *(_row("slim", i, step=97 + 3 * i, local_steps_per_s=0.5) for i in (1, 2, 3)),
        *({**_row("skipped", i, step=1000 * t + 30 * i, local_steps_per_s=0.5), "role": "worker", "task_index": t}
          for i in (1, 2, 3) for t in (0, 1)),
        *({**_row("ps", i, step=100 * i, elapsed_s=10.0 * i), "role": "ps"} for i in (1, 2)),
        *(_row("stepless", i, position=i, examples_per_s=500.0, timestamp=T0 + timedelta(seconds=10 * i))
          for i in (1, 2)),
        *(_row("rising", i, step=100 * i, elapsed_s=t) for i, t in ((1, 10.0), (2, 20.0), (3, 26.0), (4, 30.0))),
        *(_row("absurd", i, step=100 * i, elapsed_s=1e23 * i) for i in (1, 2)),
        *(_row("zero", i, global_steps_per_s=0.0) for i in (1, 2, 3)),
        *(_row("huge", i, global_steps_per_s=1e300) for i in (1, 2, 3)),
        *(_row("jumped", i, step=100 * i, elapsed_s=t) for i, t in ((1, 10.0), (2, 20.0), (3, 20.0 + 9_467_280_000))),
    ]  # fmt: skip
    ds = Dataset(tmp_path_factory.mktemp("steady") / "ds")
    ds.append("steps", conform(pl.DataFrame(rows), STEP_SCHEMA))
    event = {"run_id": "failed", "event": "failed", "reason": "quota", "source": "/logs/failed.log"}
    # a log that says it finished but holds no step report (loss lines alone: test_finished_without_steps.py)
    done = {"run_id": "finished", "event": "finished", "reason": "{'train_runtime': 225.8}", "source": "/logs/hf.log"}
    # ... and one whose closing summary states examples/s over the whole run (test_whole_run_mean.py: its global
    # steps/s would stand for the steady rate), no global batch: no steady rate
    stated = {"run_id": "stated", "event": "whole_run_rate", "detail": '{"examples_per_s": 138.95}',
              "source": "/logs/hf2.log"}  # fmt: skip
    ds.append("events", conform(pl.DataFrame([event, done, stated]), EVENT_SCHEMA))
    facts = [{"run_id": run, "collected_at": T0} for run in WHY]  # as a collect writes them
    ds.append("runs", conform(pl.DataFrame(facts), RUN_SCHEMA))
    return ds


#: What each run of the fixture says (its docstring has the hand calculation).
WHY = {
    "ok": (None, None),
    "one": ("one_record", "only warm-up records (1 record)"),
    "pids": ("warmup_only", "only warm-up records (2 segments of 1 record)"),
    "untimed": (
        "no_clock",
        (
            "no time or global rate: no record states a time, a clock or global steps/s "
            "(examples/s make none without the global batch)"
        ),
    ),
    "once": ("warmup_only", "only warm-up records (2 segments of 1 record)"),
    "slim": (None, None),
    "skipped": ("step_time_contradicted", STEADY_REASONS["step_time_contradicted"]),
    "ps": ("no_training_records", "only ps or evaluator records"),
    "stepless": ("no_rate", "records past warm-up have no step or rate"),
    "failed": ("no_records", "no step records"),
    "finished": ("finished_without_steps", STEADY_REASONS["finished_without_steps"]),
    "stated": ("whole_run_only", STEADY_REASONS["whole_run_only"]),
    "rising": (None, None),
    "absurd": ("elapsed_impossible", STEADY_REASONS["elapsed_impossible"]),
    "zero": ("rate_zero", STEADY_REASONS["rate_zero"]),
    "huge": ("rate_implausible", STEADY_REASONS["rate_implausible"]),
    "jumped": ("clock_jump", STEADY_REASONS["clock_jump"]),
}


def test_each_rule_gives_its_reason(dataset: Dataset) -> None:
    summary = analyze(dataset).summary
    got = {r["run_id"]: (r["steady_status"], r["steady_reason"]) for r in summary.iter_rows(named=True)}
    assert got == WHY
    assert summary.filter(pl.col("run_id") == "ok")["steady_global_steps_per_s"].item() == pytest.approx(10.0)
    # the one run timed by step times says what it assumes; a rate from a clock assumes nothing
    assumed = dict(summary.select("run_id", "steady_assumption").iter_rows())
    assert {run: a for run, a in assumed.items() if a} == {
        "slim": "logs_every_step_unchecked",  # one task, +3 a step, no topology
        "rising": "still_rising",
    }
    assert summary.filter(pl.col("run_id") == "slim")["steady_global_steps_per_s"].item() == pytest.approx(1.5)
    rising = summary.filter(pl.col("run_id") == "rising").row(0, named=True)
    assert rising["mean_global_steps_per_s"] == pytest.approx(15.0) and rising["steady_rise"] == pytest.approx(1.5)
    assert rising["steady_global_steps_per_s"] == pytest.approx(25.0)
    assert set(STEADY_REASONS) == {status for status, _ in WHY.values() if status}


def test_summary_says_why_under_the_table_and_in_json(dataset: Dataset) -> None:
    shown = runner.invoke(app, ["summary", "-d", str(dataset.root)], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    # a run that logged steps says why, each on a line of its own at 80 columns; "failed" has no
    # record (its status says so, and its failure)
    for run, (_, reason) in WHY.items():
        if reason and run not in ("failed", "finished", "stated"):
            # the note may wrap at 80 columns: compared as one text
            assert f"run {run}: no steady rate: {reason}" in " ".join(" ".join(lines).split())
    # a finished run with no record: its status (finished) says nothing of why its row is empty; over 80 columns
    said = " ".join(" ".join(lines).split())
    assert f"run finished: no steady rate: {STEADY_REASONS['finished_without_steps']}" in said
    # ... nor does one whose closing summary alone states its speed (its mean column shows it)
    assert f"run stated: no steady rate: {STEADY_REASONS['whole_run_only']}" in said
    assert not any("run failed: no steady rate" in line for line in lines)
    assert f"run slim: {STEADY_ASSUMPTIONS['logs_every_step_unchecked']}" in " ".join(" ".join(lines).split())
    listed = runner.invoke(app, ["summary", "-d", str(dataset.root), "--json"]).stdout
    rows = {r["run_id"]: r for r in json.loads(listed)}
    assert {run: (r["steady_status"], r["steady_reason"]) for run, r in rows.items()} == WHY


def test_a_baseline_without_a_steady_rate_names_the_reason(dataset: Dataset) -> None:
    with pytest.raises(BaselineError, match=r"'pids' has no steady-state rate: only warm-up records \(2 segments"):
        analyze(dataset, AnalysisOptions(baseline="pids"))


@pytest.mark.parametrize(
    ("lang", "said", "assumed"),
    [
        (
            "en",
            "pids: no steady-state rate: only warm-up records (2 segments of 1 record).",
            f"slim: {STEADY_ASSUMPTIONS['logs_every_step_unchecked']}.",
        ),
        (
            "ja",
            "pids: 定常状態の速度なし: ウォームアップのレコードのみ (各 1 件のセグメントが 2 個)。",
            "slim: " + Catalog("ja")("steady.assumption.logs_every_step_unchecked") + "。",
        ),
    ],
)
def test_the_report_says_why_in_its_language(dataset: Dataset, lang: str, said: str, assumed: str) -> None:
    notes = steady_notes(analyze(dataset).summary, Catalog(lang))
    assert said in notes and assumed in notes
    # every run of WHY with a reason and records (all but ok, slim and failed) or that finished without (finished)
    # or is timed by its closing summary alone (stated), and slim's assumption: 14 of 17 runs, + 1
    assert len(notes) == 15


def test_the_english_report_says_what_summary_says() -> None:
    en = Catalog("en")
    for status, phrase in STEADY_REASONS.items():
        assert en(f"steady.reason.{status}", segments=2) == phrase.replace("{segments}", "2")
    for key, phrase in STEADY_ASSUMPTIONS.items():
        assert en(f"steady.assumption.{key}") == phrase


def _case(case: str, tmp_path: Path) -> dict[str, Any]:
    inputs = CASES / "inputs"
    expected = json.loads((CASES / "expected.json").read_text())[case]
    ds = tmp_path / case
    got = runner.invoke(app, ["collect", "files", str(inputs / expected["input"]), "--run-id", case, "-d", str(ds)])
    assert got.exit_code == 0, got.output
    return json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout)[0]


@pytest.mark.skipif(not (CASES / "expected.json").is_file(), reason=f"no real cases at {CASES.resolve()}")
@pytest.mark.parametrize(
    ("case", "status"),
    [
        # two runs back to back, pids 35 and 31: two processes, two segments of one record
        ("case07", "warmup_only"),
        # "Global steps: N; ...; Throughput: X instances/sec" lines: no time, no global rate
        ("case06", "no_clock"),
    ],
)
def test_real_cases_say_why(case: str, status: str, tmp_path: Path) -> None:
    row = _case(case, tmp_path)
    assert row["steady_global_steps_per_s"] is None
    assert row["steady_status"] == status


@pytest.mark.skipif(not (CASES / "expected.json").is_file(), reason=f"no real cases at {CASES.resolve()}")
@pytest.mark.parametrize(
    ("case", "rate"),
    [
        # An OD API step line (logged twice, merged) stating its step's time: 1 / 11.124 s = 0.0898957.
        ("case02", 1 / 11.124),
        # A finished tqdm bar of a tensorpack epoch: 5000 iterations / 3074.13 s = 1.626476.
        ("case12", 5000 / 3074.13),
    ],
)
def test_one_record_stating_its_own_rate_is_a_measurement(case: str, rate: float, tmp_path: Path) -> None:
    # A record that states its own rate over its steps is measured, not warm-up: the run's one record
    # gives its steady rate (the cases' expected.json lists these rates).
    row = _case(case, tmp_path)
    assert row["records"] == 1
    assert row["steady_global_steps_per_s"] == pytest.approx(rate, rel=1e-4)
