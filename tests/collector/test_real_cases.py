"""The sixteen real log excerpts of ``../shared/cases`` (the acceptance data), read as a
user reads them: ``tierscope collect files`` then ``tierscope summary --json``.

Each case asserts what ``expected.json`` says a correct reader concludes, worked out by hand
in the case's note: the record count (or a listed alternative), roles, run status (with the
failure hint in the reason) and the checkable rates within 1 %. The folder sits beside the
repository and is never copied into it; without it every case is skipped.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support import SHARED
from tierscope.cli import app
from tierscope.collector.explain import explain_file
from tierscope.dataset.store import Dataset

CASES = SHARED / "cases"
EXPECTED: dict[str, dict[str, Any]] = (
    json.loads((CASES / "expected.json").read_text()) if (CASES / "expected.json").is_file() else {}
)
#: expected.json's role names that are not tierscope roles: a bare rank is a worker; unlabeled is no role;
#: Vertex AI's first worker pool is the primary replica, whose TF_CONFIG task type is ``chief``
#: (cloud.google.com/vertex-ai/docs/training/distributed-training, "Understand your cluster": worker
#: pool 0 the chief, 1 the workers, 2 the parameter servers, 3 the evaluators).
ROLE_NAMES: dict[str, str | None] = {"rank": "worker", "unlabeled": None, "workerpool0": "chief"}
#: How close a rate must be to the hand calculation.
REL = 0.01

runner = CliRunner()
#: What each case's collect warned of (a library's warning reaches the user's terminal as noise).
WARNED: dict[str, list[str]] = {}


def _params() -> list[Any]:
    if not EXPECTED:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no real cases at {CASES.resolve()}"))]
    return sorted(EXPECTED)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], pl.DataFrame]]:
    """Each case collected into a dataset of its own: its summary row and its step records."""
    got = {}
    for case, expected in EXPECTED.items():
        ds = tmp_path_factory.mktemp(case)
        path = CASES / "inputs" / expected["input"]
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            collected = runner.invoke(app, ["collect", "files", str(path), "--run-id", case, "-d", str(ds), "--quiet"])
        WARNED[case] = [f"{w.category.__name__}: {w.message}" for w in warned]
        assert collected.exit_code == 0, collected.output
        shown = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
        assert shown.exit_code == 0, shown.output
        row = {r["run_id"]: r for r in json.loads(shown.stdout)}.get(case, {})
        got[case] = (row, Dataset(ds).read("steps"))
    return got


def _time_axis(steps: pl.DataFrame) -> pl.DataFrame:
    """Each record's time in seconds on its task's own clock: its timestamp, else ``elapsed_s``,
    else the running sum of the seconds each record covers (``interval_s``, else one local
    step at its local rate: TF-slim logs every step with its ``sec/step``)."""
    task = ["role", "task_index"]
    ordered = steps.sort("timestamp", "source_offset", nulls_last=True)
    covered = pl.coalesce(pl.col("interval_s"), 1 / pl.col("local_steps_per_s")).fill_null(0)
    return ordered.with_columns(
        t=pl.coalesce(pl.col("timestamp").dt.epoch("us") / 1e6, pl.col("elapsed_s"), covered.cum_sum().over(task))
    )


def _rates_at(steps: pl.DataFrame, step: int | None, task: int | None) -> list[float]:
    """The global steps/s a reader can take for the record at ``step`` (any record when None):
    the rate it states, or steps gained over seconds passed since any earlier record of its task."""
    timed = _time_axis(steps)
    rows = timed.to_dicts()
    found = []
    for i, r in enumerate(rows):
        if (step is not None and r["step"] != step) or (task is not None and r["task_index"] != task):
            continue
        if r["global_steps_per_s"] is not None:
            found.append(r["global_steps_per_s"])
        for e in rows[:i]:
            same = (e["role"], e["task_index"]) == (r["role"], r["task_index"])
            if same and None not in (r["step"], e["step"], r["t"], e["t"]) and r["t"] > e["t"]:
                found.append((r["step"] - e["step"]) / (r["t"] - e["t"]))
    return found


@pytest.mark.parametrize("case", _params())
def test_record_count(case: str, results: dict[str, tuple[dict[str, Any], pl.DataFrame]]) -> None:
    expected = EXPECTED[case]
    counts = {expected["step_records"], *(expected.get("step_records_alternatives") or {}).values()}
    row, _ = results[case]
    assert (row.get("records") or 0) in counts, expected["notes"]


@pytest.mark.parametrize("case", _params())
def test_collect_warns_of_nothing(case: str, results: dict[str, tuple[dict[str, Any], pl.DataFrame]]) -> None:
    # What the collect has to say reaches the user as its own notes; a library's warning (polars asking
    # whether a join's keys are sorted) is noise on a cron job's terminal or mail.
    assert WARNED[case] == []


def _hint_quotes(hint: str) -> list[str]:
    """The parts of a ``failure_hint`` quoted from the log: the case authors join quotes with ``…``
    (an elision), ``; `` and `` - `` and add their own words in parentheses ("… failed (Reason
    TFJobFailed; worker lost to GKE node preemption per the reporter)"), so the hint as a whole is
    in no log. A reason must hold one substantial part (15 characters or more) verbatim; a short
    hint ("non-zero", "diverged") is one quote as a whole."""
    parts = [p.strip(" )") for p in re.split(r"…| \(|; | - ", hint)]
    return [p for p in parts if len(p) >= 15] or [hint]


@pytest.mark.parametrize("case", _params())
def test_status(case: str, results: dict[str, tuple[dict[str, Any], pl.DataFrame]]) -> None:
    expected = EXPECTED[case]
    row, _ = results[case]
    status, reason = row.get("status"), row.get("failure_reason") or ""
    if expected["status"] == "failed":
        assert status == "failed"
        assert any(part.lower() in reason.lower() for part in _hint_quotes(expected["failure_hint"])), reason
        # The cause reads as the log's words, not as a piece of the JSON that carried them.
        assert not re.match(r'\s*[{"\[]', reason), reason
    else:
        # A run is ok only where a line says it finished; with records and neither, unknown;
        # with nothing, empty. A status the case lists as an alternative is accepted too.
        assert status != "failed", reason
        allowed = {expected["status"], *(expected.get("status_alternatives") or {})}
        if expected["status"] == "unknown":
            allowed.add("empty")
        assert status in allowed, expected["notes"]


def _role(name: str, n: int) -> str | None:
    """The tierscope role of ``n`` tasks that expected.json calls ``name``.

    Several unlabelled processes are workers (case21: 4 Horovod processes without --tag-output):
    copies of one step report at one moment come from peers that each run every global step, the
    role a bare Horovod rank prefix gets (case20's ``[r]`` ranks are ``rank`` -> ``worker``), and
    only whether mpirun tagged the output tells the two files apart. One unlabelled process stays
    without a role: nothing in its file says what it was (case19's only job name is a TPU host's).
    """
    if name == "unlabeled" and n > 1:
        return "worker"
    return ROLE_NAMES.get(name, name)


def _tasks_logged(case: str) -> dict[str | None, int]:
    """Distinct tasks per role that ``formats --try`` finds in the case's file (its verdict's
    roles: the tasks of records and events and those the envelopes name), None for no role."""
    verdict = explain_file(CASES / "inputs" / EXPECTED[case]["input"]).verdict
    roles = [label.split("/")[0] for label in verdict.roles]
    found: dict[str | None, int] = {}
    for role in roles:
        key = None if role in ("(no role)", "?") else role
        found[key] = found.get(key, 0) + 1
    return found


@pytest.mark.parametrize("case", _params())
def test_roles(case: str, results: dict[str, tuple[dict[str, Any], pl.DataFrame]]) -> None:
    expected = EXPECTED[case]["roles"]
    _, steps = results[case]
    if expected is None:
        # Not identifiable in the file: no record may claim a role, nor may the file's verdict.
        assert steps.get_column("role").drop_nulls().to_list() == [] if steps.height else True
        assert set(_tasks_logged(case)) <= {None}
        return
    wanted = {_role(name, n): n for name, n in expected.items()}
    if steps.height == 0:
        # No step record (case18: Keras epoch lines only): the tasks whose lines the file holds
        # are kept in the verdict of `formats --try`; they must be exactly the expected ones.
        assert _tasks_logged(case) == {role: n for role, n in wanted.items() if n}
        return
    # Evaluation records (a cloudml Eval block) are the cases' other_records, not step records.
    steps = steps.filter(pl.col("role").ne_missing(pl.lit("evaluator")))
    seen = set(steps.get_column("role").to_list()) if steps.height else set()
    assert seen <= set(wanted), f"records of roles {seen - set(wanted)}"
    for role, n in wanted.items():
        mine = steps.filter(pl.col("role").eq_missing(pl.lit(role, dtype=pl.String)))
        # expected.json counts records per role in some cases and distinct tasks in others.
        tasks = mine.select("task_index").unique().height
        assert n in (mine.height, tasks), f"{role}: {mine.height} records of {tasks} tasks, expected {n}"


@pytest.mark.parametrize("case", _params())
def test_rates(case: str, results: dict[str, tuple[dict[str, Any], pl.DataFrame]]) -> None:
    _, steps = results[case]
    for rate in EXPECTED[case]["rates"]:
        rank = rate.get("role")
        task = int(rank.strip("[]")) if rank else None
        found = _rates_at(steps, rate["step"], task) if steps.height else []
        assert any(v == pytest.approx(rate["global_steps_per_s"], rel=REL) for v in found), (
            f"step {rate['step']}: {rate['global_steps_per_s']} ({rate['basis']}) not among {found}"
        )


@pytest.mark.parametrize("case", _params())
def test_no_figure_is_nan(case: str, results: dict[str, tuple[dict[str, Any], pl.DataFrame]]) -> None:
    # A figure the log cannot give is null, never NaN: case15 logs rates but no step, case08's
    # segments start with a rate line; once single-process leads were matched (goodput.py),
    # both printed NaN for productive seconds and goodput.
    row, _ = results[case]
    assert [k for k, v in row.items() if isinstance(v, float) and v != v] == []


@pytest.mark.skipif("case22" not in EXPECTED, reason=f"no case22 in {CASES.resolve()}")
def test_case22_training_begins_line_is_the_clock_origin(
    results: dict[str, tuple[dict[str, Any], pl.DataFrame]],
) -> None:
    # case22's note: "Training elapsed time: 9.536664 s includes 8.97 s of waiting before the first step".
    # "Training begins @ 1514344761.687888" is the run's start; its first step at 1514344770.659784, its last
    # at 1514344771.224505. Lifetime 771.224505 - 761.687888 = 9.536617 s; start-up badput (start to the first
    # step) 770.659784 - 761.687888 = 8.971896 s. Without the start the lifetime began at the first step
    # (0.5647 s) and goodput read 0.97. Now start-up is the only badput (no checkpoint or restart; its slow
    # steps are productive, as ML Goodput Measurement counts them): (9.536617 - 8.971896) / 9.536617 = 0.05922.
    row = results["case22"][0]
    assert row["lifetime_s"] == pytest.approx(9.536617, abs=1e-6)
    assert row["badput_startup_s"] == pytest.approx(8.971896, abs=1e-6)
    assert row["goodput"] == pytest.approx(0.564721 / 9.536617, abs=1e-6)
