"""A run larger than a batch, taken in pieces of whole tasks: the same figures as one pass."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tierscope.analysis.batches import interval_figures, task_pieces
from tierscope.analysis.goodput import event_frame, run_goodput
from tierscope.analysis.tasks import task_throughput
from tierscope.analysis.throughput import collect_intervals, run_throughput, steady_intervals, steady_samples
from tierscope.dataset.schema import STEP_SCHEMA, conform


def one_big_run() -> pl.LazyFrame:
    """One run of a master and three workers logging every 100 steps in turn (interleaved, as one log
    holds them), at distinct paces; worker 1 restarts from step 2000 with a new clock (a second
    segment, its first interval warm-up); worker 2 starts slowly (two intervals at a fifth of the
    pace: warm-up beyond the first); every record of worker 0 is logged twice (copies to merge);
    a ps task logs too (counted in records, never analysed)."""
    rng = np.random.default_rng(5)
    rows = []
    clock = {t: 3.0 + t for t in range(4)}
    for k in range(1, 61):
        for t in range(4):
            step = 100 * k
            if t == 2 and k == 40:
                clock[t] = 1.0  # a new process
            if t == 2 and k >= 40:
                step = 100 * k - 2000
            slow = 5.0 if t == 3 and k in (2, 3) else 1.0
            clock[t] += slow * (4.0 + 0.3 * t + 0.2 * rng.random())
            role, index = ("master", 0) if t == 0 else ("worker", t - 1)
            row = {"role": role, "task_index": index, "step": step, "local_step": 25 * k, "elapsed_s": clock[t],
                   "source": "job.log", "source_offset": 4 * k + t}  # fmt: skip
            rows += [row] * (2 if t == 1 else 1)
        rows.append({"role": "ps", "task_index": 0, "step": 100 * k, "source": "job.log", "source_offset": 10**6 + k})
    frame = pl.DataFrame(rows).with_columns(run_id=pl.lit("big"), tier=pl.lit("STANDARD_1"), format=pl.lit("cloudml"))
    return conform(frame, STEP_SCHEMA).lazy()


def test_tasks_are_grouped_in_order_up_to_the_budget() -> None:
    tasks = pl.DataFrame({"role": ["master", "worker", "worker", "worker"], "task_index": [0, 0, 1, 2],
                          "records": [60, 120, 60, 60]})  # fmt: skip
    # 60 alone (60 + 120 > 150), 120 alone (120 + 60 > 150), then 60 + 60 = 120 fits
    assert [p["records"].to_list() for p in task_pieces(tasks, 150)] == [[60], [120], [60, 60]]
    assert [p.height for p in task_pieces(tasks, 10)] == [1, 1, 1, 1]  # each task above the budget alone


# A run alone may hold two batches' records: pieces of 2, 130, 200 records are one task a piece; two tasks; three
@pytest.mark.parametrize("max_records", [1, 65, 100])
def test_a_run_in_pieces_has_the_figures_of_one_pass(max_records: int) -> None:
    steps = one_big_run()  # 300 records (60 x 4 tasks + 60 copies) + 60 ps records: above each budget
    figures = interval_figures(steps, seed=11, max_records=max_records)
    whole = run_throughput(steps, seed=11)
    assert_frame_equal(figures.throughput, whole)
    assert_frame_equal(figures.tasks, task_throughput(steps), check_exact=True)
    np.testing.assert_array_equal(figures.samples["big"], steady_samples(steady_intervals(steps))["big"])
    intervals = collect_intervals(steps)
    assert_frame_equal(figures.goodput, run_goodput(intervals, whole, event_frame(None)))
    row = whole.row(0, named=True)
    # 4 training tasks + worker 1's restart = 5 segments; worker 0's 60 copies; 360 stored records
    assert (row["tasks"], row["segments"], row["duplicates"], row["records"]) == (4, 5, 60, 360)
    # warm-up: each segment's first interval (5) + worker 2's two slow ones: 240 - 7 steady intervals
    assert row["steady_intervals"] == 233


PEAK_SCRIPT = """
import re, sys
from pathlib import Path
from tierscope.analysis.batches import interval_figures
from tierscope.dataset.store import Dataset

