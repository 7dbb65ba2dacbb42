"""A run's facts changed back to earlier ones win again: the newest row of the ``runs`` table is
the last collect's (a collect with --tier BASIC after one with STANDARD_1, after one with BASIC,
left STANDARD_1 in force: the BASIC row was already held, so the append skipped it)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.compact import compact
from tierscope.dataset.store import Dataset

runner = CliRunner()
LINE = "Train [master/0], step 100:loss:2.3, accuracy:0.2 (21.5 sec) 4.644 global_steps/s, 4.644 local_steps/s\n"


def _tiers(dataset: Dataset) -> list[str]:
    return dataset.read("runs").sort("collected_at")["tier"].to_list()


def _tier_in_force(dataset: Dataset) -> str:
    return analyze(dataset).summary.filter(pl.col("run_id") == "b")["tier"][0]


def test_facts_changed_back_are_the_newest_again_and_stay_so_after_compaction(tmp_path: Path) -> None:
    log = tmp_path / "b.log"
    log.write_text(LINE)
    dataset = Dataset(tmp_path / "ds")
    for tier in ("BASIC", "STANDARD_1", "BASIC"):
        collect_runs(dataset, [RunSpec(run_id="b", tier=tier, files=[log])])
        assert _tier_in_force(dataset) == tier
    # one row per change of facts, the third the same facts as the first
    assert _tiers(dataset) == ["BASIC", "STANDARD_1", "BASIC"]
    # the same facts again add no row
    collect_runs(dataset, [RunSpec(run_id="b", tier="BASIC", files=[log])])
    assert _tiers(dataset) == ["BASIC", "STANDARD_1", "BASIC"]
    # compaction keeps the three rows (it used to be free to merge the two BASIC ones into the first)
    assert compact(dataset).files_after == 1  # the runs partition alone had several files (3 -> 1)
    assert _tiers(dataset) == ["BASIC", "STANDARD_1", "BASIC"]
    assert _tier_in_force(dataset) == "BASIC"


def test_a_file_collected_alone_keeps_the_facts_a_manifest_gave_and_a_fact_given_changes_them(
    tmp_path: Path,
) -> None:
    """A manifest dates run r and names its tier; a file then collected alone (no --tier, no date) used
    to append a newer row of empty facts: the run priced at today's prices with no date or host."""

    def line(step: int, rate: str) -> str:  # 100 steps every 20 s from 21.5 s on
        return (
            LINE.replace("step 100", f"step {step}")
            .replace("21.5", f"{21.5 + (step - 100) / 5}")
            .replace("4.644", rate)
        )

    (tmp_path / "a.log").write_text(line(100, "4.644") + line(200, "5.000") + line(300, "5.000"))
    (tmp_path / "b.log").write_text(line(400, "5.000"))
    (tmp_path / "runs.toml").write_text(
        '[[run]]\nid = "r"\ntier = "STANDARD_1"\nfiles = ["a.log"]\nran_on = "CloudML STANDARD_1"\ndate = 2016-12-31\n'
    )
    ds = tmp_path / "ds"
    for args in (["--manifest", str(tmp_path / "runs.toml")], [str(tmp_path / "b.log"), "--run-id", "r"]):
        assert runner.invoke(app, ["collect", "files", *args, "-d", str(ds), "--quiet"]).exit_code == 0

    def facts() -> list[tuple[object, ...]]:
        return Dataset(ds).read("runs").sort("collected_at").select("tier", "date", "ran_on").rows()

    def summary() -> dict[str, Any]:
        return json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout)[0]

    assert facts() == [("STANDARD_1", date(2016, 12, 31), "CloudML STANDARD_1")]  # no row of empty facts
    row = summary()
    # Steady: the rates after the warm-up record, 5.000, 5.000, 5.000 -> 5 global steps/s. STANDARD_1 on
    # 2016-12-31 is 10 ML units/h (the 2016 beta's rates): 5 x 3600 / 10 = 1800 steps per ML unit-hour.
    assert (row["tier"], row["price_date"], row["ran_on"]) == ("STANDARD_1", "2016-12-31", "CloudML STANDARD_1")
    assert (row["ml_units_per_hour"], row["steps_per_ml_unit_hour"]) == (10.0, pytest.approx(1800.0))

    # A tier given explicitly changes the tier alone: the date and host stay the known ones.
    args = ["collect", "files", str(tmp_path / "b.log"), "--run-id", "r", "--tier", "BASIC", "-d", str(ds), "--quiet"]
    assert runner.invoke(app, args).exit_code == 0
    assert facts()[-1] == ("BASIC", date(2016, 12, 31), "CloudML STANDARD_1")
    row = summary()
    # BASIC on 2016-12-31 is 1 ML unit/h: 5 x 3600 / 1 = 18,000 steps per ML unit-hour
    assert (row["tier"], row["price_date"], row["ml_units_per_hour"]) == ("BASIC", "2016-12-31", 1.0)
    assert row["steps_per_ml_unit_hour"] == pytest.approx(18000.0)


