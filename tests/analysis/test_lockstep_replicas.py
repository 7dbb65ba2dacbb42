"""Replicas in lockstep: PyTorch/XLA runs a process per TPU core (or chip), each printing its own examples/s
at the same global steps, on a TPU VM that `--tpu` describes as one machine. The run's examples/s are the
sum of its processes' (the replicas'), not one process's, and two slices are compared on them.

The lines are quoted from pytorch/xla's test_train_mp_mnist.py as pasted in pull requests (read 2026-12-07):
four processes from https://github.com/pytorch/xla/pull/6026 (a v4 slice: 4 chips), eight from
https://github.com/pytorch/xla/pull/4324 (a v3 slice: 8 cores), each comment's code fence kept and the
second pasted as a GitHub quote (`> `) around the fence."""

from __future__ import annotations

import polars as pl
import pytest
from typer.testing import CliRunner

from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.analyze import lockstep_replicas
from tierscope.cli import app
from tierscope.dataset.store import Dataset

V4 = """```
| Training Device=xla:0/3 Epoch=1 Step=280 Loss=0.01022 Rate=1760.91 GlobalRate=257.10 Time=07:29:39
| Training Device=xla:0/0 Epoch=1 Step=280 Loss=0.01022 Rate=1761.04 GlobalRate=257.46 Time=07:29:39
| Training Device=xla:0/2 Epoch=1 Step=280 Loss=0.01022 Rate=1760.90 GlobalRate=257.26 Time=07:29:39
| Training Device=xla:0/1 Epoch=1 Step=280 Loss=0.01022 Rate=1760.94 GlobalRate=257.42 Time=07:29:39
| Training Device=xla:0/2 Epoch=1 Step=300 Loss=0.00902 Rate=1766.58 GlobalRate=272.75 Time=07:29:40
| Training Device=xla:0/0 Epoch=1 Step=300 Loss=0.00902 Rate=1766.60 GlobalRate=272.96 Time=07:29:40
| Training Device=xla:0/1 Epoch=1 Step=300 Loss=0.00902 Rate=1766.53 GlobalRate=272.92 Time=07:29:40
| Training Device=xla:0/3 Epoch=1 Step=300 Loss=0.00902 Rate=1766.34 GlobalRate=272.58 Time=07:29:40
| Training Device=xla:0/0 Epoch=1 Step=320 Loss=0.00804 Rate=1765.48 GlobalRate=288.14 Time=07:29:42
| Training Device=xla:0/3 Epoch=1 Step=320 Loss=0.00804 Rate=1765.59 GlobalRate=287.74 Time=07:29:42
| Training Device=xla:0/2 Epoch=1 Step=320 Loss=0.00804 Rate=1765.32 GlobalRate=287.91 Time=07:29:42
| Training Device=xla:0/1 Epoch=1 Step=320 Loss=0.00804 Rate=1765.34 GlobalRate=288.09 Time=07:29:42
| Training Device=xla:0/0 Epoch=1 Step=2000 Loss=0.00135 Rate=1774.70 GlobalRate=970.38 Time=07:31:43
| Training Device=xla:0/3 Epoch=1 Step=2000 Loss=0.00135 Rate=1774.66 GlobalRate=969.66 Time=07:31:43
| Training Device=xla:0/2 Epoch=1 Step=2000 Loss=0.00135 Rate=1774.65 GlobalRate=969.97 Time=07:31:43
| Training Device=xla:0/1 Epoch=1 Step=2000 Loss=0.00135 Rate=1774.69 GlobalRate=970.30 Time=07:31:43
| Training Device=xla:0/2 Epoch=1 Step=2020 Loss=0.00135 Rate=1776.26 GlobalRate=974.35 Time=07:31:44
| Training Device=xla:0/1 Epoch=1 Step=2020 Loss=0.00135 Rate=1776.23 GlobalRate=974.68 Time=07:31:44
| Training Device=xla:0/3 Epoch=1 Step=2020 Loss=0.00135 Rate=1776.13 GlobalRate=974.04 Time=07:31:44
| Training Device=xla:0/0 Epoch=1 Step=2020 Loss=0.00135 Rate=1776.02 GlobalRate=974.76 Time=07:31:44
| Training Device=xla:0/1 Epoch=1 Step=2040 Loss=0.00135 Rate=1778.33 GlobalRate=979.02 Time=07:31:46
| Training Device=xla:0/3 Epoch=1 Step=2040 Loss=0.00135 Rate=1778.25 GlobalRate=978.38 Time=07:31:46
| Training Device=xla:0/0 Epoch=1 Step=2040 Loss=0.00135 Rate=1778.32 GlobalRate=979.10 Time=07:31:46
| Training Device=xla:0/2 Epoch=1 Step=2040 Loss=0.00135 Rate=1777.78 GlobalRate=978.69 Time=07:31:46
```
"""

