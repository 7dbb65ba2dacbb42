"""The sustained rate on a clock of whole seconds: a tqdm bar's elapsed time (``[00:01<03:18, 5.00it/s]``) is
int(seconds), so a fast run's steps share a second and the step crossing a tick takes 1 s. That rounding is no
stall: the sustained rate is the run's steps over its span, within the clock's resolution. Bars are drawn here as
tqdm prints them to a file (each drawing after a carriage return, the elapsed time floored to the second); the
expected values are worked by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.dataset.store import Dataset

runner = CliRunner()


def _mmss(seconds: int) -> str:
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def _bar(times: list[int], total: int, rate: str) -> str:
    """One line of tqdm drawings: step k (1-based) drawn at ``times[k - 1]`` whole seconds."""
    drawings = [f"  0%|          | 0/{total} [00:00<?, ?it/s]"]
    for k, t in enumerate(times, start=1):
        drawings.append(f"{100 * k // total:3d}%|          | {k}/{total} [{_mmss(t)}<00:00, {rate}]")
    return "\r" + "\r".join(drawings) + "\n"


def _summary(tmp_path: Path, name: str, text: str) -> dict:
    log = tmp_path / f"{name}.log"
    log.write_text("Some weights of the model were newly initialized\n" + text)
    ds = tmp_path / "ds"
    # settle 0: a finished job's log (while a log may grow, the lines it ends in may wait for the next)
    collect_runs(Dataset(ds), runs_from_paths([log], name, "BASIC", None), settle_s=0.0)
    done = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    assert done.exit_code == 0, done.output
    (row,) = [r for r in json.loads(done.stdout) if r["run_id"] == name]
    return row


def test_a_fast_bar_whose_steps_share_a_second_sustains_its_rate(tmp_path: Path) -> None:
    # 5 steps/s for 100 steps: step k at 0.2 k s, printed as int(0.2 k): steps 1-4 at 0 s, 5-9 at 1 s, ...,
    # step 100 at 20 s. Intervals of 0 s (4 in 5) and 1 s (the step crossing a tick); 1 s is within the clock's
    # resolution of 1 s, so no interval is a stall (it was: 1 s > 1.25 x 0.2 s, each valued at 0.2 s, the
    # run's 20 s of steps counted as 4 s and a sustained 1.0).
    # Lifetime 20 s (the bar's clock starts at 0 s), start-up max(0 - 1 / 5, 0) = 0; productive at the steady
    # rate: the intervals' 20 s + the first record's step at 5/s, 0.2 s = 20.2 s. Sustained 5 x 20.2 / 20 = 5.05
    # (the steps over the span, 99 / 20 = 4.95, and the true 5.0 lie within 1 s in 20 s of it).
    row = _summary(tmp_path, "fast", _bar([k // 5 for k in range(1, 101)], 100, "5.00it/s"))
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)
    assert row["lifetime_s"] == pytest.approx(20.0)
    assert row["productive_at_steady_s"] == pytest.approx(20.2)
    assert row["sustained_global_steps_per_s"] == pytest.approx(5.05)


def test_a_slow_bar_whose_steps_take_one_or_two_ticks_sustains_its_rate(tmp_path: Path) -> None:
    # 0.8 steps/s (1.25 s/it) for 40 steps: step k at int(1.25 k) s: 1, 2, 3, 5, 6, 7, 8, 10, ..., 50. Intervals
    # of 1 s (29) and 2 s (10: every 4th step); 2 s is within 1.25 x 1.25 s + 1 s, no stall (it was: 2 > 1.5625,
    # each valued at 1.25 s: productive 29 + 12.5 + 1.25 = 42.75, sustained 0.8 x 42.75 / 50 = 0.684).
    # Lifetime 50 s, start-up max(1 - 1.25, 0) = 0; productive 49 + 1.25 = 50.25 s; sustained 0.8 x 50.25 / 50
    # = 0.804.
    row = _summary(tmp_path, "slow", _bar([int(1.25 * k) for k in range(1, 41)], 40, "1.25s/it"))
    assert row["steady_global_steps_per_s"] == pytest.approx(0.8)
    assert row["steady_stalls"] == 0
    assert row["productive_at_steady_s"] == pytest.approx(50.25)
    assert row["sustained_global_steps_per_s"] == pytest.approx(0.804)


def test_a_pause_longer_than_the_clocks_rounding_is_still_a_stall(tmp_path: Path) -> None:
    # The fast bar with a 10 s pause after step 50 (a save): step k at int(0.2 k) for k <= 50, int(0.2 k + 10)
    # after: step 50 at 10 s, step 51 at 20 s, step 100 at 30 s. The interval 50 -> 51 (10 s for one step) is
    # beyond 1 s + 1.25 x 0.2 s: a stall, valued at 0.2 s. Productive: the other intervals' 30 - 10 = 20 s +
    # 0.2 s (the stall's step) + 0.2 s (the first record's) = 20.4 s; lifetime 30 s; sustained
    # 5 x 20.4 / 30 = 3.4 (the steps over the span: 99 / 30 = 3.3).
    times = [k // 5 if k <= 50 else k // 5 + 10 for k in range(1, 101)]
    row = _summary(tmp_path, "paused", _bar(times, 100, "5.00it/s"))
    # the pause is the only interval of 5 s or more; the others, in stretches of 5 s (5 steps a second), agree
    # with the printed 5.00 it/s and outvote it: the printed rate stands, and the note says the clock's figures
    # (mean 99 / 30 = 3.3, sustained 3.4) hold a pause the printed figure does not show
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)
    assert "which gives less: a pause the printed figure does not show" in row["steady_clock_note"]
    assert row["productive_at_steady_s"] == pytest.approx(20.4)
    assert row["sustained_global_steps_per_s"] == pytest.approx(3.4)
