"""``tierscope sweep --local``: each configuration a local cluster of the reference trainer, collected as a run
named after it, ending with the summary and a report comparing them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.sweep.plans import three_configurations
from tierscope.cli import app
from tierscope.sweep.ledger import LedgerStore
from tierscope.sweep.local import LocalLauncher

pytest.importorskip("tensorflow")

PLAN = three_configurations('id = "local-e2e"\ndataset = "ds"\nwork_dir = "work"', steps=100, minutes=5)


def summary(dataset: Path) -> dict[str, dict]:
    result = CliRunner().invoke(app, ["summary", "-d", str(dataset), "--json"])
    assert result.exit_code == 0, result.output
    # a sweep's run is <sweep id>-<configuration's label>, keyed here by its configuration; a run collected
    # alone, by its id (summary's rows of a configuration's runs pooled have the configuration's name as run id)
    rows = json.loads(result.stdout)
    swept = {r["config"]: r for r in rows if r["run_id"].startswith("local-e2e-")}
    return swept or {r["run_id"]: r for r in rows}


@pytest.mark.cluster
def test_three_configurations_end_in_a_report_comparing_them(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN, encoding="utf-8")
    result = CliRunner().invoke(app, ["sweep", str(plan), "--local"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    names = ["BASIC", "STANDARD_1", "three-workers"]
    html = (tmp_path / "work" / "local-e2e-report.html").read_text(encoding="utf-8")
    assert all(f">{name}<" in html for name in names)
    # the sweep's estimate of each (what the machines it names would cost for the 5-minute cap) in its own table
    estimates = html[html.index('<table id="estimate-measured">') :]
    estimates = estimates[: estimates.index("</table>")]
    assert all(f">{name}<" in estimates for name in names)
    assert "tierscope summary" in result.stdout
    ledger = LedgerStore(tmp_path / "ds").load("local-e2e")
    assert ledger is not None
    assert {n: (e.state, e.collected) for n, e in ledger.entries.items()} == dict.fromkeys(names, ("succeeded", True))
    swept = summary(tmp_path / "ds")
    assert sorted(swept) == names and {r["status"] for r in swept.values()} == {"ok"}
    # The local runs are on this machine's CPUs: their tier says so; STANDARD_1's topology is the tier's own
    assert swept["STANDARD_1"]["tier"] == "local-STANDARD_1" and swept["three-workers"]["tier"] == "local-CUSTOM"
    # each run's steady rate is what collect + summary give for its logs
    launcher = LocalLauncher(Path(ledger.where or ""))
    for name in names:
        job_id = ledger.entries[name].job_id
        assert job_id is not None
        alone = tmp_path / f"alone-{name}"
        run_dir = launcher.run_dir(job_id)
        collected = CliRunner().invoke(app, ["collect", "files", str(run_dir), "-d", str(alone), "--run-id", name])
        assert collected.exit_code == 0, collected.output
        assert swept[name]["steady_global_steps_per_s"] == summary(alone)[name]["steady_global_steps_per_s"]
    # one job per configuration
    assert sorted(j.name.rsplit("-", 1)[0] for j in (tmp_path / "work" / "local-jobs").iterdir() if j.is_dir()) == [
        "basic", "standard_1", "three-workers"
    ]  # fmt: skip
