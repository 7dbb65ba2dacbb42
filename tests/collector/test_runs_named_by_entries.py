"""A Cloud Logging export collected without ``--run-id`` holds the runs its entries name (their job ids), and no run
named after the file: that name is no run's, and a run of it would be an empty one in every summary. The entries are
written for the test in the shape AI Platform's are (resource ``ml_job`` with its ``job_id`` and ``task_name``)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset


def _entry(job: str, n: int, payload: str) -> str:
    labels = {"job_id": job, "project_id": "p", "task_name": "master-replica-0"}
    return json.dumps(
        {
            "insertId": f"{job}-{n}",
            "logName": "projects/p/logs/master-replica-0",
            "resource": {"type": "ml_job", "labels": labels},
            "severity": "INFO",
            "timestamp": f"2016-11-10T21:58:{n:02d}Z",
            "textPayload": payload,
        }
    )


def _collect(path: Path, dataset: Path) -> None:
    result = CliRunner().invoke(app, ["collect", "files", str(path), "-d", str(dataset), "--settle", "0"])
    assert result.exit_code == 0, result.output


def _runs(dataset: Path) -> tuple[list[str], list[str]]:
    """The run ids of the runs table and of the summary."""
    ds = Dataset(dataset)
    table = sorted(ds.read("runs").get_column("run_id").unique().to_list()) if ds.files("runs") else []
    return table, sorted(analyze(ds).summary.get_column("run_id").to_list())


def test_an_export_collected_without_a_run_id_adds_only_the_runs_its_entries_name(tmp_path: Path) -> None:
    # two jobs' entries, three steps each (job_a 100..300, job_b 10..30): two runs, job_a and job_b; no "export"
    lines = [_entry("job_a", n, f"INFO:tensorflow:loss = 0.5, step = {100 * n} (2.0 sec)") for n in (1, 2, 3)]
    lines += [_entry("job_b", n, f"INFO:tensorflow:loss = 0.5, step = {10 * n} (2.0 sec)") for n in (1, 2, 3)]
    export = tmp_path / "export.json"
    export.write_text("\n".join(lines) + "\n")
    _collect(export, tmp_path / "ds")
    assert _runs(tmp_path / "ds") == ([], ["job_a", "job_b"])
    steps = Dataset(tmp_path / "ds").read("steps")
    assert steps.group_by("run_id").agg(pl.len()).sort("run_id").rows() == [("job_a", 3), ("job_b", 3)]
    # collected again, unchanged: still no run of the file's name
    _collect(export, tmp_path / "ds")
    assert _runs(tmp_path / "ds") == ([], ["job_a", "job_b"])


def test_an_entry_that_names_no_run_is_the_files_run(tmp_path: Path) -> None:
    # an entry without a job id (a resource of another type): its record falls back to the file's name, whose
    # run it then is (recorded, as a plain log's)
    lone = json.loads(_entry("x", 1, "INFO:tensorflow:loss = 0.5, step = 100 (2.0 sec)"))
    lone["resource"] = {"type": "global", "labels": {"project_id": "p"}}
    export = tmp_path / "export.json"
    export.write_text(json.dumps(lone) + "\n")
    _collect(export, tmp_path / "ds")
    assert _runs(tmp_path / "ds") == (["export"], ["export"])


def test_the_machine_given_for_an_export_is_the_machine_of_the_runs_its_entries_name(tmp_path: Path) -> None:
    # one job's entries, collected with --machine: the records go to run job_a (its job id), and so does the
    # machine; no run of the file's name. g2-standard-8 with its L4 is priced (the shipped rows), so the
    # summary's hardware and hourly price are there: hardware "1 x g2-standard-8 (1 x NVIDIA_L4)".
    export = tmp_path / "export.json"
    lines = [_entry("job_a", n, f"INFO:tensorflow:loss = 0.5, step = {100 * n} (2.0 sec)") for n in (1, 2, 3)]
    export.write_text("\n".join(lines) + "\n")
    args = ["collect", "files", str(export), "-d", str(tmp_path / "ds"), "--settle", "0", "--machine", "g2-standard-8"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "job_a" in result.output  # the counts table names the run the records went to
    table, summary = _runs(tmp_path / "ds")
    assert (table, summary) == (["job_a"], ["job_a"])
    row = analyze(Dataset(tmp_path / "ds")).summary.row(0, named=True)
    assert row["hardware"] == "1 x g2-standard-8 (1 x NVIDIA_L4)"
    assert row["usd_per_hour"] is not None and row["usd_per_hour"] > 0
