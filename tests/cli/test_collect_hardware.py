"""Collecting a run again with other machines than the dataset holds for it: an error, unless asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()
T4 = ["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:1"]


def collect(log: Path, ds: Path, *options: str) -> tuple[int, str]:
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), "-q", *options])
    return result.exit_code, " ".join(result.output.split())


def hardware(ds: Path) -> list[tuple[str, float]]:
    result = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    assert result.exit_code == 0, result.output
    return [(r["hardware"], r["usd_per_hour"]) for r in json.loads(result.stdout)]


@pytest.fixture
def t4(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "t4.log"
    log.write_text("".join(
        f"Train [master/0], step {100 * k}:loss:2.000, accuracy:0.500 ({400 * k:.3f} sec) 0.250 global_steps/s, "
        "0.250 local_steps/s\n" for k in range(1, 13)
    ))  # fmt: skip
    ds = tmp_path / "ds"
    assert collect(log, ds, *T4)[0] == 0
    return log, ds


def test_another_machine_for_a_described_run_is_an_error_naming_both(t4: tuple[Path, Path]) -> None:
    log, ds = t4
    code, said = collect(log, ds, "--machine", "a2-highgpu-1g")
    assert code == 2
    assert said == (
        "error: run t4 is held as 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4); --machine a2-highgpu-1g describes "
        "1 x a2-highgpu-1g (1 x NVIDIA_TESLA_A100): add --change-hardware to change it on purpose, or give "
        "--run-id for another run"
    )
    # the run keeps its T4: n1-standard-8 0.379998 + T4 0.35 = 0.729998 USD/h (analysis/data/prices.csv)
    assert hardware(ds) == [("1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)", pytest.approx(0.729998))]
    # the same description again is no change
    assert collect(log, ds, *T4) == (0, "")


def test_change_hardware_replaces_it_and_says_so(t4: tuple[Path, Path]) -> None:
    log, ds = t4
    code, said = collect(log, ds, "--machine", "a2-highgpu-1g", "--change-hardware")
    assert code == 0
    assert said == (
        "note: run t4: its machines are now 1 x a2-highgpu-1g (1 x NVIDIA_TESLA_A100) "
        "(were 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4))"
    )
    # a2-highgpu-1g host 0.73948 + 1 x A100 2.93391 = 3.67339 USD/h
    assert hardware(ds) == [("1 x a2-highgpu-1g (1 x NVIDIA_TESLA_A100)", pytest.approx(3.67339))]


def test_the_same_machines_in_another_region_say_the_regions(t4: tuple[Path, Path]) -> None:
    # Described again with one change, its region: both descriptions' machines read alike, so the error says where
    log, ds = t4
    code, said = collect(log, ds, *T4, "--region", "europe-west4")
    assert code == 2
    assert said.startswith(
        "error: run t4 is held as 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4) in no region named; --machine n1-standard-8 "
        "--accelerator NVIDIA_TESLA_T4:1 --region europe-west4 describes 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4) in "
        "europe-west4: add --change-hardware"
    )


def test_a_tpu_priced_where_no_row_names_the_regions_that_have_one(tmp_path: Path, t4: tuple[Path, Path]) -> None:
    # A v4-8 slice (4 chips of TPU_V4_POD) in the default region, us-central1: the shipped rows price the v4 chip in
    # us-central2 only (analysis/data/prices.csv), so the note names that region and the options that use it, the
    # run's own first (beside a T4 run in us-central1, the analysis's --region would unprice the T4); priced
    # there: 4 x 3.22 = 12.88 USD/h
    log, _ = t4
    ds = tmp_path / "tpu"
    assert collect(log, ds, "--tpu", "v4-8")[0] == 0
    (row,) = json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout)
    assert row["usd_per_hour"] is None
    assert "TPU_V4_POD (us-central1, on-demand, on " in row["price_note"]
    assert (
        "rows price it in us-central2 (collect the run again with --region us-central2 --change-hardware to price "
        "it there; --region us-central2 here prices every run there)"
    ) in row["price_note"]
    there = json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json", "--region", "us-central2"]).stdout)
    assert there[0]["usd_per_hour"] == pytest.approx(4 * 3.22)
    # as the note says: collected again in us-central2, the run is priced there by a plain summary
    assert collect(log, ds, "--tpu", "v4-8", "--region", "us-central2", "--change-hardware")[0] == 0
    (own,) = json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout)
    assert own["usd_per_hour"] == pytest.approx(4 * 3.22)


def test_recommend_names_the_region_each_run_was_priced_in(tmp_path: Path, t4: tuple[Path, Path]) -> None:
    # the T4 run in the default region (us-central1) beside a v4-8 collected with its own, us-central2: the
    # footer said "Prices of region us-central1." though the v4-8 was priced at us-central2's 4 x 3.22 = 12.88 USD/h
    log, ds = t4
    assert collect(log, ds, "--tpu", "v4-8", "--region", "us-central2", "--run-id", "v4")[0] == 0
    rows = {r["run_id"]: r for r in json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout)}
    assert rows["v4"]["usd_per_hour"] == pytest.approx(4 * 3.22)
    said = runner.invoke(app, ["recommend", "-d", str(ds), "--steps", "1000", "--deadline", "24h"])
    assert said.exit_code == 0, said.output
    assert "Prices of region us-central1 (v4: us-central2)" in " ".join(said.output.split())