def status(field):
    return int(re.search(field + r":\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))

import pyarrow.parquet  # noqa: F401 (the pieces' reader and writer: a fixed 30 MB, not the analysis')

dataset = Dataset(sys.argv[1])  # held: its pins keep the files readable
steps = dataset.scan("steps")
before = status("VmRSS")
chunks = lambda run_id, columns, rows: dataset.chunks("steps", run_id, columns, rows)  # as analyze reads pieces
figures = interval_figures(steps, max_records=int(sys.argv[2]), chunks=chunks)
print(status("VmHWM") - before, figures.throughput["steady_global_steps_per_s"][0])
"""


def test_a_run_in_pieces_holds_less_memory(tmp_path) -> None:
    """Peak RSS of the analysis (kB beyond what the process held before it, Linux) of one run of 1,000,000
    records on 20 tasks: in pieces of 100,000 records (2 tasks) it is well below one pass's. (At
    300,000 records the pieces' fixed costs, pyarrow's reader and writer buffers, about match
    what they save.)"""
    import subprocess
    import sys
    from pathlib import Path

    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux's /proc/self/status (VmHWM) to read the peak RSS")

    from benchmarks.generate import write_big_run

    repo = Path(__file__).resolve().parents[2]
    root = tmp_path / "ds"
    write_big_run(root, 1_000_000)

    def peak(max_records: int) -> tuple[int, float]:
        argv = [sys.executable, "-c", PEAK_SCRIPT, str(root), str(max_records)]
        out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=repo).stdout.split()
        return int(out[0]), float(out[1])

    whole_kb, whole_rate = peak(10**9)
    pieces_kb, pieces_rate = peak(50_000)  # pieces of 100,000 records (a run alone holds two batches')
    assert pieces_rate == whole_rate  # the same median, exactly
    assert pieces_kb < whole_kb, (pieces_kb, whole_kb)


def test_a_run_of_up_to_two_batches_is_computed_whole(monkeypatch) -> None:
    """Above a batch's records but within two batches' (what two batches computed at once hold), a run is
    computed alone and whole: no pieces, no spill."""
    import tierscope.analysis.batches as batches

    def unwanted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("taken in pieces")

    monkeypatch.setattr(batches, "pieced_run", unwanted)
    steps = one_big_run()  # 360 records, 300 of them of training tasks
    figures = interval_figures(steps, seed=11, max_records=180)  # above 180, within 360
    assert_frame_equal(figures.throughput, run_throughput(steps, seed=11))
    with pytest.raises(AssertionError, match="taken in pieces"):
        interval_figures(steps, seed=11, max_records=179)  # 360 above 2 x 179 = 358


def test_a_run_above_the_budget_with_no_training_task_has_the_figures_of_one_pass() -> None:
    """A run of parameter-server and evaluator records only (a ps's log collected alone): no task to
    split into pieces. It crashed ("cannot concat empty list") once above the budget."""
    rows = [{"role": role, "task_index": 0, "step": 100 * k, "elapsed_s": 4.0 * k, "source": f"{role}.log",
             "source_offset": k} for role in ("ps", "evaluator") for k in range(1, 31)]  # fmt: skip
    frame = pl.DataFrame(rows).with_columns(run_id=pl.lit("ps"), tier=pl.lit("STANDARD_1"), format=pl.lit("cloudml"))
    steps = conform(frame, STEP_SCHEMA).lazy()
    pieced = interval_figures(steps, seed=11, max_records=1)  # 60 records: above the budget
    whole = interval_figures(steps, seed=11)
    assert_frame_equal(pieced.throughput, whole.throughput)
    assert_frame_equal(pieced.tasks, whole.tasks)
    assert_frame_equal(pieced.goodput, whole.goodput)
    assert pieced.samples == whole.samples == {}
    row = pieced.throughput.row(0, named=True)
    # 60 stored records, no training task: no segment and no rate
    assert (row["records"], row["tasks"], row["segments"], row["steady_global_steps_per_s"]) == (60, 0, 0, None)


SPILL_FULL = """
import resource, sys
sys.path.insert(0, sys.argv[1])
from tests.analysis.test_batches_pieces import one_big_run
from tierscope.analysis.batches import interval_figures
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))  # a file of 1000 bytes at most
try:
    interval_figures(one_big_run(), seed=11, max_records=1)
