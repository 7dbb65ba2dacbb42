"""Reports printed as a group of lines that repeats: found by repetition, read as one statement.

The lines are written for the test; the shapes are those of a plain ``print`` of a step and its figures, of
Stable-Baselines3's logger tables (DLR-RM/stable-baselines3, read 2026-12-06) and of rsl_rl's report
(leggedrobotics/rsl_rl, as quoted in isaac-sim/IsaacLab issue 5084). Each expected value is worked out in a
comment."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.collector.explain import explain_file
from tierscope.collector.formats import ParseContext, Parsed, parse_lines
from tierscope.dataset.store import Dataset


def _frame(lines: list[str], first: int = 1) -> pl.DataFrame:
    return pl.DataFrame(
        {"source_offset": list(range(first, first + len(lines))), "line": lines},
        schema={"source_offset": pl.Int64, "line": pl.String},
    )


def parse(lines: list[str]) -> Parsed:
    return parse_lines(_frame(lines), context=ParseContext(year=2024))


def step_stanzas(n: int, first: int = 1) -> list[str]:
    # step 100 x i; loss 2 / i; time 0.40 + i / 100 s (a step time)
    out = []
    for i in range(first, first + n):
        out += [f"step: {100 * i}", f"  loss: {2.0 / i:.3f}", f"  time: {0.40 + i / 100:.2f}"]
    return out


def test_a_step_and_its_figures_on_lines_of_their_own_are_one_record_each() -> None:
    got = parse(step_stanzas(5))
    steps = got.steps.sort("step")
    # five groups of three lines, each at its first line: 1, 4, 7, 10, 13
    assert steps["source_offset"].to_list() == [1, 4, 7, 10, 13]
    assert steps["step"].to_list() == [100, 200, 300, 400, 500]
    # time 0.41 s a step: 1 / 0.41 = 2.439; loss 2 / 1 = 2.0
    assert steps["global_steps_per_s"][0] == pytest.approx(1 / 0.41)
    assert steps["loss"][0] == pytest.approx(2.0)
    # the group's other lines are read with it: nothing is handed on
    assert got.rest.height == 0


def test_lines_of_another_template_between_a_groups_lines_stay_out_of_it() -> None:
    lines = step_stanzas(8)
    # a warning printed between step 700's loss (line 20) and its time, after the head the group is learnt from
    lines.insert(20, "UserWarning: the data loader is slow")
    got = parse(lines)
    assert got.steps.sort("step")["step"].to_list() == [100 * i for i in range(1, 9)]
    # the warning is no member: handed on (line 21); step 700 keeps its time, 1 / 0.47 = 2.128
    assert got.rest["source_offset"].to_list() == [21]
    assert got.steps.filter(pl.col("step") == 700)["global_steps_per_s"][0] == pytest.approx(1 / 0.47)


def test_groups_of_two_tasks_interleaved_are_told_apart_by_their_tags() -> None:
    a = step_stanzas(4)
    b = [line.replace("time: 0.4", "time: 0.8") for line in step_stanzas(4)]
    # worker 0 and worker 1 print a line each in turn: [worker-0] step: 100, [worker-1] step: 100, ...
    lines = [f"[worker-{w}] {text}" for pair in zip(a, b, strict=True) for w, text in enumerate(pair)]
    steps = parse(lines).steps
    assert steps.height == 8
    by_task = steps.group_by("task_index").agg(pl.col("global_steps_per_s").first()).sort("task_index")
    # worker 0: time 0.41 s, 1 / 0.41 = 2.439; worker 1: 0.81 s, 1 / 0.81 = 1.235
    assert by_task["global_steps_per_s"].to_list() == pytest.approx([1 / 0.41, 1 / 0.81])


def test_a_table_whose_position_is_a_growing_count_reads_it_as_the_step() -> None:
    # a Stable-Baselines3 table: no word the grammar reads as a position; "iterations" grows by 1 a table,
    # total_timesteps by 2048: the slower is the step. time_elapsed is seconds since the start.
    lines = []
    for i, elapsed in zip(range(1, 6), (10, 52, 94, 133, 173), strict=True):
        lines += [
            "---------------------------------",
            "| time/              |          |",
            f"|    fps             | {180 - i:<8} |",
            f"|    iterations      | {i:<8} |",
            f"|    time_elapsed    | {elapsed:<8} |",
            f"|    total_timesteps | {2048 * i:<8} |",
            "---------------------------------",
        ]
    steps = parse(lines).steps.sort("step")
    assert steps["step"].to_list() == [1, 2, 3, 4, 5]
    assert steps["elapsed_s"].to_list() == [10, 52, 94, 133, 173]
    # each table at its first line with words: 2, 9, 16, 23, 30
    assert steps["source_offset"].to_list() == [2, 9, 16, 23, 30]


RSL_RL = """################################################################################
                       Learning iteration {i}/1500

                       Computation: 42853 steps/s (collection: 1.914s, learning 0.380s)
               Value function loss: 0.0049
                    Surrogate loss: -0.0025
                       Mean reward: -0.56
