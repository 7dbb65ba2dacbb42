"""A log collected in two parts stores what one collect of the whole file stores, wherever the first part ends.

Cron's first collect of a training log often finds it already written in part (the job started before the cron
entry), and ends where the writer had got to: between a ``global_step/sec`` line and the record it rates, after the
last drawing of an epoch's bar. Each log below is cut at every line boundary: its first part collected as cron
collects a file just written (a first read, the file may still grow), then the whole file (it grew), then once
more after it settled (``settle_s=0``: the job ended). The tables must equal those of one collect of the whole.
Every boundary is tried (a few lines each: exhaustive, where sampling the cuts would leave most untried), but for a
first part ending between an Estimator's ``global_step/sec`` line and the record it rates: a first read cannot tell
a live log from a copy of an ended job's and takes every line (collector/held.py says why), so that cut stores a
step-less report; those cuts are checked for exactly that below.

The lines are shaped as the programs print them (sources named per log); the figures are made up, and the figures a
whole collect reads are checked by hand first, so that both sides cannot be wrong alike.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.support.ingest_helpers import collect, frame_of
from tierscope.dataset.store import Dataset

TABLES = ("steps", "events", "rejects")

#: TensorFlow 1.x Estimator: StepCounterHook logs ``global_step/sec: %g`` and LoggingTensorHook
#: ``loss = %s, step = %s (%.3f sec)`` (tensorflow/tensorflow, tensorflow/python/training/basic_session_run_hooks.py,
#: r1.15, read 2026-12-07); a checkpoint's line may fall between a rate and its record (Estimator's
#: CheckpointSaverHook, same file). The first loss line has no seconds.
ESTIMATOR = """\
INFO:tensorflow:loss = 2.30, step = 1000
INFO:tensorflow:global_step/sec: 9.79432
INFO:tensorflow:Saving checkpoints for 1050 into /tmp/model/model.ckpt.
INFO:tensorflow:loss = 0.52, step = 1100 (10.210 sec)
INFO:tensorflow:global_step/sec: 9.86875
INFO:tensorflow:loss = 0.31, step = 1200 (10.133 sec)
INFO:tensorflow:global_step/sec: 9.90001
INFO:tensorflow:loss = 0.29, step = 1300 (10.101 sec)
INFO:tensorflow:Loss for final step: 0.29.
"""

#: tf.keras ``Model.fit`` to a file (no terminal: one line per epoch), keras-team/keras
#: keras/utils/generic_utils.py Progbar (2.x, read 2026-12-07): ``Epoch i/n`` then ``N/N [===] - 5s 3ms/step - ...``.
KERAS = """\
Epoch 1/3
1875/1875 [==============================] - 6s 3ms/step - loss: 0.2962 - accuracy: 0.9140
Epoch 2/3
1875/1875 [==============================] - 5s 3ms/step - loss: 0.1423 - accuracy: 0.9576
Epoch 3/3
1875/1875 [==============================] - 5s 3ms/step - loss: 0.1071 - accuracy: 0.9676
"""


def _lightning(resumed_from: int | None = None) -> str:
    """PyTorch Lightning's tqdm bar captured by a file, a drawing a line: ``Epoch e:  p%|bar| i/N [mm:ss<mm:ss,
    r it/s, loss=..., v_num=0]`` (Lightning-AI/lightning, src/lightning/pytorch/callbacks/progress/tqdm_progress.py,
    2.x, read 2026-12-07), the bar drawn anew each epoch (its clock restarts). 100 steps an epoch, drawn every 25.
    ``resumed_from``: after epoch 2 a resumed run (``ckpt_path=``, its output appended to the same file) draws the
    epochs from that one to 2 again, its losses 0.100 lower than the first run's at the same step."""
    lines = []
    epochs = [*range(3), *(range(resumed_from, 3) if resumed_from is not None else ())]
    for k, epoch in enumerate(epochs):
        lower = 100 if k >= 3 else 0
        for i, clock in ((25, "00:05<00:15"), (50, "00:10<00:10"), (75, "00:15<00:05"), (100, "00:20<00:00")):
            bar = "█" * (i // 10) + " " * (10 - i // 10)
            loss = 600 - i - epoch * 100 - lower
            lines.append(f"Epoch {epoch}:  {i}%|{bar}| {i}/100 [{clock},  4.95it/s, loss=0.{loss}, v_num=0]")
    return "\n".join(lines) + "\n"


def _ranks() -> str:
    """Two Horovod ranks' Estimator hooks through absl (glog headers), each line tagged by mpirun's
    ``--tag-output`` (``[1,r]<stderr>:``; open-mpi/ompi docs, mpirun(1), read 2026-12-07)."""
    lines = []
    for k, step in enumerate(range(100, 600, 100)):
        second = 37 + k * 10
        for rank in (0, 1):
            head = f"[1,{rank}]<stderr>:I0902 03:33:{second:02d}.51{rank}501 14007033421190{rank}"
            lines.append(f"{head} basic_session_run_hooks.py:692] global_step/sec: 9.8{rank}")
            lines.append(f"{head} basic_session_run_hooks.py:260] loss = 0.{900 - k}, step = {step} (10.1{rank}3 sec)")
    return "\n".join(lines) + "\n"


LOGS = {
    "estimator": ESTIMATOR,
    "keras": KERAS,
    "lightning": _lightning(),
    "lightning_resumed": _lightning(resumed_from=1),
    "ranks": _ranks(),
}


def _tables(ds: Dataset) -> dict[str, pl.DataFrame]:
    return {table: frame_of(ds, table) for table in TABLES}


def _line_ends(data: bytes) -> list[int]:
    """The byte offsets just past each newline but the last: where a first part may end."""
    return [i + 1 for i, byte in enumerate(data[:-1]) if byte == ord("\n")]


def _whole(tmp: Path, name: str) -> dict[str, pl.DataFrame]:
    """The tables of one collect of the whole log, written at ``tmp/live/NAME.log``."""
    log = tmp / "live" / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(LOGS[name])
    ds = Dataset(tmp / "whole")
    collect(ds, log, run_id="r", settle_s=0.0)
    return _tables(ds)


def test_whole_collects_read_as_by_hand(tmp_path: Path) -> None:
    """What one collect of each whole log stores, by hand, so that the comparison below compares right readings."""
    est = _whole(tmp_path / "e", "estimator")["steps"].sort("step")
    # each global_step/sec line rates the record after it: 1100 <- 9.79432, 1200 <- 9.86875, 1300 <- 9.90001;
    # step 1000 (no seconds, no rate before it) has none; no step-less record (every rate has its record)
    assert est["step"].to_list() == [1000, 1100, 1200, 1300]
    assert est["global_steps_per_s"].to_list() == [None, 9.79432, 9.86875, 9.90001]
    light = _whole(tmp_path / "l", "lightning")["steps"].sort("step")
    # epoch e's position i of 100 is step 100 e + i: 25, 50, ..., 300; never a restart (steps only rise)
    assert light["step"].to_list() == [100 * e + i for e in range(3) for i in (25, 50, 75, 100)]
    resumed = _whole(tmp_path / "lr", "lightning_resumed")
    # the resumed run's epochs 1 and 2 (lines 13-20) draw steps 125..300 again, each at the first run's clock (its
    # lap's: 5 s after the bar began, then 5 s each) and with a loss 0.100 lower: eight records that claim steps
    # read already with other figures (a conflict: kept aside as rejects), never merged into the first run's
    # records (whose losses stay their own: 0.475 at step 125) nor stored twice
    light_resumed = resumed["steps"].sort("step")
    assert light_resumed["step"].to_list() == [100 * e + i for e in range(3) for i in (25, 50, 75, 100)]
    assert light_resumed["source_offset"].to_list() == list(range(1, 13))
    assert light_resumed["loss"].to_list()[4] == pytest.approx(0.475)
    assert resumed["rejects"].sort("source_offset")["source_offset"].to_list() == list(range(13, 21))
    ranks = _whole(tmp_path / "r", "ranks")["steps"].sort("task_index", "step")
    # per rank, its rate line rates its record: rank 0's 9.80 and rank 1's 9.81 at steps 100..500
    assert ranks["step"].to_list() == [100, 200, 300, 400, 500] * 2
    assert ranks["global_steps_per_s"].to_list() == [9.80] * 5 + [9.81] * 5
    keras = _whole(tmp_path / "k", "keras")["steps"]
    # three epochs of 1875 steps, one record each at its last step: 1875, 3750, 5625
    assert sorted(keras["step"].to_list()) == [1875, 3750, 5625]


def _inside_a_report(text: bytes, cut: int) -> bool:
    """Whether the first part ``text[:cut]`` ends inside an Estimator report: its last rate line comes after its
    last record (a checkpoint's line may come between a rate line and its record)."""
    part = text[:cut]
    return part.rfind(b"global_step/sec") > part.rfind(b"step = ")


@pytest.mark.parametrize("name", sorted(LOGS))
def test_two_collects_store_what_one_stores(tmp_path: Path, name: str) -> None:
    text = LOGS[name].encode()
    want = _whole(tmp_path, name)
    log = tmp_path / "live" / f"{name}.log"  # the whole's path: the records name it
    for n, cut in enumerate(_line_ends(text)):
        if _inside_a_report(text, cut):
            continue
        log.write_bytes(text[:cut])
        ds = Dataset(tmp_path / f"parts{n}")
        collect(ds, log, run_id="r")  # cron's first collect: the file has lines, and may still grow
        log.write_bytes(text)
        collect(ds, log, run_id="r")  # it grew
        collect(ds, log, run_id="r", settle_s=0.0)  # the job ended: what was held back is read
        got = _tables(ds)
        lines = text[:cut].count(b"\n")
        for table in TABLES:
            assert got[table].equals(want[table]), f"{name} cut after line {lines}: {table} differ"


def test_a_first_read_takes_a_last_rate_line_as_a_stepless_report(tmp_path: Path) -> None:
    """A log just written (a download, an excerpt) that ends in a ``global_step/sec`` line is read whole on its
    first collect: the line is a step-less report, not held for a record that never comes."""
    log = tmp_path / "est.log"
    log.write_text(ESTIMATOR.split("INFO:tensorflow:loss = 0.52")[0])  # lines 1-3: a record, a rate, a checkpoint
    ds = Dataset(tmp_path / "ds")
    collect(ds, log, run_id="r")  # the file changed moments ago, and the default settle time is 300 s
    steps = frame_of(ds, "steps").sort("source_offset")
    # step 1000 (no rate, no seconds), then the rate line alone: a record with no step at 9.79432 global steps/s
    assert steps["step"].to_list() == [1000, None]
    assert steps["global_steps_per_s"].to_list() == [None, 9.79432]