except Exception as exc:
    print(type(exc).__name__, exc)
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="POSIX resource limits")
def test_a_spill_that_cannot_be_written_says_where_and_what_to_do(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    got = subprocess.run([sys.executable, "-c", SPILL_FULL, str(root)], capture_output=True, text=True, env=env)
    # was: "OSError Error writing bytes to file. Detail: [errno 27] File too large", naming no folder
    assert got.stdout.startswith("SpillError cannot write the pieces of run 'big' (360 records) under "), got
    assert str(tmp_path) in got.stdout and "TMPDIR" in got.stdout


def two_paces(worker: list[tuple[int, float]]) -> pl.LazyFrame:
    """One run: a master logging 300 steps every 5 s (60 global steps/s) for 20 records, then a worker
    logging ``worker`` (global step, elapsed_s) records. Taken a task a piece, its first piece (the
    master) has medians of 60 where the run's are 100."""
    rows = [{"role": "master", "task_index": 0, "step": 300 * k, "elapsed_s": 5.0 * k, "source_offset": k}
            for k in range(1, 21)]  # fmt: skip
    rows += [{"role": "worker", "task_index": 0, "step": step, "elapsed_s": elapsed, "source_offset": 100 + k}
             for k, (step, elapsed) in enumerate(worker)]  # fmt: skip
    frame = pl.DataFrame(rows).with_columns(
        run_id=pl.lit("paced"), source=pl.lit("job.log"), tier=pl.lit("STANDARD_1"), format=pl.lit("cloudml")
    )
    return conform(frame, STEP_SCHEMA).lazy()


def _judged_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each pieced run's one pass vouched for its figures (the real pass, its answer noted)."""
    import tierscope.analysis.batches as batches

    seen: list[bool] = []
    one_pass = batches._one_pass

    def noted(*args, **kwargs):  # type: ignore[no-untyped-def]
        done = one_pass(*args, **kwargs)
        seen.append(done is not None)
        return done

    monkeypatch.setattr(batches, "_one_pass", noted)
    return seen


def _assert_one_pass_figures(steps: pl.LazyFrame) -> dict:
    figures = interval_figures(steps, seed=11, max_records=1)  # one task a piece
    whole = run_throughput(steps, seed=11)
    assert_frame_equal(figures.throughput, whole)
    assert_frame_equal(figures.tasks, task_throughput(steps), check_exact=True)
    np.testing.assert_array_equal(figures.samples["paced"], steady_samples(steady_intervals(steps))["paced"])
    return whole.row(0, named=True)


def test_a_rate_between_the_first_pieces_jump_threshold_and_the_runs_is_judged_by_the_runs(monkeypatch) -> None:
    # worker: 100 steps every 1.001 s (99.9/s; a clock to the millisecond: a whole-second one at 1 s intervals would
    # be coarse, read in blocks, analysis.coarse_clock), but 1500 more at its 21st record (1600 in 1.001 s; as a
    # jump, over its time and the clock's slack of a second, 1600 / 2.001 = 799.6)
    worker = [(100 * k + (1500 if k >= 21 else 0), 1.001 * k) for k in range(1, 41)]
    seen = _judged_in_one_pass(monkeypatch)
    row = _assert_one_pass_figures(two_paces(worker))
    # raw rates: master 19 x 60, worker 38 x 99.9 and one 1598.4; the run's median (of 58: the 29th and
    # 30th) is 99.9, a jump above 10 x 99.9 = 999: 799.6 is none. The master's median 60 would make it one
    # (above 600): the one pass cannot vouch, the passes with the run's medians give the figures.
    assert seen == [False]
    # no restart: 2 segments; warm-up only each task's first record (60 >= 100 / 2): 19 + 39 steady.
    # Steady rate: step times 1.001/1600 s (once), 1.001/100 (38) and 1/60 (19): median 1.001/100; the master's
    # are 1.66x it, stalls past the bound (left out); kept: 38 x 100 + 1600 steps in 39 x 1.001 s = 138.32
    assert (row["restarts"], row["segments"], row["steady_intervals"]) == (0, 2, 58)
    assert row["steady_global_steps_per_s"] == pytest.approx(5400 / (39 * 1.001))


def test_a_slow_start_between_the_first_pieces_threshold_and_the_runs_is_judged_by_the_runs(monkeypatch) -> None:
    # worker: its second record 2.5 s after its first (100 steps: 40/s), then 100 steps a second
    worker = [(100, 1.0), *((100 * k, 1.5 + k) for k in range(2, 41))]
    seen = _judged_in_one_pass(monkeypatch)
    row = _assert_one_pass_figures(two_paces(worker))
    # in-segment rates: master 19 x 60, worker 40 and 38 x 100: the run's median 100, slow below 50;
    # the master's 60 would put the line at 30, and the worker's 40 past its warm-up
    assert seen == [False]
    # the worker's 40 is warm-up: 19 + 38 steady intervals; median step time (29th of 57) 1/100 s, the
    # master's 1/60 s 1.67x it (left out): 3800 steps / 38 s = 100
    assert (row["restarts"], row["segments"], row["steady_intervals"]) == (0, 2, 57)
    assert row["steady_global_steps_per_s"] == 100.0


def test_a_run_whose_first_piece_judges_every_record_as_the_run_does_is_read_once(monkeypatch) -> None:
    # worker: 100 steps a second throughout; no rate between the thresholds of 60 and 100
    seen = _judged_in_one_pass(monkeypatch)
    row = _assert_one_pass_figures(two_paces([(100 * k, float(k)) for k in range(1, 41)]))
    assert seen == [True]
    # 19 master + 39 worker steady intervals; median step time of 19 x 1/60 s and 39 x 1/100 s (29th of
    # 58 and 30th) 1/100 s, the master's 1.67x it (left out): 3900 steps / 39 s = 100
    assert (row["restarts"], row["segments"], row["steady_intervals"]) == (0, 2, 58)
    assert row["steady_global_steps_per_s"] == 100.0