V3 = """> ```
> | Training Device=xla:1/0 Epoch=1 Step=500 Loss=0.00223 Rate=553.79 GlobalRate=349.32 Time=01:53:18
> | Training Device=xla:0/7 Epoch=1 Step=500 Loss=0.00223 Rate=553.80 GlobalRate=352.39 Time=01:53:18
> | Training Device=xla:0/3 Epoch=1 Step=500 Loss=0.00223 Rate=553.71 GlobalRate=354.44 Time=01:53:18
> | Training Device=xla:0/6 Epoch=1 Step=500 Loss=0.00223 Rate=553.74 GlobalRate=354.30 Time=01:53:18
> | Training Device=xla:0/1 Epoch=1 Step=500 Loss=0.00223 Rate=553.61 GlobalRate=352.47 Time=01:53:18
> | Training Device=xla:0/5 Epoch=1 Step=500 Loss=0.00223 Rate=553.63 GlobalRate=352.16 Time=01:53:18
> | Training Device=xla:0/2 Epoch=1 Step=500 Loss=0.00223 Rate=553.64 GlobalRate=351.17 Time=01:53:18
> | Training Device=xla:0/6 Epoch=1 Step=520 Loss=0.00213 Rate=557.70 GlobalRate=359.37 Time=01:53:23
> | Training Device=xla:0/1 Epoch=1 Step=520 Loss=0.00213 Rate=557.46 GlobalRate=357.55 Time=01:53:23
> | Training Device=xla:1/0 Epoch=1 Step=520 Loss=0.00213 Rate=557.28 GlobalRate=354.43 Time=01:53:23
> | Training Device=xla:0/7 Epoch=1 Step=520 Loss=0.00213 Rate=557.32 GlobalRate=357.47 Time=01:53:23
> | Training Device=xla:0/4 Epoch=1 Step=520 Loss=0.00213 Rate=557.21 GlobalRate=358.59 Time=01:53:23
> | Training Device=xla:0/3 Epoch=1 Step=520 Loss=0.00213 Rate=557.24 GlobalRate=359.50 Time=01:53:23
> | Training Device=xla:1/0 Epoch=1 Step=640 Loss=0.00174 Rate=551.37 GlobalRate=379.99 Time=01:53:51
> | Training Device=xla:0/5 Epoch=1 Step=640 Loss=0.00174 Rate=551.43 GlobalRate=382.63 Time=01:53:51
> | Training Device=xla:0/1 Epoch=1 Step=640 Loss=0.00174 Rate=551.34 GlobalRate=382.90 Time=01:53:51
> | Training Device=xla:0/2 Epoch=1 Step=640 Loss=0.00174 Rate=551.30 GlobalRate=381.71 Time=01:53:51
> | Training Device=xla:0/4 Epoch=1 Step=640 Loss=0.00174 Rate=551.28 GlobalRate=383.87 Time=01:53:51
> | Training Device=xla:1/0 Epoch=1 Step=660 Loss=0.00169 Rate=555.47 GlobalRate=383.70 Time=01:53:55
> | Training Device=xla:0/7 Epoch=1 Step=660 Loss=0.00169 Rate=555.46 GlobalRate=386.51 Time=01:53:55
> | Training Device=xla:0/4 Epoch=1 Step=660 Loss=0.00169 Rate=555.42 GlobalRate=387.53 Time=01:53:55
> | Training Device=xla:0/5 Epoch=1 Step=660 Loss=0.00169 Rate=555.31 GlobalRate=386.30 Time=01:53:55
> | Training Device=xla:0/3 Epoch=1 Step=660 Loss=0.00169 Rate=555.29 GlobalRate=388.37 Time=01:53:55
> | Training Device=xla:0/1 Epoch=1 Step=660 Loss=0.00169 Rate=555.34 GlobalRate=386.57 Time=01:53:55
> | Training Device=xla:0/6 Epoch=1 Step=660 Loss=0.00169 Rate=555.01 GlobalRate=388.24 Time=01:53:55
> | Training Device=xla:0/2 Epoch=1 Step=660 Loss=0.00169 Rate=555.17 GlobalRate=385.39 Time=01:53:55
> ```
"""


