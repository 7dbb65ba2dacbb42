"""A run's facts changed back to earlier ones win again: the newest row of the ``runs`` table is
the last collect's (a collect with --tier BASIC after one with STANDARD_1, after one with BASIC,
left STANDARD_1 in force: the BASIC row was already held, so the append skipped it)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tierscope.analysis import analyze
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.compact import compact
from tierscope.dataset.store import Dataset

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
