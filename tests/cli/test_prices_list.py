"""`tierscope prices list`: the rows a command prices with, the shipped ones and a user's, filtered."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()


def listed(*args: str) -> list[dict]:
    result = runner.invoke(app, ["prices", "list", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_machine_type_lists_its_host_and_bundled_gpu_rows() -> None:
    rows = listed("--resource", "a2-highgpu-8g", "--region", "us-central1")
    got = {(r["resource"], r["pricing"]): (r["usd_per_hour"], r["valid_from"]) for r in rows}
    # analysis/data/prices.csv, us-central1, from 2026-07-30 (skypilot-catalog @006059e0): host 5.91582 on demand,
    # 2.958 spot; A100 2.93391 a GPU on demand, 1.4341 spot. On demand: 5.91582 + 8 x 2.93391 = 29.3871 USD/h
    assert got == {
        ("a2-highgpu-8g", "on-demand"): (5.91582, "2026-07-30"), ("a2-highgpu-8g", "spot"): (2.958, "2026-07-30"),
        ("NVIDIA_TESLA_A100", "on-demand"): (2.93391, "2026-07-30"),
        ("NVIDIA_TESLA_A100", "spot"): (1.4341, "2026-07-30"),
    }  # fmt: skip
    assert all("skypilot-catalog" in r["source"] and r["origin"] == "shipped" for r in rows)
    # a TPU slice lists its chips' rows: v5litepod-8 is 8 x TPU_V5_LITEPOD at 1.20 a chip-hour
    assert {r["resource"] for r in listed("--resource", "v5e-8")} == {"TPU_V5_LITEPOD"}


def test_a_users_rows_are_listed_with_their_file(tmp_path: Path) -> None:
    ours = tmp_path / "ours.csv"
    ours.write_text(
        "resource,region,pricing,usd_per_hour,valid_from,source\n"
        "NVIDIA_TESLA_T4,us-central1,on-demand,0.30,2024-01-01,our 2024 bill\n"
    )
    rows = listed("--resource", "NVIDIA_TESLA_T4", "--region", "us-central1", "--prices", str(ours))
    assert [(r["usd_per_hour"], r["valid_from"], r["origin"]) for r in rows if r["pricing"] == "on-demand"] == [
        (0.30, "2024-01-01", str(ours)), (0.35, "2026-07-30", "shipped")
    ]  # fmt: skip
    table = runner.invoke(app, ["prices", "list", "--resource", "NVIDIA_TESLA_T4", "--region", "us-central1",
                                "--prices", str(ours)], env={"COLUMNS": "200"})  # fmt: skip
    assert "our 2024 bill" in table.stdout and "0.3" in table.stdout and "2024-01-01" in table.stdout


def test_a_name_it_does_not_know_or_has_no_row_for_says_so() -> None:
    result = runner.invoke(app, ["prices", "list", "--resource", "n1-standrd-8"])
    assert result.exit_code == 2 and "nearest known: n1-standard-8" in result.output
    empty = runner.invoke(app, ["prices", "list", "--resource", "NVIDIA_L4", "--region", "asia-east1"])
    assert empty.exit_code == 0
    assert "no price row for NVIDIA_L4 in asia-east1: add one with --prices FILE" in " ".join(empty.output.split())