@pytest.fixture(scope="module")
def slices(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """The two pastes collected as a newcomer would: each with its slice, one dataset."""
    root = tmp_path_factory.mktemp("lockstep")
    (root / "v4.log").write_text(V4, encoding="utf-8")
    (root / "v3.log").write_text(V3, encoding="utf-8")
    out = root / "ds"
    for name, tpu in (("v4", "v4-8"), ("v3", "v3-8")):
        done = CliRunner().invoke(
            app, ["collect", "files", str(root / f"{name}.log"), "--tpu", tpu, "--run-id", name, "-d", str(out), "-q"]
        )
        assert done.exit_code == 0, done.output
    return Dataset(out)


def test_processes_printing_the_same_steps_are_replicas_whose_examples_add(slices: Dataset) -> None:
    rows = {r["run_id"]: r for r in analyze(slices, AnalysisOptions(baseline="v3")).summary.iter_rows(named=True)}
    # `--tpu` makes each run one machine (1 training task); its processes printed every step shown
    assert (rows["v4"]["tasks"], rows["v4"]["logging_tasks"]) == (1, 4)
    assert (rows["v3"]["tasks"], rows["v3"]["logging_tasks"]) == (1, 8)
    assert rows["v4"]["update_mode"] == rows["v3"]["update_mode"] == "sync"
    # v4: steps 280 -> 2040 over 07:29:39 -> 07:31:46, 1,760 steps in 127 s = 13.858 global steps/s.
    # Its 24 Rates (examples/s of one process): 12 of steps 280-320 at most 1766.60, 12 of steps
    # 2000-2040 at least 1774.65: median (1766.60 + 1774.65) / 2 = 1770.625; 4 replicas: 7,082.5 examples/s
    assert rows["v4"]["steady_global_steps_per_s"] == pytest.approx(1760 / 127, rel=1e-6)
    assert rows["v4"]["examples_per_s"] == pytest.approx(4 * 1770.625, rel=1e-6)
    # v3: 26 Rates, sorted: 5 at 551.x, 7 at 553.x, then the 8 of step 660 from 555.01, 555.17: the 13th
    # and 14th, median (555.01 + 555.17) / 2 = 555.09; 8 replicas: 4,440.72 examples/s
    assert rows["v3"]["examples_per_s"] == pytest.approx(8 * 555.09, rel=1e-6)
    # as many examples a replica a step (128), twice as many replicas on v3: a step there is twice the
    # work, so the speedup is on examples/s: 7,082.5 / 4,440.72 = 1.5949 (per step it read 13.858 / 4.330 = 3.20)
    assert rows["v4"]["speedup_basis"] == "examples/s"
    assert rows["v4"]["speedup_vs_baseline"] == pytest.approx(7082.5 / 4440.72, rel=1e-6)
    # `--tpu` stored the machines (origin "manifest", which named no manifest the user gave)
    assert rows["v4"]["topology_note"] == (
        "its topology (a task a machine, as described) has 1 training task, but 4 tasks logged the same global "
        "steps, each its own examples/s: replicas in lockstep (a process per TPU core or GPU), so its examples/s "
        "add the 4 replicas' batches"
    )


def _reports(rows: list[tuple[str, int, int]]) -> pl.LazyFrame:
    schema = {"run_id": pl.String, "step": pl.Int64, "role": pl.String, "task_index": pl.Int32}
    frame = pl.LazyFrame([(run, step, "worker", task) for run, task, step in rows], schema=schema, orient="row")
    return frame.with_columns(examples_per_s=pl.lit(100.0))


def test_workers_printing_a_shared_counter_at_their_own_moments_are_not_replicas() -> None:
    # "async": two parameter-server workers read the global step when each logs: 101, 203, 305 and 152,
    # 254, 356, no step reported twice (0 of 6 shared); "lockstep": tasks 0 and 1 both report 100, 200, 300
    # and task 1 alone 400 (6 of 7 reports shared: 0.857 >= 0.8); "mostly": 100 and 200 shared, 300, 400
    # and 500 task 0's alone (4 of 7: 0.571 < 0.8); "one": a single task, whatever it reports
    rows = (
        [("async", 0, s) for s in (101, 203, 305)]
        + [("async", 1, s) for s in (152, 254, 356)]
        + [("lockstep", t, s) for t in (0, 1) for s in (100, 200, 300)]
        + [("lockstep", 1, 400)]
        + [("mostly", t, s) for t in (0, 1) for s in (100, 200)]
        + [("mostly", 0, s) for s in (300, 400, 500)]
        + [("one", 0, s) for s in (100, 200)]
    )
    found = dict(lockstep_replicas(_reports(rows)).collect().sort("run_id").iter_rows())
    assert found == {"async": None, "lockstep": 2, "mostly": None, "one": None}
