"""A task alone in its run (tierscope.analysis.lone_task): its step times time the global steps between its lines,
not one step a line. By its topology (--machine, --tier BASIC), or with none by its lines standing a constant round
stride apart at multiples of it (TF-slim's train_image_classifier.py logs every 10 steps); the near misses keep
the one-a-line reading: a stride no round number (case24's +3, other replicas), lines off the multiples, a
topology of several training tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

from tierscope.analysis.lone_task import FOOTER_COLUMNS, lone_tasks, may_be_step_timed
from tierscope.analysis.stated_rates import measured_rates, stated_rate_counts
from tierscope.analysis.summary import STEADY_ASSUMPTIONS
from tierscope.cli import app
from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset, write_atomic
from tierscope.reports.i18n import Catalog

runner = CliRunner()

#: Real lines: MachineLP/Inception_v4_slim, README.md @ 21805e357f636c82d4bd4486668fc062e383b0ed (a run of
#: train_image_classifier.py on one GTX 1080 Ti, 2017-07-27, default --log_every_n_steps 10), quoted byte for byte
REAL = """\
INFO:tensorflow:Starting Queues.
INFO:tensorflow:global_step/sec: 0
INFO:tensorflow:Recording summary at step 1.
INFO:tensorflow:global step 10: loss = 2.9544 (0.277 sec/step)
INFO:tensorflow:global step 20: loss = 2.7159 (0.267 sec/step)
INFO:tensorflow:global step 30: loss = 3.0572 (0.261 sec/step)
"""


def _row(tmp_path: Path, text: str, *options: str) -> dict[str, Any]:
    log = tmp_path / "train.log"
    log.write_text(text)
    ds = tmp_path / "ds"
    done = runner.invoke(app, ["collect", "files", str(log), "--run-id", "r", "-d", str(ds), "-q", *options])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(runner.invoke(app, ["summary", "-d", str(ds), "--json"]).stdout)
    return row


@pytest.mark.parametrize(
    ("options", "assumption"),
    [((), "logs_every_n_alone"), (("--machine", "n1-standard-8"), "step_time_alone")],
    ids=["no topology", "one machine"],
)
def test_the_real_slim_run_logging_every_10_steps(tmp_path: Path, options: tuple[str, ...], assumption: str) -> None:
    row = _row(tmp_path, REAL, *options)
    # By hand: `global_step/sec: 0` times nothing (left out). Step 10 is warm-up; 10 -> 20 is 10 global steps of
    # the one task at 0.267 s = 2.67 s, 20 -> 30 10 at 0.261 s = 2.61 s: 20 / 5.28 = 3.7879 global steps/s.
    # One step a line read 10 / 0.267 and 10 / 0.261: 20 / 0.528 = 37.88, ten times too fast.
    assert row["steady_global_steps_per_s"] == pytest.approx(20 / (10 * 0.267 + 10 * 0.261), rel=1e-9)
    assert row["mean_global_steps_per_s"] == pytest.approx(20 / 5.28, rel=1e-9)
    assert (row["steady_status"], row["steady_assumption"]) == (None, assumption)
    assert row["steady_assumption_note"] == STEADY_ASSUMPTIONS[assumption]
    assert row["training_mode"] == "single"  # its local rate and the global one agree now


def _slim(steps: range, seconds: float = 0.889) -> str:
    return "".join(f"INFO:tensorflow:global step {s}: loss = 2.3000 ({seconds:.3f} sec/step)\n" for s in steps)


def test_the_attack_of_the_last_round(tmp_path: Path) -> None:
    # global step 10, 20, ... 400 at 0.889 sec/step, one task, no topology: 10 / (10 x 0.889) = 1/0.889 = 1.12486
    # global steps/s (it was 11.25)
    row = _row(tmp_path, _slim(range(10, 410, 10)))
    assert row["steady_global_steps_per_s"] == pytest.approx(1 / 0.889, rel=1e-9)


@pytest.mark.parametrize(
    ("steps", "options", "rate"),
    [
        # case24's kind: +3 a line, no round stride: other replicas; one step a line, 3 / 0.889
        (range(819, 840, 3), (), 3 / 0.889),
        # a stride of 10 off its multiples (15, 25, ...): no logging interval's positions; 10 / 0.889
        (range(15, 415, 10), (), 10 / 0.889),
        # several training tasks by the topology (STANDARD_1: a master and 4 workers), one logged: not alone
        (range(10, 410, 10), ("--tier", "STANDARD_1"), 10 / 0.889),
    ],
    ids=["stride 3", "off the multiples", "several tasks"],
)
def test_near_misses_keep_one_step_a_line(tmp_path: Path, steps: range, options: tuple[str, ...], rate: float) -> None:
    row = _row(tmp_path, _slim(steps), *options)
    assert row["steady_global_steps_per_s"] == pytest.approx(rate, rel=1e-9)
    assert row["steady_assumption"] in ("logs_every_step", "logs_every_step_unchecked")


def test_the_report_says_the_reading_in_both_languages() -> None:
    for key in ("step_time_alone", "logs_every_n_alone"):
        assert Catalog("en")(f"steady.assumption.{key}") == STEADY_ASSUMPTIONS[key]
        assert "sec/step" in Catalog("ja")(f"steady.assumption.{key}")


@pytest.mark.parametrize(
    "steps",
    [
        # 10, 20, ... 1000, then a last line off the interval (the run stopped at 1003): 99 of 100 strides are 10
        [*range(10, 1010, 10), 1003],
        # one line missing (step 500): 98 strides of 10 and one of 20, every line at a multiple of 10
        [s for s in range(10, 1010, 10) if s != 500],
    ],
    ids=["a last line off the interval", "a line missing"],
)
def test_one_odd_line_keeps_the_interval(tmp_path: Path, steps: list[int]) -> None:
    # every line 0.500 sec/step, one task alone logging every 10 steps: 1 / 0.5 = 2.0 global steps/s whatever
    # the odd stride (3 steps at 0.5 s, 20 steps at 0.5 s); read one step a line it was 10 / 0.5 = 20
    text = "".join(f"INFO:tensorflow:global step {s}: loss = 2.3000 (0.500 sec/step)\n" for s in steps)
    row = _row(tmp_path, text)
    assert row["steady_global_steps_per_s"] == pytest.approx(2.0, rel=1e-9)
    assert row["steady_assumption"] == "logs_every_n_alone"


def _timed_run(run_id: str, global_rate: float | None, local_step: bool = False) -> pl.DataFrame:
    """Steps 10..60 every 10 of one master, no clock, a local rate of 3.7 (a slim line's step time), the global
    rate ``global_rate`` on every row and the local step named or not."""
    steps = list(range(10, 70, 10))
    frame = pl.DataFrame(
        {
            "run_id": run_id,
            "role": "master",
            "task_index": 0,
            "step": steps,
            "local_step": steps if local_step else None,
            "local_steps_per_s": 3.7,
            "global_steps_per_s": global_rate,
            "source": f"{run_id}.log",
            "source_offset": range(1, len(steps) + 1),
        }
    )
    return conform(frame, STEP_SCHEMA)


def test_runs_whose_footers_show_no_step_timed_record_are_not_read_and_the_result_is_the_same(tmp_path: Path) -> None:
    ds = Dataset(tmp_path / "ds")
    runs = {
        "slim": _timed_run("slim", None),  # no global rate: step-timed, alone by its stride of 10
        "rated": _timed_run("rated", 4.0),  # a global rate on every row: none step-timed (the footer says 0 nulls)
        "zeroed": _timed_run("zeroed", 0.0),  # a stated 0 is read as none: step-timed, though the footer shows no null
        "named": _timed_run("named", None, local_step=True),  # the local step named on every row: none step-timed
    }
    for run_id, frame in runs.items():
        write_atomic(frame.drop("run_id"), ds._partition("steps", run_id))
    ds = Dataset(tmp_path / "ds")
    steps = ds.scan("steps").with_columns(measured_rates())
    footers = ds.footers("steps", FOOTER_COLUMNS)
    unrated = stated_rate_counts(ds.scan("steps")).get_column("run_id")
    assert unrated.to_list() == ["zeroed"]  # its six records state 0 global steps/s
    # by hand: "rated" has a global rate on every row and is not unrated, "named" a local step on every row
    assert sorted(may_be_step_timed(footers, unrated).to_list()) == ["slim", "zeroed"]
    index = pl.DataFrame(
        {"run_id": list(runs), "tier": [None] * len(runs)}, schema={"run_id": pl.String, "tier": pl.String}
    )
    with_footers = lone_tasks(index, steps, footers, unrated)
    # both step-timed runs are one task logging every 10 steps (strides 10, every step a multiple of 10)
    assert with_footers.rows() == [("slim", "stride", 10), ("zeroed", "stride", 10)]
    assert_frame_equal(with_footers, lone_tasks(index, steps))
    # a run the footers do not list is read as without them
    assert_frame_equal(lone_tasks(index, steps, footers.filter(pl.col("run_id") != "slim"), unrated), with_footers)
