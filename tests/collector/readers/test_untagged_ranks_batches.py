"""Untagged ranks read the same wherever a file's read batches end.

Batches of a few hundred bytes put batch ends inside runs of copies; the file is small so the
test is quick, and the reading is compared with the counts worked out by hand below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tierscope.collector.collect import collect_file
from tierscope.collector.manifest import RunSpec
from tierscope.collector.reading import ReadOptions
from tierscope.dataset.store import Dataset


def _copies(step: int, ranks: int) -> list[str]:
    # each rank prints the same report with its own last digits, as Horovod without --tag-output does
    return [f"step {step}, loss 3.{1000 + 37 * r + step % 7}, 1.{500 + 11 * r} it/s" for r in range(ranks)]


def _collect(tmp_path: Path, lines: list[str], batch_bytes: int):
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    ds = Dataset(tmp_path / "ds")
    run = RunSpec(run_id="r", tier="BASIC", files=[log])
    counts = collect_file(ds, log, run, ReadOptions(batch_bytes=batch_bytes, settle_s=0.0))
    return counts, ds.read("steps")


@pytest.mark.parametrize("batch_bytes", [500, 777, 1 << 20])
def test_four_untagged_ranks_are_four_tasks_in_any_batching(tmp_path: Path, batch_bytes: int) -> None:
    # 4 ranks x 60 steps = 240 lines of 36 bytes (the first batch's runs teach the rank count): batches of
    # 500 or 777 bytes (13.9 and 21.6 lines) end inside runs of 4.
    lines = [line for step in range(1, 61) for line in _copies(step, 4)]
    _, steps = _collect(tmp_path, lines, batch_bytes)
    assert steps.height == 240
    per_task = steps.group_by("task_index").len().sort("task_index")
    assert per_task["task_index"].to_list() == [0, 1, 2, 3]
    assert per_task["len"].to_list() == [60] * 4
    # the i-th line of each run is rank i: line 4 * (s - 1) + 1 + i is step s of rank i
    rank2 = steps.filter(steps["task_index"] == 2).sort("step")
    assert rank2["source_offset"].head(3).to_list() == [3, 7, 11]


def test_a_change_of_the_copy_count_drops_no_record_and_is_noted(tmp_path: Path) -> None:
    # 8 copies for steps 1-20 (160 lines), then 4 copies for steps 21-40 (80 lines): 240 records,
    # ranks 0-3 have 40 each, ranks 4-7 20 each.
    lines = [line for step in range(1, 21) for line in _copies(step, 8)]
    lines += [line for step in range(21, 41) for line in _copies(step, 4)]
    counts, steps = _collect(tmp_path, lines, 700)
    assert steps.height == 240
    per_task = steps.group_by("task_index").len().sort("task_index")
    assert per_task["len"].to_list() == [40] * 4 + [20] * 4
    assert any("8 copies" in n and "4 from line 161" in n for n in counts.notes)


def test_copies_that_stop_leave_one_rank(tmp_path: Path) -> None:
    # 4 copies for steps 1-10 (40 lines), then each step once (steps 11-40): the single lines are
    # rank 0's, so 4 tasks (rank 0: 10 + 30 = 40 records), not a fifth untagged one.
    lines = [line for step in range(1, 11) for line in _copies(step, 4)]
    lines += [_copies(step, 1)[0] for step in range(11, 41)]
    counts, steps = _collect(tmp_path, lines, 400)
    assert steps.height == 70
    per_task = steps.group_by("task_index").len().sort("task_index")
    assert per_task["task_index"].to_list() == [0, 1, 2, 3]
    assert per_task["len"].to_list() == [40, 10, 10, 10]
    assert any("1 from line 41" in n for n in counts.notes)
