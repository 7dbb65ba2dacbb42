"""The sweep's ledger read back: a hand-edited or cut-short ledger is one line naming the file and what is wrong,
pointing at ``doctor --fix`` (which quarantines it), never a traceback nor the collector's advice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.sweep.platform import MemoryPlatform
from tierscope.cli import app
from tierscope.sweep.ledger import LedgerStore, document_name
from tierscope.sweep.plan import load_plan
from tierscope.sweep.run import Options, run_sweep

runner = CliRunner()


def saved_ledger(tmp_path: Path) -> Path:
    """A dataset with the ledger of sweep s1, whose one configuration the platform refused (its failed event
    collected); returns the ledger's file."""
    plan_path = tmp_path / "plan.toml"
    plan_path.write_text('id = "s1"\ndataset = "ds"\nwork_dir = "work"\nconfiguration = ["BASIC"]\n'
                         "[run]\nsteps = 5\nminutes = 1\n", encoding="utf-8")  # fmt: skip
    platform = MemoryPlatform(refuse={"BASIC": "quota"})
    run_sweep(load_plan(plan_path), platform, platform, Options(poll_s=0.0))
    return tmp_path / "ds" / "state" / f"{document_name('s1')}.json"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("start_time", "garbage", "start_time is 'garbage', not an ISO 8601 time"),
        ("estimate_usd", "abc", "estimate_usd is 'abc', not an amount in USD"),
        ("usd_per_hour", "x", "usd_per_hour is 'x', not an amount in USD"),
        ("collected", "no", "collected is 'no', not true/false"),
        ("state", "finished", "state is 'finished', not one of"),
    ],
)
def test_a_hand_edited_ledger_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, key: str, value: object, said: str
) -> None:
    dataset = tmp_path / "ds"
    path = saved_ledger(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["configurations"][0][key] = value
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = runner.invoke(app, ["sweep", "--status", "s1", "-d", str(dataset)])
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.strip().splitlines()
    assert f"the sweep ledger {path} is not a sweep ledger (configuration 'BASIC': {said}" in line
    assert "collector" not in line and f"tierscope doctor --dataset {dataset} --fix" in line
    assert "finds the jobs it submitted by their labels" in line
    # doctor --fix moves it to quarantine; the sweep then has no ledger of s1 (and would begin one)
    fixed = runner.invoke(app, ["doctor", "--dataset", str(dataset), "--fix"])
    assert fixed.exit_code == 0, fixed.output
    assert not path.exists() and LedgerStore(dataset).load("s1") is None


def test_a_ledger_cut_short_is_the_sweeps_error_not_the_collectors(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    path = saved_ledger(tmp_path)
    path.write_text(path.read_text(encoding="utf-8")[:40], encoding="utf-8")
    result = runner.invoke(app, ["sweep", "--status", "s1", "-d", str(dataset)])
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: the sweep ledger {path} is not valid JSON") and "collector" not in line


def test_status_of_a_sweep_id_in_the_wrong_case_names_the_one_meant(tmp_path: Path) -> None:
    saved_ledger(tmp_path)
    result = runner.invoke(app, ["sweep", "--status", "S1", "-d", str(tmp_path / "ds")])
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        f"error: no sweep 'S1' in the dataset {tmp_path / 'ds'}; did you mean s1? (sweep ids are as the plan "
        "spells them)"
    )
