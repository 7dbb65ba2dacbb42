"""The logging-overhead benchmark's arithmetic and runs (no timing assertions: speed is in benchmarks/)."""

from __future__ import annotations

import math

import pytest

from benchmarks.trainer import MAX_OVERHEAD_PCT, figures
from tierscope.trainer.bench import LoopRun, Variant, compare, logging_overhead, spread_pct


def runs(seconds: list[float], records: int, steps: int = 299) -> list[LoopRun]:
    return [LoopRun(seconds=s, steps=steps, records=records, first_step_s=0.3) for s in seconds]


def test_spread_is_the_median_absolute_deviation_in_percent() -> None:
    # median 1.0; deviations 0, 0.1, 0.1 -> median 0.1 -> 10 % of 1.0.
    assert spread_pct([1.0, 1.1, 0.9]) == pytest.approx(10.0)
    # median 2.0; deviations 0, 0, 2 -> 0: one outlier does not count.
    assert spread_pct([2.0, 2.0, 4.0]) == 0.0
    assert spread_pct([1.0]) is None


def test_compare_within_noise() -> None:
    off, json = runs([1.0, 1.1, 0.9], records=0), runs([1.05, 1.02, 1.2], records=3)
    c = compare(off, json)
    # Medians 1.0 and 1.05: 5 % more time; spreads 10 % (off) and 0.03 / 1.05 = 2.86 % (json).
    assert (c.base_s, c.other_s) == (1.0, 1.05)
    assert c.overhead_pct == pytest.approx(5.0)
    assert c.noise_pct == pytest.approx(10.0)
    assert c.within_noise
    # 0.05 s more for 3 records: 1/60 s each.
    assert c.per_record_s == pytest.approx(0.05 / 3)


def test_compare_above_noise_and_single_repeat() -> None:
    c = compare(runs([1.0, 1.01, 0.99], records=0), runs([1.2, 1.21, 1.19], records=299))
    # 20 % more time; spreads 1 % and 0.01 / 1.2 = 0.83 %.
    assert c.overhead_pct == pytest.approx(20.0) and c.noise_pct == pytest.approx(1.0)
    assert not c.within_noise
    one = compare(runs([1.0], records=0), runs([1.0], records=0))
    assert (one.overhead_pct, one.noise_pct, one.within_noise, one.per_record_s) == (0.0, None, False, None)


def test_compare_refuses_runs_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="same number of steps"):
        compare(runs([1.0], records=0, steps=299), runs([1.0], records=3, steps=1999))
    with pytest.raises(ValueError, match="at least one run"):
        compare([], runs([1.0], records=3))


def test_figures_say_when_the_overhead_is_within_noise() -> None:
    got = {
        "steps": 300,
        "log_every_steps": 100,
        "emit_s_per_record": 40e-6,
        "runs": {
            "off": [{"seconds": s, "steps": 299, "records": 0, "first_step_s": 0.3} for s in (1.0, 1.1, 0.9)],
            "json/100": [{"seconds": s, "steps": 299, "records": 3, "first_step_s": 0.3} for s in (1.01, 1.0, 1.02)],
            "json/1": [{"seconds": s, "steps": 299, "records": 300, "first_step_s": 0.3} for s in (1.3, 1.3, 1.31)],
        },
    }
    rows = figures(got)
    by_name = {f.name: f for f in rows}
    default = by_name["structured-logging overhead, a record every 100 steps"]
    # Medians 1.0 (off) and 1.01: 1 % more time, within off's 10 % spread.
    assert default.value == pytest.approx(1.0)
    assert default.targets[0].threshold == MAX_OVERHEAD_PCT
    assert "within noise" in default.note and "±10.0 %" in default.note
    # Bottom-up: every step costs (1.3 - 1.0) / 300 records = 1000 µs; 3 records over 1.0 s = 0.3 %.
    assert "1000 µs per record" in default.note
    assert default.extra["bottom_up_pct"] == pytest.approx(0.3)
    worst = by_name["structured-logging overhead, a record every step (worst case)"]
    assert worst.value == pytest.approx(30.0) and "above noise" in worst.note
    # Steps/s over the 299 timed steps: 299 / 1.01 with the log, 299 / 1.0 without.
    rate = next(f for f in rows if f.name.startswith("steps/s, JSON log, a record every 100"))
    assert (rate.value, rate.baseline) == (pytest.approx(299 / 1.01), pytest.approx(299.0))
    assert by_name["JSON step record through the handler alone (emit_seconds)"].value == pytest.approx(40.0)


def test_logging_overhead_times_every_variant_after_its_first_step() -> None:
    got = logging_overhead((Variant("off"), Variant("json", 1)), steps=3, repeats=1)
    off, json = got[Variant("off")], got[Variant("json", 1)]
    assert len(off) == len(json) == 1
    # 3 steps, the first untimed: 2 in the window; every step logs with json/1 (steps 1, 2, 3).
    assert (off[0].steps, off[0].records, json[0].steps, json[0].records) == (2, 0, 2, 3)
    assert all(r.seconds > 0 and r.first_step_s > 0 and math.isfinite(r.seconds) for r in (*off, *json))
    with pytest.raises(ValueError, match="at least 2"):
        logging_overhead((Variant("off"),), steps=1)