--------------------------------------------------------------------------------
                   Total timesteps: {t}
                    Iteration time: {s:.2f}s
                        Total time: {total:.2f}s
                               ETA: 3441.2s
"""


def test_a_banner_and_its_figures_are_one_record_at_the_banners_iteration() -> None:
    text = "".join(RSL_RL.format(i=i, t=98304 * (i + 1), s=2.0 + i / 10, total=2.0 * (i + 1)) for i in range(5))
    steps = parse(text.splitlines()).steps.sort("step")
    assert steps["step"].to_list() == [0, 1, 2, 3, 4]
    # the rule opens each report: the group starts at "Learning iteration" (lines 2, 14, 26, ...)
    assert steps["source_offset"].to_list() == [2, 14, 26, 38, 50]


@pytest.mark.parametrize(
    "lines",
    [
        # no position: a loss and a time, nothing that grows
        [t for i in range(6) for t in ("  loss: 2.5", f"  time: 0.{40 + i}")],
        # an evaluation's report
        [t for i in range(1, 6) for t in (f"Evaluating at step {100 * i}", "  accuracy: 0.9", f"  time: {3 + i}.0")],
        # a config dump printed at every restart: the same numbers each time
        [t for _ in range(5) for t in ("config:", "  lr: 0.001", "  batch_size: 64", "  max_steps: 1000")],
    ],
    ids=["no-position", "evaluation", "config-dump"],
)
def test_groups_that_report_no_training_step_are_no_records(lines: list[str]) -> None:
    got = parse(lines)
    assert got.steps.height == 0
    # every line is handed on as it was
    assert got.rest.height == len(lines)


def test_single_line_records_read_exactly_as_before_with_no_line_read_twice() -> None:
    # each step line is a record of its own (position and step time), the lr line under it a metric: the
    # two-line period repeats, but its first line already reads alone, so nothing is grouped
    lines = [t for i in range(1, 7) for t in (f"step {i} | 0.5 s/it", f"  lr: 0.00{i}")]
    got = parse(lines)
    assert got.steps["source_offset"].to_list() == [1, 3, 5, 7, 9, 11]
    assert got.steps["global_steps_per_s"].to_list() == [2.0] * 6  # 1 / 0.5
    assert "stanza" not in got.steps.columns


def test_a_traceback_after_the_groups_still_reaches_the_status_lines() -> None:
    lines = [
        *step_stanzas(5),
        "Traceback (most recent call last):",
        '  File "train.py", line 10, in <module>',
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ]
    got = parse(lines)
    assert got.steps.height == 5
    failed = got.events.filter(pl.col("event") == "failed")
    assert failed.height == 1
    assert "CUDA out of memory" in failed["reason"][0]


def test_a_broken_number_in_a_group_is_a_reject_at_its_own_line() -> None:
    lines = step_stanzas(5)
    # step 300's time (line 9) printed as nan: the group states its position and a broken measure
    lines[8] = "  time: nan"
    got = parse(lines)
    assert got.steps["step"].to_list() == [100, 200, 400, 500]
    assert got.rejects["source_offset"].to_list() == [9]
    assert got.rejects["raw"].to_list() == ["  time: nan"]


def test_a_group_cut_by_a_batch_boundary_is_read_once_with_the_next_batch() -> None:
    # 40 groups of 3 lines (120 lines), read in batches of 50 lines as the reader does: each non-final batch's
    # look-ahead is handed back and put in front of the next one. Every group is read once: 40 records.
    lines = step_stanzas(40)
    context = ParseContext(year=2024)
    pending: pl.DataFrame | None = None
    records = []
    for start in range(0, len(lines), 50):
        batch = _frame(lines[start : start + 50], first=start + 1)
        batch = batch if pending is None else pl.concat([pending, batch])
        final = start + 50 >= len(lines)
        got = parse_lines(batch, context=context, final=final)
        records.append(got.steps.select("source_offset", "step"))
        pending = got.pending
    steps = pl.concat(records).sort("source_offset")
    assert steps["step"].to_list() == [100 * i for i in range(1, 41)]
    # batch 1 ends at line 50, inside the group of lines 49-51 (step 1700): held back whole
    assert steps.filter(pl.col("step") == 1700)["source_offset"].to_list() == [49]


def test_a_group_the_end_of_a_batch_cuts_mid_way_is_held_back_whole() -> None:
    # a batch ending in the middle of a group (lines 13-14 of step 500's 13-15) holds the group back: its first
    # line is where the next batch starts
    lines = step_stanzas(5)[:14]
    got = parse_lines(_frame(lines), context=ParseContext(year=2024), final=False)
    assert got.pending is not None
    assert got.pending["source_offset"].min() <= 13
    assert 500 not in got.steps["step"].to_list()


def test_a_report_the_file_ends_in_the_middle_of_waits_for_the_next_collect(tmp_path: Path) -> None:
    ds = Dataset(tmp_path / "ds")
    log = tmp_path / "train.log"
    lines = step_stanzas(6)
    log.touch()  # cron's first collect finds the job's log just created, and follows it from then on
    collect_runs(ds, runs_from_paths([log], "r", None, None), settle_s=1e9)
    # the writer is half way through step 600's report: lines 16-17 of its 16-18 are there
    log.write_text("\n".join(lines[:17]) + "\n")
    [fresh] = collect_runs(ds, runs_from_paths([log], "r", None, None), settle_s=1e9).sources
    # fresh file: steps 100-500 stored (lines 1-15); lines 16-17 left, not counted
    assert (fresh.steps, fresh.lines) == (5, 15)
    assert any("its last 2 lines (16-17) may still be completed by lines not written yet" in n for n in fresh.notes)
    with log.open("a") as fh:
        fh.write(lines[17] + "\n")
    [grown] = collect_runs(ds, runs_from_paths([log], "r", None, None), settle_s=1e9).sources
    # the next collect reads from line 16: step 600 whole, its time 0.46 s (1 / 0.46 = 2.174)
    assert (grown.steps, grown.lines, grown.duplicates) == (1, 3, 0)
    stored = ds.read("steps").sort("step")
    assert stored["step"].to_list() == [100, 200, 300, 400, 500, 600]
    assert stored["global_steps_per_s"][-1] == pytest.approx(1 / 0.46)


def test_formats_try_explains_a_group_as_one_statement(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join(step_stanzas(5)) + "\n")
    got = explain_file(log, (1, 3))
    first, loss, time = got.readings
    # line 1 holds the record of lines 1-3: step 100 read from "step: 100", the step time from "time: 0.41"
    assert first.outcome == "record" and first.why is not None
    assert first.why.startswith("a group of lines 1-3 read as one statement: ")
    assert "position 'step N / iteration N / iter #N / batch N' = 100" in first.why
    assert "= 0.41" in first.why
    assert (loss.outcome, time.outcome) == ("skipped", "skipped")
    assert loss.why == time.why == "read with a neighbouring line (folded into its record)"
    assert got.verdict.records == 5


def test_a_preamble_that_repeats_too_does_not_hide_the_reports_after_it() -> None:
    # five shards prepared (two lines each: a period of 2, no position, no measure), then the reports (a period of 3)
    preamble = [t for i in range(1, 6) for t in (f"Preparing shard {i}", f"  records: {1000 + 37 * i}")]
    got = parse([*preamble, *step_stanzas(5)])
    # the reports start at line 11: 11, 14, 17, 20, 23; the preamble's lines are handed on
    assert got.steps["source_offset"].to_list() == [11, 14, 17, 20, 23]
    assert got.steps["step"].to_list() == [100, 200, 300, 400, 500]
    assert got.rest.height == 10


def test_a_group_counted_by_its_epoch_is_read_line_by_line_as_epochs() -> None:
    # a CNN+DBNN trainer's README (Train_CDBNN.py, "Example outcome of the run"): each epoch prints its training
    # time, its error rate and a save line; the number that counts the groups is the epoch, so no group is a step:
    # each "Training time for epoch N is: X seconds" is an epoch's record with its interval (3.46, 3.25, ... s),
    # no step and no steps/s (the log never says how many steps an epoch has)
    lines = []
    for epoch, seconds in zip(range(1, 6), (3.46, 3.25, 4.15, 3.28, 3.13), strict=True):
        lines += [
            f"Training time for epoch {epoch} is: {seconds} seconds",
            f"Epoch {epoch}: Train error rate = 0.0724, Test accuracy = 0.9997",
            f"Saved epoch {epoch} data to training_data/mnist/epoch_{epoch}",
        ]
    steps = parse(lines).steps
    assert steps.get_column("interval_s").to_list() == pytest.approx([3.46, 3.25, 4.15, 3.28, 3.13])
    assert steps.get_column("step").null_count() == 5
    assert steps.get_column("global_steps_per_s").null_count() == 5
