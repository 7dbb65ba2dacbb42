"""A log collected again with the machine it ran on (a first collect gave none): the collect reads no line, and
says that it recorded the machines, which summary then shows; the same facts again record nothing and say
nothing (tierscope.cli.output.facts_lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()
T4 = ["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:1"]
SAID = (
    "run t4: recorded its machines (its files hold nothing new: their lines were read before); "
    "`tierscope summary` shows the run with them"
)


def collect(log: Path, ds: Path, *options: str) -> str:
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds), *options])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def hardware(ds: Path) -> list[tuple[str | None, float | None]]:
    result = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    assert result.exit_code == 0, result.output
    return [(r["hardware"], r["usd_per_hour"]) for r in json.loads(result.stdout)]


def test_the_machine_given_on_a_collect_again_is_said_and_shown(tmp_path: Path) -> None:
    log = tmp_path / "t4.log"  # 12 records, 100 steps every 400 s
    log.write_text("".join(json.dumps({"step": 100 * k, "elapsed_time": 400.0 * k}) + "\n" for k in range(1, 13)))
    ds = tmp_path / "ds"
    first = collect(log, ds)
    assert "read 12 lines: stored 12 step records" in first and "recorded its" not in first
    assert hardware(ds) == [(None, None)]
    again = collect(log, ds, *T4)
    assert SAID in again and "read 0 lines" in again
    # summary shows it: n1-standard-8 0.379998 + T4 0.35 = 0.729998 USD/h (analysis/data/prices.csv)
    assert hardware(ds) == [("1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)", pytest.approx(0.729998))]
    # the near miss: the same machine once more changes no fact, and the collect says none
    assert "recorded its" not in collect(log, ds, *T4)
