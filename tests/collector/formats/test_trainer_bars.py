"""Hugging Face Trainer's tqdm bars as it prints them to a file: the training bar redrawn with carriage returns, its
evaluation's bar a second bar (no description, another total) drawn while the training bar is paused at its step
(tqdm draws a bar below another after a newline and moves the cursor back up, ``\\x1b[A``), the logging dicts written
between drawings, and the closing ``{'train_runtime': ...}`` after tqdm clears the bar's line. Lines are written for
the test in those shapes (transformers' ``ProgressCallback``: the training bar ``tqdm(total=max_steps)``, the
evaluation's ``tqdm(total=len(eval_dataloader), leave=...)`` with no description; tqdm 4.x's ``{l_bar}{bar}|
{n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]``); the figures are made up and each expected value is worked
out by hand in a comment."""

from __future__ import annotations

from pathlib import Path

from tests.support.formats_support import parse
from tests.support.ingest_helpers import collect, frame_of
from tierscope.dataset.store import Dataset

COLUMNS = ("source_offset", "step", "global_steps_per_s", "elapsed_s")


def _train(n: int, total: int, elapsed: str) -> str:
    return f"{100 * n // total:3d}%|          | {n}/{total} [{elapsed}<00:10,  2.00it/s]"


def _eval(k: int, total: int) -> str:
    rate = "?it/s" if k == 0 else "8.00it/s"
    return f"\n\r{100 * k // total:3d}%|          | {k}/{total} [00:0{k // 8}<00:01, {rate}]\x1b[A"


def _steps(lines: list[str]) -> list[tuple]:
    return parse(lines).steps.select(COLUMNS).rows()


def test_an_evaluation_bar_drawn_while_the_training_bar_is_paused_is_no_training_step() -> None:
    # The training bar (total 10) at steps 1-4 (elapsed 0, 1, 1, 2 s), the evaluation's bar (total 3: 0/3 to 3/3)
    # drawn below it, the training bar redrawn at step 4 (tqdm.write of the evaluation's dict), then steps 5 and 6.
    # The 3-bar is drawn between two drawings of the 10-bar, which counts on by itself (1 -> 2 -> 3 -> 4) and goes
    # on from 4: it is paused, not begun anew. The evaluation's steps 1-3 are no records (they were stored as steps
    # 1-3 again, a restart and copies); the records are steps 1-6 of the training bar, each at 2.00 it/s, step 4
    # twice (its redraw is a copy: it keeps the time of its first drawing, 2 s).
    line = "\r" + "\r".join(_train(n, 10, t) for n, t in [(1, "00:00"), (2, "00:01"), (3, "00:01"), (4, "00:02")])
    line += "".join(_eval(k, 3) for k in range(4)) + "\r{'eval_loss': 0.44, 'eval_runtime': 0.4, 'epoch': 0.4}\n"
    lines = [line, "\r" + "\r".join([_train(4, 10, "00:02"), _train(5, 10, "00:03"), _train(6, 10, "00:03")])]
    got = _steps(lines)
    assert [s for _, s, _, _ in got] == [1, 2, 3, 4, 4, 5, 6]
    assert {r for _, _, r, _ in got} == {2.0}
    assert [e for _, s, _, e in got if s == 4] == [2.0, 2.0]


def test_an_evaluation_after_the_last_step_is_drawn_between_two_drawings_of_the_finished_bar() -> None:
    # The training bar at 9/10 and 10/10, the evaluation's 0/3 to 3/3, the training bar redrawn at 10/10: the
    # 3-bar lies between two drawings of the 10-bar at 10 (which rose 9 -> 10 by itself): no record; steps 9, 10 and
    # 10's redraw (a copy).
    line = "\r" + _train(9, 10, "00:04") + "\r" + _train(10, 10, "00:05")
    line += "".join(_eval(k, 3) for k in range(4)) + "\r" + _train(10, 10, "00:06") + "\n"
    assert [s for _, s, _, _ in _steps([line])] == [9, 10, 10]


def test_an_epoch_bar_drawn_once_between_the_laps_of_the_bar_inside_it_leaves_those_laps_training() -> None:
    # ``for epoch in trange(2): for batch in tqdm(loader)``: the epoch bar (total 2) at 0/2, the batch bar 1/3 to
    # 3/3, the epoch bar at 1/2, a new batch bar 1/3 to 3/3. The 2-bar never counts on by itself (one drawing between
    # laps): the 3-bar is not nested in it; the 2-bar at 1/2, drawn between the laps of the 3-bar that begin anew,
    # is read as before. The batch bar's laps make steps 1-3 and 3 + 1..3 = 4-6.
    batches = "\r".join(f" {33 * n}%|          | {n}/3 [00:0{n}<00:01,  1.00it/s]" for n in (1, 2, 3))
    epochs = ("  0%|          | 0/2 [00:00<?, ?it/s]", " 50%|          | 1/2 [00:03<00:03,  3.00s/it]")
    line = f"\r{epochs[0]}\r{batches}\r{epochs[1]}\r{batches}\n"
    steps = sorted({s for _, s, _, _ in _steps([line])})
    assert set(range(1, 7)) <= set(steps)


def test_the_trainers_closing_dict_after_the_bar_is_cleared_finishes_the_run() -> None:
    # The last line of every Trainer run: the bar at 10/10, tqdm's clearing (a carriage return, spaces, a carriage
    # return), then the summary dict. The bar's drawing is a record; the dict beside it is the trainer's end.
    line = "\r" + _train(10, 10, "00:05") + "\r" + " " * 40 + "\r{'train_runtime': 5.31, "
    line += "'train_samples_per_second': 60.2, 'train_steps_per_second': 1.883, 'train_loss': 0.41, 'epoch': 1.0}\n"
    got = parse([line])
    assert got.steps.select("step").to_series().to_list() == [10]
    # ... and states the whole run's rate, a run-level event (a run with records keeps its records' figures:
    # tests/analysis/test_whole_run_mean.py)
    assert sorted(got.events.select("event").to_series().to_list()) == ["finished", "whole_run_rate"]


def test_two_ranks_bars_interleaved_without_a_tag_are_one_drawing(tmp_path: Path) -> None:
    """Two Horovod ranks' tqdm bars printed into one stream, each rank's tag glued after the other's bar
    (horovod/horovod issue 3871, drjtryu, 2023): the position falls from 234 to 233 while the clock goes on (00:31,
    00:32), which is no new start of the bar. Each step's drawings make one record: steps 230 to 235 (6, where
    reading the fall as a new drawing made 234 two records, 7)."""
    bar = (
        "epoch:1 loss:1.0{}:  {}%|█████▉    | {}/391 [00:3{}<00:20,  7.{}it/s][1,{}]<stdout>:-------------------------"
    )
    drawn = [(230, 59, 1, 69), (231, 59, 1, 73), (231, 59, 1, 73), (232, 59, 1, 84), (232, 59, 1, 81)]
    drawn += [
        (234, 60, 1, 81),
        (233, 60, 2, 83),
        (234, 60, 2, 81),
        (234, 60, 2, 82),
        (235, 60, 2, 62),
        (235, 60, 2, 63),
    ]
    lines = [bar.format(i, pct, step, sec, rate, i % 2) for i, (step, pct, sec, rate) in enumerate(drawn)]
    log = tmp_path / "hvd.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = Dataset(tmp_path / "ds")
    collect(ds, log, run_id="r", settle_s=0.0)
    assert sorted(frame_of(ds, "steps").get_column("step").to_list()) == [230, 231, 232, 233, 234, 235]
