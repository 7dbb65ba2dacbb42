"""A global rate the log printed against the rate its own clock gives over the same intervals: the clock
wins where the two disagree beyond the printed figure's rounding, or where the printed figure is rounded
more coarsely than the clock measures; where they agree nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tierscope.analysis.printed_rates import printed_half_unit
from tierscope.cli import app


def _summary(tmp_path: Path, text: str) -> dict:
    log = tmp_path / "train.log"
    log.write_text(text, encoding="utf-8")
    runner = CliRunner()
    ds = str(tmp_path / "ds")
    got = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "r", "--settle", "0"])
    assert got.exit_code == 0, got.output
    return json.loads(runner.invoke(app, ["summary", "-d", ds, "--json"]).stdout)[0]


def _fairseq(update: int, wall: int, ups: str) -> str:
    clock = f"2024-03-01 10:{wall // 60 - 10:02d}:{wall % 60:02d}"
    return (
        f"{clock} | INFO | train_inner | epoch 001:   {update} / 50000 loss=5.0, ppl=32.0, wps=9000, ups={ups}, "
        f"wpb=2500, bsz=32, num_updates={update}, lr=1e-04, gnorm=1.1, train_wall={wall - 100}, wall={wall}\n"
    )


def test_fairseq_ups_averaged_since_the_epoch_began_gives_way_to_the_clock(tmp_path: Path) -> None:
    # Updates 2000 -> 3200 every 400, each 113 s apart by wall= (600, 713, 826, 939). Each steady
    # interval: 400 / 113 = 3.5398 updates/s, against ups=0.04 (0.035-0.045 as printed): outside the
    # printed rounding, so the clock wins. Steady = 1200 / 339 = 3.5398 (was 0.04: a speedup 88x off).
    row = _summary(tmp_path, "".join(_fairseq(2000 + 400 * i, 600 + 113 * i, "0.04") for i in range(4)))
    assert row["steady_global_steps_per_s"] == pytest.approx(400 / 113, rel=1e-12)
    assert row["mean_global_steps_per_s"] == pytest.approx(1200 / 339, rel=1e-12)
    assert row["steady_clock_note"] == (
        "steady rate from the log's clock: its printed 0.04 global steps/s set aside, the clock gives 3.54 over "
        "the same intervals (outside what the printed figure's rounding allows)"
    )


def test_fairseq_ups_the_clock_agrees_with_is_kept_and_one_paused_interval_outvoted(tmp_path: Path) -> None:
    # ups=3.54 beside 113 s per 400 updates: the clock's 3.5398 (3.509-3.571 on a whole-second clock) is
    # within 5 % of 3.54, so the printed rate stays. The last interval holds a 487 s pause (400 / 600 s =
    # 0.667/s by the clock): one interval of four disagrees, not a majority, so nothing changes. Steady =
    # 3.54 on every interval (the printed rate). The mean is the clock's, pause in: 1600 updates / (339 + 600 s)
    # = 1.70, under the steady rate with no stall the printed rates show: the note says where each comes from.
    lines = [_fairseq(2000 + 400 * i, 600 + 113 * i, "3.54") for i in range(4)]
    lines.append(_fairseq(3600, 939 + 600, "3.54"))
    row = _summary(tmp_path, "".join(lines))
    assert row["steady_global_steps_per_s"] == pytest.approx(3.54, rel=1e-12)
    assert row["mean_global_steps_per_s"] == pytest.approx(1600 / 939, rel=1e-12)
    assert row["steady_clock_note"].startswith("steady rate 3.54 global steps/s is the rate the log printed")
    assert row["steady_clock_note"].endswith("which gives less: a pause the printed figure does not show, or a "
                                             "printed figure above the clock")  # fmt: skip


def _jittered(ups: str) -> str:
    # updates 2000 -> 3600 every 400, the wall clock 100 and 126 s apart in turn (600, 700, 826, 926, 1052)
    walls = (600, 700, 826, 926, 1052)
    return "".join(_fairseq(2000 + 400 * i, wall, ups) for i, wall in enumerate(walls))


def test_a_clock_jittering_both_ways_around_the_printed_rate_agrees_with_it_over_the_task(tmp_path: Path) -> None:
    # Each interval alone is over 5 % off ups=3.54: 400 updates in 100 s (400/101-400/99 = 3.960-4.040 on a
    # whole-second clock, above 3.54 x 1.05 = 3.717) or in 126 s (3.150-3.200, below 3.54 x 0.95 = 3.363), so
    # all four set the printed rate aside. Over the task the clock gives 1600 / 452 = 3.53982 against the
    # printed 1600 / (1600 / 3.54) = 3.54: 0.005 % apart, within 1 %: agreement. Steady = 3.54, no note.
    row = _summary(tmp_path, _jittered("3.54"))
    assert row["steady_global_steps_per_s"] == pytest.approx(3.54, rel=1e-12)
    assert row["steady_clock_note"] is None


def test_a_clock_off_the_printed_rate_by_more_than_the_floor_over_the_task_still_wins(tmp_path: Path) -> None:
    # The same clock beside ups=3.6: each interval set aside (3.960 above 3.6 x 1.05 = 3.78; 3.200 below
    # 3.6 x 0.95 = 3.42), and over the task 3.53982 against 3.6 is 1.67 % apart: the clock wins. Steady =
    # the median pace of 400/100 and 400/126 twice each: the mean of the middle step times 0.25 and 0.315,
    # 1 / 0.2825 = 3.53982 (800 / 226).
    row = _summary(tmp_path, _jittered("3.6"))
    assert row["steady_global_steps_per_s"] == pytest.approx(800 / 226, rel=1e-12)
    assert row["steady_clock_note"] == (
        "steady rate from the log's clock: its printed 3.6 global steps/s set aside, the clock gives 3.54 over "
        "the same intervals (outside what the printed figure's rounding allows)"
    )


def _orbit(step: int, seconds: float) -> str:
    whole = int(seconds)
    clock = f"10:{whole // 60:02d}:{whole % 60:02d}.{round((seconds - whole) * 1e6):06d}"
    return f"I0301 {clock} 140000 controller.py:480] train | step: {step:6d} | steps/sec:    0.1 | output: {{}}\n"


def test_orbit_steps_per_sec_printed_to_one_decimal_gives_way_to_a_finer_clock(tmp_path: Path) -> None:
    # 20 steps every 373.3 s by the line's timestamp: 20 / 373.3 = 0.05358 steps/s. `0.1` printed with one
    # decimal means 0.05-0.15, which holds 0.054, but the figure is rounded by 50 % against a clock to the
    # millisecond over 373 s: the clock wins. Steady = 60 / 1119.9 = 0.05358 (was 0.100, interval 0.1-0.1).
    row = _summary(tmp_path, "".join(_orbit(100 + 20 * i, 373.3 * i) for i in range(4)))
    assert row["steady_global_steps_per_s"] == pytest.approx(20 / 373.3, rel=1e-9)
    assert row["steady_clock_note"] == (
        "steady rate from the log's clock: its printed 0.1 global steps/s set aside, the clock gives 0.0536 over "
        "the same intervals (the printed figure is rounded more coarsely than the clock measures)"
    )


def test_a_tqdm_bars_smoothed_seconds_per_step_gives_way_to_its_elapsed_time(tmp_path: Path) -> None:
    # HF Trainer bar, steps 10..14 at elapsed 125, 137, 150, 162, 175 s, each drawn with `7.63s/it` (tqdm's
    # moving average: 1 / 7.63 = 0.131 steps/s). Each interval's clock: 1 step in 12 or 13 whole seconds,
    # 1/13-1/11 or 1/14-1/12 steps/s, far below 0.131: the clock wins. Steady = 4 / (12 + 13 + 12 + 13)
    # = 0.080 (was 0.131).
    elapsed = {10: 125, 11: 137, 12: 150, 13: 162, 14: 175}
    bars = [
        f"  {s * 100 // 200}%|▌         | {s}/200 [{t // 60:02d}:{t % 60:02d}<24:00,  7.63s/it]"
        for s, t in elapsed.items()
    ]
    row = _summary(tmp_path, "\r".join(bars) + "\n")
    assert row["steady_global_steps_per_s"] == pytest.approx(4 / 50, rel=1e-12)
    assert row["steady_clock_note"] == (
        "steady rate from the log's clock: its printed 0.131 global steps/s set aside, the clock gives 0.08 over "
        "the same intervals (outside what the printed figure's rounding allows)"
    )


def test_the_printed_resolution_is_half_a_unit_of_the_last_decimal() -> None:
    # 0.1 -> 0.05; 0.04 -> 0.005; 12.399 -> 0.0005; 12 -> 0.5; 1 / 7.63 (a converted time) -> 0
    got = printed_half_unit(np.array([0.1, 0.04, 12.399, 12.0, 1 / 7.63, np.nan]))
    assert got[:5].tolist() == [0.05, 0.005, 0.0005, 0.5, 0.0] and np.isnan(got[5])


def test_a_whole_second_bars_short_intervals_vote_in_stretches_and_outvote_its_one_pause() -> None:
    # A tqdm bar at 1.25 s/it (printed 0.8 it/s) drawn each step, its elapsed time in whole seconds: steps 1-8 at
    # 1, 2, 3, 5, 6, 7, 8, 10 s, then an evaluation of 20 s before step 9 (at 31 s), then steps 10-16 at 32, 33,
    # 35, 36, 37, 38, 40 s. Over the task the clock gives 15 steps in 39 s = 0.385, not 0.8: the intervals are
    # judged. The one of 21 s (1 step: range [1/22, 1/20], outside 0.8 +- 5 %) is the only one of 5 s or more; the
    # others (1 s and 2 s) are taken in stretches: those that begin within the same 5 s from their run's start.
    # Before the pause they begin at 0, 1, 2, 4 s (1+1+2+1 = 5 s for 4 steps: [4/6, 4/4] = [0.667, 1.0] holds
    # 0.8, not set aside) and at 5, 6, 7 s (1+1+2 = 4 s: under 5 s, not compared); after it the same. Compared:
    # the pause and 2 x 4 intervals in stretches, set aside on 1 of 9: the printed rate stands (the one paused
    # interval used to outvote the rest, none of which was compared).
    from tierscope.analysis.printed_rates import judge

    times = [1, 2, 3, 5, 6, 7, 8, 10, 31, 32, 33, 35, 36, 37, 38, 40]
    seconds = np.array([np.nan, *np.diff(times)], dtype=float)
    steps = np.array([np.nan, *[1.0] * 15])
    first = np.zeros(16, dtype=bool)
    first[0] = True
    found = judge(np.full(16, 0.8), steps, seconds, ~first, first)
    assert not found.wins.any()
    assert found.compared.tolist() == [False, *[True] * 4, *[False] * 3, True, *[True] * 4, *[False] * 3]