@pytest.mark.parametrize("blank", ["", "  "])
def test_an_empty_tier_is_a_usage_error_not_an_erased_tier(tmp_path: Path, blank: str) -> None:
    log = tmp_path / "a.log"
    log.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.1 (4.0 sec) 25.0 global_steps/s, 25.0 local_steps/s\n"
    )
    got = CliRunner().invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--tier", blank])
    assert got.exit_code == 2, got.output
    assert "an empty tier names no scale tier" in " ".join(got.output.split())
    assert not (tmp_path / "ds").exists()  # refused before anything is read or written


def test_a_configuration_comes_from_the_manifest_or_the_command_line_and_stays(tmp_path: Path) -> None:
    # config is a run fact like tier: the manifest's key, or --config for the files named; a later collect
    # without it keeps it (a fact once known is changed, not unset)
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.log").write_text(LINE)
    (tmp_path / "runs.toml").write_text('[[run]]\nid = "a"\ntier = "STANDARD_1"\nconfig = "std"\nfiles = ["a.log"]\n')
    ds = tmp_path / "ds"
    assert (
        runner.invoke(
            app, ["collect", "files", "--dataset", str(ds), "--manifest", str(tmp_path / "runs.toml")]
        ).exit_code
        == 0
    )
    done = runner.invoke(app, ["collect", "files", str(tmp_path / "b.log"), "--dataset", str(ds), "--config", "std"])
    assert done.exit_code == 0, done.output
    assert runner.invoke(app, ["collect", "files", str(tmp_path / "c.log"), "--dataset", str(ds)]).exit_code == 0
    assert runner.invoke(app, ["collect", "files", str(tmp_path / "b.log"), "--dataset", str(ds)]).exit_code == 0
    configs = dict(analyze(Dataset(ds)).summary.select("run_id", "config").iter_rows())
    assert configs == {"a": "std", "b": "std", "c": None}
    blank = runner.invoke(app, ["collect", "files", str(tmp_path / "c.log"), "--dataset", str(ds), "--config", " "])
    assert blank.exit_code == 2 and "configuration's name is blank" in " ".join(blank.output.split())
    escaped = runner.invoke(
        app, ["collect", "files", str(tmp_path / "c.log"), "--dataset", str(ds), "--config", "s\x1bt"]
    )
    assert escaped.exit_code == 2 and "holds a control character" in " ".join(escaped.output.split())
    # " std " is std: the spaces around a name are dropped, so c joins a and b
    spaced = runner.invoke(
        app, ["collect", "files", str(tmp_path / "c.log"), "--dataset", str(ds), "--config", " std "]
    )
    assert spaced.exit_code == 0, spaced.output
    assert dict(analyze(Dataset(ds)).summary.select("run_id", "config").iter_rows())["c"] == "std"
