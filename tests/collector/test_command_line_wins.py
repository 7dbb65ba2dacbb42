"""``--run-id`` and ``--tier`` given on the command line (or a manifest's run) win over what records
carry: a structured record naming another run went there, and left an empty run behind."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def structured(path: Path, run_id: str, tier: str) -> Path:
    rows = [
        {
            "tierscope": "step",
            "run_id": run_id,
            "tier": tier,
            "step": s,
            "elapsed_s": s / 10,
            "global_steps_per_s": 10.0,
        }
        for s in range(1, 11)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_run_id_and_tier_given_win(tmp_path: Path) -> None:
    log = structured(tmp_path / "chief-0.jsonl", "their-run", "STANDARD_1")
    ds = tmp_path / "ds"
    argv = ["collect", "files", str(log), "-d", str(ds), "--run-id", "mine", "--tier", "BASIC", "--settle", "0"]
    done = runner.invoke(app, argv)
    assert done.exit_code == 0, done.output
    steps = Dataset(ds).read("steps")
    assert set(steps["run_id"]) == {"mine"} and set(steps["tier"]) == {"BASIC"}
    summary = json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout)
    assert [(r["run_id"], r["tier"], r["records"]) for r in summary] == [("mine", "BASIC", 10)]


def test_without_them_records_name_their_run(tmp_path: Path) -> None:
    log = structured(tmp_path / "chief-0.jsonl", "their-run", "STANDARD_1")
    ds = tmp_path / "ds"
    done = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "--settle", "0"])
    assert done.exit_code == 0, done.output
    steps = Dataset(ds).read("steps")
    assert set(steps["run_id"]) == {"their-run"} and set(steps["tier"]) == {"STANDARD_1"}


def test_a_manifests_run_wins(tmp_path: Path) -> None:
    structured(tmp_path / "chief-0.jsonl", "their-run", "STANDARD_1")
    manifest = tmp_path / "runs.toml"
    manifest.write_text('[[run]]\nid = "declared"\ntier = "BASIC"\nfiles = ["chief-0.jsonl"]\n')
    ds = tmp_path / "ds"
    done = runner.invoke(app, ["collect", "files", "--manifest", str(manifest), "-d", str(ds), "--settle", "0"])
    assert done.exit_code == 0, done.output
    steps = Dataset(ds).read("steps")
    assert set(steps["run_id"]) == {"declared"} and set(steps["tier"]) == {"BASIC"}
