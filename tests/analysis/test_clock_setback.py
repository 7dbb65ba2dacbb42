"""A wall clock set back while the global step goes on (an NTP step, a clock set back by minutes, one that ran
ahead and came back) is no restart: the file's lines stay in their order (tierscope.analysis.records'
with_order_stamps), the run is one segment, and the intervals the clock jumped over have no clock time
(tierscope.analysis.throughput's clock_back, tierscope.analysis.clock.jumps_ahead); the life the lead's clock
spans is mended (tierscope.analysis.clock.mended). A restart (the step falling back) is still one."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.support.cli_helpers import collect_and_summarize


def _stream_log(path: Path, stated: bool, shifts: dict[int, float], restart_at: int | None = None) -> None:
    """A Cloud ML Engine Estimator job as ``gcloud ai-platform jobs stream-logs`` prints it (the shape of
    tests/analysis/test_goodput.py's and of the shared case01/case18 excerpts: ``INFO<TAB>2018-02-06 17:09:57
    +0100<TAB>master-replica-0<TAB><TAB>message``): steps 100..2000 every 20 s at 5 steps/s, the first at 50 s.
    ``stated``: each record after the first states its seconds (``(20.000 sec)``) and a ``global_step/sec``
    line precedes it, as basic_session_run_hooks logs; else the stamps are its only clock. ``shifts``: from
    that step on, the stamps move by so many seconds (later entries add to earlier ones). ``restart_at``:
    after step 1000 a new process resumes from that step (the step falls back)."""
    t0 = datetime(2018, 2, 6, 17, 0, 0)
    steps = list(range(100, 1001, 100))
    if restart_at is not None:
        steps += list(range(restart_at, 1501, 100))
    else:
        steps += list(range(1100, 2001, 100))
    lines, t, last, shift = [], 30.0, 0.0, 0.0
    for k, step in enumerate(steps):
        t += 20
        shift += shifts.get(step, 0.0) if k < 10 or restart_at is None else 0.0
        at = t0 + timedelta(seconds=t + shift)
        head = f"INFO\t{at:%Y-%m-%d %H:%M:%S} +0000\tmaster-replica-0\t\t"
        if stated and k:
            lines.append(f"{head}global_step/sec: {100 / (t - last):.4g}")
        lines.append(f"{head}loss = 0.5, step = {step}" + (f" ({t - last:.3f} sec)" if stated and k else ""))
        last = t
    lines.append(f"{head}Training finished")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _summary(tmp_path: Path, **shape: object) -> tuple[dict[str, object], str]:
    log = tmp_path / "train.log"
    _stream_log(log, **shape)  # type: ignore[arg-type]
    row, text = collect_and_summarize(log, tmp_path / "ds")
    return row, " ".join(text.split())


@pytest.mark.parametrize("stated", [True, False])
def test_a_clock_set_back_ninety_seconds_is_no_restart(tmp_path: Path, stated: bool) -> None:
    # From step 1000 on the stamps are 90 s back: 900 at 17:03:30, 1000 at 17:02:20 (17:03:50 less 90 s).
    # Sorted by their stamps, 1000..1300 (17:02:20..17:03:20) would come before 800 and 900: four falls of the
    # step, four restarts (what the tool said before). In line order the steps rise throughout: one segment.
    row, text = _summary(tmp_path, stated=stated, shifts={1000: -90})
    assert (row["segments"], row["restarts"]) == (1, 0)
    # 900 -> 1000 is the interval the clock jumped over: 1 setback
    assert row["clock_setbacks"] == 1
    # every other interval is 100 steps in 20 s (the stated ones say so too): 5 global steps/s
    assert row["steady_global_steps_per_s"] == pytest.approx(5.0)
    assert row["mean_global_steps_per_s"] == pytest.approx(5.0)
    # the life: 50 s at step 100 to 400 s at step 2000, mended by the 90 s the clock lost (the interval taken as
    # its stated 20 s, or as 100 steps at the run's 0.2 s a step): 400 s from the first record's origin, and
    # the run sustained 5 steps/s, not 1,900 / 310 s
    assert row["lifetime_s"] == pytest.approx(400.0)
    assert row["sustained_global_steps_per_s"] == pytest.approx(5.0)
    assert row["goodput"] == pytest.approx(1.0)
    assert "not a restart" in text and "over 1 interval" in text


def test_a_clock_ahead_five_minutes_and_back_is_no_restart(tmp_path: Path) -> None:
    # stamps 300 s ahead for steps 800..1100, then back: 700 -> 800 spans 320 s and 1100 -> 1200 spans -280 s
    # on the stamps. Sorted by stamps, 1200 (17:04:30) would come before 800 (17:08:10): a restart, as before.
    row, _ = _summary(tmp_path, stated=False, shifts={800: 300, 1200: -300})
    assert (row["segments"], row["restarts"]) == (1, 0)
    # the setback (1100 -> 1200, 280 s back) and the jump ahead it undid (700 -> 800: 320 s, 300 s beyond its
    # 20 s at 0.2 s a step; the setback owes 280 + 20 = 300 s): both intervals untimed
    assert row["clock_setbacks"] == 2
    # the 17 others: 100 steps in 20 s each; the 320 s interval no longer drags the mean to
    # 1,900 / (17 x 20 + 320 - 280 s)... but is left out: 1,700 steps / 340 s = 5
    assert row["mean_global_steps_per_s"] == pytest.approx(5.0)
    assert row["lifetime_s"] == pytest.approx(400.0)
    assert row["sustained_global_steps_per_s"] == pytest.approx(5.0)


def test_a_checkpoint_stall_is_no_jump_ahead_for_a_small_setback(tmp_path: Path) -> None:
    # near miss: 300 s more between 700 and 800 is real time (a stall: the stamps after it all move), and stamps
    # 25 s back from 1200 (1100 -> 1200 spans 20 - 25 = -5 s) owe 5 + 20 = 25 s, far from the stall's 300 s
    # beyond its 20: only the setback's interval is untimed
    row, _ = _summary(tmp_path, stated=False, shifts={800: 300, 1200: -25})
    assert (row["segments"], row["restarts"], row["clock_setbacks"]) == (1, 0, 1)
    # mean: 18 timed intervals, 1,800 steps over 17 x 20 + 320 = 660 s
    assert row["mean_global_steps_per_s"] == pytest.approx(1800 / 660)


def test_a_step_falling_back_is_still_a_restart(tmp_path: Path) -> None:
    # near miss: after step 1000 a process resumes from a checkpoint at 650 (the step falls back: 650, 750, ...)
    # on a clock that goes on
    row, _ = _summary(tmp_path, stated=False, shifts={}, restart_at=650)
    assert (row["segments"], row["restarts"], row["clock_setbacks"]) == (2, 1, 0)


def test_a_clock_set_back_then_put_right_is_no_restart(tmp_path: Path) -> None:
    # the other order: stamps 300 s back from step 800 on, then put right (an NTP sync) at 1200: 700 -> 800 spans
    # 20 - 300 = -280 s and 1100 -> 1200 spans 20 + 300 = 320 s on the stamps. The setback owes 280 + 20 = 300 s;
    # the jump ahead after it (320 s, 300 s beyond its 20 s at 0.2 s a step) is what gave them back.
    row, _ = _summary(tmp_path, stated=False, shifts={800: -300, 1200: 300})
    assert (row["segments"], row["restarts"]) == (1, 0)
    # both intervals untimed, as in the ahead-then-back order
    assert row["clock_setbacks"] == 2
    # the 17 others: 1,700 steps / 340 s = 5 (counting the 320 s jump: 1,800 / 660 = 2.73, what it said before)
    assert row["mean_global_steps_per_s"] == pytest.approx(5.0)
    # the life: 50 s at step 100 to 400 s at step 2000 (each untimed interval at 100 steps x 0.2 s)
    assert row["lifetime_s"] == pytest.approx(400.0)
    assert row["sustained_global_steps_per_s"] == pytest.approx(5.0)


def test_a_stall_after_a_small_setback_is_time_spent(tmp_path: Path) -> None:
    # near miss: stamps 25 s back from 800 (700 -> 800 spans 20 - 25 = -5 s: owes 5 + 20 =
    # 25 s) and a real 300 s stall between 1100 and 1200 (320 s, 300 s beyond its 20): far above 1.5 x 25 s, no
    # setback put right. Only the setback's interval is untimed; mean: 1,800 steps over 17 x 20 + 320 = 660 s
    row, _ = _summary(tmp_path, stated=False, shifts={800: -25, 1200: 300})
    assert (row["segments"], row["restarts"], row["clock_setbacks"]) == (1, 0, 1)
    assert row["mean_global_steps_per_s"] == pytest.approx(1800 / 660)
